package io.nativedir;

import io.nativedir.jni.nativedirConstants;

/**
 * What a search engine is about to do with a file, for the library's read and write policy
 * ({@link NativeDirectory#policyInput}, {@link NativeDirectory#policyOutput}): the ND_USE_*
 * values of nd_policy_input. A Lucene directory maps its IOContext onto one of these.
 */
public enum FileUse {
  /** Read while the index is open (Lucene: DEFAULT, READ). */
  SEARCH,
  /** Read front to back once (Lucene: READONCE: checksums, commit points, segment infos). */
  READ_ONCE,
  /** Read or written once, in bulk, by a merge (Lucene: MERGE, with its estimated size). */
  MERGE,
  /** Written by a flush of new documents (Lucene: FLUSH). */
  FLUSH;

  int value() {
    switch (this) {
      case SEARCH: return nativedirConstants.ND_USE_SEARCH;
      case READ_ONCE: return nativedirConstants.ND_USE_READ_ONCE;
      case MERGE: return nativedirConstants.ND_USE_MERGE;
      case FLUSH: return nativedirConstants.ND_USE_FLUSH;
      default: throw new AssertionError(this);
    }
  }
}
