package io.nativedir;

import io.nativedir.jni.nativedir;
import java.io.Closeable;
import java.io.IOException;
import java.lang.ref.Cleaner;
import java.nio.ByteBuffer;

/**
 * A file opened mapped ({@link NativeDirectory#openMapped}) whose views do not keep it: read-only
 * ByteBuffers over the library's mapping, one per {@link #CHUNK} bytes (view {@code i} holds bytes
 * {@code [i << CHUNK_SHIFT, min(length, (i + 1) << CHUNK_SHIFT))}), for readers that check a
 * closed flag of their own before they read, as Lucene's IndexInputs do.
 *
 * <p>{@link #close()} lets go of the file at once, as Lucene's MMapDirectory unmaps at close: the
 * library replaces the mapping with zero-filled memory at the same addresses when the last input
 * of the file closes (a deleted file's space comes back, its pages leave the page cache's
 * accounting), so a view read after close reads zeros, never unmapped memory and never the file.
 * The addresses themselves go when every view of them is unreachable (a Cleaner releases the
 * library's pin on them). This is the difference from {@link NativeInput#mappedBuffer()}, whose
 * buffers keep the file mapped until they are garbage collected and so stay readable after close.
 *
 * <p>Each view is pinned through a handle of its own (the opened input for view 0, a clone for
 * each further GiB), since the library pins one window per handle; views are made on first use,
 * whatever the library's memory mode (nd_input_map hands out the whole mapping in every mode):
 * while the page cache thrashes the library itself reads mapped files positionally, but a Java
 * reader of a view keeps the mapping, because a JNI call per page cost Lucene's searches more
 * than the mapping's faults did (bindings/java/lucene/README.md). Thread-safe.
 */
public final class MappedFile implements Closeable {
  /** log2 of {@link #CHUNK}. */
  public static final int CHUNK_SHIFT = Mapping.CHUNK_SHIFT;
  /** The bytes of one view (1 GiB): a ByteBuffer is indexed by int. */
  public static final long CHUNK = 1L << CHUNK_SHIFT;

  private static final Cleaner CLEANER = Cleaner.create();

  private final String name;
  private final long length;
  private final long[] handles; // handles[0]: the opened input; [i]: the clone that pins view i
  private final ByteBuffer[] views;
  private volatile boolean closed;

  private MappedFile(String name, long length, long[] handles, ByteBuffer[] views) {
    this.name = name;
    this.length = length;
    this.handles = handles;
    this.views = views;
  }

  static MappedFile open(long dir, String name, long flags) throws IOException {
    long h = nativedir.nd_open_input(dir, name, flags);
    try {
      if (nativedir.nd_input_strategy(h) != nativedir.ND_STRATEGY_MAPPED) {
        throw new IllegalStateException("'" + name + "' opened with ND_IO_MMAP is not mapped");
      }
      long length = nativedir.nd_input_length(h);
      int n = (int) ((length + CHUNK - 1) >>> CHUNK_SHIFT);
      long[] handles = new long[Math.max(n, 1)];
      handles[0] = h;
      return new MappedFile(name, length, handles, new ByteBuffer[n]);
    } catch (IOException | RuntimeException | Error e) {
      closeAll(new long[] {h}, e);
      throw e;
    }
  }

  /**
   * View i, made on first use: the mapping from the view's start (nd_input_map), pinned by a
   * handle of its own (the opened input for view 0, a clone of it for each further GiB).
   */
  private synchronized ByteBuffer made(int i) throws IOException {
    ByteBuffer v = views[i];
    if (v != null) {
      return v;
    }
    long pin = handles[i];
    if (pin == 0) {
      pin = handles[i] = nativedir.nd_input_clone(handles[0]);
    }
    long at = (long) i << CHUNK_SHIFT;
    int want = (int) Math.min(CHUNK, length - at);
    ByteBuffer root = nativedir.nd_input_map(pin, at); // the mapping's rest, whatever the mode
    // the pin goes when the root and every view of it are unreachable, never before
    CLEANER.register(root, new Unpin(pin));
    return views[i] = root.slice(0, want).asReadOnlyBuffer();
  }

