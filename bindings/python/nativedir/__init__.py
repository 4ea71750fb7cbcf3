"""nativedir: the file I/O a search engine's Directory layer needs, from Python.

A thin, Pythonic layer over the native library ``libnativedir`` (reached
through a compiled cffi module, so native calls release the GIL):

* :class:`Directory` - open a folder; create, list, rename, delete, fsync, lock;
* :class:`Input` - positional and cursor reads, zero-copy ``readinto_at``,
  memory-mapped reads exposed as a read-only ``memoryview``; a raw binary
  file object that ``io.BufferedReader`` can wrap;
* :class:`Output` - append-only writes without a copy, CRC-32, fsync;
* :class:`Ring` - asynchronous reads for asyncio (``await inp.read_at_async(...)``).

Errors are Python's own: FileNotFoundError, FileExistsError, PermissionError,
IsADirectoryError, BlockingIOError (a held lock), ValueError (invalid names,
arguments, closed objects; a name over 255 bytes raises NameTooLongError, both a
ValueError and OSError(ENAMETOOLONG) as from os calls), EOFError (a range past
the end), and OSError with the errno and the library's message otherwise.

Where the native code cannot load (no module for this platform, a corrupted or foreign one, a
missing C library symbol), ``import nativedir`` raises :class:`NativeLibraryUnavailable`, an
ImportError naming the platform, the file looked for, the loader's reason and the platforms the
installed package carries; every later import raises it again, the same.
"""
from __future__ import annotations

from ._directory import Directory, Lock, open
from ._errors import NameTooLongError, status_name
from ._ffi import ffi as _ffi
from ._ffi import lib as _lib
from ._input import Input, Strategy
from ._output import Output
from ._ring import IO_URING, THREADS, Ring, RingRead
from ._unavailable import NativeLibraryUnavailable

__all__ = ["Directory", "Input", "Output", "Lock", "Strategy", "NameTooLongError",
           "NativeLibraryUnavailable", "open", "Ring", "RingRead", "IO_URING", "THREADS",
           "library_version",
           "abi_version", "status_name", "__version__"]

def library_version() -> str:
    """The loaded libnativedir's version, "MAJOR.MINOR.PATCH"."""
    return _ffi.string(_lib.nd_version()).decode("ascii")


def abi_version() -> int:
    """The ABI version the loaded library implements."""
    return int(_lib.nd_abi_version())


# One version for the library and the package: both come from project(VERSION)
# of the top-level CMakeLists.txt (setup.py and the library's build read it).
__version__ = library_version()
