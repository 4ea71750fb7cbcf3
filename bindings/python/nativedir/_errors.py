"""Status codes to the exceptions Python users expect.

Every failing call leaves a message and an OS error in thread-local storage
of the library; they are read right after the failure on the same thread,
which is also the thread cffi made the call on.
"""
from __future__ import annotations

import errno
import os
import warnings
from typing import Any

from ._ffi import ffi, lib

# errno to report when the library's failure carried none (a check it made itself)
_DEFAULT_ERRNO = {
    lib.ND_E_NOT_FOUND: errno.ENOENT,
    lib.ND_E_EXISTS: errno.EEXIST,
    lib.ND_E_ACCESS: errno.EACCES,
    lib.ND_E_NO_SPACE: errno.ENOSPC,
    lib.ND_E_IO: errno.EIO,
    lib.ND_E_NOT_SUPPORTED: errno.EOPNOTSUPP,
    lib.ND_E_LOCKED: errno.EWOULDBLOCK,
    lib.ND_E_NO_MEMORY: errno.ENOMEM,
    lib.ND_E_TOO_MANY_OPEN: errno.EMFILE,
}
if hasattr(lib, "ND_E_BUSY"):
    _DEFAULT_ERRNO[lib.ND_E_BUSY] = errno.EBUSY

# caller mistakes: Python reports those as ValueError
_VALUE_ERRORS = frozenset((lib.ND_E_INVALID_ARGUMENT, lib.ND_E_INVALID_NAME, lib.ND_E_BAD_HANDLE))


class NameTooLongError(OSError, ValueError):
    """A file name over 255 bytes: OSError(ENAMETOOLONG), as os calls raise for it.

    Also a ValueError, as every other invalid name (``io.UnsupportedOperation``
    is both in the same way), so ``except ValueError`` keeps catching it.
    """


# the OS error the library leaves for a name over 255 bytes (ERROR_FILENAME_EXCED_RANGE on Windows)
_NAME_TOO_LONG = 206 if os.name == "nt" else errno.ENAMETOOLONG


def status_name(status: int) -> str:
    """The library's name of a status code, e.g. ``"ND_E_NOT_FOUND"``."""
    return ffi.string(lib.nd_status_name(status)).decode("ascii", "replace")


def error(status: int) -> Exception:
    """The exception for a failed call's `status`, with this thread's last message.

    ValueError: invalid names, arguments and handles (a name over 255 bytes:
    NameTooLongError, an OSError(ENAMETOOLONG) too); EOFError: a range past the
    end; FileNotFoundError (NotADirectoryError for ENOTDIR, as os), FileExistsError,
    PermissionError (IsADirectoryError for a directory), BlockingIOError (lock
    held); OSError(errno, message) otherwise. Each carries ``nd_status`` (the code) and ``nd_status_name``.
    """
    message = ffi.string(lib.nd_last_error_message()).decode("utf-8", errors="replace")
    return status_error(status, message, int(lib.nd_last_os_error()))


def status_error(status: int, message: str, os_error: int = 0) -> Exception:
    """The exception :func:`error` makes, from a status and a message of the caller's.

    For a failure reported away from the thread that failed (a ring read's
    completion), where this thread's last message belongs to another call.
    """
    status = int(status)
    exc: Exception
    if status == lib.ND_E_INVALID_NAME and os_error == _NAME_TOO_LONG:
        exc = NameTooLongError(errno.ENAMETOOLONG, message)
    elif status in _VALUE_ERRORS:
        exc = ValueError(message)
    elif status == lib.ND_E_EOF:
        exc = EOFError(message)
    else:
        code = os_error or _DEFAULT_ERRNO.get(status, errno.EIO)
        if status == lib.ND_E_NOT_FOUND and os_error == errno.ENOTDIR:
            # a directory where a file is asked for or the reverse (rename of a
            # directory over a file): os raises NotADirectoryError for it
            exc = NotADirectoryError(code, message)
        elif status == lib.ND_E_NOT_FOUND:
            exc = FileNotFoundError(code, message)
        elif status == lib.ND_E_EXISTS:
            exc = FileExistsError(code, message)
        elif status == lib.ND_E_ACCESS:
            cls = IsADirectoryError if os_error == errno.EISDIR else PermissionError
            exc = cls(code, message)
        elif status == lib.ND_E_LOCKED:
            exc = BlockingIOError(code, message)
        else:
            # OSError picks its errno's subclass itself (e.g. ENOSPC stays OSError)
            exc = OSError(code, message)
    exc.nd_status = status  # type: ignore[attr-defined]
    exc.nd_status_name = status_name(status)  # type: ignore[attr-defined]
    return exc


def release(handle: int) -> None:
    """nd_close for close(): ND_E_BAD_HANDLE only means another thread closed it at that moment."""
    rc = lib.nd_close(handle)
    if rc < 0 and rc != lib.ND_E_BAD_HANDLE:
        raise error(rc)


def finalize(obj: Any) -> None:
    """What every __del__ does with an object dropped while open: close it, then warn."""
    if getattr(obj, "_h", 0):
        what = repr(obj)
        try:
            obj.close()  # first: the warning may be configured to raise
        except Exception:  # noqa: BLE001 - nothing can be reported from a finalizer
            pass
        warnings.warn(f"unclosed {what}", ResourceWarning, stacklevel=3, source=obj)


def closed(kind: str) -> ValueError:
    """What every method of a closed object raises, like Python's own files."""
    return ValueError(f"I/O operation on closed {kind}")


def encode_name(name: str | bytes) -> bytes:
    """A file name as the UTF-8 bytes the library takes.

    Surrogates (undecodable bytes) raise UnicodeEncodeError, a ValueError; the
    library refuses everything else that is not one valid path component.
    """
    if isinstance(name, str):
        raw = name.encode("utf-8")
    elif isinstance(name, bytes):
        raw = name
    else:
        raise TypeError(f"a file name must be str or bytes, not {type(name).__name__}")
    if b"\0" in raw:
        # C would see a shorter name: refuse it here, as open() does
        raise ValueError("embedded null byte in file name")
    return raw
