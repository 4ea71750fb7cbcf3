"""Every status a Python caller can see, from every kind of real failure.

One table-driven test: each ND_E_* status of the library is produced by a real
failure through the public API (a missing file, a held lock, a full file
system...) and the exception must be the one the README's "Errors" table
names, with the errno the failure carried. The expected exception is parsed
from the README itself, so the README and the binding cannot drift apart; the
statuses are read from the library, so a new one without a row fails here.

Statuses no real failure can produce through this binding are listed in
UNREACHABLE with the reason; the mapping function is checked for every status
(and for an unknown one) directly.
"""
from __future__ import annotations

import errno
import os
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import pytest

import nativedir
from conftest import child_env
from nativedir import _errors
from nativedir._ffi import lib

README = Path(__file__).resolve().parent.parent / "README.md"

# Statuses the public API never hands to Python from the library, and why.
UNREACHABLE = {
    "ND_E_BUSY": "a full ring: the Python package binds no rings (nd_ring_* are not wrapped)",
}


def library_statuses() -> Dict[str, int]:
    """Every ND_E_* code the header declares (cffi reads them from nativedir.h)."""
    return {n: getattr(lib, n) for n in dir(lib) if n.startswith("ND_E_")}


@dataclass
class Table:
    by_status: Dict[str, str]           # ND_E_X -> exception class name
    other: Optional[str]                # the row for "any other code"
    when_errno: Dict[str, Dict[str, str]]  # ND_E_X -> {"EISDIR": "IsADirectoryError"}


def readme_table() -> Table:
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Errors", 1)[1].split("\n## ", 1)[0]
    table = Table({}, None, {})
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 2 or not cells[1].startswith("`"):
            continue
        exc = re.match(r"`(\w+)", cells[1]).group(1)
        alternatives = dict((code, alt) for alt, code in
                            re.findall(r"`(\w+)` when the OS said `(E\w+)`", cells[1]))
        for status in re.findall(r"`(ND_E_\w+)`", cells[0]):
            assert status not in table.by_status, f"{status} has two rows in {README}"
            table.by_status[status] = exc
            table.when_errno[status] = alternatives
        if "any other code" in cells[0]:
            table.other = exc
    return table


def expected_type(table: Table, status: str, err: Optional[int]) -> str:
    for code, alt in table.when_errno[status].items():
        if err == getattr(errno, code):
            return alt
    return table.by_status[status]


@dataclass
class Seen:
    type_name: str
    errno: Optional[int]
    status_name: Optional[str]


def caught(call: Callable[[], object]) -> Seen:
    try:
        call()
    except Exception as e:  # noqa: BLE001 - the type is what is checked
        return Seen(type(e).__name__, getattr(e, "errno", None), getattr(e, "nd_status_name", None))
    raise AssertionError("the call did not fail")


def in_child(folder: Path, script: str, prefix: List[str] = ()) -> Seen:
    """Runs `script` in a child Python (limits must not starve this process); it prints
    the exception's type name, errno and status name, which come back as a Seen."""
    body = textwrap.dedent(script) + textwrap.dedent("""
        except Exception as e:
            print(type(e).__name__, getattr(e, "errno", None), getattr(e, "nd_status_name", None))
    """)
    r = subprocess.run([*prefix, sys.executable, "-c", body], cwd=folder, capture_output=True,
                       text=True, env=child_env(), timeout=120)
    if r.returncode == 77:
        pytest.skip(r.stderr.strip())
    words = r.stdout.split()
    assert r.returncode == 0 and len(words) == 3, f"child: rc {r.returncode}\n{r.stdout}\n{r.stderr}"
    return Seen(words[0], None if words[1] == "None" else int(words[1]),
                None if words[2] == "None" else words[2])


# ---- one real failure per case: (status, what, errno carried or None, producer) ----

def not_found(nd: nativedir.Directory, folder: Path) -> Seen:
    return caught(lambda: nd.open_input("missing"))


def exists(nd: nativedir.Directory, folder: Path) -> Seen:
    nd.create_output("made").close()
    return caught(lambda: nd.create_output("made"))


