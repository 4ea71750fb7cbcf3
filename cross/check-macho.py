"""A macOS library (Mach-O dylib) built here is what macOS expects, as far as can be told without
a Mac: ctest's <osx target>_exports, _dotnet_glue_exports and _jni_exports.

    check-macho.py LIB --nm LLVM_NM --arch arm64|x86_64 --min-macos 11.0
                   (--exports exports.txt | --prefix CSharp_) [--install-name @rpath/...]

- a 64-bit Mach-O dylib of that CPU, built for macOS (LC_BUILD_VERSION) with that deployment
  target, its install name @rpath/<name> (not a path of this build machine);
- it needs nothing but /usr/lib/libSystem.B.dylib;
- it exports exactly the public ABI (exports.txt), or only entry points that start with the
  prefix (the static core, libdeflate and the C runtime stay hidden); Mach-O names carry a
  leading underscore, which is dropped before comparing;
- an arm64 one is signed (ad hoc) and every page hash of its code directory matches the file:
  macOS refuses to map arm64 code without a valid signature, and a tool that edits the file
  after the linker (strip) can leave a stale one. The hash check is tried first on a copy with
  one byte changed, which it must reject (the check's negative control).
"""
from __future__ import annotations

import argparse
import hashlib
import struct
import subprocess
import sys

CPU = {"arm64": 0x0100000C, "x86_64": 0x01000007}
MH_MAGIC_64, MH_DYLIB = 0xFEEDFACF, 6
LC_LOAD_DYLIB, LC_ID_DYLIB, LC_CODE_SIGNATURE, LC_BUILD_VERSION = 0xC, 0xD, 0x1D, 0x32
LC_REQ_DYLD = 0x80000000
PLATFORM_MACOS = 1
CSMAGIC_EMBEDDED_SIGNATURE, CSMAGIC_CODEDIRECTORY = 0xFADE0CC0, 0xFADE0C02
CS_HASHTYPE_SHA256 = 2


def fail(msg: str) -> None:
    sys.exit(f"check-macho: {msg}")


def load_commands(data: bytes) -> list[tuple[int, int, int]]:
    """(cmd, offset, size) of every load command."""
    magic, cpu, _sub, ftype, ncmds, _size, _flags, _res = struct.unpack_from("<IiiIIIII", data, 0)
    if magic != MH_MAGIC_64:
        fail(f"not a 64-bit Mach-O file (magic {magic:#x})")
    cmds, off = [], 32
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<II", data, off)
        cmds.append((cmd & ~LC_REQ_DYLD, off, size))
        off += size
    return cmds


def dylib_name(data: bytes, off: int, size: int) -> str:
    (name_off,) = struct.unpack_from("<I", data, off + 8)
    return data[off + name_off:off + size].split(b"\0", 1)[0].decode()


