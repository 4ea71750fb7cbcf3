package io.nativedir.lucene;

import io.nativedir.FileUse;
import io.nativedir.MappedFile;
import java.io.EOFException;
import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.LongBuffer;
import org.apache.lucene.store.AlreadyClosedException;
import org.apache.lucene.store.IndexInput;
import org.apache.lucene.store.RandomAccessInput;

/**
 * An input read from the library's mapping of its file ({@link MappedFile}): a byte read is a
 * closed check and a load from a ByteBuffer over the mapping, with no native call; multi-byte
 * reads are one load each. Clones and slices share the file and own only their buffers' positions,
 * so Lucene may make and drop them freely. The input opened by the directory owns the file: its
 * close lets go of it at once (the library replaces the mapping with zeros), and every clone or
 * slice read afterwards throws AlreadyClosedException, because each read checks the file's closed
 * flag first (a plain field, as Lucene's own mapped inputs check theirs).
 */
final class MappedIndexInput extends IndexInput implements RandomAccessInput {
  private static final int SHIFT = MappedFile.CHUNK_SHIFT;
  private static final long MASK = MappedFile.CHUNK - 1;
  private static final ByteBuffer EMPTY = ByteBuffer.allocateDirect(0).asReadOnlyBuffer();

  /** What the input, its clones and its slices share. */
  static final class Source {
    final MappedFile file;
    final NativeFSDirectory dir;
    // how the file was opened: its slices' advice is asked for with the same use
    final long flags;
    final FileUse use;
    final long mergeBytes;
    boolean closed; // plain, read before every read: Lucene's own mapped inputs check theirs so

    Source(MappedFile file, NativeFSDirectory dir, long flags, FileUse use, long mergeBytes) {
      this.file = file;
      this.dir = dir;
      this.flags = flags;
      this.use = use;
      this.mergeBytes = mergeBytes;
    }
  }

  private final Source src;
  private final long offset; // of this input's byte 0 in the file
  private final long length;
  private final boolean owner; // opened by the directory (not a clone or slice)
  // this input's range of the mapping, shared with its clones, never read or moved: bufs[k] holds
  // file chunk (offset >>> SHIFT) + k, and input byte p is at index (p + shift) - (k << SHIFT) of
  // bufs[k]. A one-chunk input's only buffer starts at its byte 0 (shift 0).
  private final ByteBuffer[] templates;
  private final int shift;
  // this input's own duplicates of them (positions of its own); null once it is closed, so that a
  // read of a closed input fails on the null (the cheap check of the byte loop is the file's)
  private ByteBuffer[] bufs;
  private int curIdx;
  private ByteBuffer cur;
  // little-endian long views of cur, one per alignment (readLELongs), made when first needed
  private LongBuffer[] leViews;
  private int leIdx = -1;

  private MappedIndexInput(String desc, Source src, long offset, long length, boolean owner,
      ByteBuffer[] templates, int shift) {
    super(desc);
    this.src = src;
    this.offset = offset;
    this.length = length;
    this.owner = owner;
    this.templates = templates;
    this.shift = shift;
    bufs = new ByteBuffer[templates.length];
    for (int k = 0; k < bufs.length; k++) {
      bufs[k] = templates[k].duplicate().order(Lucene8.ORDER);
    }
    bufs[0].position(shift);
    cur = bufs[0];
  }

  /** The template buffers of bytes [offset, offset + length) of the file (see templates). */
  private static ByteBuffer[] templates(MappedFile file, long offset, long length)
      throws IOException {
    if (length == 0) {
      return new ByteBuffer[] {EMPTY};
    }
    long end = offset + length;
    int first = (int) (offset >>> SHIFT);
    int last = (int) ((end - 1) >>> SHIFT);
    ByteBuffer[] t = new ByteBuffer[last - first + 1];
    for (int k = 0; k < t.length; k++) {
      t[k] = file.view(first + k);
    }
    if (first == last) {
      int at = (int) (offset & MASK);
      if (at != 0 || length != t[0].capacity()) {
        t[0] = t[0].slice(at, (int) length);
      }
      return t;
    }
    t[t.length - 1].limit((int) (end - ((long) last << SHIFT)));
    return t;
  }

