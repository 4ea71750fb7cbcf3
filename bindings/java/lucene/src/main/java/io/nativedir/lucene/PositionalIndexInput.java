package io.nativedir.lucene;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.lucene.store.AlreadyClosedException;
import org.apache.lucene.store.BufferedIndexInput;

/**
 * An input of a mapped file made while the library reads mapped files positionally (the page
 * cache thrashes: MappedFile.mappedNow()): Lucene's BufferedIndexInput over one page, each refill
 * one read of the library (MappedFile.read), which reads what is asked from the file instead of
 * faulting pages around it into the cache. It shares the file and its closed flag with the mapped
 * inputs of the file: a refill after the owner closed throws AlreadyClosedException. Opened by the
 * directory at such a time, it owns the file, as a mapped input would.
 */
final class PositionalIndexInput extends BufferedIndexInput {
  private static final int BUFFER = 4096;

  private final MappedIndexInput.Source src;
  private final long offset;
  private final long length;
  private boolean owner; // not final: a clone is made by Object.clone

  PositionalIndexInput(String desc, MappedIndexInput.Source src, long offset, long length,
      boolean owner) {
    super(desc, BUFFER);
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
    int len = b.remaining();
    if (pos + len > length) {
      throw new EOFException("read past EOF: " + this);
    }
    try {
      src.file.read(offset + pos, b.array(), b.arrayOffset() + b.position(), len);
    } catch (IllegalStateException e) { // closed by another thread meanwhile
      throw new AlreadyClosedException("Already closed: " + this, e);
    }
    b.position(b.position() + len);
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

  @Override
  public PositionalIndexInput clone() {
    if (src.closed) {
      throw new AlreadyClosedException("Already closed: " + this);
    }
    PositionalIndexInput c = (PositionalIndexInput) super.clone();
    c.owner = false;
    return c;
  }

  @Override
  public PositionalIndexInput slice(String desc, long off, long len) throws IOException {
    if (off < 0 || len < 0 || off > length - len) {
      throw new IllegalArgumentException("slice(" + desc + ", offset=" + off + ", length=" + len
          + ") out of bounds: " + this);
    }
    if (src.closed) {
      throw new AlreadyClosedException("Already closed: " + this);
    }
    return new PositionalIndexInput(getFullSliceDescription(desc), src, offset + off, len, false);
  }

  @Override
  public void close() throws IOException {
    if (owner && !src.closed) {
      src.closed = true;
      src.file.close();
    }
  }
}