def signature_problem(data: bytes, cmds: list[tuple[int, int, int]]) -> str | None:
    """None when the ad-hoc signature's code directory hashes every page of the file right."""
    sig = [(off, size) for cmd, off, size in cmds if cmd == LC_CODE_SIGNATURE]
    if not sig:
        return "no code signature (LC_CODE_SIGNATURE)"
    dataoff, datasize = struct.unpack_from("<II", data, sig[0][0] + 8)
    blob = data[dataoff:dataoff + datasize]
    magic, _length, count = struct.unpack_from(">III", blob, 0)
    if magic != CSMAGIC_EMBEDDED_SIGNATURE:
        return f"the signature is not an embedded signature (magic {magic:#x})"
    for i in range(count):
        slot, boff = struct.unpack_from(">II", blob, 12 + 8 * i)
        if slot != 0:
            continue
        (cmagic, _clen, _ver, _flags, hash_off, _ident, _nspecial, ncode, code_limit, hash_size,
         hash_type, _platform, page_log2) = struct.unpack_from(">IIIIIIIIIBBBB", blob, boff)
        if cmagic != CSMAGIC_CODEDIRECTORY or hash_type != CS_HASHTYPE_SHA256:
            return f"unexpected code directory (magic {cmagic:#x}, hash type {hash_type})"
        page = 1 << page_log2
        if ncode != -(-code_limit // page) or code_limit != dataoff:
            return f"the code directory covers {ncode} pages up to {code_limit}, not the file up to {dataoff}"
        for n in range(ncode):
            chunk = data[n * page:min((n + 1) * page, code_limit)]
            want = blob[boff + hash_off + n * hash_size:boff + hash_off + (n + 1) * hash_size]
            if hashlib.sha256(chunk).digest()[:hash_size] != want:
                return f"page {n} of {ncode} does not match its hash in the signature"
        return None
    return "the signature has no code directory"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("--nm", required=True)
    ap.add_argument("--arch", required=True, choices=sorted(CPU))
    ap.add_argument("--min-macos", required=True)
    ap.add_argument("--exports")
    ap.add_argument("--prefix")
    ap.add_argument("--install-name")
    args = ap.parse_args()
    data = open(args.lib, "rb").read()
    cmds = load_commands(data)
    _magic, cpu, _sub, ftype = struct.unpack_from("<IiiI", data, 0)
    if cpu != CPU[args.arch] or ftype != MH_DYLIB:
        fail(f"{args.lib} is not a {args.arch} dylib (cpu {cpu:#x}, file type {ftype})")

    builds = [struct.unpack_from("<IIII", data, off + 8) for cmd, off, _ in cmds if cmd == LC_BUILD_VERSION]
    if not builds or builds[0][0] != PLATFORM_MACOS:
        fail(f"{args.lib} is not built for macOS (LC_BUILD_VERSION {builds})")
    minos = builds[0][1]
    have = f"{minos >> 16}.{(minos >> 8) & 0xFF}"
    if have != args.min_macos:
        fail(f"{args.lib} targets macOS {have}, not {args.min_macos}")

    ids = [dylib_name(data, off, size) for cmd, off, size in cmds if cmd == LC_ID_DYLIB]
    want_id = args.install_name or "@rpath/" + args.lib.rsplit("/", 1)[-1]
    if ids != [want_id]:
        fail(f"{args.lib}: install name {ids}, expected {want_id}")
    needs = [dylib_name(data, off, size) for cmd, off, size in cmds if cmd == LC_LOAD_DYLIB]
    if needs != ["/usr/lib/libSystem.B.dylib"]:
        fail(f"{args.lib} needs {needs}; only /usr/lib/libSystem.B.dylib is on every Mac")

    out = subprocess.run([args.nm, "--extern-only", "--defined-only", args.lib], check=True,
                         capture_output=True, text=True).stdout
    names = sorted(line.split()[-1][1:] for line in out.splitlines() if line.strip())
    if args.exports:
        expected = sorted(n for n in open(args.exports).read().split() if n)
        if names != expected:
            fail(f"{args.lib} does not export exactly the public ABI:\n"
                 f"  missing: {sorted(set(expected) - set(names))}\n"
                 f"  not public but exported: {sorted(set(names) - set(expected))}")
        what = "exactly the ABI"
    elif args.prefix:
        other = [n for n in names if not n.startswith(args.prefix)]
        if other or len(names) < 20:
            fail(f"{args.lib} exports {len(names)} names; not {args.prefix}*: {other[:20]}")
        what = f"all {args.prefix}*"
    else:
        fail("give --exports or --prefix")

    signed = "not signed (x86_64 code needs no signature)"
    if args.arch == "arm64":
        tampered = bytearray(data)
        tampered[0x1000] ^= 0xFF  # a byte of code on the second page
        if signature_problem(bytes(tampered), cmds) is None:
            fail("the signature check accepted a changed file: it proves nothing")
        problem = signature_problem(data, cmds)
        if problem:
            fail(f"{args.lib}: {problem}")
        signed = "signed ad hoc, every page hash matching (and a changed copy rejected)"
    print(f"check-macho: {args.lib}: {args.arch} dylib for macOS {have}, install name {want_id}, "
          f"needs only libSystem, {len(names)} exports, {what}; {signed}")


if __name__ == "__main__":
    main()