  private static int shiftOf(long offset, long length) {
    boolean oneChunk = length == 0 || (offset >>> SHIFT) == ((offset + length - 1) >>> SHIFT);
    return oneChunk ? 0 : (int) (offset & MASK);
  }

  /**
   * An input on bytes [offset, offset + length) of the file, through views of the mapping in
   * every memory mode of the library: from Java, a clone reading positionally (a JNI call per
   * page) searched the index 5x slower under a 10% memory limit than one reading the mapping with
   * the file's random advice (bindings/java/lucene/README.md).
   */
  private static MappedIndexInput make(String desc, Source src, long offset, long length,
      boolean owner) throws IOException {
    return new MappedIndexInput(desc, src, offset, length, owner,
        templates(src.file, offset, length), shiftOf(offset, length));
  }

  /** The input the directory opened: it owns the file. */
  static IndexInput open(String desc, Source src) throws IOException {
    return make(desc, src, 0, src.file.length(), true);
  }

  private void ensureOpen() {
    if (src.closed || cur == null) {
      throw closed();
    }
  }

  private AlreadyClosedException closed() {
    return new AlreadyClosedException("Already closed: " + this);
  }

  private EOFException eof(String what) {
    return new EOFException(what + " past EOF: " + this);
  }

  /** Moves to the next buffer with bytes left; EOFException past the last one. */
  private void nextBuffer() throws EOFException {
    if (bufs == null) {
      throw closed();
    }
    do {
      if (curIdx + 1 >= bufs.length) {
        throw eof("read");
      }
      cur = bufs[++curIdx];
      cur.position(0);
    } while (!cur.hasRemaining());
  }

  @Override
  public byte readByte() throws IOException {
    if (src.closed) {
      throw closed();
    }
    try {
      return cur.get();
    } catch (BufferUnderflowException e) {
      nextBuffer();
      return cur.get();
    } catch (NullPointerException e) {
      throw closed();
    }
  }

  @Override
  public void readBytes(byte[] b, int off, int len) throws IOException {
    ensureOpen();
    ByteBuffer c = cur;
    if (len <= c.remaining()) {
      c.get(b, off, len);
      return;
    }
    if (len < 0 || len > length - getFilePointer()) {
      if (len < 0) {
        throw new IllegalArgumentException("negative length " + len);
      }
      throw eof("read");
    }
    while (len > 0) {
      int n = Math.min(len, c.remaining());
      c.get(b, off, n);
      off += n;
      len -= n;
      if (len > 0) {
        nextBuffer();
        c = cur;
      }
    }
  }

  @Override
  public short readShort() throws IOException {
    ensureOpen();
    try {
      return cur.getShort();
    } catch (BufferUnderflowException e) {
      return super.readShort(); // across two buffers: byte by byte
    }
  }

  @Override
  public int readInt() throws IOException {
    ensureOpen();
    try {
      return cur.getInt();
    } catch (BufferUnderflowException e) {
      return super.readInt();
    }
  }

  @Override
  public long readLong() throws IOException {
    ensureOpen();
    try {
      return cur.getLong();
    } catch (BufferUnderflowException e) {
      return super.readLong();
    }
  }

  @Override
  public void readLELongs(long[] dst, int off, int len) throws IOException {
    ensureOpen();
    ByteBuffer c = cur;
    int p = c.position();
    if (len >= 0 && (long) len << 3 <= c.remaining()) {
      // a bulk copy out of a little-endian long view of the buffer, one view per alignment
      if (leIdx != curIdx) {
        leViews = new LongBuffer[8];
        leIdx = curIdx;
      }
      int align = p & 7;
      LongBuffer v = leViews[align];
      if (v == null) {
        v = leViews[align] = c.duplicate().position(align).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer();
      }
      v.position((p - align) >>> 3);
      v.get(dst, off, len);
      c.position(p + (len << 3));
    } else {
      super.readLELongs(dst, off, len); // across two buffers: byte by byte
    }
  }

