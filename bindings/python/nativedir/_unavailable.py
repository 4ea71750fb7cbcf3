"""The one error of a nativedir whose native code cannot be loaded.

Nothing here touches the native module: this is what explains why it did not load.
"""
from __future__ import annotations

import importlib.machinery
import os
import platform as _platform
import sys
import sysconfig

# the import name of the compiled cffi module, inside this package
MODULE = "_native"


class NativeLibraryUnavailable(ImportError):
    """nativedir's native code cannot be loaded on this machine.

    Raised by ``import nativedir`` (an ImportError, so ``except ImportError`` catches it) when
    the compiled module ``nativedir._native`` is missing, is not a library this machine can
    load (corrupted, another architecture, a C library it needs is missing), or speaks another
    ABI than this package. Every later ``import nativedir`` raises it again with the same
    message: nothing is left half-loaded.

    The message, and these attributes, say:

    * ``platform``: this machine as the loader sees it (``linux-x86_64 (glibc 2.36), CPython
      3.11``);
    * ``path``: the file looked for (ImportError's own attribute);
    * ``reason``: the loader's own words;
    * ``carried``: the platforms the installed package carries native code for (the wheel's
      tags), or an empty tuple where there is no installed package (a source tree).
    """

    def __init__(self, message: str, *, platform: str, path: str, reason: str,
                 carried: tuple[str, ...]):
        super().__init__(message, name=f"{__package__}.{MODULE}", path=path)
        self.platform = platform
        self.reason = reason
        self.carried = carried


def this_platform() -> str:
    """``<os>-<arch> (<libc> <version>), <implementation> <major>.<minor>``."""
    libc, version = _platform.libc_ver()
    if not libc and sys.platform.startswith("linux"):
        # glibc answers libc_ver(); musl (Alpine) does not, but names its loader after itself
        libc, version = ("musl", "") if _musl_loader() else ("unknown libc", "")
    where = sysconfig.get_platform()
    libc_text = f" ({' '.join(p for p in (libc, version) if p)})" if libc else ""
    impl = sys.implementation.name
    impl = {"cpython": "CPython", "pypy": "PyPy"}.get(impl, impl)
    return f"{where}{libc_text}, {impl} {sys.version_info[0]}.{sys.version_info[1]}"


def _musl_loader() -> bool:
    try:
        return any(n.startswith("ld-musl-") for n in os.listdir("/lib"))
    except OSError:
        return False


def carried_platforms() -> tuple[str, ...]:
    """The platform tags of the installed distribution (its WHEEL file), if there is one."""
    try:
        from importlib import metadata
        wheel = metadata.distribution(__package__).read_text("WHEEL")
    except Exception:  # no installed metadata: a source tree or a build tree
        return ()
    tags = []
    for line in (wheel or "").splitlines():
        if line.startswith("Tag:"):
            platform_tag = line.split(":", 1)[1].strip().rsplit("-", 1)[-1]
            if platform_tag not in tags:
                tags.append(platform_tag)
    return tuple(tags)


def looked_for(exc: ImportError) -> str:
    """The module file the import tried: the one it found, else the one the installed package
    lists (its RECORD), else every name the module could have here."""
    if getattr(exc, "path", None):
        return str(exc.path)
    try:
        from importlib import metadata
        dist = metadata.distribution(__package__)
        for f in dist.files or ():
            if f.parts[:1] == (__package__,) and f.name.startswith(MODULE + "."):
                return str(dist.locate_file(f))
    except Exception:  # no installed metadata: a source tree or a build tree
        pass
    here = os.path.dirname(os.path.abspath(__file__))
    names = [MODULE + s for s in importlib.machinery.EXTENSION_SUFFIXES]
    return os.path.join(here, names[0]) + (
        f" (or {', '.join(names[1:])})" if len(names) > 1 else "")


# ELF e_machine values of the CPUs Python runs on
_ELF_MACHINES = {3: "x86", 8: "mips", 20: "ppc", 21: "ppc64", 22: "s390x", 40: "arm",
                 62: "x86_64", 183: "aarch64", 243: "riscv"}


def describe_file(path: str) -> str:
    """What the file at ``path`` is, from its first bytes: the loader's own words for a library
    of another CPU can be as vague as "No such file or directory"."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
    except FileNotFoundError:
        return "the file is missing"
    except OSError as e:
        return f"the file cannot be read ({e.strerror})"
    if head[:4] == b"\x7fELF" and len(head) >= 20:
        bits = {1: "32-bit", 2: "64-bit"}.get(head[4], "?-bit")
        machine = int.from_bytes(head[18:20], "little" if head[5] == 1 else "big")
        return (f"the file is a {bits} ELF library for "
                f"{_ELF_MACHINES.get(machine, f'machine {machine}')}, this machine is "
                f"{_platform.machine()}")
    if head[:4] in (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xca\xfe\xba\xbe"):
        return "the file is a Mach-O (macOS) library"
    if head[:2] == b"MZ":
        return "the file is a Windows (PE) library"
    return f"the file is not a library ({os.path.getsize(path)} bytes, starting {head[:8]!r})"


def unavailable(reason: str, path: str) -> NativeLibraryUnavailable:
    """The error for a native module at ``path`` that did not load, the loader saying ``reason``."""
    where = this_platform()
    what = describe_file(path)
    carried = carried_platforms()
    if carried:
        carries = f"This installed package carries native code for {', '.join(carried)}"
    else:
        carries = "No installed package metadata names the platforms carried (a source or build tree)"
    message = (f"nativedir cannot load its native code on {where}: looked for {path} ({what}); the "
               f"loader said: {reason}. {carries}. Install the wheel built for this platform, or build "
               f"the package from its sdist with a C compiler "
               f"(pip install --no-binary nativedir nativedir).")
    return NativeLibraryUnavailable(message, platform=where, path=path, reason=reason,
                                    carried=carried)
