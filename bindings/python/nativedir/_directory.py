"""Directory: the open folder every file operation is relative to, and its locks."""
from __future__ import annotations

import os
from types import TracebackType
from typing import List, Optional, Type, TypeVar, Union

from ._errors import closed, finalize, release, encode_name, error
from ._ffi import ffi, lib
from ._input import Input
from ._output import Output

Name = Union[str, bytes]
PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
_H = TypeVar("_H", bound="_Handle")


class _Handle:
    """Owns one native handle: close once, context manager, warn if dropped open."""

    _kind = "handle"

    def __init__(self, handle: int) -> None:
        self._h = handle

    def _handle(self) -> int:
        h = self._h
        if not h:
            raise closed(self._kind)
        return h

    @property
    def closed(self) -> bool:
        """True once closed."""
        return not self._h

    def close(self) -> None:
        """Releases the native handle. Closing twice is allowed."""
        h = self._h
        self._h = 0
        if h:
            release(h)

    def __enter__(self: _H) -> _H:
        self._handle()
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]],
                 exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        self.close()

    def __del__(self) -> None:
        finalize(self)


class Lock(_Handle):
    """An exclusive lock taken by :meth:`Directory.lock`; ``close()`` (or ``with``) releases it."""

    _kind = "lock"

    def __init__(self, handle: int, name: str) -> None:
        super().__init__(handle)
        self.name = name

    def release(self) -> None:
        """Same as :meth:`close`."""
        self.close()

    def __repr__(self) -> str:
        return f"<nativedir.Lock {self.name!r}{' released' if self.closed else ''}>"


# Opening is on the path of every whole-file read: on a machine where each
# system call flushes the TLB, every extra Python call here is paid cold
# (measured: 20 us of a 1 MiB scan's 2.5 ms went to the open's Python side).
_IO_MMAP = lib.ND_IO_MMAP
_IO_RANDOM = lib.ND_IO_RANDOM
_IO_SEQUENTIAL = lib.ND_IO_SEQUENTIAL
_IO_MERGE = lib.ND_IO_MERGE
_IO_PRELOAD = lib.ND_IO_PRELOAD
_IO_REQUIRE_DIRECT = lib.ND_IO_REQUIRE_DIRECT
_IO_OVERWRITE = lib.ND_IO_OVERWRITE
_IO_WARM = lib.ND_IO_WARM
_HANDLE_OUT = ffi.typeof("nd_handle *")


