package io.nativedir;

import io.nativedir.jni.nativedirConstants;

/** What an input or output actually does, whatever was asked for. */
public enum Strategy {
  /** Page cache with a buffer. */
  BUFFERED,
  /** A memory mapping. */
  MAPPED,
  /** Direct I/O, bypassing the page cache. */
  DIRECT,
  /** Buffered, dropping what it brought into the page cache (MERGE where direct I/O is refused). */
  DROP_BEHIND;

  static Strategy of(int nd) {
    switch (nd) {
      case nativedirConstants.ND_STRATEGY_BUFFERED:
        return BUFFERED;
      case nativedirConstants.ND_STRATEGY_MAPPED:
        return MAPPED;
      case nativedirConstants.ND_STRATEGY_DIRECT:
        return DIRECT;
      case nativedirConstants.ND_STRATEGY_DROP_BEHIND:
        return DROP_BEHIND;
      default:
        throw new IllegalStateException("nativedir: unknown strategy " + nd);
    }
  }
}
