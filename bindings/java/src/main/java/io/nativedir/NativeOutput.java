package io.nativedir;

import io.nativedir.jni.nativedir;
import java.io.Closeable;
import java.io.Flushable;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * A new file being written, append only, by one thread at a time.
 *
 * <p>Single bytes and small writes collect in a direct buffer of {@link #bufferSize()} bytes (the
 * library's own buffer size for this output, allocated on the first small write) that reaches the
 * library in one call; writes of a buffer's size or more go to the library at once.
 * {@link #position()} counts them, and {@link #flush()}, {@link #crc32()}, {@link #sync()} and
 * {@link #close()} hand them over first, so a sync always covers every byte written before it.
 *
 * <p>After {@link #close()}, every method but {@code close}, {@code name} and {@code toString}
 * throws {@link IllegalStateException}; closing twice is harmless. A failed write fails the
 * output for good (the library's rule), and close reports the failure of the final flush.
 */
public final class NativeOutput implements Closeable, Flushable {
  private static final VarHandle HANDLE;

  static {
    try {
      HANDLE = MethodHandles.lookup().findVarHandle(NativeOutput.class, "handle", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private volatile long handle;
  private final String name;
  private final int capacity;
  // direct: handing it to the library needs no pinning, so no GC ever waits on a buffered write
  private ByteBuffer buf;
  private int used;

  private NativeOutput(long handle, String name, int capacity) {
    this.handle = handle;
    this.name = name;
    this.capacity = capacity;
  }

  static NativeOutput create(long dir, String name, long flags) throws IOException {
    long h = nativedir.nd_create_output(dir, name, flags);
    long size;
    try {
      size = nativedir.nd_output_buffer_size(h);
    } catch (IOException e) {
      try {
        nativedir.nd_close(h);
      } catch (IOException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
    return new NativeOutput(h, name, (int) size);
  }

  /**
   * The size of the library's buffer for this output when it was created (nd_output_buffer_size,
   * from its strategy): this object's buffer size, and what a writer that keeps a buffer of its
   * own should use, so that each full buffer is one native call.
   */
  public int bufferSize() {
    return capacity;
  }

  private ByteBuffer buffer() {
    ByteBuffer b = buf;
    return b != null ? b : (buf = ByteBuffer.allocateDirect(capacity));
  }

  private long handle() {
    long h = handle;
    if (h == 0) {
      throw NativeErrors.closed(toString());
    }
    return h;
  }

  /** The file's name in its directory. */
  public String name() {
    return name;
  }

  /** How the library writes this output. */
  public Strategy strategy() throws IOException {
    return Strategy.of(nativedir.nd_output_strategy(handle()));
  }

  /** Appends one byte (the low 8 bits of {@code b}). */
  public void writeByte(int b) throws IOException {
    if (used == capacity) {
      flushBuffer();
    }
    handle();
    buffer().put(used++, (byte) b);
  }

  /** Appends {@code src[off, off+len)}. */
  public void write(byte[] src, int off, int len) throws IOException {
    Objects.checkFromIndexSize(off, len, src.length);
    long h = handle();
    if (len >= capacity) {
      // a buffer's worth or more: what is buffered first, then all of it in one call
      flushBuffer();
      nativedir.nd_write_from_array(h, src, off, len);
      return;
    }
    if (len > capacity - used) {
      flushBuffer();
    }
    buffer().put(used, src, off, len);
    used += len;
  }

  /** Appends all of {@code src}. */
  public void write(byte[] src) throws IOException {
    write(src, 0, src.length);
  }

  /** Appends {@code src} from its position to its limit and moves its position to the limit. */
  public void write(ByteBuffer src) throws IOException {
    int len = src.remaining();
    int p = src.position();
    if (src.hasArray()) {
      write(src.array(), src.arrayOffset() + p, len);
    } else if (src.isDirect() && len >= capacity) {
      long h = handle();
      flushBuffer();
      nativedir.nd_write_from_buffer(h, src, p, len);
    } else {
      // read-only heap buffers have no array; small direct ones are cheaper to copy here
      handle();
      while (src.hasRemaining()) {
        if (used == capacity) {
          flushBuffer();
        }
        int n = Math.min(src.remaining(), capacity - used);
        buffer().put(used, src, src.position(), n);
        src.position(src.position() + n);
        used += n;
      }
    }
    src.position(p + len);
  }

  private void flushBuffer() throws IOException {
    if (used > 0) {
      int n = used;
      used = 0; // the library fails the output for good on error: never resend these bytes
      nativedir.nd_write_from_buffer(handle(), buf, 0, n);
    }
  }

  /** Bytes written so far, including those still in this object's buffer. */
  public long position() throws IOException {
    return nativedir.nd_output_position(handle()) + used;
  }

  /** zlib's CRC-32 of every byte written so far. */
  public long crc32() throws IOException {
    flushBuffer();
    return nativedir.nd_output_crc32(handle());
  }

  /**
   * Hands every byte written so far to the OS, without an fsync: afterwards the file's length is
   * {@link #position()} and readers see every byte (a direct output writes its tail too).
   */
  @Override
  public void flush() throws IOException {
    flushBuffer();
    nativedir.nd_output_flush(handle());
  }

  /** Makes every byte written so far durable (flush and fsync through this handle). */
  public void sync() throws IOException {
    flushBuffer();
    nativedir.nd_output_sync(handle());
  }

  /**
   * Hands the last bytes to the library and closes the file (no fsync: call {@link #sync()}
   * first). Reports a failure of that final write; the handle is released either way.
   */
  @Override
  public void close() throws IOException {
    if (handle == 0) {
      return;
    }
    IOException pending = null;
    try {
      flushBuffer();
    } catch (IOException e) {
      pending = e;
    }
    long h = (long) HANDLE.getAndSet(this, 0L);
    if (h == 0) {
      return;
    }
    try {
      nativedir.nd_close(h);
    } catch (IOException e) {
      if (pending == null) {
        pending = e;
      } else {
        pending.addSuppressed(e);
      }
    }
    if (pending != null) {
      throw pending;
    }
  }

  @Override
  public String toString() {
    return "NativeOutput('" + name + "'" + (handle == 0 ? ", closed" : "") + ")";
  }
}
