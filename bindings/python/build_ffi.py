"""Builds ``nativedir._native``, the cffi extension (out-of-line API mode).

The cdef text is derived from the public header itself, and the generated C
is compiled against that same header: a declaration that disagrees with the
library fails here, at build time, never at run time.

Two ways in:

* ``python3 build_ffi.py --include-dir I --library-dir L --out-dir O`` (what
  CMake runs): writes ``O/nativedir/_native.c`` and the compiled module next to
  it, linked to ``L/libnativedir.so`` with ``L`` as its run path.
* ``setup.py`` (``pip install bindings/python``, the wheel, the sdist) calls
  :func:`bundled_builder`: the library's own C sources are compiled into the
  module itself (see :func:`core_library`), so the package needs no
  libnativedir on the machine and no CMake step.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import cffi

HEADER = "nativedir.h"

_INT_LITERAL = re.compile(r"[-+]?(0[xX][0-9a-fA-F]+|[0-9]+)[uUlL]*")


def cdef_from_header(text: str) -> str:
    """Turns the public header into cffi cdef text.

    Comments, preprocessor lines, ``ND_EXTERN`` and everything inside
    conditional blocks (platform and C++ glue) go; ``#define ND_X <integer>``
    becomes ``#define ND_X ...`` so the value is taken from the compiled
    header rather than restated here.
    """
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = text.replace("\\\n", " ")
    out: list[str] = []
    depth = 0  # 1 inside the include guard, more inside real conditionals
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            words = stripped[1:].split(None, 2)
            word = words[0] if words else ""
            if word in ("if", "ifdef", "ifndef"):
                depth += 1
            elif word == "endif":
                depth -= 1
            elif (word == "define" and depth <= 1 and len(words) == 3
                  and words[1].startswith("ND_") and _INT_LITERAL.fullmatch(words[2].strip())):
                out.append(f"#define {words[1]} ...")
            continue
        if depth <= 1 and stripped:
            out.append(line)
    cdef = "\n".join(out)
    cdef = re.sub(r"\bND_EXTERN\b", "", cdef)
    if "nd_close" not in cdef:
        raise SystemExit(f"build_ffi: no declarations found in {HEADER}; is it the right file?")
    return cdef + "\n"


# ---- the project's own facts, read from the files CMake reads ----

HERE = Path(__file__).resolve().parent


def source_root() -> Path:
    """The folder holding CMakeLists.txt and native/: an sdist's csrc/ copy, else
    the source tree this file sits in (bindings/python is two levels down)."""
    for root in (HERE / "csrc", HERE.parent.parent):
        if (root / "native" / "sources.cmake").is_file():
            return root
    raise SystemExit(f"build_ffi: the library's sources are neither in {HERE / 'csrc'} nor in "
                     f"{HERE.parent.parent}: build from the nativedir source tree or its sdist")


def cmake_lists(text: str) -> dict[str, list[str]]:
    """The ``set(NAME item...)`` calls of a CMake file (comments dropped), as lists."""
    text = re.sub(r"#[^\n]*", "", text)
    found: dict[str, list[str]] = {}
    for name, body in re.findall(r"\bset\(\s*([A-Za-z_][A-Za-z0-9_]*)([^)]*)\)", text):
        found[name] = body.split()
    return found


def project_version(root: Path) -> str:
    """``project(nativedir VERSION x.y.z)`` of the top-level CMakeLists.txt: the one version."""
    path = root / "CMakeLists.txt"
    match = re.search(r"\bproject\(\s*nativedir\b[^)]*\bVERSION\s+([0-9]+\.[0-9]+\.[0-9]+)",
                      path.read_text(encoding="utf-8"))
    if not match:
        raise SystemExit(f"build_ffi: no project(nativedir VERSION x.y.z) in {path}")
    return match.group(1)


def library_sources(root: Path) -> list[str]:
    """The C sources CMake compiles on this OS, from native/sources.cmake (the one list)."""
    path = root / "native" / "sources.cmake"
    lists = cmake_lists(path.read_text(encoding="utf-8"))
    os_list = "ND_WINDOWS_SOURCES" if sys.platform == "win32" else "ND_POSIX_SOURCES"
    names = lists.get("ND_COMMON_SOURCES", []) + lists.get(os_list, [])
    sources = [root / "native" / n for n in names]
    missing = [str(s) for s in sources if not s.is_file()]
    if not names or missing:
        raise SystemExit(f"build_ffi: {path} lists no sources or missing ones: {missing}")
    return [str(s) for s in sources]


def _static_archive(name: str, header: str) -> str | None:
    """``lib<name>.a`` when the machine has it and its header (Linux only), else None."""
    if not sys.platform.startswith("linux"):
        return None
    import sysconfig
    if not any((Path(d) / header).is_file() for d in ("/usr/include", "/usr/local/include")):
        return None
    dirs = [sysconfig.get_config_var("LIBDIR") or "", "/usr/local/lib", "/usr/lib"]
    multiarch = sysconfig.get_config_var("MULTIARCH")
    if multiarch:
        dirs.insert(1, f"/usr/lib/{multiarch}")
    for d in dirs:
        candidate = Path(d) / f"lib{name}.a"
        if d and candidate.is_file():
            return str(candidate)
    return None


def _static_liburing() -> str | None:
    """liburing.a (Debian: liburing-dev), linked in: liburing.so is not a library
    every Linux may be assumed to have. Without it, rings use the thread-pool
    backend, as in a CMake build without liburing."""
    return _static_archive("uring", "liburing.h")


def _static_libdeflate() -> str | None:
    """libdeflate.a (Debian: libdeflate-dev), linked in: outputs checksum with its
    CRC-32, ~2.4x zlib's (native/src/output.c), as in a CMake build that finds it.
    Without it the library uses zlib's crc32."""
    return _static_archive("deflate", "libdeflate.h")


