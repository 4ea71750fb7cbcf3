"""Ring: asynchronous positional reads for asyncio, on the library's rings.

A read first copies what the page cache (or a mapping) already holds, in the
call itself (nd_read_cached); only the rest goes to the ring (io_uring on
Linux, else a few native threads). The event loop learns of completions
through a descriptor it watches (nd_ring_event_fd with ``loop.add_reader``),
so no Python thread waits per read or per ring; on a loop that cannot watch
one (Windows' proactor loop, or where the library has no such descriptor)
the ring reaps on one thread of its own and hands completions to the loop
with ``call_soon_threadsafe``.

Thread safety: a ring serves any number of loops in any threads. Whichever
loop reaps a completion delivers it: on its own thread if the read belongs to
it, else through ``call_soon_threadsafe`` of the read's loop. The tables are
plain dict and deque operations, each atomic under the GIL; the ring-full
queue and the close use ``_lock``.
"""
from __future__ import annotations

import asyncio
import collections
import itertools
import os
import threading
from typing import Any, Optional

from ._errors import closed, error, status_error, status_name
from ._ffi import ffi, lib

_Future = asyncio.Future
_future_cancel = asyncio.Future.cancel
_get_running_loop = asyncio.events._get_running_loop
_BYTES = ffi.typeof("char[]")
_from_buffer = ffi.from_buffer
_new_raw = ffi.new_allocator(should_clear_after_alloc=False)
_unpack = ffi.unpack
_cast = ffi.cast
_UINTPTR = ffi.typeof("uintptr_t")
_read_cached = lib.nd_read_cached
_submit_read = lib.nd_ring_submit_read
_reap = lib.nd_ring_reap
_E_BUSY = lib.ND_E_BUSY
_E_BAD_HANDLE = lib.ND_E_BAD_HANDLE
_E_NOT_SUPPORTED = lib.ND_E_NOT_SUPPORTED
_REAP_MAX = 64

# A read's life: cached reads are DONE at once; the rest are IN_KERNEL (handed
# to the ring) or QUEUED (the ring was full) until their completion is
# delivered (DONE).
_DONE, _QUEUED, _IN_KERNEL = 0, 1, 2

#: What a ring's ``backend`` says: the kernel reads (io_uring) or native threads do.
IO_URING = lib.ND_RING_IO_URING
THREADS = lib.ND_RING_THREADS


class RingRead(_Future):
    """The future of one read (an :class:`asyncio.Future`).

    ``cancel()`` follows the ring's rule: a read still queued (the ring was
    full) is dropped at once; a read the kernel has cannot be recalled, so
    ``cancel()`` returns True but the future becomes cancelled only once the
    kernel is done with the buffer. ``await`` then raises CancelledError, and
    the buffer is never written after that. ``asyncio.Task.cancel`` and
    ``asyncio.wait_for`` handle that delay as they handle any future.
    """

    __slots__ = ("_owner", "_ring", "_state", "_pin", "_raw", "_prefix", "_len", "_off",
                 "_input", "_clone", "_cancel_msg", "_want_cancel")

    def cancel(self, msg: Any = None) -> bool:  # type: ignore[override]
        state = getattr(self, "_state", _DONE)  # unset: completed in the call (cached)
        if state == _IN_KERNEL:
            if not self._want_cancel:
                self._want_cancel = True
                self._cancel_msg = msg
            return True
        if state == _QUEUED:
            if self._ring._drop_queued(self):
                return _future_cancel(self, msg)
            return self.cancel(msg)  # submitted from the queue meanwhile: in the kernel now
        return _future_cancel(self, msg)

    def _settle(self, result: int) -> None:
        """On the read's loop: the kernel is done with the buffer; complete the future."""
        self._state = _DONE
        p, raw = self._pin, self._raw  # raw owns p's memory: held until unpacked
        exc = self._error(result) if result < 0 else None
        self._pin = self._raw = self._input = self._ring = None
        if self.done():  # a caller completed it by hand
            return
        if self._want_cancel:
            _future_cancel(self, self._cancel_msg)
        elif exc is not None:
            self.set_exception(exc)
        elif raw is not None:
            self.set_result(_unpack(p, self._len))
        else:
            self.set_result(self._len)

    def _fail(self, exc: BaseException) -> None:
        """On the read's loop: the read did not happen (ring closed, submit refused)."""
        self._state = _DONE
        self._pin = self._raw = self._input = self._ring = None
        if not self.done():
            if self._want_cancel:
                _future_cancel(self, self._cancel_msg)
            else:
                self.set_exception(exc)

    def _error(self, status: int) -> BaseException:
        name = self._input._name if self._input is not None else "?"
        return status_error(status, f"ring read of {self._len - self._prefix} bytes at "
                                    f"{self._off + self._prefix} of '{name}': "
                                    f"{status_name(status)}")


