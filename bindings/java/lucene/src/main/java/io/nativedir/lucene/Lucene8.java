package io.nativedir.lucene;

import io.nativedir.FileUse;
import java.nio.ByteOrder;
import org.apache.lucene.store.IOContext;

/**
 * Everything this package takes from Lucene 8's API that Lucene 9 and 10 changed, in one place;
 * a variant for a later Lucene replaces this class and what README.md lists beside it.
 */
final class Lucene8 {
  private Lucene8() {}

  /**
   * The byte order of DataInput's multi-byte reads (readShort, readInt, readLong): big-endian up
   * to Lucene 8, little-endian from Lucene 9.
   */
  static final ByteOrder ORDER = ByteOrder.BIG_ENDIAN;

  /** What Lucene is about to do with a file opened or created in {@code context}. */
  static FileUse use(IOContext context) {
    if (context.readOnce) {
      return FileUse.READ_ONCE;
    }
    switch (context.context) {
      case MERGE:
        return FileUse.MERGE;
      case FLUSH:
        return FileUse.FLUSH;
      default: // DEFAULT, READ
        return FileUse.SEARCH;
    }
  }

  /** A merge's estimated size in bytes (0 for anything but a merge). */
  static long mergeBytes(IOContext context) {
    return context.context == IOContext.Context.MERGE && context.mergeInfo != null
        ? context.mergeInfo.estimatedMergeBytes
        : 0;
  }

  /**
   * Whether {@code name} is a compound file's data, whose slices are sub-files named after
   * themselves ("_0.fdt"): Lucene50CompoundFormat's ".cfs".
   */
  static boolean isCompoundData(String name) {
    return name.endsWith(".cfs");
  }
}