  @Override
  public void skipBytes(long n) throws IOException {
    if (n < 0) {
      throw new IllegalArgumentException("numBytes must be >= 0, got " + n);
    }
    seek(getFilePointer() + n);
  }

  @Override
  public long getFilePointer() {
    ByteBuffer c = cur;
    if (c == null) {
      throw closed();
    }
    return ((long) curIdx << SHIFT) + c.position() - shift;
  }

  @Override
  public void seek(long pos) throws IOException {
    ensureOpen();
    if (pos < 0) {
      throw new IllegalArgumentException("seek to a negative position " + pos + ": " + this);
    }
    if (pos > length) {
      throw eof("seek");
    }
    long a = pos + shift;
    int k = (int) (a >>> SHIFT);
    if (k == bufs.length) {
      k--; // the end of an input that ends at a chunk's end
    }
    ByteBuffer b = bufs[k];
    b.position((int) (a - ((long) k << SHIFT)));
    curIdx = k;
    cur = b;
  }

  @Override
  public long length() {
    return length;
  }

  // ---- RandomAccessInput: absolute reads, the cursor stays ----

  private void checkRange(long pos, int n) throws EOFException {
    if (pos < 0 || pos > length - n) {
      if (pos < 0) {
        throw new IllegalArgumentException("negative position " + pos + ": " + this);
      }
      throw eof("random read of " + n + " bytes at " + pos);
    }
  }

  @Override
  public byte readByte(long pos) throws IOException {
    ensureOpen();
    checkRange(pos, 1);
    long a = pos + shift;
    return bufs[(int) (a >>> SHIFT)].get((int) (a & MASK));
  }

  @Override
  public short readShort(long pos) throws IOException {
    ensureOpen();
    checkRange(pos, 2);
    long a = pos + shift;
    int i = (int) (a & MASK);
    ByteBuffer b = bufs[(int) (a >>> SHIFT)];
    if (i <= b.limit() - 2) {
      return b.getShort(i);
    }
    return (short) (((readByte(pos) & 0xFF) << 8) | (readByte(pos + 1) & 0xFF));
  }

  @Override
  public int readInt(long pos) throws IOException {
    ensureOpen();
    checkRange(pos, 4);
    long a = pos + shift;
    int i = (int) (a & MASK);
    ByteBuffer b = bufs[(int) (a >>> SHIFT)];
    if (i <= b.limit() - 4) {
      return b.getInt(i);
    }
    return ((readShort(pos) & 0xFFFF) << 16) | (readShort(pos + 2) & 0xFFFF);
  }

  @Override
  public long readLong(long pos) throws IOException {
    ensureOpen();
    checkRange(pos, 8);
    long a = pos + shift;
    int i = (int) (a & MASK);
    ByteBuffer b = bufs[(int) (a >>> SHIFT)];
    if (i <= b.limit() - 8) {
      return b.getLong(i);
    }
    return ((long) readInt(pos) << 32) | (readInt(pos + 4) & 0xFFFFFFFFL);
  }

  // ---- views ----

  @Override
  public MappedIndexInput clone() {
    ensureOpen();
    MappedIndexInput c = new MappedIndexInput(toString(), src, offset, length, false, templates, shift);
    try {
      c.seek(getFilePointer());
    } catch (IOException e) {
      throw new AssertionError(e); // within the same bounds
    }
    return c;
  }

  @Override
  public IndexInput slice(String desc, long off, long len) throws IOException {
    ensureOpen();
    if (off < 0 || len < 0 || off > length - len) {
      throw new IllegalArgumentException("slice(" + desc + ", offset=" + off + ", length=" + len
          + ") out of bounds: " + this);
    }
    if (owner && len > 0) {
      src.dir.adviseSlice(src, desc, offset + off, len);
    }
    return make(getFullSliceDescription(desc), src, offset + off, len, false);
  }

  /**
   * Closes the input. The one the directory opened lets go of the file for it and every clone and
   * slice; a clone or slice only stops reading itself.
   */
  @Override
  public void close() throws IOException {
    if (bufs == null) {
      return;
    }
    bufs = null;
    cur = null;
    leViews = null;
    if (owner) {
      src.closed = true;
      src.file.close();
    }
  }
}
