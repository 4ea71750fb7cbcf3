"""Differential sweeps: Input, Output and Directory against what they replace.

An Input must behave as ``io.FileIO(path, "rb")`` of the same bytes, an Output
as ``io.FileIO(path, "wb")``, a Directory as the os calls on the folder. Each
sweep runs random operation sequences (fixed seeds, ``random.Random``; no
hypothesis here) on our object and on the model in lockstep and compares every
step's result (bytes, ints, the buffer's contents) or its exception's type
(and errno for an OSError). A failure prints the seed, the configuration and
the steps up to the one that differed.

Accepted differences (deliberate: each is checked to be *exactly* this):

====================  ==========================  =================================  ======================================
call                  FileIO / os                 nativedir                          why
====================  ==========================  =================================  ======================================
fileno()              the descriptor              io.UnsupportedOperation            no descriptor is exposed: every read
                                                  (a ValueError too, so closed       and write goes through the library
                                                  files still match ``except
                                                  ValueError``)
seek(off, 3 or 4)     SEEK_DATA / SEEK_HOLE       not swept                          Lucene files have no holes; only
                                                                                     whence 0, 1, 2 are the contract
Output.seek/truncate  moves / cuts ("wb" FileIO)  io.UnsupportedOperation,           an Output is append-only (Lucene's
                                                  seekable() False                   IndexOutput, running CRC-32)
Input.readinto(b)     TypeError                   BufferError                        documented (README: every API taking
with b read-only or                                                                  a buffer); the buffer is untouched
non-contiguous
Output.readall()      OSError(EBADF)              io.UnsupportedOperation            the same error as read(): clearer,
                                                                                     and still an OSError
Directory.list()      every entry, any order      regular files, sorted by UTF-8     documented: subdirectories and
                                                                                     symlinks are not index files
length/fsync of a     getsize: inode size;        IsADirectoryError(EISDIR), as      a directory is not an index file;
directory             fsync: syncs it             open() of it                       Directory.sync_dir syncs the folder
length/read/fsync/    follows the link            PermissionError(ELOOP); exists()   documented: links are never followed
overwrite of a        (dangling: ENOENT)          False, list() leaves it out;       (nothing outside the folder is
symbolic link                                     delete/rename act on the link      touched); open(O_NOFOLLOW) gives ELOOP
Input.readinto(ba)    the bytearray stays         a fully filled bytearray stays     documented (Input class notes): the
then resizing it      resizable                   exported: BufferError until the    next read skips the buffer protocol;
                                                  input reads into another buffer    release_buffer() lets it go
name "a/b", ".."      a path                      ValueError, nothing touched        documented: one path component
name > 255 bytes      OSError(ENAMETOOLONG)       NameTooLongError: OSError(         same errno as os; a ValueError
                                                  ENAMETOOLONG) and ValueError,      too, as every invalid name. Checked
                                                  before any file is looked at       first, so a rename of a missing
                                                                                     source says ENAMETOOLONG, not ENOENT
closed object, wrong  TypeError / BufferError     ValueError (closed)                closed is checked first: the rule
argument type         (arguments parsed first)                                       "every call on a closed object
                                                                                     raises ValueError" wins
====================  ==========================  =================================  ======================================

Fixed in _input.py (each has a test below that failed before its fix, and the
sweep draws these steps too; `pending=False` leaves them out, to see the rest):

* Input.seek to a negative position, or with whence not 0/1/2: FileIO raises
  OSError(EINVAL); Input raised ValueError. (test_input.py expects ValueError:
  an exception class that is both OSError(EINVAL) and ValueError, as
  io.UnsupportedOperation is both, satisfies both; the sweep accepts any
  OSError subclass with errno EINVAL.)
* Input.read(1.5) / seek(1.5): FileIO raises TypeError; Input reads a byte
  when 1.5 >= what is left, and seek(1000.5) set tell() to 1000.5.
* Input.writable() on a closed input: FileIO raises ValueError; Input answered
  False (io.IOBase's default).
* Input.write(...): FileIO raises io.UnsupportedOperation; Input raised
  NotImplementedError (io.RawIOBase's default).
"""
from __future__ import annotations

import array
import errno
import io
import os
import random
from pathlib import Path
from typing import Any, Callable, List, Optional, Tuple

import pytest

import nativedir

# ---- the comparison machinery ----

Outcome = Tuple[Any, ...]


def outcome(fn: Callable[[], Any], self_obj: Any) -> Outcome:
    """("ok", value) or ("raise", type, errno): what one step did."""
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - every exception is a result to compare
        code = e.errno if isinstance(e, OSError) else None
        return ("raise", type(e), code)
    if r is self_obj:
        r = "self"
    elif isinstance(r, (bytearray, memoryview)):
        r = bytes(r)
    elif isinstance(r, tuple):
        r = tuple(bytes(x) if isinstance(x, (bytearray, memoryview, array.array)) else x
                  for x in r)
    return ("ok", r)


