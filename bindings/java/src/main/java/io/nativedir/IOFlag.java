package io.nativedir;

import io.nativedir.jni.nativedirConstants;

/** How an input is read or an output written; the values are the library's ND_IO_* flags. */
public enum IOFlag {
  /** Access advice: random reads (small buffer, no read-ahead). */
  RANDOM(nativedirConstants.ND_IO_RANDOM),
  /** Access advice: sequential reads (large buffer, read-ahead). */
  SEQUENTIAL(nativedirConstants.ND_IO_SEQUENTIAL),
  /** Read or written once, in bulk: direct I/O where allowed, else without polluting the cache. */
  MERGE(nativedirConstants.ND_IO_MERGE),
  /** Serve reads from a memory mapping (see {@link NativeInput#mappedBuffer()}). */
  MMAP(nativedirConstants.ND_IO_MMAP),
  /** Fault the mapping in, or read ahead, at open. */
  PRELOAD(nativedirConstants.ND_IO_PRELOAD),
  /** Fail instead of falling back when direct I/O is refused. */
  REQUIRE_DIRECT(nativedirConstants.ND_IO_REQUIRE_DIRECT),
  /** createOutput replaces an existing file instead of failing. */
  OVERWRITE(nativedirConstants.ND_IO_OVERWRITE);

  final long bits;

  IOFlag(long bits) {
    this.bits = bits;
  }

  static long bits(IOFlag... flags) {
    long b = 0;
    for (IOFlag f : flags) {
      b |= f.bits;
    }
    return b;
  }
}
