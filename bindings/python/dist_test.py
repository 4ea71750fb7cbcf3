"""ctest's check of the Python packages as a user gets them (python_dist, python_*_pytest).

``dist``: builds the sdist (``setup.py sdist``) and the wheel (``pip wheel``)
from a copy of the source tree, offline, and checks what they hold: the sdist
every C source the build lists, the wheel one abi3 module whose platform tag
matches the glibc symbol versions and libraries it really needs.

``test --kind wheel|sdist``: installs that artifact into a fresh venv and runs
the whole pytest suite against the installed package, from a folder outside
the source tree, so ``import nativedir`` can only find the installed one.

``unavailable``: installs the wheel into a fresh venv, then makes its native
module unloadable in each way a user meets (removed, corrupted, built for
another CPU, needing a C library symbol this libc lacks) and checks that
``import nativedir`` raises NativeLibraryUnavailable, an ImportError naming the
platform, the file, the loader's reason and the wheel's platform, the same
error again on a second import; with the module restored, it imports.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import build_ffi  # noqa: E402  (its readers of CMake's files, nothing else)

# PEP 600 / the manylinux policies: what a wheel may take from the system
ALLOWED = {"libc.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libpthread.so.0",
           "libgcc_s.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1", "libz.so.1"}


def run(cmd: list[str], **kw) -> str:
    print("$", " ".join(map(str, cmd)), flush=True)
    done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if done.returncode != 0:
        sys.exit(f"dist_test: {cmd[0]} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout


def clean_env() -> dict:
    """No variable that could point a build or an import at the build tree."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NATIVEDIR_", "PKG_CONFIG", "LD_", "LIBRARY_PATH", "PYTHON"))}
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONDONTWRITEBYTECODE="1")
    return env


def copy_tree(root: Path, dest: Path) -> Path:
    """What `pip install bindings/python` reads, copied: a build writes build/ and
    *.egg-info beside setup.py, which must not land in the real source tree."""
    ignore = shutil.ignore_patterns("tests", "build", "*.egg-info", "__pycache__", "*.so", "*.o",
                                    "_native.c")
    shutil.copytree(root / "bindings" / "python", dest / "bindings" / "python", ignore=ignore)
    shutil.copytree(root / "native", dest / "native", ignore=ignore)
    shutil.copyfile(root / "CMakeLists.txt", dest / "CMakeLists.txt")
    return dest / "bindings" / "python"


def glibc_and_needed(module: Path) -> tuple[tuple[int, int], list[str]]:
    """Read with readelf (setup.py uses objdump): the highest GLIBC_x.y the module
    references and the libraries it needs."""
    versions = run(["readelf", "--version-info", "-W", module])
    found = {(int(a), int(b)) for a, b in re.findall(r"Name: GLIBC_(\d+)\.(\d+)", versions)}
    dynamic = run(["readelf", "-d", "-W", module])
    return max(found), re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)


