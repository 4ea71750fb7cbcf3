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
