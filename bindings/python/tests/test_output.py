"""Output: zero-copy writes, CRC-32, position, sync, strategies, io protocol."""
from __future__ import annotations

import array
import io
import zlib
from pathlib import Path

import pytest

import nativedir
from nativedir import Strategy

from conftest import pattern


def test_write_any_bytes_like(nd: nativedir.Directory, folder: Path) -> None:
    chunks = [b"abc", bytearray(b"defg"), memoryview(b"0123456789")[2:5], array.array("h", [1, 2])]
    with nd.create_output("out") as out:
        total = 0
        for chunk in chunks:
            n = out.write(chunk)
            total += n
            assert n == memoryview(chunk).nbytes
            assert out.position == out.tell() == total
        expected = b"".join(bytes(memoryview(c)) for c in chunks)
        assert out.crc32() == zlib.crc32(expected)
        out.sync()
    assert (folder / "out").read_bytes() == expected


def test_large_write_and_crc(nd: nativedir.Directory, folder: Path) -> None:
    blob = pattern(3 << 20, seed=3)
    with nd.create_output("big") as out:
        for i in range(0, len(blob), 1 << 20):
            out.write(memoryview(blob)[i:i + (1 << 20)])
        assert out.crc32() == zlib.crc32(blob)
        assert out.strategy is Strategy.BUFFERED
    assert (folder / "big").read_bytes() == blob
    assert nd.length("big") == len(blob)


@pytest.mark.parametrize("size", [0, 1, 4095, 4097, (1 << 20) + 3])
def test_merge_output_keeps_logical_length(nd: nativedir.Directory, folder: Path,
                                           size: int) -> None:
    blob = pattern(size, seed=5)
    with nd.create_output("merged", merge=True) as out:
        assert out.strategy in (Strategy.DIRECT, Strategy.DROP_BEHIND, Strategy.BUFFERED)
        out.write(blob[:size // 2])
        out.write(blob[size // 2:])
        assert out.crc32() == zlib.crc32(blob)
    assert (folder / "merged").read_bytes() == blob


@pytest.mark.parametrize("merge", [False, True])
def test_buffer_size_is_the_librarys(nd: nativedir.Directory, folder: Path, merge: bool) -> None:
    # one number in one place: what a BufferedWriter should collect is the library's answer
    from nativedir._ffi import ffi, lib
    raw = ffi.new("nd_handle *")
    assert lib.nd_create_output(nd._handle(), b"raw", lib.ND_IO_MERGE if merge else 0, raw) == 0
    try:
        with nd.create_output("out", merge=merge) as out:
            assert out.buffer_size == lib.nd_output_buffer_size(raw[0]) > 0
            blob = pattern(3 * out.buffer_size + 5, seed=9)
            with io.BufferedWriter(out, out.buffer_size) as w:
                w.write(blob[:1])
                w.write(blob[1:])
            assert out.closed
    finally:
        lib.nd_close(raw[0])
    assert (folder / "out").read_bytes() == blob


@pytest.mark.parametrize("merge", [False, True])
def test_flush_makes_every_byte_visible(nd: nativedir.Directory, folder: Path,
                                        merge: bool) -> None:
    # io's flush contract: the bytes reach the file, so its length is the position
    blob = pattern(3 << 20, seed=9)
    with nd.create_output("flushed", merge=merge) as out:
        at = 0
        for cut in (2, 3, 4097, 70_000, (1 << 20) + 5, len(blob)):
            out.write(memoryview(blob)[at:cut])
            at = cut
            out.flush()
            assert out.position == at
            assert nd.length("flushed") == at
            assert (folder / "flushed").read_bytes() == blob[:at]
    assert (folder / "flushed").read_bytes() == blob
    with pytest.raises(ValueError):
        out.flush()


def test_overwrite(nd: nativedir.Directory, folder: Path) -> None:
    (folder / "f").write_bytes(b"old contents")
    with pytest.raises(FileExistsError):
        nd.create_output("f")
    assert (folder / "f").read_bytes() == b"old contents"
    with nd.create_output("f", overwrite=True) as out:
        out.write(b"new")
    assert (folder / "f").read_bytes() == b"new"


def test_buffered_writer_over_output(nd: nativedir.Directory, folder: Path) -> None:
    out = nd.create_output("w")
    assert isinstance(out, io.RawIOBase) and out.writable() and not out.readable()
    with io.BufferedWriter(out, buffer_size=64) as writer:
        for i in range(1000):
            writer.write(b"%d," % i)
    assert out.closed
    assert (folder / "w").read_bytes() == b"".join(b"%d," % i for i in range(1000))


def test_write_rejects_text(nd: nativedir.Directory) -> None:
    with nd.create_output("t") as out:
        with pytest.raises(TypeError):
            out.write("text")  # type: ignore[arg-type]
        assert out.position == 0


def test_use_after_close(nd: nativedir.Directory) -> None:
    out = nd.create_output("c")
    out.close()
    out.close()
    calls = [lambda: out.write(b"x"), lambda: out.position, lambda: out.tell(),
             lambda: out.crc32(), lambda: out.sync(), lambda: out.strategy,
             lambda: out.writable(), lambda: out.__enter__()]
    for call in calls:
        with pytest.raises(ValueError, match="closed"):
            call()


def test_unclosed_output_warns_and_flushes(nd: nativedir.Directory, folder: Path) -> None:
    out = nd.create_output("u")
    out.write(b"kept")
    with pytest.warns(ResourceWarning, match="unclosed"):
        out.__del__()
    assert (folder / "u").read_bytes() == b"kept"