def access_directory(nd: nativedir.Directory, folder: Path) -> Seen:
    (folder / "sub").mkdir()
    return caught(lambda: nd.open_input("sub"))


def access_symlink(nd: nativedir.Directory, folder: Path) -> Seen:
    (folder / "target").write_bytes(b"x")
    os.symlink("target", folder / "link")
    return caught(lambda: nd.open_input("link"))


def invalid_name(nd: nativedir.Directory, folder: Path) -> Seen:
    return caught(lambda: nd.open_input("a/b"))


def invalid_argument(nd: nativedir.Directory, folder: Path) -> Seen:
    (folder / "f").write_bytes(b"x")
    return caught(lambda: nd.open_input("f", mmap=True, require_direct=True))


def bad_handle(nd: nativedir.Directory, folder: Path) -> Seen:
    # The binding checks for close itself (ValueError, as the README's row says),
    # so the library's own ND_E_BAD_HANDLE needs a close racing a call
    (folder / "f").write_bytes(b"x")
    inp = nd.open_input("f")
    inp.close()
    return caught(lambda: inp.read_at(0, 1))


def eof(nd: nativedir.Directory, folder: Path) -> Seen:
    (folder / "f").write_bytes(b"0123456789")
    with nd.open_input("f") as inp:
        return caught(lambda: inp.read_at(5, 6))


def locked(nd: nativedir.Directory, folder: Path) -> Seen:
    with nd.lock("write.lock"):
        return caught(lambda: nd.lock("write.lock"))


def io_error(nd: nativedir.Directory, folder: Path) -> Seen:
    # POSIX lets another process truncate an open file: the read finds its bytes gone
    (folder / "f").write_bytes(bytes(100000))
    with nd.open_input("f") as inp:
        os.truncate(folder / "f", 1000)
        return caught(lambda: inp.read_at(50000, 100))


def no_space(nd: nativedir.Directory, folder: Path) -> Seen:
    # RLIMIT_FSIZE makes write(2) fail with EFBIG, in a child so this process keeps writing
    return in_child(folder, f"""
        import resource, signal, nativedir
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (65536, resource.RLIM_INFINITY))
        try:
            with nativedir.Directory({str(folder)!r}) as d:
                out = d.create_output("big")
                out.write(bytes(1 << 20))
                out.close()
    """)


def too_many_open(nd: nativedir.Directory, folder: Path) -> Seen:
    (folder / "f").write_bytes(b"x")
    return in_child(folder, f"""
        import resource, nativedir
        d = nativedir.Directory({str(folder)!r})
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
        kept = []
        try:
            while True:
                kept.append(d.open_input("f"))
    """)


def no_memory(nd: nativedir.Directory, folder: Path) -> Seen:
    # A mapping larger than the whole user address space (128 TiB on x86-64 and
    # arm64) fails with ENOMEM. Only a file system taking a sparse file that big
    # will do: tmpfs does, ext4 (16 TiB at most) does not.
    shm = Path("/dev/shm")
    mounts = Path("/proc/mounts").read_text(encoding="utf-8").splitlines()
    if not any(line.split()[1:3] == ["/dev/shm", "tmpfs"] for line in mounts):
        pytest.skip("ND_E_NO_MEMORY: no tmpfs at /dev/shm for a 200 TiB sparse file")
    sub = Path(os.path.realpath(shm)) / f"nd-status-{os.getpid()}"
    sub.mkdir()
    try:
        with open(sub / "huge", "wb") as f:
            f.truncate(200 << 40)
        with nativedir.Directory(sub) as d:
            return caught(lambda: d.open_input("huge", mmap=True))
    finally:
        shutil.rmtree(sub)


