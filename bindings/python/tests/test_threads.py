"""Threads: clones read at once, one input shared positionally, cursor misuse."""
from __future__ import annotations

import hashlib
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

import nativedir

from conftest import pattern

THREADS = 8


@pytest.mark.parametrize("mmap", [False, True], ids=["buffered", "mapped"])
def test_clones_read_at_once(nd: nativedir.Directory, folder, mmap: bool) -> None:
    blob = pattern(4 << 20, seed=11)
    (folder / "blob").write_bytes(blob)
    expected = hashlib.sha256(blob).hexdigest()
    start = threading.Barrier(THREADS)

    def scan(clone: nativedir.Input, chunk: int) -> str:
        with clone:
            start.wait()  # all threads inside their read loops together
            digest = hashlib.sha256()
            buf = bytearray(chunk)
            view = memoryview(buf)
            while n := clone.readinto(buf):
                digest.update(view[:n])
            return digest.hexdigest()

    with nd.open_input("blob", mmap=mmap) as inp, ThreadPoolExecutor(THREADS) as pool:
        clones = [inp.clone() for _ in range(THREADS)]
        results = list(pool.map(scan, clones, [1000 + 4093 * i for i in range(THREADS)]))
    assert results == [expected] * THREADS


def test_positional_reads_share_one_input(nd: nativedir.Directory, folder) -> None:
    blob = pattern(2 << 20, seed=13)
    (folder / "blob").write_bytes(blob)

    def worker(inp: nativedir.Input, seed: int) -> int:
        bad = 0
        buf = bytearray(777)
        for i in range(2000):
            off = (seed * 7919 + i * 104_729) % (len(blob) - len(buf))
            inp.readinto_at(buf, off)
            bad += buf != blob[off:off + len(buf)]
        return bad

    with nd.open_input("blob") as inp, ThreadPoolExecutor(THREADS) as pool:
        assert sum(pool.map(worker, [inp] * THREADS, range(THREADS))) == 0


def test_close_while_other_threads_read(nd: nativedir.Directory, folder) -> None:
    # closing under readers must give them ValueError (closed), never a crash
    blob = pattern(1 << 20, seed=17)
    (folder / "blob").write_bytes(blob)
    inp = nd.open_input("blob", mmap=True)
    go = threading.Event()
    outcomes: list[str] = []

    def reader() -> None:
        buf = bytearray(4096)
        go.wait()
        try:
            for i in range(100_000):
                inp.readinto_at(buf, (i * 4096) % (len(blob) - 4096))
            outcomes.append("finished")
        except ValueError:
            outcomes.append("closed")

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for t in threads:
        t.start()
    go.set()
    inp.close()
    for t in threads:
        t.join()
    assert len(outcomes) == 4 and set(outcomes) <= {"finished", "closed"}


def test_a_blocked_native_call_lets_other_threads_run(nd: nativedir.Directory, folder) -> None:
    # The one native call that waits for another thread is a ring reap with a
    # timeout: thread A waits in it while the main thread submits the read A is
    # waiting for. Were the GIL held during A's call, the main thread could not
    # submit until A timed out (10 s) with nothing reaped.
    from nativedir._native import ffi, lib

    (folder / "blob").write_bytes(pattern(8192, seed=19))
    ring_out = ffi.new("nd_handle *")
    assert lib.nd_ring_open(4, 0, ring_out) == 0
    ring = ring_out[0]
    tags = ffi.new("uint64_t[1]")
    results = ffi.new("int64_t[1]")
    reaped: list[int] = []
    entering = threading.Event()

    def reaper() -> None:
        entering.set()
        reaped.append(lib.nd_ring_reap(ring, tags, results, 1, 10_000))

    dst = bytearray(4096)
    try:
        with nd.open_input("blob") as inp:
            a = threading.Thread(target=reaper)
            a.start()
            entering.wait()
            # let A get into the native wait (time.sleep releases the GIL)
            threading.Event().wait(0.2)
            submitted_while_waiting = a.is_alive()
            assert lib.nd_ring_submit_read(ring, inp._h, 4096, ffi.from_buffer(dst), 4096, 77) == 0
            a.join(30)
        assert submitted_while_waiting
        assert reaped == [1] and tags[0] == 77 and results[0] == 4096
        assert dst == pattern(8192, seed=19)[4096:]
    finally:
        assert lib.nd_close(ring) == 0