def dist(root: Path, work: Path, python: str) -> None:
    version = build_ffi.project_version(root)
    shutil.rmtree(work, ignore_errors=True)
    src = copy_tree(root, work / "tree")
    out = work / "dist"
    env = clean_env()
    run([python, "setup.py", "-q", "sdist", "-d", out], cwd=src, env=env)
    run([python, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index",
         "-w", out, src], cwd=work, env=env)

    # the sdist: everything its build reads, under csrc/
    sdist = out / f"nativedir-{version}.tar.gz"
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    lists = build_ffi.cmake_lists((root / "native" / "sources.cmake").read_text())
    wanted = {"setup.py", "build_ffi.py", "pyproject.toml", "csrc/CMakeLists.txt",
              "csrc/native/sources.cmake", "csrc/native/include/nativedir.h"}
    for name in ("ND_COMMON_SOURCES", "ND_POSIX_SOURCES", "ND_WINDOWS_SOURCES"):
        wanted |= {f"csrc/native/{s}" for s in lists[name]}
    missing = sorted(wanted - names)
    if missing:
        sys.exit(f"dist_test: {sdist.name} lacks {missing}")

    # the wheel: one, abi3, its tag what the module needs
    wheels = list(out.glob("*.whl"))
    if len(wheels) != 1:
        sys.exit(f"dist_test: expected one wheel in {out}, found {wheels}")
    wheel = wheels[0]
    match = re.fullmatch(rf"nativedir-{re.escape(version)}-cp39-abi3-(\w+)\.whl", wheel.name)
    if not match:
        sys.exit(f"dist_test: {wheel.name} is not nativedir-{version}-cp39-abi3-<platform>.whl")
    with zipfile.ZipFile(wheel) as z:
        objects = [n for n in z.namelist() if ".so" in n]
        if objects != ["nativedir/_native.abi3.so"]:
            sys.exit(f"dist_test: the wheel should hold one module, _native.abi3.so: {objects}")
        z.extract(objects[0], work / "unpacked")
    floor, needed = glibc_and_needed(work / "unpacked" / objects[0])
    machine = os.uname().machine
    expected = f"manylinux_{floor[0]}_{floor[1]}_{machine}"
    if match.group(1) != expected:
        sys.exit(f"dist_test: {wheel.name} is tagged {match.group(1)}, but its module needs "
                 f"GLIBC_{floor[0]}.{floor[1]}: the tag should be {expected}")
    if not set(needed) <= ALLOWED:
        sys.exit(f"dist_test: the module needs {needed}; only {sorted(ALLOWED)} are allowed")
    print(f"dist_test: {sdist.name} ({len(wanted)} required files present); {wheel.name} "
          f"needs {needed}, GLIBC_{floor[0]}.{floor[1]}")


