"""Input: a file opened for reading, usable as a raw binary file object."""
from __future__ import annotations

import enum
import errno
import io
import operator
import os
from typing import TYPE_CHECKING, Any, Optional

from ._ring import Ring as _Ring
from ._errors import closed, finalize, release, error
from ._ffi import ffi, lib

if TYPE_CHECKING:
    import asyncio

# Hot paths bind these once and pass arguments positionally: an attribute
# lookup or a keyword argument (200 ns for from_buffer's) costs about as much
# as the native call of a small read.
_BYTES = ffi.typeof("char[]")
_from_buffer = ffi.from_buffer  # _from_buffer(_BYTES, obj, require_writable)
_unpack = ffi.unpack
_buffer = ffi.buffer
_new_raw = ffi.new_allocator(should_clear_after_alloc=False)  # read buffers are overwritten
_read_bytes = lib.nd_read_bytes
_read_from = lib.nd_input_read_from  # the cursor's read at a position: no native seek needed
_close = lib.nd_close
_input_length = lib.nd_input_length
_new = ffi.new
_INT64_OUT = ffi.typeof("int64_t *")
_IO_RANDOM = lib.ND_IO_RANDOM
_IO_SEQUENTIAL = lib.ND_IO_SEQUENTIAL
_NO_WINDOW = ffi.NULL  # nd_input_read_from's window: a Python cursor takes none

Buffer = Any  # any writable (or, for writes, readable) contiguous bytes-like object

# What Input._pin holds while no buffer is pinned: a private object no caller
# can pass, so the hot paths' identity test needs no separate "is empty" test.
_NO_BUFFER = object()
_UNPINNED = (_NO_BUFFER, None, 0)


class _SeekError(OSError, ValueError):
    """A seek io.FileIO refuses with OSError(EINVAL); also a ValueError, as this class raised before."""


class Strategy(enum.IntEnum):
    """How an input reads or an output writes, as the library decided at open."""

    BUFFERED = lib.ND_STRATEGY_BUFFERED
    """Through the page cache with the library's own buffer."""
    MAPPED = lib.ND_STRATEGY_MAPPED
    """From a memory mapping."""
    DIRECT = lib.ND_STRATEGY_DIRECT
    """Direct I/O, bypassing the page cache (merges)."""
    DROP_BEHIND = lib.ND_STRATEGY_DROP_BEHIND
    """Buffered, dropping from the page cache what it brought in (merge without direct I/O)."""


