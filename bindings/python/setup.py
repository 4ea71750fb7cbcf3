"""pip's entry: ``pip install bindings/python`` (or ``pip wheel``, or an sdist).

Needs a C compiler and Python's headers, nothing else: the library's own C
sources are compiled into the extension module (build_ffi.bundled_builder), so
there is no CMake step, no environment variable and no libnativedir to find at
run time. The source list (native/sources.cmake) and the version (project() of
the top-level CMakeLists.txt) are read from the files CMake reads.

In the source tree those files are two folders up; an sdist carries a copy of
them under ``csrc/`` (see SdistWithSources), so it builds on its own.

The wheel is built for the stable ABI (abi3, CPython >= 3.9) and its platform
tag is computed from what the module really needs (see BdistWheelTagged).
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.sdist import sdist

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import build_ffi  # noqa: E402

ROOT = build_ffi.source_root()
VERSION = build_ffi.project_version(ROOT)
# requires-python in pyproject.toml: the oldest CPython whose stable ABI the module uses
LIMITED_API = "cp39"


def sources_for_sdist(root: Path) -> list[Path]:
    """What an sdist must carry to build: the version's file, the source list,
    the header and every file under native/src (both OSes), relative to root."""
    files = [Path("CMakeLists.txt"), Path("native/sources.cmake")]
    for sub in ("native/include", "native/src"):
        files += sorted(p.relative_to(root) for p in (root / sub).rglob("*")
                        if p.is_file() and p.suffix in (".c", ".h"))
    return files


class SdistWithSources(sdist):
    """Copies the library's sources into the sdist under csrc/."""

    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        for rel in sources_for_sdist(ROOT):
            target = Path(base_dir) / "csrc" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / rel, target)


def glibc_floor(module: str) -> tuple[int, int] | None:
    """The highest GLIBC_x.y symbol version the module references (objdump -T)."""
    try:
        out = subprocess.run(["objdump", "-T", module], check=True, capture_output=True,
                             text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    versions = {(int(a), int(b)) for a, b in re.findall(r"\bGLIBC_(\d+)\.(\d+)", out)}
    return max(versions) if versions else (2, 17)


def needed_libraries(module: str) -> list[str] | None:
    try:
        out = subprocess.run(["objdump", "-p", module], check=True, capture_output=True,
                             text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return re.findall(r"^\s*NEEDED\s+(\S+)", out, flags=re.M)


# PEP 600: what a manylinux wheel may take from the system; libz.so.1 only when
# build_ffi had no libz.a to link in.
MANYLINUX_LIBRARIES = {"libc.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libpthread.so.0",
                       "libgcc_s.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1",
                       "libz.so.1"}


def platform_tag(module: str, fallback: str) -> str:
    """manylinux_2_<y>_<arch> from the module's own glibc needs, else the fallback.

    The tag promises the wheel runs on any Linux with glibc >= 2.<y>; it is only
    given when every library the module needs is one the policy allows.
    """
    if not fallback.startswith("linux_"):
        return fallback
    floor = glibc_floor(module)
    needed = needed_libraries(module)
    if floor is None or needed is None or not set(needed) <= MANYLINUX_LIBRARIES:
        print(f"setup.py: {module} needs {needed}; keeping the tag {fallback}", file=sys.stderr)
        return fallback
    return f"manylinux_{floor[0]}_{floor[1]}_{fallback[len('linux_'):]}"


cmdclass = {"sdist": SdistWithSources}
try:
    from wheel.bdist_wheel import bdist_wheel
except ImportError:  # no wheel package: pip installs through setup.py install
    pass
else:
    class BdistWheelTagged(bdist_wheel):
        """abi3 + the computed manylinux tag."""

        def finalize_options(self):
            self.py_limited_api = LIMITED_API
            super().finalize_options()

        def get_tag(self):
            impl, abi, plat = super().get_tag()
            modules = [m for m in self.get_finalized_command("build_ext").get_outputs()
                       if os.path.basename(m).startswith("_native")]
            if modules and os.path.exists(modules[0]):
                plat = platform_tag(modules[0], plat)
            return impl, abi, plat

    cmdclass["bdist_wheel"] = BdistWheelTagged


setup(
    version=VERSION,
    libraries=[build_ffi.core_library(ROOT)],
    cffi_modules=["build_ffi.py:setup_builder"],
    cmdclass=cmdclass,
)
