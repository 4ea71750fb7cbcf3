package io.nativedir;

import io.nativedir.jni.nativedir;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.lang.ref.Cleaner;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;

/**
 * A file open for reading.
 *
 * <p>Positional reads ({@code read(offset, ...)}) are thread-safe. The cursor ({@link #seek},
 * {@link #readByte}, {@code read(dst)}) belongs to one thread at a time: give each thread its own
 * {@link #clone()}, which is cheap and shares the open file (and its mapping).
 *
 * <p>The cursor lives on the Java side, so reading a byte is one load from a direct ByteBuffer,
 * with no native call: a buffer over the library's window (nd_input_window), which is the mapping
 * for a mapped input and the handle's own cursor buffer otherwise, refilled by one window call.
 * The library pins the window it hands out until the handle's next window call, so a {@link
 * #close} on any thread never frees memory under a reader (the input may have moved to another
 * thread since its last refill): the reader finishes its window and its next cursor call throws
 * and releases it; if none comes, a Cleaner does once the input is unreachable. The window buffer is private and replaced on every refill, so no
 * caller can keep one past the memory it points at.
 *
 * <p>After {@link #close()}, every method but {@code close}, {@code name} and {@code toString}
 * throws {@link IllegalStateException}; closing twice is harmless. Buffers from {@link
 * #mappedBuffer()} stay readable after close (see there).
 */
