"""Input: positional and cursor reads, io.RawIOBase, clones, slices, mappings."""
from __future__ import annotations

import array
import gc
import io
import os
from pathlib import Path

import pytest

import nativedir
from nativedir import Strategy

OPEN_MODES = [{}, {"random": True}, {"sequential": True}, {"mmap": True},
              {"mmap": True, "preload": True}, {"merge": True}]


@pytest.mark.parametrize("mode", OPEN_MODES, ids=lambda m: "+".join(m) or "default")
def test_read_at_every_strategy(nd: nativedir.Directory, data_file: str, data: bytes,
                                mode: dict) -> None:
    with nd.open_input(data_file, **mode) as inp:
        assert len(inp) == inp.length == len(data)
        for off, n in ((0, 1), (1, 4096), (4095, 3), (len(data) - 7, 7), (123_457, 200_000),
                       (len(data), 0)):
            assert inp.read_at(off, n) == data[off:off + n], (off, n)


def test_strategies(nd: nativedir.Directory, data_file: str) -> None:
    with nd.open_input(data_file) as inp:
        assert inp.strategy is Strategy.BUFFERED
    with nd.open_input(data_file, mmap=True) as inp:
        assert inp.strategy is Strategy.MAPPED
    with nd.open_input(data_file, merge=True) as inp:
        assert inp.strategy in (Strategy.DIRECT, Strategy.DROP_BEHIND)


@pytest.mark.parametrize("mode", OPEN_MODES, ids=lambda m: "+".join(m) or "default")
def test_readinto_at_fills_the_callers_buffer(nd: nativedir.Directory, data_file: str,
                                              data: bytes, mode: dict) -> None:
    with nd.open_input(data_file, **mode) as inp:
        buf = bytearray(4096)
        assert inp.readinto_at(buf, 10_000) == 4096
        assert buf == data[10_000:14_096]
        # a window into a larger buffer: only that window is written
        big = bytearray(b"\xee" * 100)
        assert inp.readinto_at(memoryview(big)[10:20], 5) == 10
        assert big[:10] == b"\xee" * 10 and big[10:20] == data[5:15] and big[20:] == b"\xee" * 80
        # any writable buffer: the length counts bytes, not items
        ints = array.array("i", [0] * 4)
        assert inp.readinto_at(ints, 0) == 16
        assert ints.tobytes() == data[:16]


def test_readinto_at_rejects_read_only_and_past_end(nd: nativedir.Directory, data_file: str,
                                                    data: bytes) -> None:
    with nd.open_input(data_file) as inp:
        with pytest.raises(BufferError):
            inp.readinto_at(b"immutable", 0)
        buf = bytearray(b"\x01" * 16)
        with pytest.raises(EOFError):
            inp.readinto_at(buf, len(data) - 8)
        assert buf == b"\x01" * 16  # nothing read on failure


@pytest.mark.parametrize("mode", [{}, {"mmap": True}], ids=["buffered", "mapped"])
def test_reusing_a_bytearray_reads_each_offset(nd: nativedir.Directory, data_file: str,
                                               data: bytes, mode: dict) -> None:
    # the second and later calls take the held pointer: it must still be this buffer's
    with nd.open_input(data_file, **mode) as inp:
        buf = bytearray(1000)
        for off in (0, 777, 100_000, len(data) - 1000, 3):
            assert inp.readinto_at(buf, off) == 1000 and buf == data[off:off + 1000]
        with pytest.raises(EOFError):
            inp.readinto_at(buf, len(data) - 999)
        with pytest.raises(ValueError):
            inp.readinto_at(buf, -1)
        assert inp.readinto_at(buf, 5) == 1000 and buf == data[5:1005]
        inp.seek(10)
        assert inp.readinto(buf) == 1000 and buf == data[10:1010]
        assert inp.readinto(buf) == 1000 and buf == data[1010:2010]
        inp.seek(len(data) - 10)
        assert inp.readinto(buf) == 10 and buf[:10] == data[-10:]
        assert inp.readinto(buf) == 0


def test_only_the_last_bytearray_is_held(nd: nativedir.Directory, data_file: str,
                                         data: bytes) -> None:
    inp = nd.open_input(data_file)
    first, second = bytearray(16), bytearray(8)
    inp.readinto_at(first, 0)
    with pytest.raises(BufferError):
        first.extend(b"x")  # held: the library may write through its pointer again
    # the cursor holds a bytearray it filled whole, like readinto_at
    assert inp.readinto(second) == 8 and second == data[:8]
    first.extend(b"x")      # let go once another buffer was read into
    del second[8:]          # trimming to a full read deletes nothing: allowed
    with pytest.raises(BufferError):
        second.extend(b"yy")
    assert inp.readinto(second) == 8 and second == data[8:16]  # the held pointer, next bytes
    # a short read at the end lets go, so the caller can trim to what was read
    inp.seek(len(data) - 5)
    assert inp.readinto(second) == 5 and second[:5] == data[-5:]
    del second[5:]
    second.extend(b"yyy")
    assert inp.readinto(second) == 0  # at the end: holds nothing either
    second.append(0)
    del second[8:]
    inp.readinto_at(first, 0)
    inp.readinto_at(second, 0)
    first.extend(b"x")      # let go once another buffer was read into
    with pytest.raises(BufferError):
        second.append(1)
    inp.release_buffer()
    second.append(1)
    assert inp.readinto_at(second, 4) == 9 and second == data[4:13]  # held again, new length
    # other buffer types are never held (io releases the memoryviews it passes)
    view = memoryview(bytearray(8))
    inp.readinto_at(view, 0)
    view.release()
    second.append(2)        # reading into the view let go of `second` too
    inp.readinto_at(second, 0)
    inp.close()
    second.append(3)        # close lets go
    with pytest.raises(ValueError, match="closed"):
        inp.readinto_at(second, 0)
    with pytest.raises(ValueError, match="closed"):
        inp.readinto(second)


