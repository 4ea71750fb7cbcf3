"""Input.prefetch and Input.advise (nd_input_prefetch, nd_input_advise): the
range rules and advice values reach the library and come back as Python
exceptions, on every strategy, clones and slices; nothing read changes. That
pages really come in is test_prefetch's (C) to show."""
from __future__ import annotations

import mmap
import os

import pytest

import nativedir

OPEN_MODES = [{}, {"random": True}, {"mmap": True}, {"mmap": True, "random": True},
              {"mmap": True, "preload": True}, {"merge": True}]


def range_rules(inp: nativedir.Input, n: int) -> None:
    inp.prefetch(0, 0)
    inp.prefetch(0, n)
    inp.prefetch(n, 0)
    inp.prefetch(n - 1, 1)
    for off, length in ((0, n + 1), (n, 1), (2**63 - 1, 1)):
        with pytest.raises(EOFError):
            inp.prefetch(off, length)
    with pytest.raises(ValueError, match="nd_input_prefetch"):
        inp.prefetch(-1, 1)
    with pytest.raises(ValueError):
        inp.prefetch(0, -1)


@pytest.mark.parametrize("mode", OPEN_MODES, ids=lambda m: "+".join(m) or "default")
def test_prefetch_and_advise(nd: nativedir.Directory, data_file: str, data: bytes,
                             mode: dict) -> None:
    n = len(data)
    with nd.open_input(data_file, **mode) as inp, inp.slice(4097, 70_001) as sl, \
            inp.clone() as cl:
        range_rules(inp, n)
        range_rules(sl, 70_001)
        for i in range(300):  # through the back-off's looks and skips
            (inp if i % 2 else cl).prefetch((i * 104_729) % (n - 65_536), 1 + (i * 7919) % 65_536)
        for x in (inp, sl, cl):
            x.advise(random=True)
            x.advise(sequential=True)
            x.advise()
            with pytest.raises(ValueError, match="nd_input_advise"):
                x.advise(random=True, sequential=True)
        assert sl.read_at(0, 70_001) == data[4097:4097 + 70_001]


def test_closed_input_refuses(nd: nativedir.Directory, data_file: str) -> None:
    inp = nd.open_input(data_file)
    inp.close()
    with pytest.raises(ValueError):
        inp.prefetch(0, 1)
    with pytest.raises(ValueError):
        inp.advise(random=True)


# slices on 64 KiB boundaries are page-aligned with 4 KiB and 64 KiB pages alike
ALIGN = 64 * 1024


def mappings(path: str) -> list[tuple[int, int, set[str]]]:
    """(file offset, length, VmFlags) of each of this process's mappings of ``path``."""
    found, ours, start = [], False, (0, 0, 0)
    with open("/proc/self/smaps", encoding="utf-8") as f:
        for line in f:
            head = line.split(None, 5)
            if "-" in head[0] and not head[0].endswith(":") and len(head) >= 5:
                ours = len(head) == 6 and head[5].strip() == path
                lo, hi = (int(x, 16) for x in head[0].split("-"))
                start = (int(head[2], 16), hi - lo)
            elif ours and line.startswith("VmFlags:"):
                found.append((start[0], start[1], set(line[8:].split())))
                ours = False
    return found


def flags_at(path: str, off: int) -> set[str]:
    hits = [f for o, n, f in mappings(path) if o <= off < o + n]
    assert len(hits) == 1, f"{len(hits)} mappings of {path} cover offset {off}"
    return hits[0]


@pytest.mark.skipif(not os.path.exists("/proc/self/smaps"),
                    reason="the kernel's advice of a mapping is read from /proc/self/smaps "
                           "(VmFlags), which only Linux has")
def test_advice_reaches_the_mapping(nd: nativedir.Directory, folder, data_file: str) -> None:
    """advise(random=...) is MADV_RANDOM ("rr"), sequential MADV_SEQUENTIAL ("sr"), neither
    MADV_NORMAL; a slice advises its own pages only. A binding that passed the wrong flag
    value (or none) would still return without error: only the kernel's record shows it."""
    path = str(folder / data_file)
    with nd.open_input(data_file, mmap=True) as inp:
        assert inp.strategy == nativedir.Strategy.MAPPED
        for kw, want in (({"random": True}, {"rr"}), ({"sequential": True}, {"sr"}), ({}, set())):
            inp.advise(**kw)
            for o, n, f in mappings(path):
                assert f & {"rr", "sr"} == want, (kw, o, n, f)
        with inp.slice(4 * ALIGN, 4 * ALIGN) as sl:
            sl.advise(random=True)
            for off in range(4 * ALIGN, 8 * ALIGN, mmap.PAGESIZE):
                assert "rr" in flags_at(path, off), off
            assert "rr" not in flags_at(path, 4 * ALIGN - 1)
            assert "rr" not in flags_at(path, 8 * ALIGN)
    with nd.open_input(data_file, mmap=True, random=True) as inp:
        assert all("rr" in f for _, _, f in mappings(path))