def _static_zlib() -> str | None:
    """libz.a (Debian: zlib1g-dev), linked in with its symbols hidden.

    The library calls crc32_z, versioned ZLIB_1.2.9: linked to the system's
    libz.so.1 the module would need zlib >= 1.2.9, more than the manylinux
    policies promise for libz.so.1. Static, that question does not arise.
    Without libz.a the module links libz.so.1 (which the policies do allow).
    """
    return _static_archive("z", "zlib.h")


# The flags of native/CMakeLists.txt's nd_configure_library: C11 without GNU
# extensions, its warnings, hidden visibility, position-independent code.
CORE_CFLAGS = ["-std=c11", "-fvisibility=hidden", "-fPIC", "-Wall", "-Wextra", "-Wshadow",
               "-Wstrict-prototypes", "-Wmissing-prototypes", "-Wvla", "-Wformat=2",
               "-Wno-unused-parameter"]


def core_library(root: Path) -> tuple[str, dict]:
    """The library as a setuptools ``libraries`` entry (built by build_clib, static).

    ND_STATIC makes every nd_* function hidden (the header's ND_EXTERN is empty
    then), so the module exports its PyInit function and nothing else.
    """
    macros = [("ND_STATIC", None), ("ND_VERSION_STRING", f'"{project_version(root)}"')]
    if _static_liburing():
        macros.append(("ND_HAVE_LIBURING", None))
    if _static_libdeflate():
        macros.append(("ND_HAVE_LIBDEFLATE", None))
    return ("nativedir_core", {
        "sources": library_sources(root),
        "include_dirs": [str(root / "native" / "include")],
        "macros": macros,
        "cflags": CORE_CFLAGS,
    })


def setup_builder() -> cffi.FFI:
    """setup.py's ``cffi_modules`` entry (``build_ffi.py:setup_builder``)."""
    return bundled_builder(source_root())


def bundled_builder(root: Path) -> cffi.FFI:
    """``nativedir._native`` with the library compiled in (setup.py's builder).

    The library itself is :func:`core_library`, which setup.py hands to
    setuptools: build_clib compiles it before build_ext links it in here.
    """
    link: list[str] = []
    if sys.platform.startswith("linux"):
        archives = [a for a in (_static_liburing(), _static_libdeflate(), _static_zlib()) if a]
        # the archives' symbols stay inside the module, like the library's own
        link += archives + ["-Wl,--exclude-libs,ALL"]
        if not _static_zlib():
            link.append("-lz")
        link += ["-pthread", "-Wl,-z,relro,-z,now"]
    return make_builder(root / "native" / "include", None, [],
                        libraries=["nativedir_core"], defines=[("ND_STATIC", None)],
                        extra_link_args=link, extra_compile_args=["-fvisibility=hidden"])


def make_builder(include_dir: Path, library_dir: Path | None,
                 rpaths: list[str] | None = None, *, libraries: list[str] | None = None,
                 defines: list | None = None, extra_link_args: list[str] | None = None,
                 extra_compile_args: list[str] | None = None) -> cffi.FFI:
    """An FFI builder for ``nativedir._native`` against the given header and library."""
    header = include_dir / HEADER
    if not header.is_file():
        raise SystemExit(f"build_ffi: {header} not found; set NATIVEDIR_INCLUDE_DIR "
                         "or pass --include-dir")
    builder = cffi.FFI()
    builder.cdef(cdef_from_header(header.read_text(encoding="utf-8")))
    if rpaths is None:
        rpaths = [str(library_dir)] if library_dir else []
    builder.set_source(
        "nativedir._native",
        f'#include "{HEADER}"\n',
        libraries=libraries if libraries is not None else ["nativedir"],
        include_dirs=[str(include_dir)],
        library_dirs=[str(library_dir)] if library_dir else [],
        define_macros=defines or [],
        extra_link_args=[f"-Wl,-rpath,{p}" for p in rpaths] + (extra_link_args or []),
        extra_compile_args=["-Wall", "-Werror=implicit-function-declaration",
                            "-Werror=incompatible-pointer-types"] + (extra_compile_args or []),
    )
    return builder


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--include-dir", type=Path, required=True,
                    help="the folder holding nativedir.h")
    ap.add_argument("--library-dir", type=Path, required=True,
                    help="the folder holding libnativedir.so (also the module's run path)")
    ap.add_argument("--out-dir", type=Path, required=True,
                    help="where nativedir/_native.{c,so} are written")
    ap.add_argument("--print-cdef", action="store_true", help="print the cdef text and stop")
    args = ap.parse_args(argv)
    builder = make_builder(args.include_dir.resolve(), args.library_dir.resolve())
    if args.print_cdef:
        header = args.include_dir / HEADER
        sys.stdout.write(cdef_from_header(header.read_text(encoding="utf-8")))
        return 0
    args.out_dir.mkdir(parents=True, exist_ok=True)
    path = builder.compile(tmpdir=str(args.out_dir), verbose=False)
    print(f"build_ffi: built {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