def test_cursor_follows_raw_io_protocol(nd: nativedir.Directory, data_file: str,
                                        data: bytes) -> None:
    with nd.open_input(data_file) as inp:
        assert isinstance(inp, io.RawIOBase)
        assert inp.readable() and inp.seekable() and not inp.writable()
        assert inp.read(10) == data[:10] and inp.tell() == 10
        buf = bytearray(5)
        assert inp.readinto(buf) == 5 and buf == data[10:15]
        assert inp.seek(-3, os.SEEK_END) == len(data) - 3
        buf = bytearray(8)
        assert inp.readinto(buf) == 3 and buf[:3] == data[-3:]  # short read at the end
        assert inp.readinto(buf) == 0 and inp.read(4) == b""     # EOF
        assert inp.seek(-5, os.SEEK_CUR) == len(data) - 5
        assert inp.read() == data[-5:]
        inp.seek(100)
        assert inp.read(0) == b"" and inp.tell() == 100
        assert inp.readall() == data[100:]


def test_seek_past_end_and_invalid(nd: nativedir.Directory, data_file: str, data: bytes) -> None:
    with nd.open_input(data_file) as inp:
        assert inp.seek(len(data) + 50) == len(data) + 50
        assert inp.tell() == len(data) + 50 and inp.read(1) == b""
        inp.seek(2)
        assert inp.read(2) == data[2:4]  # the cursor came back from past the end
        with pytest.raises(ValueError):
            inp.seek(-1)
        with pytest.raises(ValueError):
            inp.seek(0, 7)


def test_buffered_reader_over_input(nd: nativedir.Directory, folder: Path) -> None:
    lines = b"".join(b"line %d\n" % i for i in range(5000))
    (folder / "text").write_bytes(lines)
    with io.BufferedReader(nd.open_input("text"), buffer_size=1000) as reader:
        assert reader.readline() == b"line 0\n"
        assert reader.peek(1)[:1] == b"l"
        assert reader.read(7) == b"line 1\n"
        reader.seek(lines.index(b"line 4000\n"))
        assert reader.readline() == b"line 4000\n"
        reader.seek(0)
        assert reader.read() == lines
    with io.TextIOWrapper(io.BufferedReader(nd.open_input("text")), encoding="ascii") as text:
        assert sum(1 for _ in text) == 5000


def test_clone_has_its_own_cursor(nd: nativedir.Directory, data_file: str, data: bytes) -> None:
    with nd.open_input(data_file) as inp:
        inp.seek(500)
        with inp.clone() as c:
            assert c.tell() == 0 and c.read(4) == data[:4]
            assert inp.read(4) == data[500:504]
            assert c.name == inp.name and len(c) == len(inp)


def test_clone_outlives_original(nd: nativedir.Directory, data_file: str, data: bytes) -> None:
    inp = nd.open_input(data_file, mmap=True)
    c = inp.clone()
    inp.close()
    assert c.read_at(1000, 10) == data[1000:1010]
    c.close()


def test_slice_bounds(nd: nativedir.Directory, data_file: str, data: bytes) -> None:
    with nd.open_input(data_file) as inp, inp.slice(1000, 100) as s:
        assert len(s) == 100
        assert s.read_at(0, 100) == data[1000:1100]
        assert s.read() == data[1000:1100] and s.read() == b""
        with pytest.raises(EOFError):
            s.read_at(50, 51)
        with s.slice(10, 10) as inner:
            assert inner.read_at(0, 10) == data[1010:1020]
        with pytest.raises(EOFError):
            inp.slice(len(data) - 10, 11)
        with pytest.raises(ValueError):
            inp.slice(-1, 10)


def test_memoryview_of_mapped_input(nd: nativedir.Directory, data_file: str,
                                    data: bytes) -> None:
    with nd.open_input(data_file, mmap=True) as inp:
        view = inp.memoryview()
        assert view.readonly and view.nbytes == len(data)
        assert view[12345:12355] == data[12345:12355]
        with pytest.raises(TypeError):
            view[0] = 1


def test_memoryview_covers_a_file_larger_than_a_window(nd: nativedir.Directory,
                                                       folder: Path) -> None:
    # a mapped input's windows stop at 4 MiB (ND_MAPPED_WINDOW); its memoryview does not
    big = bytes(range(256)) * (9 << 12)  # 9 MiB
    (folder / "big").write_bytes(big)
    with nd.open_input("big", mmap=True) as inp:
        view = inp.memoryview()
        assert view.nbytes == len(big)
        assert view[-4096:] == big[-4096:]
        view.release()


