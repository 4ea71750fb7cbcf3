"""Builds ``nativedir._native``, the cffi extension (out-of-line API mode).

The cdef text is derived from the public header itself, and the generated C
is compiled against that same header: a declaration that disagrees with the
library fails here, at build time, never at run time.

Two ways in:

* ``python3 build_ffi.py --include-dir I --library-dir L --out-dir O`` (what
  CMake runs): writes ``O/nativedir/_native.c`` and the compiled module next to
  it, linked to ``L/libnativedir.so`` with ``L`` as its run path.
* ``setup.py`` calls :func:`setup_builder` through ``cffi_modules``; the
  directories come from ``NATIVEDIR_INCLUDE_DIR`` / ``NATIVEDIR_LIBRARY_DIR``,
  else from ``pkg-config nativedir``, else the header of this source tree.
"""
from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import cffi

HERE = Path(__file__).resolve().parent
SOURCE_TREE_INCLUDE = HERE.parent.parent / "native" / "include"
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


def _pkg_config(*args: str) -> list[str]:
    try:
        out = subprocess.run(["pkg-config", *args, "nativedir"], check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return []
    return shlex.split(out)


def _default_dirs() -> tuple[Path, Path | None]:
    inc = os.environ.get("NATIVEDIR_INCLUDE_DIR")
    lib = os.environ.get("NATIVEDIR_LIBRARY_DIR")
    if inc is None:
        flags = [f[2:] for f in _pkg_config("--cflags-only-I") if f.startswith("-I")]
        inc = flags[0] if flags else str(SOURCE_TREE_INCLUDE)
    if lib is None:
        flags = [f[2:] for f in _pkg_config("--libs-only-L") if f.startswith("-L")]
        lib = flags[0] if flags else None
    return Path(inc), Path(lib) if lib else None


def make_builder(include_dir: Path, library_dir: Path | None,
                 rpaths: list[str] | None = None) -> cffi.FFI:
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
        libraries=["nativedir"],
        include_dirs=[str(include_dir)],
        library_dirs=[str(library_dir)] if library_dir else [],
        extra_link_args=[f"-Wl,-rpath,{p}" for p in rpaths],
        extra_compile_args=["-Wall", "-Werror=implicit-function-declaration",
                            "-Werror=incompatible-pointer-types"],
    )
    return builder


def setup_builder() -> cffi.FFI:
    """The builder setup.py uses (``cffi_modules=["build_ffi.py:setup_builder"]``)."""
    include_dir, library_dir = _default_dirs()
    # setup.py copies the library into the package; $ORIGIN finds it there
    rpaths = ["$ORIGIN"] + ([str(library_dir)] if library_dir else [])
    return make_builder(include_dir, library_dir, rpaths)


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