def _failed_future(loop: Any, exc: BaseException) -> RingRead:
    fut = RingRead(loop=loop)
    fut._state = _DONE
    fut.set_exception(exc)
    return fut


_this_thread = threading.local()  # .loop: the loop last found running on this thread
_get_ident = threading.get_ident


def _running_loop() -> Any:
    """asyncio.get_running_loop(), without its getpid() system call per read.

    asyncio checks the process id on every call (a forked child must not
    see its parent's loop), which costs as much as a cached 4 KiB read where
    system calls are slow. A loop asyncio's way records the thread it runs on
    in ``_thread_id`` while it runs (None once stopped), so a loop found here
    before that says this very thread runs it is still the running loop; a
    forked child forgets it (os.register_at_fork below).
    """
    loop = getattr(_this_thread, "loop", None)
    if loop is not None and getattr(loop, "_thread_id", None) == _get_ident():
        return loop
    loop = _get_running_loop()
    if loop is None:
        raise RuntimeError("nativedir: asynchronous reads need a running asyncio event loop "
                           "(call them from a coroutine)")
    _this_thread.loop = loop
    return loop


class Ring:
    """A queue of asynchronous positional reads (the library's nd_ring).

    :meth:`Input.read_at_async` and :meth:`Input.readinto_at_async` use
    :meth:`Ring.shared`; make your own ring to give a workload its own depth
    or backend, and close it when done. ``depth`` is how many reads the
    kernel gets at once (1..4096); more wait in the ring's queue, in order.
    ``force_threads`` uses the native thread pool even where io_uring works.
    """

    _shared: "Optional[Ring]" = None
    _shared_lock = threading.Lock()

    def __init__(self, depth: int = 128, *, force_threads: bool = False) -> None:
        self._h = 0
        if not 1 <= depth <= 4096:
            raise ValueError(f"a ring's depth is 1..4096, not {depth}")
        out = ffi.new("nd_handle *")
        rc = lib.nd_ring_open(depth, lib.ND_RING_FORCE_THREADS if force_threads else 0, out)
        if rc < 0:
            raise error(rc)
        self._h = out[0]
        self._pid = os.getpid()
        self._depth = depth
        self._backend = int(lib.nd_ring_backend(self._h))
        self._reads: "dict[int, RingRead]" = {}  # in the kernel, by tag
        self._queue: "collections.deque[RingRead]" = collections.deque()  # waiting for a slot
        self._tags = itertools.count(1)
        self._lock = threading.Lock()
        self._closed = False
        self._submitted = 0  # reads that went to the ring (for tests)
        # how each loop learns of completions: its reader's buffers, or None
        # for a loop served by the completion thread
        self._watchers: "dict[Any, Any]" = {}
        self._fd = -1  # our dup() of the ring's event descriptor: -2 when it has none
        self._unwatching = 0  # loops yet to drop their reader after close
        self._thread: "Optional[threading.Thread]" = None

    # ---- description ----

    @classmethod
    def shared(cls) -> "Ring":
        """The process-wide ring (depth 128), made on first use and never closed.

        A child made by ``os.fork`` gets a ring of its own on first use: a ring
        does not survive a fork (its threads and io_uring stay in the parent).
        """
        ring = cls._shared
        if ring is not None:
            return ring
        with cls._shared_lock:
            if cls._shared is None:
                cls._shared = cls()
            return cls._shared

    @property
    def depth(self) -> int:
        """How many reads the kernel gets at once."""
        return self._depth

    @property
    def backend(self) -> int:
        """What the ring runs on: ``nativedir.IO_URING`` or ``nativedir.THREADS``."""
        return self._backend

    @property
    def closed(self) -> bool:
        return self._closed

    def __repr__(self) -> str:
        what = "closed" if self._closed else f"depth {self._depth}, " + (
            "io_uring" if self._backend == IO_URING else "threads")
        return f"<nativedir.Ring {what}>"

    def __enter__(self) -> "Ring":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- reads ----

    def readinto_at(self, input: Any, buffer: Any, offset: int) -> RingRead:
        """Fills all of `buffer` with the bytes of `input` at `offset`; a future of its length.

        Returns an :class:`asyncio.Future` (await it; ``asyncio.ensure_future``
        and ``gather`` take it as it is). Bytes the page cache or a mapping
        holds are copied during the call, and the future is then already
        done: awaiting it does not go through the loop. `buffer` is any
        writable contiguous bytes-like object; it stays exported (a bytearray
        cannot be resized) and alive until the read is over, and must not be
        used meanwhile. Awaiting raises EOFError if the range passes the end
        (nothing is read), ValueError for a negative offset or a closed input
        or ring, OSError for I/O errors. Needs a running event loop.
        """
        # the fast path of _running_loop, inline: a cached read costs little more than its
        # system call, and a Python call here would be a tenth of it
        loop = getattr(_this_thread, "loop", None)
        if loop is None or getattr(loop, "_thread_id", None) != _get_ident():
            loop = _running_loop()
        p = _from_buffer(_BYTES, buffer, True)
        if self._closed:
            return _failed_future(loop, closed("ring"))
        n = len(p)
        h = input._h
        got = _read_cached(h, offset, p, n)
        if got == n:
            fut = RingRead(loop=loop)
            fut.set_result(n)
            return fut
        if got < 0:
            return _failed_future(loop, input._failed(got))
        return self._submit(loop, input, h, p, None, offset, n, got)

    def read_at(self, input: Any, offset: int, n: int) -> RingRead:
        """Exactly `n` bytes of `input` at `offset`: a future of bytes (see :meth:`readinto_at`)."""
        loop = getattr(_this_thread, "loop", None)  # _running_loop's fast path, as above
        if loop is None or getattr(loop, "_thread_id", None) != _get_ident():
            loop = _running_loop()
        if n < 0:
            return _failed_future(loop, ValueError(f"read_at_async: negative length {n}"))
        if self._closed:
            return _failed_future(loop, closed("ring"))
        p = raw = _new_raw(_BYTES, n)
        h = input._h
        got = _read_cached(h, offset, p, n)
        if got == n:
            fut = RingRead(loop=loop)
            fut.set_result(_unpack(p, n))
            return fut
        if got < 0:
            return _failed_future(loop, input._failed(got))
        if got == 0 and not (n & 511 or offset & 511):
            # page-aligned memory: a direct input's aligned reads (which never
            # find cached bytes) go to the kernel instead of being done at submit
            raw = _new_raw(_BYTES, n + 4096)
            p = raw + (-int(_cast(_UINTPTR, raw)) & 4095)
        return self._submit(loop, input, h, p, raw, offset, n, got)

    def _submit(self, loop: Any, input: Any, h: int, p: Any, raw: Any, offset: int, n: int,
                got: int) -> RingRead:
        """The part of a read that was not cached goes to the kernel, or waits for a slot.

        `p` is where the bytes go; `raw` owns the memory of a read_at (None for
        readinto_at, whose `p` holds the caller's buffer exported).
        """
        fut = RingRead(loop=loop)
        fut._owner = loop
        fut._ring = self
        fut._pin = p
        fut._raw = raw
        fut._prefix = got
        fut._len = n
        fut._off = offset
        fut._input = input
        fut._clone = 0
        fut._want_cancel = False
        fut._state = _IN_KERNEL
        if loop not in self._watchers:
            self._watch(loop)
        if self._closed:
            fut._fail(closed("ring"))
            return fut
        self._submitted += 1
        if self._queue:  # reads that found the ring full go first
            self._enqueue(fut, h)
            return fut
        tag = next(self._tags)
        self._reads[tag] = fut  # before the submit: any loop may reap it at once
        rc = _submit_read(self._h, h, offset + got, p + got, n - got, tag)
        if rc == 0:
            return fut
        if self._reads.pop(tag, None) is None:
            return fut  # the ring's close failed it meanwhile
        if rc == _E_BUSY:
            self._enqueue(fut, h)
        else:
            fut._fail(self._refused(rc, input))
        return fut

    def _refused(self, rc: int, input: Any) -> BaseException:
        if rc == _E_BAD_HANDLE and self._closed:
            return closed("ring")
        return input._failed(rc)

    # ---- the queue of reads that found the ring full ----

    def _enqueue(self, fut: RingRead, h: int) -> None:
        # The input must stay open until the read is submitted: the queue holds
        # a clone of its handle (a close of the input closes only its own).
        out = ffi.new("nd_handle *")
        rc = lib.nd_input_clone(h, out)
        if rc < 0:
            fut._fail(fut._input._failed(rc))
            return
        fut._clone = out[0]
        with self._lock:
            if not self._closed:
                fut._state = _QUEUED
                self._queue.append(fut)
                fut = None  # type: ignore[assignment]
        if fut is not None:
            lib.nd_close(fut._clone)
            fut._fail(closed("ring"))
            return
        # every read in flight may have completed meanwhile, with nothing
        # queued yet: try now, or the next completion submits it
        self._submit_queued()

    def _submit_queued(self) -> None:
        """Submits queued reads, in order, until the ring is full again."""
        done: "list[tuple[RingRead, BaseException]]" = []
        with self._lock:
            queue = self._queue
            while queue and not self._closed:
                fut = queue[0]
                if fut._state != _QUEUED:  # cancelled while it waited
                    queue.popleft()
                    continue
                tag = next(self._tags)
                fut._state = _IN_KERNEL
                self._reads[tag] = fut
                got = fut._prefix
                rc = _submit_read(self._h, fut._clone, fut._off + got, fut._pin + got,
                                  fut._len - got, tag)
                if rc == _E_BUSY:
                    del self._reads[tag]
                    fut._state = _QUEUED
                    break
                queue.popleft()
                lib.nd_close(fut._clone)  # the ring's read holds the input now
                fut._clone = 0
                if rc < 0 and self._reads.pop(tag, None) is not None:
                    done.append((fut, self._refused(rc, fut._input)))
        for fut, exc in done:
            self._deliver_failure(fut, exc)

    def _drop_queued(self, fut: RingRead) -> bool:
        """cancel() of a queued read: True if it was still queued and is now dropped."""
        with self._lock:
            if fut._state != _QUEUED:
                return False
            fut._state = _DONE  # _submit_queued skips it
            clone = fut._clone
            fut._clone = 0
        lib.nd_close(clone)
        fut._pin = fut._raw = None
        return True

    # ---- completions ----

    def _watch(self, loop: Any) -> None:
        """Makes `loop` learn of completions: a reader on the ring's descriptor, or the thread."""
        with self._lock:
            if loop in self._watchers or self._closed:
                return
            # loops closed since they last read through this ring are forgotten
            for old in [w for w in self._watchers if w.is_closed()]:
                del self._watchers[old]
            if self._fd == -1:
                fd = lib.nd_ring_event_fd(self._h)
                # a dup() of our own: it is closed after the last loop stopped
                # watching it, whenever the ring itself goes
                self._fd = os.dup(fd) if fd >= 0 else -2
            buffers = None
            if self._fd >= 0:
                buffers = (ffi.new("uint64_t[]", _REAP_MAX), ffi.new("int64_t[]", _REAP_MAX))
                try:
                    loop.add_reader(self._fd, self._on_ready, loop, buffers)
                except NotImplementedError:  # a proactor loop: no readers
                    buffers = None
            if buffers is None:
                self._start_thread()
            self._watchers[loop] = buffers

    def _on_ready(self, loop: Any, buffers: Any) -> None:
        """The loop's reader: the ring's descriptor is readable."""
        try:
            os.read(self._fd, 8)
        except (BlockingIOError, OSError):
            pass  # another loop reset it first
        tags, results = buffers
        reads = self._reads
        while True:
            n = _reap(self._h, tags, results, _REAP_MAX, 0)
            if n < 0:
                return  # the ring was closed: close() fails what is left
            for i in range(n):
                fut = reads.pop(tags[i], None)
                if fut is None:
                    continue
                owner = fut._owner
                if owner is loop:
                    fut._settle(results[i])
                else:
                    self._call_in(owner, fut._settle, results[i])
            if n < _REAP_MAX:
                break
        if self._queue:
            self._submit_queued()

    def _start_thread(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._reap_forever, daemon=True,
                                            name="nativedir ring completions")
            self._thread.start()

    def _reap_forever(self) -> None:
        """The completion thread of loops that cannot watch a descriptor."""
        tags = ffi.new("uint64_t[]", _REAP_MAX)
        results = ffi.new("int64_t[]", _REAP_MAX)
        reads = self._reads
        while not self._closed:
            n = _reap(self._h, tags, results, _REAP_MAX, -1)  # the GIL is released meanwhile
            if n < 0:
                return
            for i in range(n):
                fut = reads.pop(tags[i], None)
                if fut is not None:
                    self._call_in(fut._owner, fut._settle, results[i])
            if self._queue:
                self._submit_queued()

    @staticmethod
    def _call_in(loop: Any, fn: Any, arg: Any) -> None:
        try:
            loop.call_soon_threadsafe(fn, arg)
        except RuntimeError:
            pass  # the loop is closed: nobody can await the future any more

    def _deliver_failure(self, fut: RingRead, exc: BaseException) -> None:
        if fut._owner is _get_running_loop():
            fut._fail(exc)
        else:
            self._call_in(fut._owner, fut._fail, exc)

    # ---- closing ----

    def close(self) -> None:
        """Waits for the reads the kernel has, then fails them and every queued read.

        Their futures raise ValueError (closed ring), or CancelledError if they
        were cancelled meanwhile; their buffers are never written afterwards.
        Any thread may close a ring; closing twice does nothing. A read that
        completed before the close keeps its result.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            queued = list(self._queue)
            self._queue.clear()
            for fut in queued:
                fut._state = _DONE
        if self._pid != os.getpid():
            return  # a fork's copy: the ring's threads and kernel state are the parent's
        lib.nd_close(self._h)  # waits for the kernel's reads; wakes the completion thread
        for fut in queued:
            lib.nd_close(fut._clone)
            fut._clone = 0
        exc = closed("ring")
        for tag in list(self._reads):
            fut = self._reads.pop(tag, None)
            if fut is not None:
                self._deliver_failure(fut, exc)
        for fut in queued:
            self._deliver_failure(fut, exc)
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        self._unwatch_all()

    def _unwatch_all(self) -> None:
        """Every loop drops its reader on its own thread; the last closes our descriptor."""
        if self._fd < 0:
            return
        here = _get_running_loop()
        others = []
        with self._lock:
            for loop, buffers in self._watchers.items():
                if buffers is None or loop.is_closed():
                    continue
                if loop is here:
                    loop.remove_reader(self._fd)
                else:
                    others.append(loop)
            self._watchers.clear()
            self._unwatching = len(others)
        if not others:
            self._close_fd()
            return
        for loop in others:
            try:
                loop.call_soon_threadsafe(self._unwatch, loop)
            except RuntimeError:  # closed meanwhile: its selector is gone
                self._unwatched()

    def _unwatch(self, loop: Any) -> None:
        loop.remove_reader(self._fd)
        self._unwatched()

    def _unwatched(self) -> None:
        with self._lock:
            self._unwatching -= 1
            last = self._unwatching == 0
        if last:
            self._close_fd()

    def _close_fd(self) -> None:
        fd, self._fd = self._fd, -2
        if fd >= 0:
            os.close(fd)

    def __del__(self) -> None:
        if getattr(self, "_h", 0) and not self._closed:
            try:
                self.close()
            except Exception:  # noqa: BLE001 - nothing can be reported from a finalizer
                pass


def _forget_shared_ring() -> None:
    # a forked child must not use the parent's ring (its threads stayed behind),
    # nor take a loop that was running at the fork for its own
    Ring._shared = None
    _this_thread.loop = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_shared_ring)
