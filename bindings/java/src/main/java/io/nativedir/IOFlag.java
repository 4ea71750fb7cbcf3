package io.nativedir;

import io.nativedir.jni.nativedirConstants;

/**
 * How an input is read or an output written; the values are the library's ND_IO_* flags, read
 * from the library when a flag is used (never when this class loads: naming a flag must not
 * load native code, see {@link NativeLibraryUnavailableError}).
 */
public enum IOFlag {
  /** Access advice: random reads (small buffer, no read-ahead). */
  RANDOM,
  /** Access advice: sequential reads (large buffer, read-ahead). */
  SEQUENTIAL,
  /** Read or written once, in bulk: direct I/O where allowed, else without polluting the cache. */
  MERGE,
  /** Serve reads from a memory mapping (see {@link NativeInput#mappedBuffer()}). */
  MMAP,
  /** Fault the mapping in, or read ahead, at open. */
  PRELOAD,
  /** Fail instead of falling back when direct I/O is refused. */
  REQUIRE_DIRECT,
  /** createOutput replaces an existing file instead of failing. */
  OVERWRITE,
  /**
   * Each read is of bytes not read again soon (a search's stored fields, per hit): while the page
   * cache thrashes, the input's positional reads leave none of its pages cached.
   */
  NOREUSE,
  /**
   * A search input: while its directory's files fit in the page cache the process may use, the
   * whole file is read into the cache at open, without waiting for it.
   */
  WARM;

  long bits() {
    switch (this) {
      case RANDOM: return nativedirConstants.ND_IO_RANDOM;
      case SEQUENTIAL: return nativedirConstants.ND_IO_SEQUENTIAL;
      case MERGE: return nativedirConstants.ND_IO_MERGE;
      case MMAP: return nativedirConstants.ND_IO_MMAP;
      case PRELOAD: return nativedirConstants.ND_IO_PRELOAD;
      case REQUIRE_DIRECT: return nativedirConstants.ND_IO_REQUIRE_DIRECT;
      case OVERWRITE: return nativedirConstants.ND_IO_OVERWRITE;
      case NOREUSE: return nativedirConstants.ND_IO_NOREUSE;
      case WARM: return nativedirConstants.ND_IO_WARM;
      default: throw new AssertionError(this);
    }
  }

  /** Whether this flag is set in {@code flags}, ND_IO_* bits as the policy calls return them. */
  public boolean in(long flags) {
    return (flags & bits()) != 0;
  }

  /** The ND_IO_* bits of {@code flags}, as {@link NativeDirectory#openInput(String, long)} takes them. */
  public static long bitsOf(IOFlag... flags) {
    return bits(flags);
  }

  static long bits(IOFlag... flags) {
    long b = 0;
    for (IOFlag f : flags) {
      b |= f.bits();
    }
    return b;
  }
}
