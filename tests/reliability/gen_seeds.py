#!/usr/bin/env python3
"""Writes the hand-made seeds of the fuzz corpus (tests/reliability/corpus/seed-*).

The fuzz target reads its input as a stream of choices (see fuzz_api.c): one
byte picks the call (value % 16), the next bytes its name, flags, handles and
range. These seeds spell out states worth starting from (files with bytes in
them at the buffers' edges, opened every way, read at their boundaries,
sliced, renamed, locked, read through rings) so the fuzzer mutates from there
instead of rediscovering them. Each helper consumes exactly what the matching
op_* function in fuzz_api.c reads; run a seed with ND_FUZZ_TRACE=1 to see its
calls. The rest of the corpus is what libFuzzer kept (-merge=1) from runs.
"""
import os
import sys

LIVE = 0  # pick_handle: a byte < 200 picks a live handle of the wanted kind


def make_file(name, size, merge=0, seed=1, cut=0):
    """op_make_file: name byte (< 150: plain_names[b % 7]), size byte, merge bit, seed, cut."""
    return bytes([1, name, size, merge, seed, cut & 0xFF, cut >> 8])


def open_existing(k, flag):
    """op_open_input: k < 128 opens names[k % n] if it exists; flag indexes the flags table."""
    return bytes([7, k, flag, LIVE])


def read_whole(which_input, d):
    """op_read positional: off 0, len = size + (d - 2); byte 1: a real buffer."""
    return bytes([9, which_input, 0, d, 2, 1])


def read_tail(which_input, d):
    """op_read positional: mode 0 ends at the end +/- (d - 2), starting at u16 0x0100."""
    return bytes([9, which_input, 0, d, 0, 0, 1, 1])


def window_at_end(which_input, d):
    """op_read window: off = size + (d - 2), len small; byte 1: a real pointer."""
    return bytes([9, which_input, 5, d, 1, 1, 1])


def seek_read(which_input, d):
    """seek to size - 1, back to 0, then nd_read_buffered to the end +/- (d - 2)."""
    return (bytes([9, which_input, 1, 1, 1, 0]) + bytes([9, which_input, 1, 2, 2]) +
            bytes([9, which_input, 4, d, 2]))


def slice_tail(which_input, d):
    """op_derive slice: ends at the end +/- (d - 2), starting at u16 0x0203."""
    return bytes([11, which_input, 2, d, 0, 3, 2])


def clone(which_input):
    return bytes([11, which_input, 0])


# flags table of op_open_input: 0 plain, 1 mmap, 2 merge, 3 random, 4 seq+preload, 5 mmap+preload
# op_make_file's size byte: < 250 picks sizes[b % 16] (+1 if b is odd); 250-252: 256 KiB +/- 1;
# 253-255: 1 MiB +/- 1
SIZES = {"4098": 9, "16385": 28, "65536": 46, "262145": 251, "1048576": 253, "2": 17, "0": 0}

SEEDS = {
    "seed-buffered-edges": make_file(0, SIZES["4098"], cut=700) + open_existing(0, 0) +
        read_whole(0, 3) + read_whole(0, 2) + read_tail(0, 1) + window_at_end(0, 1) +
        seek_read(0, 2) + seek_read(0, 3),
    "seed-mmap": make_file(0, SIZES["16385"], cut=5000) + open_existing(0, 1) +
        read_whole(0, 3) + window_at_end(0, 1) + slice_tail(0, 2) + read_whole(1, 2) +
        read_whole(1, 3) + clone(1) + seek_read(2, 2),
    "seed-merge": make_file(0, SIZES["262145"], merge=1, cut=4096) + open_existing(0, 2) +
        read_whole(0, 3) + read_tail(0, 1) + slice_tail(0, 2) + read_whole(1, 3) +
        seek_read(1, 2),
    "seed-direct-edge": make_file(1, SIZES["1048576"], merge=1, cut=0xFFFF) + open_existing(0, 2) +
        read_whole(0, 2) + read_whole(0, 3),
    "seed-sequential": make_file(0, SIZES["65536"], cut=1) + open_existing(0, 4) +
        seek_read(0, 2) + clone(0) + seek_read(1, 3) + window_at_end(1, 2),
    "seed-rename-lock-list": make_file(0, SIZES["4098"]) + make_file(1, SIZES["2"]) +
        bytes([12, 3, 0, LIVE, 1]) +        # rename a -> b (over b)
        bytes([12, 6, 2, LIVE]) +           # lock _0.cfs (created)
        bytes([12, 6, 2, LIVE]) +           # again: ND_E_LOCKED
        bytes([13, LIVE, 4]) +              # list with the exact capacity
        bytes([13, LIVE, 3, 0xFF]) +        # list one byte short +/-: nothing written
        bytes([12, 0, 1, LIVE]) + bytes([12, 1, 1, LIVE]) +  # exists, length of b
        bytes([12, 2, 1, LIVE]) + bytes([12, 2, 1, LIVE]),   # delete b twice
    "seed-ring": make_file(0, SIZES["16385"]) + open_existing(0, 0) +
        bytes([14, 0, 4, 1, 0]) +                    # ring of depth 4
        bytes([14, 1, LIVE, LIVE, 3, 2, 7]) +        # submit the whole input + 1: EOF
        bytes([14, 1, LIVE, LIVE, 2, 2, 8]) +        # the whole input
        bytes([14, 1, LIVE, LIVE, 0, 1, 0, 9]) +     # its last bytes
        bytes([14, 3, LIVE]) + bytes([14, 2, LIVE, 8]) + bytes([14, 2, LIVE, 8]),
    "seed-hostile": bytes([0, 160, 0, 0, 7, 200, 170, 0, 0, 12, 0, 201, 0, 9, 250, 0, 0, 0,
                           6, 0, 230, 1, 2, 3, 4, 5, 6, 7, 8, 15, 1, 0, 15, 0, 9,
                           0, 210, 5, 0, 0, 0, 220, 8, 0x2f, 0x2e, 0x2e, 0x2f, 0x61, 0x62, 0, 0]),
    "seed-stale-handles": make_file(0, SIZES["4098"]) + open_existing(0, 0) + clone(0) +
        bytes([6, 0, LIVE]) +                        # close an input
        bytes([9, 200, 0, 0, 2, 1]) +                # read through a stale handle
        bytes([9, 201, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0, 2, 1]) +  # a forged one
        bytes([6, 5, 0, 0]) +                        # close the directory
        open_existing(0, 0) + bytes([15, 1, 3]) + open_existing(0, 0) + read_whole(1, 2),
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus")
    os.makedirs(out, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print(f"{len(SEEDS)} seeds in {out}")


if __name__ == "__main__":
    main()