public abstract sealed class NativeInput implements Closeable, Cloneable
    permits NativeInput.Mapped, NativeInput.Buffered {
  private static final AtomicLongFieldUpdater<NativeInput> HANDLE =
      AtomicLongFieldUpdater.newUpdater(NativeInput.class, "handle");

  private volatile long handle; // 0 once closed
  private final long raw; // the handle's value, kept after close: its window may stay pinned
  private final String name;
  private final long length;
  private final Mapping mapping; // null unless the input is mapped
  private final long base; // file offset of this input's byte 0 (slices)
  // a mapped input within one chunk of the mapping (every file under 1 GiB): all of its bytes,
  // read only with absolute gets, which never touch the buffer's position: thread-safe
  private final ByteBuffer all;

  // The cursor is winStart + win.position(): win is a view of the bytes around it, either of
  // the mapping or of buf. Reading a byte is then exactly MappedByteBuffer.get()'s work. An
  // empty window (at winStart) means "nothing loaded yet".
  // Every window is a direct buffer, mapped or not, so the JIT sees one receiver type at
  // win.get() and inlines it (a heap window beside a mapped one made readByte 4-5x slower).
  private static final ByteBuffer EMPTY = ByteBuffer.allocateDirect(0);
  ByteBuffer win = EMPTY; // package-private: read by the two readByte implementations
  private long winStart;
  // Buffered inputs: a window call was made, so close leaves a pinned window (see close)
  private volatile boolean windowed;
  private static final Cleaner CLEANER = Cleaner.create();

  NativeInput(long handle, String name, long length, Mapping mapping, long base) {
    this.handle = handle;
    this.raw = handle;
    this.name = name;
    this.length = length;
    this.mapping = mapping;
    this.base = base;
    ByteBuffer whole = null;
    if (mapping != null && length > 0) {
      whole = mapping.window(base, base + length);
      if (whole.capacity() != length) {
        whole = null; // crosses chunks: Mapping.copy splits the reads
      }
    }
    this.all = whole;
  }

  static NativeInput open(long dir, String name, long flags) throws IOException {
    long h = nativedir.nd_open_input(dir, name, flags);
    try {
      long length = nativedir.nd_input_length(h);
      boolean mapped = nativedir.nd_input_strategy(h) == nativedir.ND_STRATEGY_MAPPED;
      Mapping mapping = mapped ? Mapping.of(h, length) : null;
      return make(h, name, length, mapping, 0);
    } catch (IOException | RuntimeException | Error e) {
      try {
        nativedir.nd_close(h);
      } catch (IOException | RuntimeException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
  }

  /** The open handle, or 0 once closed (NativeRing checks it through the library). */
  long handleOrZero() {
    return handle;
  }

  private long handle() {
    long h = handle;
    if (h == 0) {
      throw NativeErrors.closed(this.toString());
    }
    return h;
  }

  /** The input's length in bytes (a slice's own length). */
  public long length() {
    handle();
    return length;
  }

  /**
   * The size of this input's own cursor buffer (the library's choice: nd_input_buffer_size, from
   * the flags it was opened with): what a reader keeping a buffer of its own should use.
   */
  public int bufferSize() throws IOException {
    return (int) nativedir.nd_input_buffer_size(handle());
  }

  /** The file's name in its directory. */
  public String name() {
    return name;
  }

  /** How the library reads this input. */
  public Strategy strategy() throws IOException {
    return Strategy.of(nativedir.nd_input_strategy(handle()));
  }

  /** Whether reads are served from a mapping ({@link IOFlag#MMAP}). */
  public boolean isMapped() {
    handle();
    return mapping != null;
  }

  /**
   * Asks the OS to start reading bytes [offset, offset + len) of this input (a slice's own offsets)
   * into memory and returns at once: Lucene's {@code IndexInput.prefetch}. Call it for the blocks
   * about to be read, then read them: their reads overlap on the device. Next to free when the
   * bytes are cached (the library stops looking after repeated hits); a no-op for direct inputs.
   * Experimental (nd_input_prefetch).
   *
   * @throws java.io.EOFException if the range passes the end
   * @throws IllegalArgumentException for a negative offset or length
   */
  public void prefetch(long offset, long len) throws IOException {
    nativedir.nd_input_prefetch(handle(), offset, len);
  }

  /**
   * Changes the access advice of this open input: {@code advise(IOFlag.RANDOM)}, {@code
   * advise(IOFlag.SEQUENTIAL)} or {@code advise()} (normal), as Lucene 10's read-advice update does.
   * Clones share the file's advice; a slice's covers its own range (nd_input_advise). The cursor
   * buffer's size stays as chosen at open. Experimental.
   *
   * @throws IllegalArgumentException for anything but one of those
   */
  public void advise(IOFlag... advice) throws IOException {
    nativedir.nd_input_advise(handle(), IOFlag.bits(advice));
  }

  // ---- positional reads: thread-safe ----

  /** Reads exactly {@code len} bytes at {@code offset} into {@code dst[off, off+len)}. */
  public void read(long offset, byte[] dst, int off, int len) throws IOException {
    Objects.checkFromIndexSize(off, len, dst.length);
    long h = handle();
    if (mapping == null) {
      nativedir.nd_read_into_array(h, offset, dst, off, len);
      return;
    }
    checkRange(offset, len);
    if (all != null) {
      all.get((int) offset, dst, off, len);
    } else {
      mapping.copy(base + offset, dst, off, len);
    }
  }

  /** Reads exactly {@code dst.length} bytes at {@code offset}. */
  public void read(long offset, byte[] dst) throws IOException {
    read(offset, dst, 0, dst.length);
  }

  /**
   * Fills {@code dst} from its position to its limit with the bytes at {@code offset} and moves its
   * position to the limit. A direct buffer is written in place; a heap buffer through its array.
   */
  public void read(long offset, ByteBuffer dst) throws IOException {
    if (dst.isReadOnly()) {
      throw new ReadOnlyBufferException();
    }
    int len = dst.remaining();
    long h = handle();
    int p = dst.position();
    if (mapping != null) {
      checkRange(offset, len);
    }
    if (mapping != null && all == null) {
      mapping.copy(base + offset, dst, len); // moves dst's position
      return;
    } else if (mapping != null) {
      dst.put(p, all, (int) offset, len);
    } else if (dst.isDirect()) {
      nativedir.nd_read_into_buffer(h, offset, dst, p, len);
    } else {
      nativedir.nd_read_into_array(h, offset, dst.array(), dst.arrayOffset() + p, len);
    }
    dst.position(p + len);
  }

  /**
   * Reads {@code dst.remaining()} bytes at {@code position} asynchronously through {@link
   * NativeRing#shared()}: the future's value is that count, and dst's position is at its limit
   * when it completes (do not use dst until then). Bytes already in the page cache (or a mapping)
   * are copied during the call, and the future is then already complete. Thread-safe; the cursor
   * does not move. A direct buffer is read into in place, a heap buffer through a bounce buffer
   * for the part that was not cached. See {@link NativeRing} for what is allocated,
   * cancellation and closing. The future fails with {@link EOFException} past the end, {@link
   * IllegalStateException} on a closed input.
   *
   * @throws IllegalArgumentException for a negative position
   * @throws ReadOnlyBufferException for a read-only dst
   */
  public java.util.concurrent.CompletableFuture<Integer> readAsync(long position, ByteBuffer dst) {
    return NativeRing.shared().read(this, position, dst);
  }

  private void checkRange(long offset, long len) throws EOFException {
    if (offset < 0) {
      throw new IllegalArgumentException("read: negative offset " + offset + " on '" + name + "'");
    }
    if (offset > length || len > length - offset) {
      throw new EOFException("read: " + len + " bytes at " + offset + " end past the end of '"
          + name + "' (" + length + " bytes)");
    }
  }

  // ---- the cursor: one thread at a time ----

  /** The cursor's position. */
  public long position() {
    cursorHandle();
    return winStart + win.position();
  }

  /** Moves the cursor to {@code position} (0 to length). */
  public void seek(long position) throws EOFException {
    cursorHandle();
    if (position < 0) {
      throw new IllegalArgumentException("seek: negative position " + position);
    }
    if (position > length) {
      throw new EOFException("seek: position " + position + " is past the end of '" + name
          + "' (" + length + " bytes)");
    }
    moveTo(position);
  }

  private void moveTo(long p) {
    long rel = p - winStart;
    ByteBuffer w = win;
    if (rel >= 0 && rel <= w.limit()) {
      w.position((int) rel); // inside the window: keep it
    } else {
      win = EMPTY;
      winStart = p;
    }
  }

  /** The byte at the cursor; advances it. EOFException at the end. */
  public abstract byte readByte() throws IOException;

  /*
   * readByte is written once per kind of input, on purpose: the JIT keeps one profile per method,
   * and a buffered input leaves its window every few KiB while a mapped one leaves it once per
   * GiB. A mapped input therefore lets ByteBuffer.get() do the only bounds check and reaches
   * readByteSlow through BufferUnderflowException, which keeps any call out of the byte loop (one
   * exception per GiB costs nothing), and its window is loaded at open; measured, this made
   * mapped readByte about 3x faster than a shared method with a hasRemaining() branch. A buffered input refills every few KiB,
   * where an exception per refill would cost more than the branch.
   */
  static final class Mapped extends NativeInput {
    Mapped(long handle, String name, long length, Mapping mapping, long base) {
      super(handle, name, length, mapping, base);
      if (length > 0) {
        // loaded now, so that the first byte read does not take the slow path either: a slow
        // path the JIT has never seen taken is compiled out of the loop
        win = mapping.window(base, base + length);
      }
    }

    @Override
    public byte readByte() throws IOException {
      try {
        return win.get();
      } catch (java.nio.BufferUnderflowException e) {
        return readByteSlow();
      }
    }
  }

  static final class Buffered extends NativeInput {
    Buffered(long handle, String name, long length, long base) {
      super(handle, name, length, null, base);
    }

    @Override
    public byte readByte() throws IOException {
      ByteBuffer w = win;
      if (w.hasRemaining()) {
        return w.get();
      }
      return readByteSlow();
    }
  }

  private static NativeInput make(long h, String name, long length, Mapping mapping, long base) {
    return mapping != null ? new Mapped(h, name, length, mapping, base)
                           : new Buffered(h, name, length, base);
  }

  final byte readByteSlow() throws IOException {
    cursorHandle();
    long p = winStart + win.position();
    if (p >= length) {
      throw new EOFException("readByte: at the end of '" + name + "' (" + length + " bytes)");
    }
    // the window load made, not the field: a close on another thread may empty the field
    // meanwhile, and this byte is still the reader's (the window stays valid until its next call)
    return load(p).get();
  }

  /** Makes the window start at p (< length) and returns it. */
  private ByteBuffer load(long p) throws IOException {
    if (mapping != null) {
      winStart = p;
      return win = mapping.window(base + p, base + length);
    }
    // nd_input_window releases this handle's previous window and pins the new one; on a handle
    // closed by another thread it throws IllegalStateException (ND_E_BAD_HANDLE) and releases it
    return win = nativedir.nd_input_window(beforeCall(p), p);
  }

  /**
   * What a window call needs first: a failed call leaves nothing stale behind (the old window is
   * released by it, and the library may refill the buffer under it) and the cursor at p.
   */
  private long beforeCall(long p) {
    long h = cursorHandle();
    win = EMPTY;
    winStart = p;
    windowed = true; // before the call: close reads it after its nd_close
    return h;
  }

  /** After nd_input_read_from's read of [p, end): the window it returned (null: none). */
  private void after(long end, ByteBuffer w) {
    win = w != null ? w : EMPTY;
    winStart = end;
  }

  /**
   * The open handle for a cursor call. On a closed input it forgets the window and lets the library
   * free it: the cursor has one user at a time, so the caller is not inside the window.
   */
  private long cursorHandle() {
    long h = handle;
    if (h == 0) {
      win = EMPTY;
      if (mapping == null) {
        unpinQuietly(raw);
      }
      throw NativeErrors.closed(this.toString());
    }
    return h;
  }

  private static void unpinQuietly(long h) {
    try {
      nativedir.nd_input_unpin(h);
    } catch (IOException | RuntimeException ignored) {
      // ND_E_BAD_HANDLE: nothing of the handle is left, so nothing is pinned
    }
  }

  /** Reads exactly {@code len} bytes at the cursor; on EOFException the cursor does not move. */
  public void read(byte[] dst, int off, int len) throws IOException {
    Objects.checkFromIndexSize(off, len, dst.length);
    cursorHandle();
    ByteBuffer w = win;
    if (len <= w.remaining()) {
      w.get(dst, off, len);
      return;
    }
    long p = winStart + w.position();
    if (mapping != null) {
      read(p, dst, off, len);
      moveTo(p + len);
      return;
    }
    // the rest of the read is the library's (nd_input_read_from: what the buffer holds, refills
    // or one read straight into dst, the range check), and the window after it
    after(p + len, nativedir.nd_input_read_into_array(beforeCall(p), p, dst, off, len));
  }

  /** Reads exactly {@code dst.length} bytes at the cursor. */
  public void read(byte[] dst) throws IOException {
    read(dst, 0, dst.length);
  }

  /** Fills {@code dst} (position to limit) from the cursor; advances both. */
  public void read(ByteBuffer dst) throws IOException {
    if (dst.isReadOnly()) {
      throw new ReadOnlyBufferException();
    }
    cursorHandle();
    ByteBuffer w = win;
    int len = dst.remaining();
    int at = dst.position();
    long p = winStart + w.position();
    if (len <= w.remaining()) {
      dst.put(at, w, w.position(), len);
      w.position(w.position() + len);
    } else if (mapping != null) {
      read(p, dst);
      moveTo(p + len);
      return;
    } else {
      long h = beforeCall(p);
      after(p + len, dst.isDirect() ? nativedir.nd_input_read_into_buffer(h, p, dst, at, len)
          : nativedir.nd_input_read_into_array(h, p, dst.array(), dst.arrayOffset() + at, len));
    }
    dst.position(at + len);
  }

  // ---- views ----

  /**
   * A new input on the same open file (and mapping) with its own cursor, at position 0. Closing
   * either leaves the other working.
   */
  @Override
  public NativeInput clone() {
    try {
      long h = nativedir.nd_input_clone(handle());
      return make(h, name, length, mapping, base);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /**
   * A new input on bytes [offset, offset + len) of this one: its offsets are relative to the slice
   * and nothing outside it is readable. It has its own cursor and must be closed.
   */
  public NativeInput slice(long offset, long len) throws IOException {
    long h = nativedir.nd_input_slice(handle(), offset, len);
    return make(h, name, len, mapping, base + offset);
  }

  /**
   * This input's bytes as a read-only ByteBuffer over the mapping (zero copy), for a mapped input
   * of at most 2 GiB - 1 bytes (use {@link #mappedBuffer(long, int)} for larger ones).
   *
   * <p>The buffer stays valid after this input is closed: it keeps the mapping alive by itself
   * (through a private handle released when the buffer and all its views are garbage collected),
   * so reading it can never touch unmapped memory. The cost is that the pages stay mapped until
   * then, as with {@link java.nio.MappedByteBuffer}.
   *
   * @throws UnsupportedOperationException if the input is not mapped or too large
   */
  public ByteBuffer mappedBuffer() throws IOException {
    handle();
    if (length > Integer.MAX_VALUE) {
      throw new UnsupportedOperationException("'" + name + "' has " + length
          + " bytes; a ByteBuffer holds at most 2 GiB - 1: use mappedBuffer(offset, length)");
    }
    return mappedBuffer(0, (int) length);
  }

  /** Bytes [offset, offset + len) of this mapped input as a read-only ByteBuffer (see above). */
  public ByteBuffer mappedBuffer(long offset, int len) throws IOException {
    long h = handle();
    if (mapping == null) {
      throw new UnsupportedOperationException("'" + name + "' is not mapped: open it with IOFlag.MMAP");
    }
    if (len < 0) {
      throw new IllegalArgumentException("mappedBuffer: negative length " + len);
    }
    checkRange(offset, len);
    if (len == 0) {
      return ByteBuffer.allocateDirect(0).asReadOnlyBuffer();
    }
    // a root of its own: the returned view must keep the mapping alive without this input
    return Mapping.root(h, offset).slice(0, len).asReadOnlyBuffer();
  }

  /** Releases the handle. Idempotent. Mapped buffers handed out stay valid (see mappedBuffer). */
  @Override
  public void close() throws IOException {
    long h = HANDLE.getAndSet(this, 0L);
    if (h == 0) {
      return;
    }
    // the fast path of readByte skips the closed check: an empty window sends it there (a
    // racing reader still holds the old window, whose memory the library keeps pinned)
    win = EMPTY;
    try {
      nativedir.nd_close(h); // a pinned window stays for its reader
    } finally {
      // ...whose next cursor call releases it; if none comes, the Cleaner does once nobody can
      // reach this input. Read after nd_close: a window call that pinned before it wrote it first.
      if (windowed) {
        CLEANER.register(this, () -> unpinQuietly(h)); // captures h only, never this input
      }
    }
  }

  @Override
  public String toString() {
    return "NativeInput('" + name + "', " + length + " bytes" + (mapping != null ? ", mapped" : "")
        + (handle == 0 ? ", closed" : "") + ")";
  }
}