class Input(io.RawIOBase):
    """A file opened for reading by :meth:`Directory.open_input`.

    Two ways to read:

    * positional, thread-safe on one input: :meth:`read_at` and the zero-copy
      :meth:`readinto_at` read exactly the bytes asked for or raise EOFError;
    * a cursor (:meth:`read`, :meth:`readinto`, :meth:`seek`, :meth:`tell`) that
      follows the :class:`io.RawIOBase` protocol (short reads at the end, ``b""``
      at EOF), so ``io.BufferedReader(input)`` works. A cursor belongs to one
      thread at a time: give each thread its own :meth:`clone`.

    Native calls release the GIL. Close it (or use ``with``) to release the
    file; clones and slices stay usable until they are closed themselves.

    Reading into the same bytearray again costs less: the input keeps the
    last bytearray :meth:`readinto_at` or :meth:`readinto` filled *exported*,
    as a memoryview of it would, so the next call with that very object skips
    the buffer protocol. While it is held, resizing that bytearray raises
    BufferError, which is what keeps the pointer the library writes through
    valid (and the input keeps it alive). It is let go when the input reads
    into another buffer, when ``readinto`` reads less than the whole buffer
    (the end of the input: a caller may trim the bytearray to what was read),
    on :meth:`release_buffer` and on :meth:`close`. Trimming after a full read
    (``del b[n:]`` with ``n == len(b)``) deletes nothing and works too. Other
    buffer types (memoryview, array, numpy) are never held: io's own classes
    hand ``readinto`` memoryviews they release right after the call.
    """

    # slots: attribute reads on the hot path are ~30 ns cheaper than through
    # the instance dict io.IOBase gives its subclasses
    __slots__ = ("_h", "_name", "_pos", "_len", "_pin")

    def __init__(self, handle: int, name: str) -> None:
        # Created by Directory.open_input / clone / slice, which own `handle`
        # until here. (io.RawIOBase needs no __init__ call: its state is made
        # at allocation.)
        self._h = handle
        self._name = name
        self._pin = _UNPINNED  # (buffer, its cffi pointer, its length in bytes)
        self._pos = 0  # may exceed the length after seek(): reads there return nothing
        out = _new(_INT64_OUT)
        rc = _input_length(handle, out)
        if rc < 0:
            exc = error(rc)
            _close(handle)
            self._h = 0
            raise exc
        self._len = out[0]

    # ---- description ----

    @property
    def name(self) -> str:
        """The file's name in its directory."""
        return self._name

    @property
    def length(self) -> int:
        """The input's length in bytes (a slice's own length)."""
        return self._len

    def __len__(self) -> int:
        return self._len

    @property
    def strategy(self) -> Strategy:
        """How the library reads this input (e.g. ``Strategy.MAPPED`` with ``mmap=True``)."""
        rc = lib.nd_input_strategy(self._handle())
        if rc < 0:
            raise error(rc)
        return Strategy(rc)

    def __repr__(self) -> str:
        state = "closed" if not self._h else f"{self._len} bytes"
        return f"<nativedir.Input {self._name!r} {state}>"

    def _handle(self) -> int:
        h = self._h
        if not h:
            raise closed("input")
        return h

    # ---- positional reads (thread-safe) ----

    def read_at(self, offset: int, n: int) -> bytes:
        """Returns exactly `n` bytes at `offset`; EOFError if they run past the end."""
        if n < 0:
            raise ValueError(f"read_at: negative length {n}")
        p = _new_raw(_BYTES, n)
        r = _read_bytes(self._h, offset, p, n)  # closed: handle 0, refused (see _failed)
        if r < 0:
            raise self._failed(r)
        return _unpack(p, n)

    def readinto_at(self, buffer: Buffer, offset: int) -> int:
        """Fills all of `buffer` with the bytes at `offset`, without a copy in Python.

        `buffer` is any writable contiguous bytes-like object (bytearray,
        memoryview, array, numpy array); a bytearray stays exported until the
        input reads into another buffer (see the class notes). Returns its
        length in bytes; EOFError (nothing read) if the range runs past the end.
        """
        # The per-call cost is the whole difference to os.preadv (the read
        # itself is the same pread): a repeated buffer costs one identity test,
        # and the closed and argument checks are the library's (see _failed).
        pinned, p, n = self._pin
        if pinned is not buffer:
            p, n = self._pin_buffer(buffer)
        r = _read_bytes(self._h, offset, p, n)
        if r < 0:
            raise self._failed(r)
        return r

    # ---- asynchronous positional reads (asyncio) ----

    def read_at_async(self, offset: int, n: int) -> "asyncio.Future[bytes]":
        """``await inp.read_at_async(offset, n)``: exactly `n` bytes at `offset`.

        The asynchronous :meth:`read_at`, through :meth:`Ring.shared`: returns
        an :class:`asyncio.Future` (already done when the bytes were cached),
        whose await raises what :meth:`read_at` raises. See :class:`Ring` for
        cancellation, closing and event loops.
        """
        return (_Ring._shared or _Ring.shared()).read_at(self, offset, n)

    def readinto_at_async(self, buffer: Buffer, offset: int) -> "asyncio.Future[int]":
        """``await inp.readinto_at_async(buffer, offset)``: fills all of `buffer`.

        The asynchronous :meth:`readinto_at`, through :meth:`Ring.shared`: the
        future's result is the buffer's length in bytes. The buffer stays
        exported and alive until the read is over; do not use it meanwhile.
        See :meth:`Ring.readinto_at`.
        """
        return (_Ring._shared or _Ring.shared()).readinto_at(self, buffer, offset)

    def release_buffer(self) -> None:
        """Lets go of the bytearray this input last read into, so it can be resized again."""
        self._pin = _UNPINNED

    def _pin_buffer(self, buffer: Buffer) -> "tuple[Any, int]":
        """The cffi pointer to a writable `buffer` and its length; keeps a bytearray's.

        The pointer object holds the buffer's export: as long as it is
        referenced (in _pin, or by a call in progress on another thread) the
        buffer can be neither resized nor freed under the library's writes.
        """
        self._handle()
        p = _from_buffer(_BYTES, buffer, True)
        n = len(p)
        # one tuple, replaced at once: another thread reading with its own
        # buffer sees either pin whole, never one buffer with another's pointer
        self._pin = (buffer, p, n) if type(buffer) is bytearray else _UNPINNED
        if not self._h:  # closed by another thread meanwhile: hold nothing
            self._pin = _UNPINNED
        return p, n

    def _failed(self, status: int) -> Exception:
        # A closed input reaches the library with handle 0, which it refuses:
        # report that as Python's files do.
        return error(status) if self._h else closed("input")

    # ---- the cursor: io.RawIOBase ----

    def readable(self) -> bool:
        self._handle()
        return True

    seekable = readable  # both True while open; ValueError once closed, as FileIO

    def writable(self) -> bool:
        self._handle()
        return False

    def write(self, b: Buffer) -> int:  # type: ignore[override]
        """Refused, as by a file opened for reading."""
        self._handle()
        raise io.UnsupportedOperation("File not open for writing")

    def readinto(self, buffer: Buffer) -> int:  # type: ignore[override]
        """Reads up to ``len(buffer)`` bytes at the cursor into `buffer`; 0 at the end.

        A bytearray stays held after a full read, as with :meth:`readinto_at`
        (see the class notes); a short read or 0 at the end lets it go, so
        the raw file protocol's habit of trimming the bytearray to what was
        read (``del b[n:]``) works.
        """
        pinned, p, n = self._pin
        if pinned is not buffer:
            p, n = self._pin_buffer(buffer)
        pos = self._pos
        left = self._len - pos
        if n > left:
            self._pin = _UNPINNED  # short: the caller may trim it (p holds it until we return)
            if left <= 0:
                if not self._h:
                    raise closed("input")
                return 0
            n = left
        r = _read_from(self._h, pos, p, n, _NO_WINDOW)
        if r < 0:
            raise self._failed(r)
        self._pos = pos + n
        return n

    def read(self, size: Optional[int] = -1) -> bytes:
        """Reads up to `size` bytes at the cursor (all the rest if negative); ``b""`` at the end."""
        h = self._h
        if not h:
            raise closed("input")
        size = -1 if size is None else operator.index(size)  # as FileIO: a float is a TypeError
        pos = self._pos
        n = self._len - pos
        if 0 <= size < n:
            n = size
        if n <= 0:
            return b""
        p = _new_raw(_BYTES, n)
        r = _read_from(h, pos, p, n, _NO_WINDOW)
        if r < 0:
            raise error(r)
        self._pos = pos + n
        return _unpack(p, n)

    def readall(self) -> bytes:
        """Reads everything from the cursor to the end."""
        return self.read(-1)

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        """Moves the cursor like :meth:`io.IOBase.seek`; past the end, reads return ``b""``."""
        self._handle()
        offset = operator.index(offset)  # as FileIO: a float is a TypeError
        if whence not in (os.SEEK_SET, os.SEEK_CUR, os.SEEK_END):
            raise _SeekError(errno.EINVAL, f"invalid whence ({whence}, should be 0, 1 or 2)")
        # from the start, the cursor or the end (0, 1, 2 on every platform, as io's own)
        target = offset + (0, self._pos, self._len)[whence]
        if target < 0:
            raise _SeekError(errno.EINVAL, f"negative seek position {target}")
        self._pos = target
        return target

    def tell(self) -> int:
        """The cursor's position."""
        self._handle()
        return self._pos

    # ---- read-ahead and advice ----

    def prefetch(self, offset: int, length: int) -> None:
        """Asks the OS to start reading ``[offset, offset + length)`` into memory; returns at once.

        Lucene's ``IndexInput.prefetch``: call it for the blocks about to be
        read, then read them, and their reads overlap on the device. Next to
        free when the bytes are cached (the library stops looking after
        repeated hits); a no-op for direct inputs. EOFError past the end,
        ValueError for a negative offset or length. Experimental.
        """
        rc = lib.nd_input_prefetch(self._handle(), offset, length)
        if rc < 0:
            raise self._failed(rc)

    def advise(self, *, random: bool = False, sequential: bool = False) -> None:
        """Changes the access advice of this open input (neither: normal).

        Lucene 10's read-advice update. Clones share the file's advice; a
        slice's covers its own range. ValueError for both at once. Experimental.
        """
        flags = (_IO_RANDOM if random else 0) | (_IO_SEQUENTIAL if sequential else 0)
        rc = lib.nd_input_advise(self._handle(), flags)
        if rc < 0:
            raise self._failed(rc)

    # ---- new handles on the same file ----

    def clone(self) -> "Input":
        """A new input on the same file (and mapping) with its own cursor at 0."""
        return Input(self._new_handle(lib.nd_input_clone), self._name)

    def slice(self, offset: int, length: int) -> "Input":
        """A new input on bytes ``[offset, offset + length)``; nothing outside is readable."""
        return Input(self._new_handle(lib.nd_input_slice, offset, length), self._name)

    def _new_handle(self, call: Any, *args: int) -> int:
        """The handle nd_input_clone or nd_input_slice makes of this input's."""
        out = ffi.new("nd_handle *")
        rc = call(self._handle(), *args, out)
        if rc < 0:
            raise error(rc)
        return out[0]

    def memoryview(self) -> memoryview:
        """A read-only memoryview over all bytes of a mapped input, without a copy.

        Needs ``open_input(name, mmap=True)`` (ValueError otherwise). Lifetime:
        the view holds its own handle on the mapping, so it (and every slice
        of it) stays valid after this input is closed; the mapping goes away
        when the last view is released (``view.release()`` or garbage
        collection). The underlying pages are mapped read-only: writing
        through ``view.obj`` (the cffi buffer beneath) would kill the process.
        """
        if self.strategy != Strategy.MAPPED:  # raises on a closed input
            raise ValueError(f"memoryview() needs a mapped input; open {self._name!r} "
                             "with mmap=True")
        if self._len == 0:
            return memoryview(b"")
        view_handle = self._new_handle(lib.nd_input_clone)
        ptr = ffi.new("const uint8_t **")
        # the whole mapping: a window (nd_input_window) stops at ND_MAPPED_WINDOW
        n = lib.nd_input_map(view_handle, 0, ptr)
        if n < 0:
            exc = error(n)
            _close(view_handle)
            raise exc
        # The gc'd pointer is referenced by the buffer, which every memoryview
        # (and slice) references: the clone closes when the last one dies.
        # Nothing can read the window then, so its pin goes too (a close
        # alone leaves it: nativedir.h).
        owner = ffi.gc(ffi.cast("uint8_t *", ptr[0]),
                       lambda _p, h=view_handle: (lib.nd_input_unpin(h), _close(h)), size=int(n))
        return memoryview(_buffer(owner, int(n))).toreadonly()

    # ---- closing ----

    def close(self) -> None:
        """Releases the input; later calls raise ValueError. Closing twice is allowed."""
        h = self._h
        self._h = 0
        self._pin = _UNPINNED
        super().close()
        if h:
            release(h)

    def __del__(self) -> None:
        if getattr(self, "_h", 0):  # the common case, closed, costs no call
            finalize(self)
