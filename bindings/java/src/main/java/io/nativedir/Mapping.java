package io.nativedir;

import io.nativedir.jni.nativedir;
import java.io.IOException;
import java.lang.ref.Cleaner;
import java.nio.ByteBuffer;

/**
 * The Java side of one mapped file: read-only ByteBuffers over the library's mapping, shared by an
 * input, its clones and its slices.
 *
 * <p>Why this is memory-safe: the library unmaps a file when its last handle closes. Every buffer
 * made here is a root (JNI NewDirectByteBuffer over nd_input_map) that owns a private clone
 * handle, closed by a Cleaner only once the root is unreachable. Views of it (slice, duplicate,
 * asReadOnlyBuffer) reference their root, so no buffer can outlive the mapping, whichever thread
 * closes the inputs and whenever. The price: the pages stay mapped until the garbage collector
 * has dropped the last buffer over them (the same rule as MappedByteBuffer).
 */
final class Mapping {
  static final int CHUNK_SHIFT = 30; // 1 GiB: a ByteBuffer is indexed by int
  static final long CHUNK = 1L << CHUNK_SHIFT;
  static final long MASK = CHUNK - 1;
  private static final Cleaner CLEANER = Cleaner.create();

  private final ByteBuffer[] chunks; // chunk i starts at file offset i << CHUNK_SHIFT
  private final long length;

  private Mapping(ByteBuffer[] chunks, long length) {
    this.chunks = chunks;
    this.length = length;
  }

  /** Maps every byte of `input` (a freshly opened, whole-file mapped input). */
  static Mapping of(long input, long length) throws IOException {
    ByteBuffer[] chunks = new ByteBuffer[(int) ((length + CHUNK - 1) >>> CHUNK_SHIFT)];
    for (int i = 0; i < chunks.length; i++) {
      chunks[i] = root(input, (long) i << CHUNK_SHIFT);
    }
    return new Mapping(chunks, length);
  }

  /** A root buffer over the bytes of `input` from `pos` on (at most 2 GiB - 1 of them). */
  static ByteBuffer root(long input, long pos) throws IOException {
    long keeper = nativedir.nd_input_clone(input);
    try {
      ByteBuffer root = nativedir.nd_input_map(keeper, pos);
      CLEANER.register(root, new Release(keeper));
      return root;
    } catch (IOException | RuntimeException | Error e) {
      try {
        nativedir.nd_close(keeper);
      } catch (IOException | RuntimeException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
  }

  /** Closes a keeper handle; must not reference the buffer it guards. */
  private static final class Release implements Runnable {
    private final long keeper;

    Release(long keeper) {
      this.keeper = keeper;
    }

    @Override
    public void run() {
      try {
        // the root is unreachable, so nobody reads its window: release the pin the window call
        // took (nd_close on this Cleaner thread, not the one that took it, would leave it)
        nativedir.nd_input_unpin(keeper);
        nativedir.nd_close(keeper);
      } catch (IOException | RuntimeException ignored) {
        // a keeper is closed once, here; nothing is left to report to
      }
    }
  }

  byte get(long at) {
    return chunks[(int) (at >>> CHUNK_SHIFT)].get((int) (at & MASK));
  }

  /** The bytes from `at` to the end of its chunk or of `end`, whichever is first. */
  ByteBuffer window(long at, long end) {
    int i = (int) (at & MASK);
    long n = Math.min(CHUNK - i, end - at);
    return chunks[(int) (at >>> CHUNK_SHIFT)].slice(i, (int) n);
  }

  void copy(long at, byte[] dst, int off, int len) {
    while (len > 0) {
      int i = (int) (at & MASK);
      int n = (int) Math.min(len, CHUNK - i);
      chunks[(int) (at >>> CHUNK_SHIFT)].get(i, dst, off, n);
      at += n;
      off += n;
      len -= n;
    }
  }

  void copy(long at, ByteBuffer dst, int len) {
    int p = dst.position();
    while (len > 0) {
      int i = (int) (at & MASK);
      int n = (int) Math.min(len, CHUNK - i);
      dst.put(p, chunks[(int) (at >>> CHUNK_SHIFT)], i, n);
      at += n;
      p += n;
      len -= n;
    }
    dst.position(p);
  }

  long length() {
    return length;
  }
}
