"""Every status code maps to the exception Python users expect."""
from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import nativedir
from conftest import child_env
from nativedir import _errors
from nativedir._ffi import lib


def test_not_found(nd: nativedir.Directory, folder: Path) -> None:
    for call in (lambda: nd.open_input("missing"), lambda: nd.length("missing"),
                 lambda: nd.delete("missing"), lambda: nd.rename("missing", "x"),
                 lambda: nativedir.Directory(folder / "no" / "such")):
        with pytest.raises(FileNotFoundError) as info:
            call()
        assert info.value.errno == errno.ENOENT
        assert info.value.nd_status_name == "ND_E_NOT_FOUND"
        assert "missing" in str(info.value) or "such" in str(info.value)


def test_exists(nd: nativedir.Directory, folder: Path) -> None:
    (folder / "f").write_bytes(b"")
    with pytest.raises(FileExistsError) as info:
        nd.create_output("f")
    assert info.value.errno == errno.EEXIST and "'f'" in str(info.value)


def test_permission_for_a_symlink(nd: nativedir.Directory, folder: Path) -> None:
    (folder / "target").write_bytes(b"x")
    os.symlink("target", folder / "link")
    with pytest.raises(PermissionError) as info:
        nd.open_input("link")
    assert info.value.nd_status == lib.ND_E_ACCESS
    assert not isinstance(info.value, IsADirectoryError)


def test_is_a_directory(nd: nativedir.Directory, folder: Path) -> None:
    (folder / "sub").mkdir()
    with pytest.raises(IsADirectoryError) as info:
        nd.open_input("sub")
    assert info.value.errno == errno.EISDIR and isinstance(info.value, PermissionError) is False


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "a\\b", "x" * 256, b"\xff\xfe",
                                  "bad\udcff", "nul\0byte"])
def test_invalid_names_are_value_errors(nd: nativedir.Directory, name) -> None:
    for call in (lambda: nd.open_input(name), lambda: nd.create_output(name),
                 lambda: nd.exists(name), lambda: nd.delete(name), lambda: nd.lock(name)):
        with pytest.raises(ValueError):
            call()


def test_invalid_name_message_names_the_call(nd: nativedir.Directory) -> None:
    with pytest.raises(ValueError, match="nd_open_input.*'a/b'") as info:
        nd.open_input("a/b")
    assert info.value.nd_status_name == "ND_E_INVALID_NAME"


def test_name_type_is_checked(nd: nativedir.Directory) -> None:
    with pytest.raises(TypeError):
        nd.exists(42)  # type: ignore[arg-type]


def test_invalid_argument(nd: nativedir.Directory, data_file: str) -> None:
    with pytest.raises(ValueError) as info:
        nd.open_input(data_file, mmap=True, require_direct=True)
    assert info.value.nd_status_name == "ND_E_INVALID_ARGUMENT"


def test_eof(nd: nativedir.Directory, data_file: str, data: bytes) -> None:
    with nd.open_input(data_file) as inp:
        with pytest.raises(EOFError, match="past the end"):
            inp.read_at(len(data) - 1, 2)
        with pytest.raises(EOFError):
            inp.read_at(len(data) + 1, 0)


def test_lock_held_is_blocking_io_error(nd: nativedir.Directory) -> None:
    with nd.lock("write.lock"):
        with pytest.raises(BlockingIOError) as info:
            nd.lock("write.lock")
    assert info.value.nd_status_name == "ND_E_LOCKED"
    assert isinstance(info.value, OSError)


def _run(script: str, folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], cwd=folder,
                          capture_output=True, text=True, env=child_env(), timeout=120)


def test_no_space_from_file_size_limit(folder: Path) -> None:
    # RLIMIT_FSIZE makes write(2) fail with EFBIG: the library's ND_E_NO_SPACE
    result = _run(f"""
        import errno, resource, signal, nativedir
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (65536, resource.RLIM_INFINITY))
        with nativedir.Directory({str(folder)!r}) as d:
            out = d.create_output("big")
            try:
                out.write(bytes(1 << 20))
                out.close()
            except OSError as e:
                print(type(e).__name__, errno.errorcode[e.errno], e.nd_status_name)
    """, folder)
    assert result.stdout.split() == ["OSError", "EFBIG", "ND_E_NO_SPACE"], result.stderr


def test_too_many_open_from_descriptor_limit(folder: Path) -> None:
    (folder / "f").write_bytes(b"x")
    result = _run(f"""
        import errno, resource, nativedir
        d = nativedir.Directory({str(folder)!r})
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
        kept = []
        try:
            while True:
                kept.append(d.open_input("f"))
        except OSError as e:
            print(type(e).__name__, errno.errorcode[e.errno], e.nd_status_name)
    """, folder)
    assert result.stdout.split() == ["OSError", "EMFILE", "ND_E_TOO_MANY_OPEN"], result.stderr


# Status codes a test cannot provoke reliably are checked through the mapping
# itself, after a failure without an OS error (the errno then defaults).
@pytest.mark.parametrize("status, cls, code", [
    (lib.ND_E_INVALID_ARGUMENT, ValueError, None),
    (lib.ND_E_BAD_HANDLE, ValueError, None),
    (lib.ND_E_INVALID_NAME, ValueError, None),
    (lib.ND_E_EOF, EOFError, None),
    (lib.ND_E_NOT_FOUND, FileNotFoundError, errno.ENOENT),
    (lib.ND_E_EXISTS, FileExistsError, errno.EEXIST),
    (lib.ND_E_ACCESS, PermissionError, errno.EACCES),
    (lib.ND_E_LOCKED, BlockingIOError, errno.EWOULDBLOCK),
    (lib.ND_E_NO_SPACE, OSError, errno.ENOSPC),
    (lib.ND_E_IO, OSError, errno.EIO),
    (lib.ND_E_NOT_SUPPORTED, OSError, errno.EOPNOTSUPP),
    (lib.ND_E_NO_MEMORY, OSError, errno.ENOMEM),
    (lib.ND_E_TOO_MANY_OPEN, OSError, errno.EMFILE),
    (-999, OSError, errno.EIO),
])
def test_mapping_table(nd: nativedir.Directory, status: int, cls: type, code) -> None:
    with pytest.raises(ValueError):
        nd.open_input("..")  # a failure of the library's own checks: os error 0
    assert lib.nd_last_os_error() == 0
    exc = _errors.error(status)
    assert type(exc) is cls
    assert exc.nd_status == status
    assert "'..'" in str(exc)  # the library's message of this thread's last failure
    if code is not None:
        assert exc.errno == code


def test_message_decoding_never_fails(nd: nativedir.Directory, folder: Path) -> None:
    with pytest.raises(FileNotFoundError) as info:
        nd.open_input(b"caf\xc3\xa9-missing")
    assert "café-missing" in str(info.value)


def test_status_name() -> None:
    assert nativedir.status_name(lib.ND_E_NOT_FOUND) == "ND_E_NOT_FOUND"
    assert nativedir.status_name(-999) == "ND_E_UNKNOWN"
