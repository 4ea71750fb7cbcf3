"""Directory: opening, listing, names, rename/delete, durability calls, locks."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import nativedir
from conftest import child_env


def test_open_existing_and_context_manager(folder: Path) -> None:
    d = nativedir.Directory(folder)
    assert not d.closed
    assert d.path == str(folder)
    with d as same:
        assert same is d
    assert d.closed
    d.close()  # a second close is allowed


def test_open_forms(folder: Path) -> None:
    for d in (nativedir.Directory.open(folder), nativedir.open(str(folder)),
              nativedir.Directory(os.fsencode(folder))):
        with d:
            assert d.list() == []


def test_create_makes_parents(folder: Path) -> None:
    target = folder / "a" / "b" / "c"
    with pytest.raises(FileNotFoundError):
        nativedir.Directory(target)
    with nativedir.Directory(target, create=True) as d:
        assert target.is_dir()
        assert d.list() == []


def test_list_sorted_regular_files_only(nd: nativedir.Directory, folder: Path) -> None:
    for name in ("b", "a", "_0.cfs", "segments_1", "Z"):
        (folder / name).write_bytes(b"x")
    (folder / "sub").mkdir()
    os.symlink(folder / "a", folder / "link")
    assert nd.list() == ["Z", "_0.cfs", "a", "b", "segments_1"]


def test_list_grows_past_first_guess(nd: nativedir.Directory, folder: Path) -> None:
    # more than the 4 KiB first guess of list(): the second call must get them all
    names = sorted(f"file_{i:04d}_{'x' * 40}" for i in range(200))
    for name in names:
        (folder / name).write_bytes(b"")
    assert nd.list() == names


def test_unicode_names(nd: nativedir.Directory, folder: Path) -> None:
    name = "índice_日本.bin"
    with nd.create_output(name) as out:
        out.write(b"abc")
    assert (folder / name).read_bytes() == b"abc"
    assert nd.list() == [name]
    assert nd.exists(name.encode("utf-8"))
    with nd.open_input(name.encode("utf-8")) as inp:
        assert inp.name == name


def test_exists_length_delete(nd: nativedir.Directory, folder: Path) -> None:
    (folder / "f").write_bytes(b"12345")
    (folder / "dir").mkdir()
    assert nd.exists("f") and "f" in nd
    assert not nd.exists("missing") and "missing" not in nd
    assert not nd.exists("dir")
    assert nd.length("f") == 5
    nd.delete("f")
    assert not (folder / "f").exists()
    assert not nd.exists("f")


def test_rename_replaces_target(nd: nativedir.Directory, folder: Path) -> None:
    (folder / "pending_segments_2").write_bytes(b"new")
    (folder / "segments_2").write_bytes(b"old")
    nd.rename("pending_segments_2", "segments_2")
    assert nd.list() == ["segments_2"]
    assert (folder / "segments_2").read_bytes() == b"new"


def test_fsync_and_sync_dir(nd: nativedir.Directory, folder: Path) -> None:
    (folder / "f").write_bytes(b"data")
    nd.fsync("f")
    nd.sync_dir()
    with pytest.raises(FileNotFoundError):
        nd.fsync("missing")


def test_symlink_is_not_followed(nd: nativedir.Directory, folder: Path, tmp_path_factory) -> None:
    outside = tmp_path_factory.mktemp("outside") / "secret"
    outside.write_bytes(b"secret")
    os.symlink(outside, folder / "link")
    assert not nd.exists("link")
    with pytest.raises(PermissionError):
        nd.open_input("link")
    nd.delete("link")  # removes the link itself
    assert outside.read_bytes() == b"secret"


def test_closing_directory_leaves_files_working(folder: Path) -> None:
    d = nativedir.Directory(folder)
    out = d.create_output("f")
    (folder / "g").write_bytes(b"hello")
    inp = d.open_input("g")
    d.close()
    out.write(b"after close")
    out.close()
    assert inp.read_at(0, 5) == b"hello"
    inp.close()
    assert (folder / "f").read_bytes() == b"after close"


def test_lock_excludes_and_releases(nd: nativedir.Directory, folder: Path) -> None:
    with nd.lock("write.lock") as lock:
        assert lock.name == "write.lock" and not lock.closed
        assert (folder / "write.lock").exists()
        with pytest.raises(BlockingIOError):
            nd.lock("write.lock")
        with nd.lock("other.lock"):
            pass
    assert lock.closed
    again = nd.lock("write.lock")
    again.release()
    assert again.closed


def test_lock_excludes_another_process(nd: nativedir.Directory, folder: Path) -> None:
    script = textwrap.dedent(f"""
        import sys, nativedir
        with nativedir.Directory({str(folder)!r}) as d:
            try:
                d.lock("write.lock")
            except BlockingIOError:
                sys.exit(3)
        sys.exit(0)
    """)
    with nd.lock("write.lock"):
        held = subprocess.run([sys.executable, "-c", script], env=child_env())
    free = subprocess.run([sys.executable, "-c", script], env=child_env())
    assert (held.returncode, free.returncode) == (3, 0)


def test_use_after_close_raises_value_error(folder: Path) -> None:
    d = nativedir.Directory(folder)
    d.close()
    calls = [lambda: d.list(), lambda: d.exists("a"), lambda: d.length("a"),
             lambda: d.delete("a"), lambda: d.rename("a", "b"), lambda: d.fsync("a"),
             lambda: d.sync_dir(), lambda: d.lock("a"), lambda: d.open_input("a"),
             lambda: d.create_output("a"), lambda: d.__enter__()]
    for call in calls:
        with pytest.raises(ValueError, match="closed directory"):
            call()


def test_lock_use_after_close(nd: nativedir.Directory) -> None:
    lock = nd.lock("l")
    lock.close()
    lock.close()
    with pytest.raises(ValueError, match="closed lock"):
        lock.__enter__()


def test_unclosed_directory_warns(folder: Path) -> None:
    d = nativedir.Directory(folder)
    with pytest.warns(ResourceWarning, match="unclosed"):
        d.__del__()
    assert d.closed


def test_repr(nd: nativedir.Directory, folder: Path) -> None:
    assert str(folder) in repr(nd)
