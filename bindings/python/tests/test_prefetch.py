"""Input.prefetch and Input.advise (nd_input_prefetch, nd_input_advise): the
range rules and advice values reach the library and come back as Python
exceptions, on every strategy, clones and slices; nothing read changes. That
pages really come in is test_prefetch's (C) to show."""
from __future__ import annotations

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
