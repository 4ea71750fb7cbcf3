package io.nativedir.lucene;

import io.nativedir.NativeOutput;
import io.nativedir.Strategy;
import java.io.IOException;
import org.apache.lucene.store.AlreadyClosedException;
import org.apache.lucene.store.IndexOutput;

/**
 * An output written through the library: bytes collect in a Java array of the library's buffer
 * size for the output (nd_output_buffer_size: 64 KiB buffered, the 1 MiB staging buffer of a
 * direct merge output), handed over whole in one call, so a byte written is a store into that
 * array. The checksum is the library's running CRC-32 (the CRC-32 Lucene's footers hold). While
 * open, {@link NativeFSDirectory#sync} makes its bytes durable through this writing handle.
 */
final class NativeIndexOutput extends IndexOutput {
  private final NativeFSDirectory dir;
  private final NativeOutput out;
  private final byte[] buf;
  private int used;
  private long handed; // bytes handed to the library
  private boolean closed;

  NativeIndexOutput(NativeFSDirectory dir, String desc, String name, NativeOutput out) {
    super(desc, name);
    this.dir = dir;
    this.out = out;
    this.buf = new byte[out.bufferSize()];
  }

  private void hand() throws IOException {
    if (used > 0) {
      int n = used;
      used = 0; // a failed write fails the output for good: never resend these bytes
      out.write(buf, 0, n);
      handed += n;
    }
  }

  private void ensureOpen() {
    if (closed) {
      throw new AlreadyClosedException("Already closed: " + this);
    }
  }

  @Override
  public void writeByte(byte b) throws IOException {
    if (used == buf.length) {
      ensureOpen();
      hand();
    }
    buf[used++] = b;
  }

  @Override
  public void writeBytes(byte[] b, int off, int len) throws IOException {
    if (len <= buf.length - used) {
      System.arraycopy(b, off, buf, used, len);
      used += len;
      return;
    }
    ensureOpen();
    hand();
    if (len >= buf.length) {
      out.write(b, off, len); // one call, straight from the caller's array
      handed += len;
    } else {
      System.arraycopy(b, off, buf, 0, len);
      used = len;
    }
  }

  /** How the library writes the file. */
  Strategy strategy() throws IOException {
    return out.strategy();
  }

  @Override
  public long getFilePointer() {
    return handed + used;
  }

  @Override
  public long getChecksum() throws IOException {
    ensureOpen();
    hand();
    return out.crc32();
  }

  /** Flushes and fsyncs through the writing handle; false if the output is closed already. */
  synchronized boolean syncIfOpen() throws IOException {
    if (closed) {
      return false;
    }
    hand();
    out.sync();
    return true;
  }

  /** Hands the last bytes over and closes the handle (no fsync), under the lock sync takes. */
  @Override
  public synchronized void close() throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    try {
      hand();
    } finally {
      try {
        out.close();
      } finally {
        dir.outputClosed(this);
      }
    }
  }
}