class Divergence(AssertionError):
    pass


def fail(seed: int, config: str, steps: List[Any], model: Outcome, ours: Outcome) -> None:
    shown = steps[-40:]
    raise Divergence(
        f"seed={seed} config={config}: step {len(steps) - 1} {steps[-1]!r}\n"
        f"  model (FileIO/os): {model!r}\n  nativedir:         {ours!r}\n"
        f"  last {len(shown)} steps: {shown!r}")


def closed_or(exc: type) -> Callable[[Any], Outcome]:
    """The outcome ours must have for an accepted difference: ValueError once closed, else `exc`."""
    def expect(obj: Any) -> Outcome:
        return ("raise", ValueError, None) if obj.closed else ("raise", exc, None)
    return expect


# ---- data ----

def file_bytes(n: int, seed: int) -> bytes:
    """Random bytes with a newline every few dozen bytes, so readline has lines to find."""
    r = random.Random(seed)
    b = bytearray(r.randbytes(n))
    for i in range(0, n, 1):
        if r.random() < 0.03:
            b[i] = 10
    return bytes(b)


LENGTHS = [0, 1, 4097, 70_001]
STEPS = 400  # per (length, configuration); see SWEEP_SIZE below


def make_buffer(kind: str, size: int) -> Any:
    """A fresh buffer of `kind` whose bytes are 0xEE (so untouched bytes show)."""
    if kind == "bytearray":
        return bytearray(b"\xee" * size)
    if kind == "memoryview":
        return memoryview(bytearray(b"\xee" * size))
    if kind == "array_b":
        return array.array("b", b"\xee" * size)
    if kind == "array_i":
        return array.array("i", b"\xee" * (4 * (size // 4)))
    if kind == "mv_slice":
        return memoryview(bytearray(b"\xee" * (size + 7)))[3:3 + size]
    if kind == "mv_cast":
        return memoryview(bytearray(b"\xee" * (4 * (size // 4)))).cast("I")
    if kind == "bytes":
        return b"\xee" * size
    if kind == "readonly_mv":
        return memoryview(b"\xee" * size)
    if kind == "noncontig":
        return memoryview(bytearray(b"\xee" * (2 * size)))[::2]
    if kind == "str":
        return "x" * size
    if kind == "none":
        return None
    raise AssertionError(kind)


READ_BUFFERS = ["bytearray", "memoryview", "array_b", "array_i", "mv_slice", "mv_cast"]
BAD_READ_BUFFERS = ["bytes", "readonly_mv", "noncontig"]  # BufferError: see the module notes
WORSE_READ_BUFFERS = ["str", "none"]  # TypeError from both


def sizes(length: int) -> List[Any]:
    return [0, 1, 2, 7, 100, 4095, 4096, 4097, 8191, 8192, 8193, 65536, length, length + 1,
            length + 5000]


# ---- Input vs FileIO("rb") ----

def input_step(r: random.Random, length: int, pending: bool) -> Tuple[Any, ...]:
    """One random operation on a raw reader, as data (so a failure can print it)."""
    k = r.random()
    if k < 0.22:
        return ("read", r.choice(sizes(length) + [-1, -7, None]))
    if k < 0.36:
        kinds = READ_BUFFERS + WORSE_READ_BUFFERS + BAD_READ_BUFFERS
        return ("readinto", r.choice(kinds), r.choice(sizes(length)))
    if k < 0.38:
        return ("readall",)
    if k < 0.40:
        return ("readinto_resize", r.choice(sizes(length)))
    if k < 0.46:
        return ("readline", r.choice([-1, None, 0, 1, 5, 100, 5000]))
    if k < 0.48:
        return ("readlines", r.choice([-1, 0, 10, 1000]))
    if k < 0.52:
        return ("next",)
    if k < 0.72:
        whence = r.choice([0, 0, 1, 1, 2])
        if whence == 0:
            off = r.choice([0, 1, length // 2, length - 1, length, length + 1, length + 9000])
            if pending and r.random() < 0.3:
                off = r.choice([-1, -length - 1])
        else:
            off = r.choice([0, 1, -1, 100, -100, 5000, -5000, -length, length])
        if off < 0 and whence == 0 and not pending:
            off = 0
        return ("seek", off, whence)
    if k < 0.80:
        return ("tell",)
    if k < 0.84:
        return ("read_at_keeps_tell", r.choice([0, 1, length // 2, length]), r.choice([0, 1, 10]))
    if k < 0.87:
        return ("bad_arg", r.choice(["read_str", "seek_str", "readinto_int"]
                                    + (["read_float", "seek_float", "seek_float_past", "whence_9"] if pending
                                       else [])))
    if k < 0.93:
        return ("query", r.choice(["readable", "writable", "seekable", "isatty", "closed",
                                   "truncate", "fileno", "flush", "enter"]))
    if pending and k < 0.95:
        return ("write", r.choice([b"x", b""]))
    if k < 0.955:
        return ("close",)
    if k < 0.96:
        return ("with",)
    return ("tell",)


def seek_is_pending(op: Tuple[Any, ...], f: Any) -> bool:
    """A seek whose FileIO result is OSError(EINVAL) but Input's ValueError (pending fix)."""
    if op[0] != "seek" or f.closed:
        return False
    _, off, whence = op
    base = {0: 0, 1: f.tell(), 2: f.length}[whence]
    return base + off < 0


def lifecycle_op(f: Any, op: Tuple[Any, ...]) -> Callable[[], Any]:
    """The steps every file object shares, input or output: close, and a `with` block."""
    if op[0] == "close":
        return f.close
    if op[0] == "with":
        def with_block() -> Any:
            with f as g:
                return g is f
        return with_block
    raise AssertionError(op)


def run_input_op(f: Any, op: Tuple[Any, ...], ours: bool) -> Callable[[], Any]:
    name = op[0]
    if name == "read":
        return lambda: f.read(op[1])
    if name == "readinto":
        def readinto() -> Any:
            buf = make_buffer(op[1], op[2])
            n = f.readinto(buf)
            return (n, bytes(buf) if not isinstance(buf, (str, type(None))) else buf)
        return readinto
    if name == "readall":
        return f.readall
    if name == "readinto_resize":
        def readinto_resize() -> Any:
            b = bytearray(b"\xee" * op[1])
            n = f.readinto(b)
            try:
                b.extend(b"+")  # what a caller may do with its own bytearray
                resized = True
            except BufferError:
                resized = False
                if ours:  # the documented way out
                    f.release_buffer()
                    b.extend(b"+")
            return (n, bytes(b), resized)
        return readinto_resize
    if name == "readline":
        return lambda: f.readline(op[1])
    if name == "readlines":
        return lambda: f.readlines(op[1])
    if name == "next":
        return lambda: next(f)
    if name == "seek":
        return lambda: f.seek(op[1], op[2])
    if name == "tell":
        return f.tell
    if name == "read_at_keeps_tell":
        def read_at() -> Any:
            # Input's positional read has its own contract (exact or EOFError):
            # only its effect on the cursor is compared, which must be none
            if ours:
                try:
                    f.read_at(op[1], op[2])
                except (EOFError, ValueError):
                    pass
            return f.tell()
        return read_at
    if name == "bad_arg":
        return {
            "read_str": lambda: f.read("x"),
            "read_float": lambda: f.read(1.5),
            "seek_float": lambda: f.seek(1.5),
            "seek_float_past": lambda: f.seek(1000.5),
            "seek_str": lambda: f.seek("0"),
            "whence_9": lambda: f.seek(0, 9),
            "readinto_int": lambda: f.readinto(5),
        }[op[1]]
    if name == "query":
        q = op[1]
        if q == "closed":
            return lambda: f.closed
        if q == "truncate":
            return lambda: f.truncate(0)
        if q == "enter":
            return f.__enter__
        return getattr(f, q)
    if name == "write":
        return lambda: f.write(op[1])
    return lifecycle_op(f, op)


def accepted_input(op: Tuple[Any, ...], model: Outcome, ours: Outcome, f: Any) -> bool:
    """True where the module's table of accepted differences explains model != ours."""
    if op[0] == "readinto" and op[1] in BAD_READ_BUFFERS and not f.closed:
        # documented (README): a read-only or non-contiguous buffer raises BufferError
        return model[:2] == ("raise", TypeError) and ours[:2] == ("raise", BufferError)
    if op[0] == "readinto_resize" and model[0] == "ok" and ours[0] == "ok":
        # documented (Input class notes): a fully filled bytearray stays exported
        n, data, resized = model[1]
        return n == op[1] and ours[1] == (n, data, False)  # "full" includes 0 of 0
    if model == ("raise", OSError, errno.EINVAL) and ours[0] == "raise" and \
            issubclass(ours[1], OSError) and ours[2] == errno.EINVAL:
        return True  # e.g. a class that is OSError(EINVAL) and ValueError (module notes)
    if op[:2] == ("query", "seekable") and model == ("ok", False):
        # CPython's FileIO caches seekable() from its first lseek: if that was an invalid
        # seek (EINVAL), it answers False for good. A quirk of the model, not a contract
        return ours == ("ok", True)
    if op[:2] in (("query", "fileno"), ("query", "truncate")) and f.closed:
        return ours[:2] == ("raise", io.UnsupportedOperation)  # a ValueError too
    if op[:2] == ("query", "fileno"):
        return ours[:2] == ("raise", io.UnsupportedOperation)
    if f.closed and model[:2] in (("raise", TypeError), ("raise", BufferError)) and (
            op[0] in ("bad_arg", "readinto")):
        return ours[:2] == ("raise", ValueError)  # closed is reported before the argument
    return False


def sweep_input(model: io.FileIO, inp: nativedir.Input, seed: int, config: str,
                steps: int = STEPS, pending: bool = True,
                only: Optional[Callable[[Tuple[Any, ...]], bool]] = None) -> int:
    """Runs `steps` random operations on both; returns how many were compared."""
    r = random.Random(seed)
    done: List[Any] = []
    length = inp.length
    compared = 0
    for _ in range(steps):
        op = input_step(r, length, pending)
        if op[0] in ("close", "with") and r.random() < 0.5:
            continue  # closing ends the interesting part: do it half as often
        if not pending and seek_is_pending(op, inp):
            continue
        done.append(op)
        m = outcome(run_input_op(model, op, False), model)
        o = outcome(run_input_op(inp, op, True), inp)
        if only is not None and not only(op):
            if m != o and not accepted_input(op, m, o, inp):
                pass  # a pending difference of another kind: its own test reports it
            continue
        compared += 1
        if m != o and not accepted_input(op, m, o, inp):
            fail(seed, config, done, m, o)
    return compared


INPUT_MODES = {
    "default": {},
    "mmap": {"mmap": True},
    "mmap+preload": {"mmap": True, "preload": True},
    "mmap+warm": {"mmap": True, "warm": True},
    "random": {"random": True},
    "sequential": {"sequential": True},
    "merge": {"merge": True},
    "direct": {"merge": True, "require_direct": True},
}
# the derived inputs: a clone (own cursor at 0) and slices (model: FileIO of the slice's bytes)
DERIVED = ["self", "clone", "slice"]


def open_or_skip(nd: nativedir.Directory, name: str, mode: dict) -> nativedir.Input:
    try:
        return nd.open_input(name, **mode)
    except OSError as e:
        if mode.get("require_direct"):
            pytest.skip(f"direct I/O refused by the file system of {nd.path} "
                        f"({e}): the direct strategy is not swept here")
        raise


def derived_pairs(nd: nativedir.Directory, folder: Path, name: str, data: bytes,
                  mode: dict, derived: str, seed: int):
    """(our input, the model FileIO, a label) for one configuration."""
    base = open_or_skip(nd, name, mode)
    if derived == "self":
        return base, io.FileIO(folder / name, "rb"), [base]
    if derived == "clone":
        base.seek(len(data) // 3)  # a clone's cursor starts at 0 whatever the original's
        c = base.clone()
        return c, io.FileIO(folder / name, "rb"), [base, c]
    r = random.Random(seed)
    off = r.randrange(0, len(data) + 1)
    n = r.randrange(0, len(data) - off + 1)
    s = base.slice(off, n)
    model_name = f"slice-{seed}.bin"
    (folder / model_name).write_bytes(data[off:off + n])
    return s, io.FileIO(folder / model_name, "rb"), [base, s]


SWEEP_SIZE = len(LENGTHS) * STEPS  # steps per (mode, derived) pair; printed below


@pytest.mark.parametrize("derived", DERIVED)
@pytest.mark.parametrize("mode", list(INPUT_MODES))
def test_input_is_a_fileio(nd: nativedir.Directory, folder: Path, mode: str,
                           derived: str) -> None:
    compared = 0
    for i, length in enumerate(LENGTHS):
        seed = 1000 * i + 17 * len(mode) + len(derived)
        data = file_bytes(length, seed)
        name = f"in-{length}.bin"
        (folder / name).write_bytes(data)
        ours, model, to_close = derived_pairs(nd, folder, name, data, INPUT_MODES[mode],
                                              derived, seed)
        try:
            compared += sweep_input(model, ours, seed, f"{mode}/{derived}/len={length}")
        finally:
            model.close()
            for h in to_close:
                h.close()
    print(f"input {mode}/{derived}: {compared} steps compared")
    assert compared > len(LENGTHS) * STEPS // 2


# ---- io.BufferedReader over each ----

def buffered_step(r: random.Random, length: int) -> Tuple[Any, ...]:
    k = r.random()
    if k < 0.2:
        return ("read", r.choice(sizes(length) + [-1, None]))
    if k < 0.35:
        return ("read1", r.choice(sizes(length) + [-1]))
    if k < 0.45:
        return ("peek", r.choice([0, 1, 100, 10_000]))
    if k < 0.55:
        return ("readinto", r.choice(READ_BUFFERS), r.choice(sizes(length)))
    if k < 0.62:
        return ("readinto1", r.choice(READ_BUFFERS), r.choice(sizes(length)))
    if k < 0.7:
        return ("readline", r.choice([-1, 5, 100]))
    if k < 0.88:
        whence = r.choice([0, 1, 2])
        off = r.choice([0, 1, 7, -1, -7, 100, -100, length, length + 10]) if whence else \
            r.choice([0, 1, length // 2, length, length + 100])
        return ("seek", off, whence)
    if k < 0.99:
        return ("tell",)
    return ("close",)


def run_buffered_op(f: io.BufferedReader, op: Tuple[Any, ...]) -> Callable[[], Any]:
    name = op[0]
    if name in ("read", "read1", "readline"):
        return lambda: getattr(f, name)(op[1])
    if name == "peek":
        return lambda: f.peek(op[1])
    if name in ("readinto", "readinto1"):
        def readinto() -> Any:
            buf = make_buffer(op[1], op[2])
            return (getattr(f, name)(buf), bytes(buf))
        return readinto
    if name == "seek":
        return lambda: f.seek(op[1], op[2])
    if name == "tell":
        return f.tell
    if name == "close":
        return f.close
    raise AssertionError(op)


@pytest.mark.parametrize("mode", ["default", "mmap", "merge"])
def test_buffered_reader_over_input_is_over_fileio(nd: nativedir.Directory, folder: Path,
                                                   mode: str) -> None:
    compared = 0
    for i, length in enumerate(LENGTHS):
        for bufsize in (1, 7, 4096, 8192):
            seed = 7000 + 100 * i + bufsize
            data = file_bytes(length, seed)
            name = f"buf-{length}.bin"
            (folder / name).write_bytes(data)
            inp = nd.open_input(name, **INPUT_MODES[mode])
            ours = io.BufferedReader(inp, bufsize)
            model = io.BufferedReader(io.FileIO(folder / name, "rb"), bufsize)
            r = random.Random(seed)
            done: List[Any] = []
            try:
                for _ in range(STEPS // 2):
                    op = buffered_step(r, length)
                    done.append(op)
                    m = outcome(run_buffered_op(model, op), model)
                    o = outcome(run_buffered_op(ours, op), ours)
                    compared += 1
                    if m != o and not accepted_input(op, m, o, ours):
                        fail(seed, f"BufferedReader({mode}, {bufsize})/len={length}", done, m, o)
            finally:
                model.close()
                ours.close()
    print(f"BufferedReader over input {mode}: {compared} steps compared")
    assert compared > 1000


# ---- differences _input.py had (each failed before its fix) ----

def one_step(nd: nativedir.Directory, folder: Path, op: Tuple[Any, ...]) -> None:
    data = file_bytes(100, 5)
    (folder / "p.bin").write_bytes(data)
    with nd.open_input("p.bin") as inp, io.FileIO(folder / "p.bin", "rb") as model:
        m = outcome(run_input_op(model, op, False), model)
        o = outcome(run_input_op(inp, op, True), inp)
        if m != o and not accepted_input(op, m, o, inp):
            fail(0, "pending", [op], m, o)


@pytest.mark.parametrize("op", [("seek", -1, 0), ("seek", -101, 1), ("seek", -1000, 2),
                                ("seek", 0, 9)], ids=str)
def test_input_seek_negative_is_oserror_einval(nd: nativedir.Directory, folder: Path,
                                                       op: Tuple[Any, ...]) -> None:
    one_step(nd, folder, op)


@pytest.mark.parametrize("op", [("bad_arg", "read_float"), ("bad_arg", "seek_float_past")],
                         ids=str)
def test_input_float_arguments_are_typeerror(nd: nativedir.Directory, folder: Path,
                                                     op: Tuple[Any, ...]) -> None:
    data = file_bytes(100, 5)
    (folder / "p.bin").write_bytes(data)
    with nd.open_input("p.bin") as inp, io.FileIO(folder / "p.bin", "rb") as model:
        for f in (inp, model):
            f.seek(99)  # one byte left: read(1.5) reads it
        for step in (op, ("tell",)):
            m = outcome(run_input_op(model, step, False), model)
            o = outcome(run_input_op(inp, step, True), inp)
            if m != o:
                fail(0, "pending", [op, step], m, o)


def test_input_writable_after_close(nd: nativedir.Directory, folder: Path) -> None:
    (folder / "p.bin").write_bytes(b"abc")
    inp = nd.open_input("p.bin")
    model = io.FileIO(folder / "p.bin", "rb")
    inp.close()
    model.close()
    m = outcome(model.writable, model)
    o = outcome(inp.writable, inp)
    if m != o:
        fail(0, "pending", [("close",), ("query", "writable")], m, o)


def test_input_write_is_unsupported(nd: nativedir.Directory, folder: Path) -> None:
    one_step(nd, folder, ("write", b"x"))


# ---- Output vs FileIO("wb") ----

WRITE_KINDS = ["bytes", "bytearray", "memoryview", "array_b", "array_i", "mv_slice", "mv_cast",
               "readonly_mv", "noncontig", "str", "none"]


def write_buffer(kind: str, size: int, r: random.Random) -> Any:
    """A buffer of `kind` holding random bytes (the same for both sides: built once)."""
    raw = r.randbytes(size)
    if kind in ("bytes", "readonly_mv"):
        return raw if kind == "bytes" else memoryview(raw)
    if kind in ("str", "none"):
        return make_buffer(kind, size)
    buf = make_buffer(kind, size)
    view = memoryview(buf).cast("B") if not isinstance(buf, memoryview) or buf.contiguous \
        else None
    if view is not None:
        view[:] = raw[:len(view)]
    return buf


def output_step(r: random.Random) -> Tuple[Any, ...]:
    k = r.random()
    if k < 0.45:
        return ("write", r.choice(WRITE_KINDS),
                r.choice([0, 1, 3, 100, 4095, 4096, 4097, 65536, 200_000]), r.random())
    if k < 0.5:
        return ("writelines", r.randrange(0, 4), r.random())
    if k < 0.6:
        return ("tell",)
    if k < 0.68:
        return ("flush",)
    if k < 0.86:
        return ("query", r.choice(["readable", "writable", "seekable", "isatty", "closed",
                                   "fileno", "enter", "read", "readinto", "readall",
                                   "readline", "seek", "seek_cur", "truncate"]))
    if k < 0.9:
        return ("bad_arg", r.choice(["write_int", "write_str", "write_none"]))
    if k < 0.905:
        return ("close",)
    if k < 0.91:
        return ("with",)
    return ("tell",)


def run_output_op(f: Any, op: Tuple[Any, ...]) -> Callable[[], Any]:
    name = op[0]
    if name == "write":
        buf = write_buffer(op[1], op[2], random.Random(op[3]))
        return lambda: f.write(buf)
    if name == "writelines":
        r = random.Random(op[2])
        parts = [r.randbytes(r.randrange(0, 5000)) for _ in range(op[1])]
        return lambda: f.writelines(parts)
    if name == "tell":
        return f.tell
    if name == "flush":
        return f.flush
    if name == "query":
        q = op[1]
        return {
            "closed": lambda: f.closed,
            "enter": f.__enter__,
            "read": lambda: f.read(5),
            "readinto": lambda: f.readinto(bytearray(5)),
            "readall": f.readall,
            "readline": f.readline,
            "seek": lambda: f.seek(0),
            "seek_cur": lambda: f.seek(0, os.SEEK_CUR),
            "truncate": lambda: f.truncate(0),
        }.get(q) or getattr(f, q)
    if name == "bad_arg":
        return {"write_int": lambda: f.write(5), "write_str": lambda: f.write("x"),
                "write_none": lambda: f.write(None)}[op[1]]
    return lifecycle_op(f, op)


def accepted_output(op: Tuple[Any, ...], model: Outcome, ours: Outcome, f: Any) -> bool:
    """The Output rows of the module's table: each checked to be exactly that difference."""
    if f.closed and op[0] in ("write", "bad_arg") and \
            model[:2] in (("raise", TypeError), ("raise", BufferError)):
        return ours[:2] == ("raise", ValueError)  # closed is reported before the argument
    if op[0] != "query":
        return False
    q = op[1]
    if q == "fileno":
        return ours[:2] == ("raise", io.UnsupportedOperation)
    if q in ("seek", "seek_cur", "truncate"):  # append-only: never silently different
        return ours == closed_or(io.UnsupportedOperation)(f)
    if q == "seekable":
        return ours == (closed_or(ValueError)(f) if f.closed else ("ok", False))
    if q == "readall":
        return model[:3] == ("raise", OSError, errno.EBADF) and \
            ours == closed_or(io.UnsupportedOperation)(f)
    return False


def model_skips(op: Tuple[Any, ...]) -> bool:
    """Steps that would change the model's file where ours refuses (seek, truncate)."""
    return op[0] == "query" and op[1] in ("seek", "seek_cur", "truncate")


OUTPUT_MODES = {"default": {}, "merge": {"merge": True},
                "direct": {"merge": True, "require_direct": True}}


def create_or_skip(nd: nativedir.Directory, name: str, mode: dict) -> nativedir.Output:
    try:
        return nd.create_output(name, overwrite=True, **mode)
    except OSError as e:
        if mode.get("require_direct"):
            pytest.skip(f"direct I/O refused by the file system of {nd.path} "
                        f"({e}): the direct output is not swept here")
        raise


@pytest.mark.parametrize("mode", list(OUTPUT_MODES))
def test_output_is_a_fileio(nd: nativedir.Directory, folder: Path, mode: str) -> None:
    compared = 0
    for seed in range(8):
        ours = create_or_skip(nd, "out.bin", OUTPUT_MODES[mode])
        model = io.FileIO(folder / "model.bin", "wb")
        r = random.Random(seed)
        done: List[Any] = []
        try:
            for _ in range(STEPS // 2):
                op = output_step(r)
                if op[0] in ("close", "with") and r.random() < 0.5:
                    continue
                done.append(op)
                if model_skips(op):
                    m = ("model not run",)
                else:
                    m = outcome(run_output_op(model, op), model)
                o = outcome(run_output_op(ours, op), ours)
                compared += 1
                if m != o and not accepted_output(op, m, o, ours):
                    fail(seed, f"output {mode}", done, m, o)
        finally:
            model.close()
            ours.close()
        assert (folder / "out.bin").read_bytes() == (folder / "model.bin").read_bytes(), \
            f"seed={seed} {mode}: the files differ after {done!r}"
    print(f"output {mode}: {compared} steps compared")
    assert compared > 1000


@pytest.mark.parametrize("mode", list(OUTPUT_MODES))
def test_buffered_writer_over_output_is_over_fileio(nd: nativedir.Directory, folder: Path,
                                                    mode: str) -> None:
    for seed, bufsize in enumerate((1, 7, 4096, 8192)):
        ours = io.BufferedWriter(create_or_skip(nd, "bw.bin", OUTPUT_MODES[mode]), bufsize)
        model = io.BufferedWriter(io.FileIO(folder / "bwm.bin", "wb"), bufsize)
        r = random.Random(seed)
        done: List[Any] = []
        with ours, model:
            for _ in range(STEPS // 2):
                k = r.random()
                if k < 0.7:
                    data = r.randbytes(r.choice([0, 1, 6, 7, 8, 4095, 4096, 4097, 70_000]))
                    op = ("write", len(data))
                    steps = (lambda f: f.write(data))
                elif k < 0.85:
                    op, steps = ("tell",), (lambda f: f.tell())
                else:
                    op, steps = ("flush",), (lambda f: f.flush())
                done.append(op)
                m = outcome(lambda: steps(model), model)
                o = outcome(lambda: steps(ours), ours)
                if m != o:
                    fail(seed, f"BufferedWriter({mode}, {bufsize})", done, m, o)
        assert ours.closed and model.closed
        assert (folder / "bw.bin").read_bytes() == (folder / "bwm.bin").read_bytes()


# ---- Directory vs os ----

# Names the sweep draws from: plain, hidden, unicode (NFC and NFD spellings are two
# names, as for os), the longest valid (255 bytes), too long (ENAMETOOLONG from os), and
# "sub", a subdirectory made in both folders before the sweep, and two symbolic
# links, "link" to "a" and "dangling" to a missing name.
GOOD_NAMES = ["a", "b.bin", ".hidden", "Ünïcödé-名前", "U\u0308nicode", "sub", "x" * 255,
              "\u00e9" * 127 + "z", "link", "dangling"]
LONG_NAMES = ["y" * 256, "\u00e9" * 128, "\u540d" * 86]  # 256, 256 and 258 bytes
BAD_NAMES = ["a/b", "../escape", "..", ".", "", "sub/a", "/abs"]


def utf8_sorted(names: List[str]) -> List[str]:
    return sorted(names, key=lambda n: n.encode("utf-8"))


def os_regular_files(folder: Path) -> List[str]:
    import stat
    return utf8_sorted([n for n in os.listdir(folder)
                        if stat.S_ISREG(os.lstat(folder / n).st_mode)])


class OsModel:
    """The os calls a Directory stands for, on its own folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def p(self, name: str) -> str:
        return os.path.join(self.folder, name)

    def create(self, name: str, overwrite: bool, data: bytes) -> int:
        with io.FileIO(self.p(name), "wb" if overwrite else "xb") as f:
            return f.write(data)

    def read(self, name: str) -> bytes:
        with io.FileIO(self.p(name), "rb") as f:
            return f.readall()

    def list(self) -> List[str]:
        return os_regular_files(self.folder)

    def exists(self, name: str) -> bool:
        import stat
        try:
            return stat.S_ISREG(os.lstat(self.p(name)).st_mode)
        except FileNotFoundError:
            return False

    def length(self, name: str) -> int:
        return os.path.getsize(self.p(name))

    def delete(self, name: str) -> None:
        os.remove(self.p(name))

    def rename(self, a: str, b: str) -> None:
        os.replace(self.p(a), self.p(b))

    def fsync(self, name: str) -> None:
        fd = os.open(self.p(name), os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class NdSide:
    def __init__(self, d: nativedir.Directory) -> None:
        self.d = d

    def create(self, name: str, overwrite: bool, data: bytes) -> int:
        with self.d.create_output(name, overwrite=overwrite) as out:
            return out.write(data)

    def read(self, name: str) -> bytes:
        with self.d.open_input(name) as inp:
            return inp.readall()

    def list(self) -> List[str]:
        return self.d.list()

    def exists(self, name: str) -> bool:
        return self.d.exists(name)

    def length(self, name: str) -> int:
        return self.d.length(name)

    def delete(self, name: str) -> None:
        self.d.delete(name)

    def rename(self, a: str, b: str) -> None:
        self.d.rename(a, b)

    def fsync(self, name: str) -> None:
        self.d.fsync(name)


def dir_step(r: random.Random) -> Tuple[Any, ...]:
    def name() -> str:
        k = r.random()
        return r.choice(LONG_NAMES) if k < 0.08 else r.choice(GOOD_NAMES)
    k = r.random()
    if k < 0.25:
        return ("create", name(), r.random() < 0.5, r.randrange(0, 3000))
    if k < 0.35:
        return ("read", name())
    if k < 0.42:
        return ("list",)
    if k < 0.52:
        return ("exists", name())
    if k < 0.62:
        return ("length", name())
    if k < 0.75:
        return ("delete", name())
    if k < 0.92:
        return ("rename", name(), name())
    return ("fsync", name())


def run_dir_op(side: Any, op: Tuple[Any, ...]) -> Callable[[], Any]:
    if op[0] == "create":
        data = random.Random(op[3]).randbytes(op[3])
        return lambda: side.create(op[1], op[2], data)
    return lambda: getattr(side, op[0])(*op[1:])


def follows_link(op: Tuple[Any, ...], links: List[str]) -> bool:
    """Steps whose os call would follow a symbolic link (nativedir never does): not run on the model."""
    return bool(links) and op[1] in links and (
        op[0] in ("length", "read", "fsync") or (op[0] == "create" and op[2]))


def accepted_dir(op: Tuple[Any, ...], model: Outcome, ours: Outcome, dirs: List[str]) -> bool:
    """The Directory rows of the module's table; `dirs`: the step's names that are directories."""
    names = op[1:3] if op[0] == "rename" else op[1:2]
    if any(n in LONG_NAMES for n in names):
        # refused before any file is looked at, so a rename of a missing source reports
        # the long name where os reports ENOENT first
        return ours == ("raise", nativedir.NameTooLongError, errno.ENAMETOOLONG) and \
            model[0] == "raise" and issubclass(model[1], OSError) and \
            model[2] in (errno.ENAMETOOLONG, errno.ENOENT)
    if op[0] in ("length", "fsync") and names[0] in dirs:
        # a directory is not an index file: refused as open() refuses it (getsize
        # gives its inode size, fsync of a directory is Directory.sync_dir)
        return model[0] == "ok" and ours == ("raise", IsADirectoryError, errno.EISDIR)
    return False


def test_directory_is_the_os_calls(tmp_path: Path) -> None:
    mine, model_dir = tmp_path / "nd", tmp_path / "os"
    for f in (mine, model_dir):
        (f / "sub").mkdir(parents=True)
        (f / "a").write_bytes(b"target")
        os.symlink("a", f / "link")
        os.symlink("missing", f / "dangling")
    model = OsModel(model_dir)
    compared = 0
    with nativedir.Directory(mine) as d:
        ours = NdSide(d)
        for seed in range(6):
            r = random.Random(seed)
            done: List[Any] = []
            for _ in range(STEPS):
                op = dir_step(r)
                done.append(op)
                dirs = [n for n in op[1:3] if isinstance(n, str) and n not in LONG_NAMES
                        and os.path.isdir(model_dir / n)]
                links = [n for n in op[1:3] if isinstance(n, str) and n not in LONG_NAMES
                         and os.path.islink(model_dir / n)]
                if follows_link(op, links):
                    # documented: a link is never followed; refused as open(O_NOFOLLOW) does
                    o = outcome(run_dir_op(ours, op), ours)
                    if o != ("raise", PermissionError, errno.ELOOP):
                        fail(seed, "directory", done, ("no follow: PermissionError(ELOOP)",), o)
                    compared += 1
                    continue
                m = outcome(run_dir_op(model, op), model)
                o = outcome(run_dir_op(ours, op), ours)
                compared += 1
                if m != o and not accepted_dir(op, m, o, dirs):
                    fail(seed, "directory", done, m, o)
            assert os_regular_files(mine) == os_regular_files(model_dir) == d.list()
            assert sorted(os.listdir(mine)) == sorted(os.listdir(model_dir))  # dirs, links
            for n in d.list():
                assert (mine / n).read_bytes() == (model_dir / n).read_bytes(), n
    print(f"directory: {compared} steps compared")


@pytest.mark.parametrize("bad", BAD_NAMES)
@pytest.mark.parametrize("call", ["create", "read", "exists", "length", "delete", "rename_from",
                                  "rename_to", "fsync", "lock"])
def test_directory_never_leaves_its_folder(tmp_path: Path, bad: str, call: str) -> None:
    """Names with a separator, "..", "." or "" raise ValueError and touch nothing anywhere."""
    inner = tmp_path / "inner"
    (inner / "sub").mkdir(parents=True)
    (inner / "a").write_bytes(b"inside")
    (tmp_path / "escape").write_bytes(b"outside")
    (inner / "sub" / "a").write_bytes(b"nested")
    before = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    with nativedir.Directory(inner) as d:
        fn = {
            "create": lambda: d.create_output(bad, overwrite=True).close(),
            "read": lambda: d.open_input(bad).close(),
            "exists": lambda: d.exists(bad),
            "length": lambda: d.length(bad),
            "delete": lambda: d.delete(bad),
            "rename_from": lambda: d.rename(bad, "moved"),
            "rename_to": lambda: d.rename("a", bad),
            "fsync": lambda: d.fsync(bad),
            "lock": lambda: d.lock(bad).close(),
        }[call]
        with pytest.raises(ValueError):
            fn()
    after = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    assert after == before
    assert (tmp_path / "escape").read_bytes() == b"outside"
    assert (inner / "a").read_bytes() == b"inside"
