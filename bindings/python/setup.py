"""pip's entry: ``pip install --no-build-isolation --no-deps bindings/python``.

Builds nativedir._native with build_ffi.py against the header and library
named by NATIVEDIR_INCLUDE_DIR / NATIVEDIR_LIBRARY_DIR (or pkg-config), and
ships libnativedir.so.1 inside the package, found through the module's
$ORIGIN run path, so the installed package needs no build tree.
"""
import os
import shutil
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_ffi  # noqa: E402

SONAME = "libnativedir.so.1"


class BuildPyWithLibrary(build_py):
    """Copies the shared library the module was linked against into the package."""

    def run(self):
        super().run()
        _, library_dir = build_ffi._default_dirs()
        if library_dir is None:
            # linked from the system's default paths: nothing to ship
            return
        source = library_dir / SONAME
        if not source.exists():
            raise SystemExit(f"setup.py: {source} not found; build the library first "
                             "(cmake --build <dir>) or set NATIVEDIR_LIBRARY_DIR")
        target = os.path.join(self.build_lib, "nativedir", SONAME)
        self.mkpath(os.path.dirname(target))
        shutil.copyfile(os.path.realpath(source), target)


setup(
    cffi_modules=["build_ffi.py:setup_builder"],
    cmdclass={"build_py": BuildPyWithLibrary},
)
