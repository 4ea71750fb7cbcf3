"""Output: an append-only file with a running CRC-32."""
from __future__ import annotations

import io
from typing import Any

from ._errors import closed, finalize, release, error
from ._ffi import ffi, lib
from ._input import Strategy

_BYTES = ffi.typeof("char[]")
_from_buffer = ffi.from_buffer  # positional arguments: keywords cost 200 ns a call
_write_bytes = lib.nd_write_bytes

Buffer = Any  # any contiguous bytes-like object


class Output(io.RawIOBase):
    """A file created by :meth:`Directory.create_output`; append-only.

    :meth:`write` hands the caller's buffer to the library without a copy and
    always writes all of it. Bytes are durable only after :meth:`sync` (which
    fsyncs through this handle); :meth:`close` flushes but does not fsync.
    Implements the writable side of :class:`io.RawIOBase`, so
    ``io.BufferedWriter(output)`` works. One writer at a time. Unlike
    ``io.FileIO(path, "wb")`` it cannot seek, truncate or read: those raise
    io.UnsupportedOperation (ValueError once closed) and ``seekable()`` is False.
    """

    __slots__ = ("_h", "_name")  # cheaper attribute reads on the hot path

    def __init__(self, handle: int, name: str) -> None:
        # created by Directory.create_output, which owns `handle` until here
        super().__init__()
        self._h = handle
        self._name = name

    @property
    def name(self) -> str:
        """The file's name in its directory."""
        return self._name

    def __repr__(self) -> str:
        return f"<nativedir.Output {self._name!r}{' closed' if not self._h else ''}>"

    def _handle(self) -> int:
        h = self._h
        if not h:
            raise closed("output")
        return h

    def writable(self) -> bool:
        self._handle()
        return True

    # What io.FileIO(path, "wb") answers for the reading and moving half of the
    # raw file protocol: ValueError once closed, else io.UnsupportedOperation.
    # io.RawIOBase's defaults would raise NotImplementedError (read, readinto)
    # or answer False on a closed file (readable, seekable).

    def readable(self) -> bool:
        self._handle()
        return False

    def seekable(self) -> bool:
        """False: an output is append-only (its running CRC-32 covers every byte in order)."""
        self._handle()
        return False

    def _unsupported(self, what: str) -> io.UnsupportedOperation:
        self._handle()
        return io.UnsupportedOperation(f"{what}: nativedir.Output {self._name!r} is "
                                       "append-only and not open for reading")

    def read(self, size: int = -1) -> bytes:  # type: ignore[override]
        raise self._unsupported("read")

    def readall(self) -> bytes:
        raise self._unsupported("readall")

    def readinto(self, buffer: Buffer) -> int:  # type: ignore[override]
        raise self._unsupported("readinto")

    def readline(self, size: int | None = -1) -> bytes:  # type: ignore[override]
        raise self._unsupported("readline")

    def seek(self, offset: int, whence: int = 0) -> int:
        raise self._unsupported("seek")

    def truncate(self, size: int | None = None) -> int:
        raise self._unsupported("truncate")

    def write(self, data: Buffer) -> int:  # type: ignore[override]
        """Appends all of `data` (any contiguous bytes-like object); returns its length.

        After a failed write the output is failed for good (the library's rule):
        close it and start over.
        """
        h = self._h
        if not h:
            raise closed("output")
        p = _from_buffer(_BYTES, data, False)
        r = _write_bytes(h, p, len(p))
        if r < 0:
            raise error(r)
        return r

    @property
    def buffer_size(self) -> int:
        """The size of the library's buffer for this output (nd_output_buffer_size):
        64 KiB for a buffered output (it grows with the file on Linux), the
        staging buffer of a direct one. Wrap the output with
        ``io.BufferedWriter(output, output.buffer_size)`` to collect small
        writes: each full buffer is then one call the library copies once or
        hands straight to the OS (io's default of 8 KiB makes eight)."""
        r = lib.nd_output_buffer_size(self._handle())
        if r < 0:
            raise error(r)
        return int(r)

    @property
    def position(self) -> int:
        """Bytes written so far (the file's length once closed)."""
        r = lib.nd_output_position(self._handle())
        if r < 0:
            raise error(r)
        return int(r)

    def tell(self) -> int:
        """Same as :attr:`position`."""
        return self.position

    def crc32(self) -> int:
        """zlib's CRC-32 of every byte written so far (equals ``zlib.crc32`` of them)."""
        r = lib.nd_output_crc32(self._handle())
        if r < 0:
            raise error(r)
        return int(r)

    def flush(self) -> None:
        """Hands every byte written so far to the OS, without an fsync.

        Afterwards the file's length is :attr:`position` and readers see every
        byte (a merge output writes its direct-I/O tail too). Durability is
        :meth:`sync`.
        """
        h = self._h
        if not h:  # closed (raises ValueError), or inside close(): nothing left to hand over
            super().flush()
            return
        rc = lib.nd_output_flush(h)
        if rc < 0:
            raise error(rc)

    def sync(self) -> None:
        """Flushes and fsyncs through this handle: every byte written is durable on return."""
        rc = lib.nd_output_sync(self._handle())
        if rc < 0:
            raise error(rc)

    @property
    def strategy(self) -> Strategy:
        """How the library writes (``Strategy.DIRECT`` for a direct-I/O merge output)."""
        rc = lib.nd_output_strategy(self._handle())
        if rc < 0:
            raise error(rc)
        return Strategy(rc)

    def close(self) -> None:
        """Flushes and releases the output, raising what the final flush reports.

        Does not fsync: call :meth:`sync` first for durability. Closing twice is allowed.
        """
        h = self._h
        self._h = 0
        super().close()
        if h:
            release(h)

    def __del__(self) -> None:
        if getattr(self, "_h", 0):  # the common case, closed, costs no call
            finalize(self)