class Directory(_Handle):
    """An open directory. Every name given to its methods is one file name in it.

    A name is one path component (str, or UTF-8 bytes): "", ".", "..", names
    with a slash, over 255 bytes or not valid UTF-8 raise ValueError (over
    255 bytes: NameTooLongError, also an OSError(ENAMETOOLONG) as os raises), and
    nothing outside the directory is ever touched; symbolic links are never
    followed. Closing the directory leaves its open inputs, outputs and locks
    working until they are closed themselves.

    >>> with Directory("/tmp/idx", create=True) as d:  # doctest: +SKIP
    ...     with d.create_output("a.bin", overwrite=True) as out:
    ...         out.write(b"hello")
    ...     with d.open_input("a.bin") as inp:
    ...         inp.read_at(1, 3)
    b'ell'
    """

    _kind = "directory"

    def __init__(self, path: PathLike, *, create: bool = False) -> None:
        """Opens the directory at `path`; `create` makes it (and its parents) when missing."""
        self._h = 0
        raw = os.fsencode(path)
        if b"\0" in raw:
            raise ValueError("embedded null byte in path")
        self._path = os.fsdecode(raw)
        out = ffi.new("nd_handle *")
        rc = lib.nd_open_dir(raw, lib.ND_DIR_CREATE if create else 0, out)
        if rc < 0:
            raise error(rc)
        super().__init__(out[0])

    @classmethod
    def open(cls, path: PathLike, create: bool = False) -> "Directory":
        """Same as ``Directory(path, create=create)``."""
        return cls(path, create=create)

    @property
    def path(self) -> str:
        """The path the directory was opened with."""
        return self._path

    def __repr__(self) -> str:
        return f"<nativedir.Directory {self._path!r}{' closed' if self.closed else ''}>"

    # ---- files ----

    def open_input(self, name: Name, *, mmap: bool = False, random: bool = False,
                   sequential: bool = False, merge: bool = False, preload: bool = False,
                   require_direct: bool = False, warm: bool = False) -> Input:
        """Opens `name` for reading.

        `mmap` serves reads from a mapping (and enables :meth:`Input.memoryview`);
        `random` / `sequential` are access advice; `merge` reads once in bulk
        without polluting the page cache (direct I/O where allowed);
        `preload` faults the mapping in / reads ahead at open; `require_direct`
        raises OSError instead of falling back when direct I/O is refused;
        `warm` reads the whole file into the page cache at open, without waiting,
        while the directory's files fit in the cache the process may use.
        """
        flags = ((_IO_MMAP if mmap else 0) | (_IO_RANDOM if random else 0)
                 | (_IO_SEQUENTIAL if sequential else 0) | (_IO_MERGE if merge else 0)
                 | (_IO_PRELOAD if preload else 0)
                 | (_IO_REQUIRE_DIRECT if require_direct else 0) | (_IO_WARM if warm else 0))
        raw = encode_name(name)
        out = ffi.new(_HANDLE_OUT)
        rc = lib.nd_open_input(self._handle(), raw, flags, out)
        if rc < 0:
            raise error(rc)
        return Input(out[0], name if type(name) is str else _text(name))

    def create_output(self, name: Name, *, overwrite: bool = False, merge: bool = False,
                      require_direct: bool = False) -> Output:
        """Creates `name` for writing; FileExistsError if it exists unless `overwrite`.

        `merge` writes with direct I/O where the file system allows it (else
        without polluting the page cache); `require_direct` raises OSError
        instead of that fallback.
        """
        flags = ((_IO_OVERWRITE if overwrite else 0) | (_IO_MERGE if merge else 0)
                 | (_IO_REQUIRE_DIRECT if require_direct else 0))
        raw = encode_name(name)
        out = ffi.new(_HANDLE_OUT)
        rc = lib.nd_create_output(self._handle(), raw, flags, out)
        if rc < 0:
            raise error(rc)
        return Output(out[0], _text(name))

    def list(self) -> List[str]:
        """The names of the regular files in the directory, sorted by their UTF-8 bytes."""
        h = self._handle()
        cap = 4096
        while True:
            buf = ffi.new("char[]", cap)
            need = lib.nd_list(h, buf, cap)
            if need < 0:
                raise error(need)
            if need <= cap:
                break
            cap = int(need) + 256  # files may appear between the two calls
        raw = ffi.buffer(buf, need)[:]
        return [n.decode("utf-8") for n in raw.split(b"\0")[:-1]]

    def exists(self, name: Name) -> bool:
        """True if `name` is a regular file (a symbolic link is not)."""
        rc = lib.nd_file_exists(self._handle(), encode_name(name))
        if rc < 0:
            raise error(rc)
        return rc == 1

    def __contains__(self, name: Name) -> bool:
        return self.exists(name)

    def length(self, name: Name) -> int:
        """The length of the file `name` in bytes."""
        out = ffi.new("int64_t *")
        rc = lib.nd_file_length(self._handle(), encode_name(name), out)
        if rc < 0:
            raise error(rc)
        return int(out[0])

    def delete(self, name: Name) -> None:
        """Deletes `name` (a symbolic link is removed itself, never its target)."""
        rc = lib.nd_delete_file(self._handle(), encode_name(name))
        if rc < 0:
            raise error(rc)

    def rename(self, source: Name, target: Name) -> None:
        """Renames `source` to `target`, atomically replacing `target`."""
        rc = lib.nd_rename(self._handle(), encode_name(source), encode_name(target))
        if rc < 0:
            raise error(rc)

    def fsync(self, name: Name) -> None:
        """Makes the file's bytes durable. Prefer :meth:`Output.sync` on the writing handle."""
        rc = lib.nd_fsync(self._handle(), encode_name(name))
        if rc < 0:
            raise error(rc)

    def sync_dir(self) -> None:
        """Makes creates, renames and deletes in the directory durable."""
        rc = lib.nd_sync_dir(self._handle())
        if rc < 0:
            raise error(rc)

    def lock(self, name: Name) -> Lock:
        """Takes the exclusive lock `name` without waiting; BlockingIOError if it is held.

        Two locks of one name exclude each other within a process and across
        processes. The lock file is created if missing and left in place.
        """
        out = ffi.new("nd_handle *")
        rc = lib.nd_lock(self._handle(), encode_name(name), out)
        if rc < 0:
            raise error(rc)
        return Lock(out[0], _text(name))


def _text(name: Name) -> str:
    return name if isinstance(name, str) else name.decode("utf-8", errors="replace")


def open(path: PathLike, create: bool = False) -> Directory:  # noqa: A001 - mirrors io.open
    """Opens a directory: same as ``Directory(path, create=create)``."""
    return Directory(path, create=create)
