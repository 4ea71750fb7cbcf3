"""nativedir from Python: open a directory, write a file and make it durable, read it back.

    python3 -m pip install nativedir   # or the built wheel
    python3 example.py /tmp/idx
"""
import sys

import nativedir

path = sys.argv[1] if len(sys.argv) > 1 else "example-index"
text = b"nativedir: durable on return"

with nativedir.Directory(path, create=True) as d:
    # write under a temporary name, make the bytes durable, then rename: the final name always
    # holds a whole file
    with d.create_output("notes.tmp", overwrite=True) as out:
        out.write(text)
        out.sync()                         # flush and fsync through this handle
        print(f"crc32 {out.crc32():08x}")
    d.rename("notes.tmp", "notes")
    d.sync_dir()                           # the rename is durable too

    # read it back through a mapping: zero copy, positional reads are thread-safe
    with d.open_input("notes", mmap=True, random=True) as inp:
        back = inp.read_at(0, len(text))
    if back != text:
        sys.exit(f"read back {back!r}")
print(f"wrote and read back {len(text)} bytes with nativedir {nativedir.__version__}")
