"""Asynchronous reads: Input.read_at_async / readinto_at_async and Ring on asyncio."""
from __future__ import annotations

import asyncio
import mmap
import os
import random
import threading
import time
from pathlib import Path

import pytest

import nativedir
from nativedir._ffi import lib as native

from conftest import pattern

FILE_LEN = 4 << 20
BLOCK = 4096
BACKENDS = pytest.mark.parametrize("threads", [False, True], ids=["native", "threads"])


@pytest.fixture
def blob(folder: Path) -> bytes:
    data = pattern(FILE_LEN, seed=5)
    (folder / "blob").write_bytes(data)
    return data


def make_cold(folder: Path) -> None:
    """Out of the page cache (written back first: dirty pages are never dropped)."""
    fd = os.open(folder / "blob", os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def in_flight(ring: nativedir.Ring) -> int:
    return int(native.nd_ring_in_flight(ring._h))


class Aligned:
    """Page-aligned memory (an anonymous mapping), so direct inputs read in the kernel."""

    def __init__(self, slots: int, size: int) -> None:
        self.size = size
        self.mem = mmap.mmap(-1, slots * size)
        self.view = memoryview(self.mem)

    def slot(self, k: int, n: int | None = None) -> memoryview:
        return self.view[k * self.size:k * self.size + (self.size if n is None else n)]


KINDS = ["buffered_cold", "buffered_warm", "mapped", "merge"]


def open_kind(nd: nativedir.Directory, folder: Path, kind: str) -> nativedir.Input:
    if kind == "buffered_cold":
        make_cold(folder)
    inp = nd.open_input("blob", mmap=kind == "mapped", merge=kind == "merge", random=True)
    if kind == "buffered_warm":
        inp.read_at(0, FILE_LEN)  # every page in the cache
    return inp


@BACKENDS
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("concurrency", [1, 8, 64])
def test_bytes_match_the_file(nd, folder, blob, threads, kind, concurrency) -> None:
    # a ring of 16: at 64 reads at once the rest wait in its queue
    reads = max(20, 640 // concurrency)

    async def main() -> None:
        with nativedir.Ring(16, force_threads=threads) as ring, open_kind(nd, folder, kind) as inp:
            mem = Aligned(concurrency, 4 * BLOCK)
            direct = kind == "merge"

            async def worker(k: int) -> None:
                rng = random.Random(k * 1000 + concurrency)
                for i in range(reads):
                    if direct and i % 2 == 0:  # aligned: the kernel reads it
                        n = BLOCK * rng.randrange(1, 5)
                        off = BLOCK * rng.randrange(FILE_LEN // BLOCK - 4)
                    else:
                        n = rng.randrange(1, 3 * BLOCK)
                        off = rng.randrange(FILE_LEN - n)
                    if i % 3 == 0:
                        got = await ring.read_at(inp, off, n)
                        assert got == blob[off:off + n], (k, i, off, n)
                    else:
                        buf = mem.slot(k, n)
                        assert await ring.readinto_at(inp, buf, off) == n
                        assert buf == blob[off:off + n], (k, i, off, n)

            await asyncio.gather(*(worker(k) for k in range(concurrency)))
            # cached bytes never go to the ring; the others do
            if kind in ("buffered_warm", "mapped"):
                assert ring._submitted == 0
            else:
                assert ring._submitted > 0
            assert in_flight(ring) == 0

    asyncio.run(main())


@pytest.mark.parametrize("kind", ["buffered_warm", "mapped"])
def test_cached_reads_are_done_when_returned(nd, folder, blob, kind) -> None:
    async def main() -> None:
        with nativedir.Ring(4) as ring, open_kind(nd, folder, kind) as inp, \
                open_kind(nd, folder, "merge") as direct:
            buf = bytearray(5000)
            fut = ring.readinto_at(inp, buf, 12345)
            assert fut.done() and fut.result() == 5000 and buf == blob[12345:17345]
            fut = inp.read_at_async(777, 3)
            assert fut.done() and fut.result() == blob[777:780]
            assert not fut.cancel() and not fut.cancelled()  # done: nothing to cancel
            assert ring._submitted == 0
            # the control: a direct input's read needs the ring, and its
            # completion needs the loop to run
            mem = Aligned(1, BLOCK)
            fut = ring.readinto_at(direct, mem.slot(0), 8 * BLOCK)
            assert not fut.done()
            assert await fut == BLOCK and mem.slot(0) == blob[8 * BLOCK:9 * BLOCK]
            # read_at's own memory is page-aligned for aligned reads: to the kernel too
            fut = ring.read_at(direct, 16 * BLOCK, 2 * BLOCK)
            assert not fut.done()
            assert await fut == blob[16 * BLOCK:18 * BLOCK]
            assert ring._submitted == 2

    asyncio.run(main())


@BACKENDS
def test_cancel_drops_a_queued_read_and_waits_for_one_in_the_kernel(nd, folder, blob,
                                                                    threads) -> None:
    async def main() -> None:
        with nativedir.Ring(1, force_threads=threads) as ring, \
                open_kind(nd, folder, "merge") as inp:
            mem = Aligned(3, BLOCK)
            # nothing is reaped before the loop runs: the first read holds the
            # ring's one slot, the second waits in the queue
            first = ring.readinto_at(inp, mem.slot(0), 0)
            second = ring.readinto_at(inp, mem.slot(1), BLOCK)
            assert not first.done() and not second.done()
            assert second.cancel()
            assert second.cancelled()  # dropped at once
            assert first.cancel()
            assert not first.cancelled()  # in the kernel: it finishes first
            with pytest.raises(asyncio.CancelledError):
                await first
            assert in_flight(ring) == 0  # the kernel was done when it surfaced
            assert mem.slot(0) == blob[:BLOCK]  # written before, never after
            await asyncio.sleep(0.05)
            assert mem.slot(1) == bytes(BLOCK)  # the dropped read never ran
            assert mem.slot(0) == blob[:BLOCK]
            # a task cancelled while it awaits a read in the kernel
            task = asyncio.ensure_future(ring.readinto_at(inp, mem.slot(2), 2 * BLOCK))

            async def waiter() -> int:
                return await task

            outer = asyncio.ensure_future(waiter())
            await asyncio.sleep(0)
            outer.cancel()
            with pytest.raises(asyncio.CancelledError):
                await outer
            assert task.cancelled() and in_flight(ring) == 0
            # the ring goes on working
            assert await ring.read_at(inp, 5 * BLOCK, BLOCK) == blob[5 * BLOCK:6 * BLOCK]

    asyncio.run(main())


def test_wait_for_times_out_only_once_the_kernel_is_done(nd, folder, blob) -> None:
    async def main() -> None:
        with nativedir.Ring(2) as ring, open_kind(nd, folder, "merge") as inp:
            mem = Aligned(1, BLOCK)
            fut = ring.readinto_at(inp, mem.slot(0), 3 * BLOCK)
            try:
                assert await asyncio.wait_for(fut, timeout=0) == BLOCK
            except asyncio.TimeoutError:
                assert fut.cancelled()
            assert in_flight(ring) == 0

    asyncio.run(main())


@BACKENDS
def test_closing_the_input_with_reads_in_flight(nd, folder, blob, threads) -> None:
    async def main() -> None:
        with nativedir.Ring(8, force_threads=threads) as ring:
            inp = open_kind(nd, folder, "merge")
            mem = Aligned(32, BLOCK)
            futs = [ring.readinto_at(inp, mem.slot(k), (k * 7 % 1000) * BLOCK) for k in range(32)]
            inp.close()  # 8 reads in the kernel, 24 queued: all still read
            assert await asyncio.gather(*futs) == [BLOCK] * 32
            for k in range(32):
                off = (k * 7 % 1000) * BLOCK
                assert mem.slot(k) == blob[off:off + BLOCK]
            with pytest.raises(ValueError, match="closed input"):
                await ring.read_at(inp, 0, 1)

    asyncio.run(main())


@BACKENDS
def test_close_racing_reads(nd, folder, blob, threads) -> None:
    outcomes: dict[str, int] = {"read": 0, "closed": 0}

    async def round_(ring: nativedir.Ring, seed: int) -> None:
        rng = random.Random(seed)
        inp = open_kind(nd, folder, "merge" if seed % 2 else "buffered_cold")
        mem = Aligned(16, BLOCK)

        async def worker(k: int) -> None:
            for _ in range(10):
                off = BLOCK * rng.randrange(FILE_LEN // BLOCK)
                try:
                    await ring.readinto_at(inp, mem.slot(k), off)
                except ValueError as e:
                    assert "closed input" in str(e)
                    outcomes["closed"] += 1
                    return
                assert mem.slot(k) == blob[off:off + BLOCK]
                outcomes["read"] += 1

        async def closer() -> None:
            for _ in range(rng.randrange(20)):
                await asyncio.sleep(0)
            if seed % 3 == 0:  # from another thread, as a shutdown might
                t = threading.Thread(target=inp.close)
                t.start()
                t.join()
            else:
                inp.close()

        await asyncio.gather(closer(), *(worker(k) for k in range(16)))

    async def main() -> None:
        with nativedir.Ring(8, force_threads=threads) as ring:
            for seed in range(12):
                await round_(ring, seed)
            assert in_flight(ring) == 0

    asyncio.run(main())
    assert outcomes["read"] > 0 and outcomes["closed"] > 0


@BACKENDS
def test_ring_closed_with_reads_in_flight(nd, folder, blob, threads) -> None:
    async def main() -> None:
        ring = nativedir.Ring(4, force_threads=threads)
        with open_kind(nd, folder, "merge") as inp:
            mem = Aligned(16, BLOCK)
            futs = [ring.readinto_at(inp, mem.slot(k), k * BLOCK) for k in range(16)]
            ring.close()  # 4 in the kernel (waited for), 12 queued
            snapshot = bytes(mem.mem)
            results = await asyncio.gather(*futs, return_exceptions=True)
            assert all(isinstance(r, ValueError) and "closed ring" in str(r) for r in results)
            await asyncio.sleep(0.05)
            assert bytes(mem.mem) == snapshot  # nothing wrote a buffer after close()
            assert ring.closed
            ring.close()  # twice: nothing
            with pytest.raises(ValueError, match="closed ring"):
                await ring.read_at(inp, 0, BLOCK)
            with open_kind(nd, folder, "mapped") as mapped:  # even one that needs no ring
                with pytest.raises(ValueError, match="closed ring"):
                    await ring.readinto_at(mapped, bytearray(8), 0)
            assert ring._fd == -2  # our descriptor is gone with the loop's reader

    asyncio.run(main())


@BACKENDS
def test_ring_closed_by_another_thread_while_the_loop_waits(nd, folder, blob, threads) -> None:
    async def main() -> None:
        ring = nativedir.Ring(64, force_threads=threads)
        with open_kind(nd, folder, "merge") as inp:
            mem = Aligned(64, BLOCK)
            stop = threading.Event()

            async def worker(k: int) -> str:
                while True:
                    try:
                        await ring.readinto_at(inp, mem.slot(k), BLOCK * ((k * 31 + 7) % 1000))
                    except ValueError as e:
                        assert "closed ring" in str(e)
                        return "closed"

            def closer() -> None:
                time.sleep(0.2)
                ring.close()
                stop.set()

            t = threading.Thread(target=closer)
            t.start()
            assert await asyncio.gather(*(worker(k) for k in range(64))) == ["closed"] * 64
            t.join()
            for _ in range(100):  # the loop drops its reader on its own thread
                if ring._fd == -2:
                    break
                await asyncio.sleep(0.01)
            assert ring._fd == -2

    asyncio.run(main())


def test_errors_are_pythons(nd, folder, blob) -> None:
    async def main() -> None:
        with nativedir.Ring(4) as ring:
            for kind in ("buffered_warm", "merge", "mapped"):
                with open_kind(nd, folder, kind) as inp:
                    with pytest.raises(EOFError):
                        await inp.read_at_async(FILE_LEN - 10, 11)
                    with pytest.raises(EOFError):
                        await ring.readinto_at(inp, bytearray(20), FILE_LEN - 10)
                    with pytest.raises(ValueError):
                        await inp.read_at_async(-1, 1)
                    with pytest.raises(ValueError):
                        await inp.read_at_async(0, -1)
                    with pytest.raises(BufferError):  # as readinto_at: read-only memory
                        ring.readinto_at(inp, b"read-only", 0)
                    assert await inp.read_at_async(FILE_LEN, 0) == b""
                with pytest.raises(ValueError, match="closed input"):
                    await inp.readinto_at_async(bytearray(1), 0)
        with pytest.raises(ValueError, match="depth"):
            nativedir.Ring(0)

    asyncio.run(main())
    with nd.open_input("blob") as inp, pytest.raises(RuntimeError, match="running asyncio"):
        inp.read_at_async(0, 1)


def test_a_failed_read_raises_oserror(nd, folder) -> None:
    # a file that shrinks under its input: the ring's read finds its end early
    (folder / "shrinks").write_bytes(pattern(1 << 20))

    async def main() -> None:
        with nativedir.Ring(4) as ring, nd.open_input("shrinks", merge=True) as inp:
            os.truncate(folder / "shrinks", 0)
            mem = Aligned(1, BLOCK)
            with pytest.raises(OSError) as info:
                await ring.readinto_at(inp, mem.slot(0), 64 * BLOCK)
            assert info.value.nd_status_name == "ND_E_IO"
            assert "shrinks" in str(info.value)

    asyncio.run(main())


def test_buffer_stays_exported_until_the_read_is_over(nd, folder, blob) -> None:
    async def main() -> None:
        with nativedir.Ring(4) as ring, open_kind(nd, folder, "merge") as inp:
            buf = bytearray(BLOCK)
            fut = ring.readinto_at(inp, buf, 3)  # unaligned: read at submit, reported by the ring
            assert not fut.done()
            with pytest.raises(BufferError):
                buf.extend(b"x")  # neither resized nor freed under the read
            assert await fut == BLOCK
            assert buf == blob[3:3 + BLOCK]
            buf.extend(b"x")

    asyncio.run(main())


class NoReaderLoop(asyncio.SelectorEventLoop):
    """A loop without add_reader, as asyncio's proactor loop on Windows."""

    def add_reader(self, *args, **kwargs):  # type: ignore[override]
        raise NotImplementedError


def test_a_loop_without_add_reader_gets_the_completion_thread(nd, folder, blob) -> None:
    loop = NoReaderLoop()
    ring = nativedir.Ring(8)
    try:
        async def main() -> None:
            with open_kind(nd, folder, "merge") as inp:
                mem = Aligned(16, BLOCK)
                futs = [ring.readinto_at(inp, mem.slot(k), k * 3 * BLOCK) for k in range(16)]
                assert await asyncio.gather(*futs) == [BLOCK] * 16
                for k in range(16):
                    assert mem.slot(k) == blob[k * 3 * BLOCK:k * 3 * BLOCK + BLOCK]

        loop.run_until_complete(main())
        assert ring._thread is not None and ring._thread.is_alive()
    finally:
        ring.close()
        loop.close()
    assert not ring._thread.is_alive()


def test_two_loops_in_two_threads_share_a_ring(nd, folder, blob) -> None:
    ring = nativedir.Ring(8)
    errors: list[BaseException] = []

    def thread_main(seed: int) -> None:
        async def main() -> None:
            with open_kind(nd, folder, "merge") as inp:
                mem = Aligned(8, BLOCK)

                async def worker(k: int) -> None:
                    rng = random.Random(seed * 100 + k)
                    for _ in range(40):
                        off = BLOCK * rng.randrange(FILE_LEN // BLOCK)
                        assert await ring.readinto_at(inp, mem.slot(k), off) == BLOCK
                        assert mem.slot(k) == blob[off:off + BLOCK]

                await asyncio.gather(*(worker(k) for k in range(8)))
        try:
            asyncio.run(main())
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=thread_main, args=(s,)) for s in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ring.close()
    assert errors == []


def test_the_shared_ring(nd, folder, blob) -> None:
    async def main() -> None:
        ring = nativedir.Ring.shared()
        assert ring is nativedir.Ring.shared() and ring.depth == 128
        assert ring.backend in (nativedir.IO_URING, nativedir.THREADS)
        before = ring._submitted
        with open_kind(nd, folder, "merge") as inp:
            mem = Aligned(1, BLOCK)
            assert await inp.readinto_at_async(mem.slot(0), BLOCK) == BLOCK
            assert mem.slot(0) == blob[BLOCK:2 * BLOCK]
        assert ring._submitted == before + 1

    asyncio.run(main())
    asyncio.run(main())  # a second loop: the ring serves it too


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")
def test_a_forked_child_gets_a_ring_of_its_own(nd, folder, blob) -> None:
    parent = nativedir.Ring.shared()
    pid = os.fork()
    if pid == 0:  # the child: exit status says what happened
        code = 1
        try:
            async def child() -> bool:
                with open_kind(nd, folder, "merge") as inp:
                    mem = Aligned(1, BLOCK)
                    await inp.readinto_at_async(mem.slot(0), 0)
                    return mem.slot(0) == blob[:BLOCK]

            ok = nativedir.Ring.shared() is not parent and asyncio.run(child())
            code = 0 if ok else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_backends() -> None:
    with nativedir.Ring(4, force_threads=True) as ring:
        assert ring.backend == nativedir.THREADS and "threads" in repr(ring)
    assert "closed" in repr(ring)