def test_memoryview_survives_close(nd: nativedir.Directory, data_file: str,
                                   data: bytes, folder: Path) -> None:
    inp = nd.open_input(data_file, mmap=True)
    view = inp.memoryview()
    part = view[len(data) - 100:]
    inp.close()
    del view
    gc.collect()
    # the slice still holds the mapping: reading it must not crash
    assert bytes(part) == data[-100:]
    assert _mapped(folder / data_file)
    part.release()
    gc.collect()
    assert not _mapped(folder / data_file)  # the last view released the mapping


def _mapped(path: Path) -> bool:
    with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
        return any(line.rstrip().endswith(str(path)) for line in maps)


def test_memoryview_of_slice_and_empty(nd: nativedir.Directory, data_file: str,
                                       data: bytes, folder: Path) -> None:
    with nd.open_input(data_file, mmap=True) as inp, inp.slice(4096, 10) as s:
        assert bytes(s.memoryview()) == data[4096:4106]
    (folder / "empty").write_bytes(b"")
    with nd.open_input("empty", mmap=True) as e:
        assert e.memoryview().nbytes == 0 and e.read_at(0, 0) == b""


def test_memoryview_needs_mapping(nd: nativedir.Directory, data_file: str) -> None:
    with nd.open_input(data_file) as inp:
        with pytest.raises(ValueError, match="mmap=True"):
            inp.memoryview()


def test_use_after_close(nd: nativedir.Directory, data_file: str) -> None:
    inp = nd.open_input(data_file)
    inp.close()
    inp.close()
    assert inp.closed
    calls = [lambda: inp.read_at(0, 1), lambda: inp.readinto_at(bytearray(1), 0),
             lambda: inp.read(1), lambda: inp.readinto(bytearray(1)), lambda: inp.seek(0),
             lambda: inp.tell(), lambda: inp.clone(), lambda: inp.slice(0, 1),
             lambda: inp.memoryview(), lambda: inp.strategy, lambda: inp.readable(),
             lambda: inp.seekable(), lambda: inp.__enter__()]
    for call in calls:
        with pytest.raises(ValueError, match="closed"):
            call()


def test_unclosed_input_warns(nd: nativedir.Directory, data_file: str) -> None:
    inp = nd.open_input(data_file)
    with pytest.warns(ResourceWarning, match="unclosed"):
        inp.__del__()
    assert inp.closed


def test_negative_arguments(nd: nativedir.Directory, data_file: str) -> None:
    with nd.open_input(data_file) as inp:
        with pytest.raises(ValueError):
            inp.read_at(-1, 1)
        with pytest.raises(ValueError):
            inp.read_at(0, -1)
        with pytest.raises(ValueError):
            inp.readinto_at(bytearray(1), -5)
        with pytest.raises(TypeError):
            inp.read_at("0", 1)  # type: ignore[arg-type]


def _holds(path: Path) -> bool:
    """Whether this process has a descriptor open on `path` (Linux: /proc/self/fd)."""
    real = os.path.realpath(path)
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == real:
                return True
        except OSError:
            pass  # closed meanwhile
    return False


UNMAPPED_MODES = [{}, {"random": True}, {"sequential": True}, {"merge": True}]


@pytest.mark.parametrize("mode", UNMAPPED_MODES, ids=lambda m: "+".join(m) or "default")
def test_close_lets_go_of_the_file_at_once(nd: nativedir.Directory, data_file: str,
                                            data: bytes, folder: Path, mode: dict) -> None:
    """What Lucene does right after it closes a segment's inputs: delete the file and
    create a new one under its name. A window the library still pins on the input
    (nd_input_window, which a binding's cursor reads through) must not keep the file:
    on Windows an open file refuses this, on Linux its descriptor would stay."""
    from nativedir._ffi import ffi, lib
    path = folder / data_file
    inp = nd.open_input(data_file, **mode)
    assert inp.read(1000) == data[:1000]
    assert inp.read_at(5000, 100) == data[5000:5100]
    h = inp._h
    ptr = ffi.new("const uint8_t **")
    n = lib.nd_input_window(h, 200_000, ptr)  # pinned until nd_input_unpin
    assert n > 0
    window = ffi.buffer(ptr[0], min(n, 4096))
    assert bytes(window) == data[200_000:200_000 + len(window)]
    inp.close()
    if os.path.isdir("/proc/self/fd"):
        assert not _holds(path)
    assert bytes(window) == data[200_000:200_000 + len(window)]  # the window outlives the close
    os.remove(path)
    fresh = os.urandom(5000)
    path.write_bytes(fresh)
    assert path.read_bytes() == fresh
    with nd.open_input(data_file) as again:
        assert again.read_at(0, len(fresh)) == fresh
    assert lib.nd_input_unpin(h) == 0  # frees the window's buffer
    assert lib.nd_input_unpin(h) == lib.ND_E_BAD_HANDLE
