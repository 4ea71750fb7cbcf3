"""Fixtures shared by the nativedir tests.

The tests import the *built* package: ctest puts the build tree's copy on
PYTHONPATH (see ../CMakeLists.txt). Run by hand with
``PYTHONPATH=build/<dir>/bindings/python/pkg /usr/bin/python3 -m pytest bindings/python/tests``.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

import pytest

import nativedir

PATTERN_LEN = 1 << 20


def pattern(n: int, seed: int = 7) -> bytes:
    """Bytes that differ at every offset a test could confuse (not all zeros)."""
    block = bytes((i * 31 + seed + (i >> 8)) & 0xFF for i in range(65536))
    return (block * (n // len(block) + 1))[:n]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path


@pytest.fixture
def nd(folder: Path) -> Iterator[nativedir.Directory]:
    with nativedir.Directory(folder) as d:
        yield d


@pytest.fixture
def data() -> bytes:
    return pattern(PATTERN_LEN)


@pytest.fixture
def data_file(folder: Path, data: bytes) -> str:
    (folder / "data.bin").write_bytes(data)
    return "data.bin"


def required_env(name: str) -> str:
    """A variable the CMake test registration sets; fail (never skip) without it."""
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run this suite through ctest "
                    f"(bindings/python/CMakeLists.txt sets it)")
    return value


def child_env() -> dict:
    """The environment for a child Python that must import this same package."""
    here = str(Path(nativedir.__file__).resolve().parent.parent)
    rest = os.environ.get("PYTHONPATH")
    return dict(os.environ, PYTHONPATH=here + (os.pathsep + rest if rest else ""))