  /** Releases the library's pin of one view's window; must not reference the view. */
  private static final class Unpin implements Runnable {
    private final long handle;

    Unpin(long handle) {
      this.handle = handle;
    }

    @Override
    public void run() {
      try {
        nativedir.nd_input_unpin(handle);
      } catch (IOException | RuntimeException ignored) {
        // nothing of the handle is left: nothing is pinned
      }
    }
  }

  private static void closeAll(long[] handles, Throwable failure) {
    for (long h : handles) {
      if (h == 0) {
        continue;
      }
      try {
        nativedir.nd_close(h);
      } catch (IOException | RuntimeException e) {
        if (failure != null) {
          failure.addSuppressed(e);
        }
      }
    }
  }

  private void check() {
    if (closed) {
      throw NativeErrors.closed(toString());
    }
  }

  /** The file's name in its directory. */
  public String name() {
    return name;
  }

  /** The file's length in bytes. */
  public long length() {
    return length;
  }

  /** How many views the file has: {@code ceil(length / CHUNK)} (0 for an empty file). */
  public int viewCount() {
    return views.length;
  }

  /**
   * A new read-only buffer over view {@code i} (position 0, big-endian: set the order you read
   * in), independent of every other buffer's position, valid for reading while this file is
   * open, in every memory mode. A view once made stays.
   */
  public ByteBuffer view(int i) throws IOException {
    check();
    return made(i).duplicate();
  }

  /**
   * Advice for bytes [offset, offset + len) of the mapping: {@link IOFlag#RANDOM}, {@link
   * IOFlag#SEQUENTIAL} or none (normal), as {@link NativeInput#advise} gives it to a slice: a
   * compound file's sub-file gets the advice its own name calls for. Experimental.
   */
  public void advise(long offset, long len, IOFlag... advice) throws IOException {
    check();
    long slice = nativedir.nd_input_slice(handles[0], offset, len);
    try {
      nativedir.nd_input_advise(slice, IOFlag.bits(advice));
    } finally {
      nativedir.nd_close(slice);
    }
  }

  /**
   * Starts bringing bytes [offset, offset + len) into memory and returns at once (Lucene's {@code
   * IndexInput.prefetch}; nd_input_prefetch). Experimental.
   */
  public void prefetch(long offset, long len) throws IOException {
    check();
    nativedir.nd_input_prefetch(handles[0], offset, len);
  }

  /**
   * Whether the library itself reads the file through its mapping at this moment (true) or
   * positionally (false, while the page cache thrashes: nd_input_mapped_now, nd_memory_mode), as
   * {@link #read(long, byte[], int, int)} does. Views read the mapping either way. Experimental.
   */
  public boolean mappedNow() throws IOException {
    check();
    return nativedir.nd_input_mapped_now(handles[0]) == 1;
  }

  /**
   * Reads exactly {@code len} bytes at {@code offset} into {@code dst[off, off+len)} through the
   * library (nd_read_bytes: from the mapping or, while the page cache thrashes, by a positional
   * read of what is asked). Thread-safe. EOFException past the end.
   */
  public void read(long offset, byte[] dst, int off, int len) throws IOException {
    java.util.Objects.checkFromIndexSize(off, len, dst.length);
    check();
    nativedir.nd_read_into_array(handles[0], offset, dst, off, len);
  }

  /** Whether {@link #close()} was called. */
  public boolean isClosed() {
    return closed;
  }

  /**
   * Closes the file's handles: when no other input of the file is open, the library lets go of
   * the file now and the views read zeros from here on (see the class comment). Idempotent.
   */
  @Override
  public void close() throws IOException {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    IOException failure = new IOException("closing '" + name + "'");
    closeAll(handles, failure);
    if (failure.getSuppressed().length > 0) {
      throw failure;
    }
  }

  @Override
  public String toString() {
    return "MappedFile('" + name + "', " + length + " bytes" + (closed ? ", closed" : "") + ")";
  }
}