def not_supported(nd: nativedir.Directory, folder: Path) -> Seen:
    # ND_IO_REQUIRE_DIRECT on ramfs (which refuses O_DIRECT), mounted in a private
    # mount namespace of a child: as root, or in a user namespace otherwise
    if shutil.which("unshare") is None:
        pytest.skip("ND_E_NOT_SUPPORTED: no unshare(1) to make a private ramfs mount")
    mnt = folder / "ramfs"
    mnt.mkdir()
    ns = ["unshare", "--mount"] + ([] if os.geteuid() == 0 else ["--map-root-user"])
    mount = ['sh', '-c', 'mount -t ramfs ramfs "$0" || { echo "ND_E_NOT_SUPPORTED: cannot mount '
             'a private ramfs here" >&2; exit 77; }; echo data > "$0/f"; exec "$@"', str(mnt)]
    probe = subprocess.run([*ns, "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"ND_E_NOT_SUPPORTED: no private mount namespace here ({probe.stderr.strip()})")
    return in_child(folder, f"""
        import nativedir
        try:
            with nativedir.Directory({str(mnt)!r}) as d:
                d.open_input("f", require_direct=True)
    """, prefix=[*ns, *mount])


CASES: List[Tuple[str, str, Optional[int], Callable[[nativedir.Directory, Path], Seen]]] = [
    ("ND_E_INVALID_ARGUMENT", "mmap and require_direct together", None, invalid_argument),
    ("ND_E_BAD_HANDLE", "a read after close", None, bad_handle),
    ("ND_E_NOT_FOUND", "a missing file", errno.ENOENT, not_found),
    ("ND_E_EXISTS", "create an existing file", errno.EEXIST, exists),
    ("ND_E_ACCESS", "a directory where a file is expected", errno.EISDIR, access_directory),
    ("ND_E_ACCESS", "a symbolic link", errno.ELOOP, access_symlink),
    ("ND_E_INVALID_NAME", "a name with a slash", None, invalid_name),
    ("ND_E_EOF", "a read past the end", None, eof),
    ("ND_E_NO_SPACE", "a write past RLIMIT_FSIZE", errno.EFBIG, no_space),
    ("ND_E_IO", "a read of a file truncated after open", errno.EIO, io_error),
    ("ND_E_NOT_SUPPORTED", "require_direct on ramfs", None, not_supported),
    ("ND_E_LOCKED", "a lock held by another handle", None, locked),
    ("ND_E_NO_MEMORY", "a mapping bigger than the address space", errno.ENOMEM, no_memory),
    ("ND_E_TOO_MANY_OPEN", "inputs past RLIMIT_NOFILE", errno.EMFILE, too_many_open),
]


@pytest.mark.parametrize("status, what, carried, produce", CASES,
                         ids=[f"{c[0]}: {c[1]}" for c in CASES])
def test_every_status_from_a_real_failure(nd: nativedir.Directory, folder: Path, status: str,
                                          what: str, carried: Optional[int], produce) -> None:
    table = readme_table()
    seen = produce(nd, folder)
    want = expected_type(table, status, seen.errno)
    assert seen.type_name == want, f"{what}: {seen.type_name}, README says {want}"
    if seen.status_name is not None or status != "ND_E_BAD_HANDLE":
        assert seen.status_name == status, f"{what}: status {seen.status_name}"
    if carried is not None:
        assert seen.errno == carried, f"{what}: errno {seen.errno}, not {carried}"


def test_the_cases_and_the_readme_cover_every_status() -> None:
    table = readme_table()
    statuses = set(library_statuses())
    assert set(table.by_status) == statuses, "README rows vs the library's ND_E_* codes"
    assert table.other is not None, "README has no row for any other code"
    produced = {c[0] for c in CASES}
    assert produced | set(UNREACHABLE) == statuses
    assert not produced & set(UNREACHABLE)


@pytest.mark.parametrize("status", sorted(library_statuses()) + ["unknown"])
def test_the_mapping_itself_matches_the_readme(status: str) -> None:
    """Also for the statuses in UNREACHABLE: the mapping function gets each code directly."""
    table = readme_table()
    code = library_statuses().get(status, -999)
    exc = _errors.error(code)
    want = table.by_status.get(status, table.other)
    assert type(exc).__name__ == want, f"{status}: {type(exc).__name__}, README says {want}"
    assert exc.nd_status == code
