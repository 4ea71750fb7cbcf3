"""The compiled module: API mode, the whole ABI, the GIL released, pip install."""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

import nativedir
from nativedir import _native
from conftest import required_env

BINDING_DIR = Path(__file__).resolve().parent.parent
# loaded by path: putting BINDING_DIR on sys.path would shadow the built package
_spec = importlib.util.spec_from_file_location("build_ffi", BINDING_DIR / "build_ffi.py")
build_ffi = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_ffi)


def test_module_is_compiled_api_mode() -> None:
    # API mode: a real extension compiled against the header, not libffi (ABI mode)
    assert _native.__file__.endswith(sysconfig.get_config_var("EXT_SUFFIX"))
    assert type(_native.ffi).__module__ == "_cffi_backend"  # not cffi.api.FFI (ABI mode)
    assert nativedir.abi_version() == _native.lib.ND_ABI_VERSION == 1
    assert re.fullmatch(r"\d+\.\d+\.\d+", nativedir.library_version())


def test_every_exported_function_is_bound() -> None:
    exports = Path(required_env("NATIVEDIR_EXPORTS")).read_text().split()
    assert len(exports) > 30
    missing = [name for name in exports if not callable(getattr(_native.lib, name, None))]
    assert missing == []
    bound = {n for n in dir(_native.lib) if n.startswith("nd_")}
    assert bound == set(exports)


def test_every_native_call_releases_the_gil() -> None:
    # cffi's generated wrapper brackets each call with Py_BEGIN/END_ALLOW_THREADS;
    # check the C it generated for this very module rather than trust it
    source = Path(_native.__file__).with_name("_native.c")
    if not source.exists():
        pytest.fail(f"{source} is missing: this test reads the generated C of the build tree")
    text = source.read_text()
    calls = re.findall(r"Py_BEGIN_ALLOW_THREADS\s+_cffi_restore_errno\(\);\s+"
                       r"\{ (?:result = )?(nd_\w+)\(", text)
    exports = set(Path(required_env("NATIVEDIR_EXPORTS")).read_text().split())
    assert set(calls) == exports


def test_cdef_from_header_keeps_only_the_c_declarations() -> None:
    header = textwrap.dedent("""\
        #ifndef X_H
        #define X_H
        #include <stdint.h>
        #if defined(_WIN32)
        #  define ND_EXTERN __declspec(dllimport)
        #else
        #  define ND_EXTERN __attribute__((visibility("default")))
        #endif
        #ifdef __cplusplus
        extern "C" {
        #endif
        /* a comment with nd_fake(void); */
        typedef int64_t nd_handle;
        #define ND_FLAG 16u  /* flag */
        #define ND_NOT_A_NUMBER "text"
        enum { ND_OK = 0, ND_E_X = -1 };
        ND_EXTERN int32_t nd_close(nd_handle h); // trailing
        ND_EXTERN int64_t nd_two(nd_handle h,
                                 int64_t n);
        #ifdef __cplusplus
        }
        #endif
        #endif
    """)
    cdef = build_ffi.cdef_from_header(header)
    assert "#define ND_FLAG ..." in cdef
    for gone in ("ND_EXTERN", "extern", "__declspec", "nd_fake", "ND_NOT_A_NUMBER", "#include",
                 "comment", "trailing"):
        assert gone not in cdef, gone
    assert "int32_t nd_close(nd_handle h);" in cdef
    assert re.search(r"int64_t nd_two\(nd_handle h,\s+int64_t n\);", cdef)
    # and cffi accepts it
    import cffi
    cffi.FFI().cdef(cdef)


def test_pip_installs_from_the_source_tree(tmp_path: Path) -> None:
    include_dir = required_env("NATIVEDIR_INCLUDE_DIR")
    library_dir = required_env("NATIVEDIR_LIBRARY_DIR")
    if subprocess.run([sys.executable, "-m", "pip", "--version"],
                      capture_output=True).returncode != 0:
        pytest.fail(f"{sys.executable} has no pip: install Debian's python3-pip")
    # a copy: an in-tree setuptools build would write build/ and *.egg-info into the sources
    src = tmp_path / "src"
    shutil.copytree(BINDING_DIR, src, ignore=shutil.ignore_patterns(
        "tests", "build", "*.egg-info", "__pycache__", "*.so", "*.o", "_native.c"))
    target = tmp_path / "site"
    env = dict(os.environ, NATIVEDIR_INCLUDE_DIR=include_dir, NATIVEDIR_LIBRARY_DIR=library_dir,
               PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps",
         "--target", str(target), str(src)],
        env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    package = target / "nativedir"
    assert (package / "py.typed").exists()
    assert (package / "libnativedir.so.1").exists()  # shipped inside the package
    # the installed package works with no build tree on any search path
    check = subprocess.run(
        [sys.executable, "-c", textwrap.dedent("""
            import nativedir, nativedir._native as n, tempfile
            assert n.__file__.startswith(%r), n.__file__
            with nativedir.Directory(tempfile.mkdtemp()) as d:
                with d.create_output("a") as out:
                    out.write(b"installed")
                with d.open_input("a") as inp:
                    print(inp.read_at(0, 9).decode())
        """ % str(package))],
        env={"PYTHONPATH": str(target), "PATH": os.environ.get("PATH", "")},
        capture_output=True, text=True, timeout=120)
    assert check.stdout.strip() == "installed", check.stderr
    maps = subprocess.run(
        [sys.executable, "-c", "import nativedir, sys; "
         "print(open('/proc/self/maps').read())"],
        env={"PYTHONPATH": str(target)}, capture_output=True, text=True, timeout=120)
    loaded = {line.split()[-1] for line in maps.stdout.splitlines() if "libnativedir" in line}
    assert loaded == {str(package / "libnativedir.so.1")}
