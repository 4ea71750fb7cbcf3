package io.nativedir.lucene;

import io.nativedir.NativeInput;
import io.nativedir.Strategy;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.lucene.store.AlreadyClosedException;
import org.apache.lucene.store.BufferedIndexInput;

/**
 * An input the library reads without a mapping (read once, or a large merge's direct reads): the
 * bytes come through Lucene's BufferedIndexInput, whose buffer is the library's buffer size for the
 * file (nd_input_buffer_size: 256 KiB sequential or direct), refilled by one positional read
 * (nd_read_bytes, thread-safe on the shared handle), so a byte read is a load from that buffer.
 * Clones and slices share the handle and own only their buffers; the input the directory opened
 * closes the handle, after which every clone or slice throws AlreadyClosedException at its next
 * refill, and a closed one at any read.
 */
final class BufferedNativeIndexInput extends BufferedIndexInput {
  /** What the input, its clones and its slices share. */
  static final class Source {
    final NativeInput in;
    volatile boolean closed;

    Source(NativeInput in) {
      this.in = in;
    }
  }

  private final Source src;
  private final long offset;
  private final long length;
  private boolean owner; // not final: a clone is made by Object.clone

  BufferedNativeIndexInput(String desc, Source src, long offset, long length, int bufferSize,
      boolean owner) {
    super(desc, bufferSize);
    this.src = src;
    this.offset = offset;
    this.length = length;
    this.owner = owner;
  }

  @Override
  protected void readInternal(ByteBuffer b) throws IOException {
    if (src.closed) {
      throw new AlreadyClosedException("Already closed: " + this);
    }
    long pos = getFilePointer();
    if (pos + b.remaining() > length) {
      throw new EOFException("read past EOF: " + this);
    }
    try {
      src.in.read(offset + pos, b);
    } catch (IllegalStateException e) { // closed by another thread meanwhile
      throw new AlreadyClosedException("Already closed: " + this, e);
    }
  }

  @Override
  protected void seekInternal(long pos) throws IOException {
    if (pos > length) {
      throw new EOFException("seek past EOF: pos=" + pos + " vs length=" + length + ": " + this);
    }
  }

  @Override
  public long length() {
    return length;
  }

  /** How the library reads the file. */
  Strategy strategy() throws IOException {
    return src.in.strategy();
  }

  @Override
  public BufferedNativeIndexInput clone() {
    if (src.closed) {
      throw new AlreadyClosedException("Already closed: " + this);
    }
    BufferedNativeIndexInput c = (BufferedNativeIndexInput) super.clone();
    c.owner = false;
    return c;
  }

  @Override
  public BufferedNativeIndexInput slice(String desc, long off, long len) throws IOException {
    if (off < 0 || len < 0 || off > length - len) {
      throw new IllegalArgumentException("slice(" + desc + ", offset=" + off + ", length=" + len
          + ") out of bounds: " + this);
    }
    if (src.closed) {
      throw new AlreadyClosedException("Already closed: " + this);
    }
    return new BufferedNativeIndexInput(getFullSliceDescription(desc), src, offset + off, len,
        getBufferSize(), false);
  }

  @Override
  public void close() throws IOException {
    if (owner && !src.closed) {
      src.closed = true;
      src.in.close();
    }
  }
}