def test(root: Path, work: Path, python: str, kind: str, exports: str) -> None:
    version = build_ffi.project_version(root)
    out = work / "dist"
    artifact = (out / f"nativedir-{version}.tar.gz" if kind == "sdist"
                else next(iter(out.glob("*.whl")), None))
    if artifact is None or not artifact.exists():
        sys.exit(f"dist_test: no {kind} in {out}: python_dist must run first")
    venv = work / f"venv-{kind}"
    shutil.rmtree(venv, ignore_errors=True)
    env = clean_env()
    # system site packages for cffi and pytest (Debian's), nothing of nativedir
    run([python, "-m", "venv", "--system-site-packages", venv], env=env)
    vpy = venv / "bin" / "python"
    # an outside folder: neither the source tree nor the copy is importable from here
    outside = work / f"run-{kind}"
    shutil.rmtree(outside, ignore_errors=True)
    outside.mkdir()
    run([vpy, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index",
         artifact], cwd=outside, env=env)
    site = run([vpy, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
               cwd=outside, env=env).strip()
    where = run([vpy, "-c", "import importlib.metadata as m, nativedir, nativedir._native as n; "
                 "print(nativedir.__file__, n.__file__, nativedir.__version__, "
                 "m.version('nativedir'))"], cwd=outside, env=env).split()
    package, module, package_version, metadata_version = where
    for path in (package, module):
        if not path.startswith(site + os.sep):
            sys.exit(f"dist_test: imported {path}, not from the venv's {site}")
    if not (package_version == metadata_version == version):
        sys.exit(f"dist_test: versions disagree: nativedir.__version__ {package_version}, "
                 f"installed metadata {metadata_version}, CMake project() {version}")
    env["NATIVEDIR_EXPORTS"] = exports
    tests = root / "bindings" / "python" / "tests"
    print(f"$ {vpy} -m pytest {tests}  (from {outside})", flush=True)
    done = subprocess.run([str(vpy), "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests)],
                          cwd=outside, env=env)
    sys.exit(done.returncode)


# run in the venv, from outside the tree: two imports, both must fail alike (the same class and
# message), or the import must work; prints a JSON report
UNAVAILABLE_PROBE = r"""
import json, sys
report = {}
try:
    import nativedir
except ImportError as e:
    first = e
    try:
        import nativedir
    except ImportError as e2:
        second = e2
    else:
        second = None
    report = {"type": type(first).__name__, "mro": [c.__name__ for c in type(first).__mro__],
              "message": str(first), "again_same_type": type(second) is type(first),
              "again_same_message": second is not None and str(second) == str(first),
              "platform": getattr(first, "platform", None), "path": first.path,
              "reason": getattr(first, "reason", None),
              "carried": list(getattr(first, "carried", ()))}
else:
    report = {"loaded": nativedir.library_version()}
print(json.dumps(report))
"""


def rename_symbol(data: bytes, old: bytes, new: bytes) -> bytes:
    """The module with one undefined libc symbol renamed in its dynamic string table (same
    length), as if it had been linked against a C library that has it and this one does not."""
    assert len(old) == len(new)
    at = data.find(b"\0" + old + b"\0")
    if at < 0:
        sys.exit(f"dist_test: the module references no {old.decode()}")
    return data[:at + 1] + new + data[at + 1 + len(old):]


def unavailable(root: Path, work: Path, python: str) -> None:
    import json
    import struct
    import sysconfig
    out = work / "dist"
    wheel = next(iter(out.glob("*.whl")), None)
    if wheel is None:
        sys.exit(f"dist_test: no wheel in {out}: python_dist must run first")
    tag = wheel.name[:-len(".whl")].rsplit("-", 1)[-1]
    venv = work / "venv-unavailable"
    shutil.rmtree(venv, ignore_errors=True)
    env = clean_env()
    run([python, "-m", "venv", "--system-site-packages", venv], env=env)
    vpy = venv / "bin" / "python"
    outside = work / "run-unavailable"
    shutil.rmtree(outside, ignore_errors=True)
    outside.mkdir()
    run([vpy, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index", wheel],
        cwd=outside, env=env)
    site = Path(run([vpy, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                    cwd=outside, env=env).strip())
    module = site / "nativedir" / "_native.abi3.so"
    original = module.read_bytes()
    other_cpu = 183 if os.uname().machine != "aarch64" else 62  # aarch64, else x86-64
    foreign = bytearray(original)
    foreign[18:20] = struct.pack("<H", other_cpu)  # e_machine: a library built for another CPU
    cases = [
        ("removed", None, "No module named"),
        ("corrupted", b"this is not a shared library\n" * 64, "invalid ELF header"),
        ("another CPU", bytes(foreign), "ELF library for " + ("aarch64" if other_cpu == 183 else "x86_64")),
        ("missing libc symbol", rename_symbol(original, b"preadv2", b"preadv9"), "preadv9"),
    ]
    where = sysconfig.get_platform()
    failures = []
    for name, content, expect in cases:
        module.unlink(missing_ok=True)
        if content is not None:
            module.write_bytes(content)
        got = json.loads(run([vpy, "-c", UNAVAILABLE_PROBE], cwd=outside, env=env))
        print(f"dist_test: {name}: {got.get('message', got)}")
        wanted = {
            "raises NativeLibraryUnavailable": got.get("type") == "NativeLibraryUnavailable",
            "an ImportError": "ImportError" in got.get("mro", []),
            "the same error on the second import": got.get("again_same_type") and got.get("again_same_message"),
            f"names the platform {where}": where in got.get("message", "") and got.get("platform"),
            f"names the file {module}": str(module) in got.get("message", "") and got.get("path") == str(module),
            f"gives the reason ({expect})": expect in got.get("message", "") and got.get("reason"),
            f"names the platform the wheel carries ({tag})": tag in got.get("message", "") and got.get("carried") == [tag],
        }
        failures += [f"{name}: does not {what}" for what, ok in wanted.items() if not ok]
    module.write_bytes(original)
    # the negative control: the same probe with the module in place imports
    got = json.loads(run([vpy, "-c", UNAVAILABLE_PROBE], cwd=outside, env=env))
    if "loaded" not in got:
        failures.append(f"with the module restored, the import still fails: {got}")
    if failures:
        sys.exit("dist_test: " + "\n  ".join(["unavailable native module:"] + failures))
    print(f"dist_test: {len(cases)} ways of losing the native module, each one documented "
          f"NativeLibraryUnavailable, raised alike twice; restored, it imports")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("step", choices=["dist", "test", "unavailable"])
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--kind", choices=["wheel", "sdist"])
    ap.add_argument("--exports", help="native/exports.txt of the build (the public ABI)")
    args = ap.parse_args()
    root = build_ffi.source_root()
    if args.step == "dist":
        dist(root, args.work, sys.executable)
    elif args.step == "unavailable":
        unavailable(root, args.work, sys.executable)
    else:
        test(root, args.work, sys.executable, args.kind, args.exports)


if __name__ == "__main__":
    main()
