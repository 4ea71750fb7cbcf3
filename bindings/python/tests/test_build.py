"""The compiled module: API mode, the whole ABI, the GIL released, pip install.

The suite runs against the build tree's module (ctest python_pytest) and
against the package installed from the wheel and from the sdist
(python_wheel_pytest, python_sdist_pytest): nothing here may rely on files
only one of them has.
"""
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
    # the build tree's module is built for this Python; pip's for the stable ABI (abi3)
    assert _native.__file__.endswith((sysconfig.get_config_var("EXT_SUFFIX"), ".abi3.so"))
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


def test_every_native_call_releases_the_gil(tmp_path: Path) -> None:
    # cffi's generated wrapper brackets each call with Py_BEGIN/END_ALLOW_THREADS;
    # check the C it generated for this very module rather than trust it. An
    # installed package has no C beside it: cffi writes the same C again from
    # the same header (the output depends on nothing else)
    source = Path(_native.__file__).with_name("_native.c")
    if source.exists():
        text = source.read_text()
    else:
        emitted = tmp_path / "_native.c"
        build_ffi.bundled_builder(build_ffi.source_root()).emit_c_code(str(emitted))
        text = emitted.read_text()
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


def defined_dynamic_symbols(path: str) -> set[str]:
    out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True)
    assert out.returncode == 0, f"nm (binutils) failed on {path}: {out.stderr}"
    return {line.split()[-1] for line in out.stdout.splitlines() if line.strip()}


def test_module_exports_its_init_function_only() -> None:
    # the library inside pip's module is hidden: another copy of nativedir (or
    # zlib, liburing) loaded into the same process cannot bind to this one's
    assert defined_dynamic_symbols(_native.__file__) - {"_init", "_fini"} == {"PyInit__native"}


def test_pip_installs_from_the_source_tree(tmp_path: Path) -> None:
    # `pip install bindings/python` with nothing but a C compiler: no CMake build,
    # no NATIVEDIR_* variable, no libnativedir on the machine's search paths
    if subprocess.run([sys.executable, "-m", "pip", "--version"],
                      capture_output=True).returncode != 0:
        pytest.fail(f"{sys.executable} has no pip: install Debian's python3-pip")
    root = build_ffi.source_root()
    # a copy of what the build reads: an in-tree setuptools build would write
    # build/ and *.egg-info into the sources
    src = tmp_path / "src"
    ignore = shutil.ignore_patterns("tests", "build", "*.egg-info", "__pycache__", "*.so", "*.o",
                                    "_native.c")
    shutil.copytree(BINDING_DIR, src / "bindings" / "python", ignore=ignore)
    shutil.copytree(root / "native", src / "native", ignore=ignore)
    shutil.copyfile(root / "CMakeLists.txt", src / "CMakeLists.txt")
    target = tmp_path / "site"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NATIVEDIR_", "PKG_CONFIG", "LD_", "LIBRARY_PATH", "PYTHONPATH"))}
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps",
         "--target", str(target), str(src / "bindings" / "python")],
        env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    package = target / "nativedir"
    assert (package / "py.typed").exists()
    modules = list(package.glob("_native*.so"))
    assert len(modules) == 1 and modules[0].name == "_native.abi3.so", modules
    # the library is inside the module: no second shared object to find
    assert [p.name for p in package.glob("*.so*") if p not in modules] == []
    assert defined_dynamic_symbols(str(modules[0])) - {"_init", "_fini"} == {"PyInit__native"}
    # the installed package works with no build tree on any search path
    check = subprocess.run(
        [sys.executable, "-c", textwrap.dedent("""
            import nativedir, nativedir._native as n, tempfile
            assert n.__file__.startswith(%r), n.__file__
            with nativedir.Directory(tempfile.mkdtemp()) as d:
                with d.create_output("a") as out:
                    out.write(b"installed")
                with d.open_input("a") as inp:
                    print(inp.read_at(0, 9).decode(), nativedir.__version__)
            maps = open("/proc/self/maps").read()
            assert "libnativedir" not in maps, maps
        """ % str(package))],
        env={"PYTHONPATH": str(target), "PATH": os.environ.get("PATH", "")},
        capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stderr
    assert check.stdout.split() == ["installed", build_ffi.project_version(root)]
