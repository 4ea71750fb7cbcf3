package io.nativedir;

import static org.junit.Assert.*;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * Files past the 1 GiB chunks the Java side maps in, and past 2 GiB (what one ByteBuffer holds).
 * The files are sparse: only the bytes around the boundaries are written.
 */
public class LargeFileTest {
  private static final long GIB = 1L << 30;
  private static final long SIZE = 2 * GIB + 4096 + 7;

  @Rule public TemporaryFolder tmp = new TemporaryFolder();
  private Path root;

  /** The byte the test writes at `at` (sparse holes read as 0). */
  private static byte expected(long at) {
    return (byte) (at * 31 + 7);
  }

  private static boolean written(long at) {
    return Math.abs(at - GIB) < 4096 || Math.abs(at - 2 * GIB) < 4096 || at >= SIZE - 100;
  }

  @Before
  public void makeSparseFile() throws IOException {
    root = tmp.getRoot().toPath();
    try (RandomAccessFile f = new RandomAccessFile(root.resolve("big").toFile(), "rw")) {
      f.setLength(SIZE);
      for (long start : new long[] {GIB - 4095, 2 * GIB - 4095, SIZE - 99}) {
        long end = Math.min(SIZE, start + 8190);
        byte[] b = new byte[(int) (end - start)];
        for (int i = 0; i < b.length; i++) {
          b[i] = expected(start + i);
        }
        f.seek(start);
        f.write(b);
      }
    }
  }

  private static void check(long from, byte[] got) {
    for (int i = 0; i < got.length; i++) {
      long at = from + i;
      assertEquals("byte " + at, written(at) ? expected(at) : 0, got[i]);
    }
  }

  @Test
  public void readsAcrossChunksAndPastTwoGiB() throws IOException {
    try (NativeDirectory dir = NativeDirectory.open(root)) {
      for (IOFlag[] flags : new IOFlag[][] {{IOFlag.MMAP}, {}}) {
        try (NativeInput in = dir.openInput("big", flags)) {
          assertEquals(SIZE, in.length());
          for (long at : new long[] {GIB - 1000, 2 * GIB - 1000}) {
            byte[] got = new byte[2000];
            in.read(at, got); // positional, across the boundary
            check(at, got);
            ByteBuffer direct = ByteBuffer.allocateDirect(2000);
            in.read(at, direct);
            direct.flip().get(got);
            check(at, got);
            in.seek(at); // cursor, byte by byte across the boundary
            for (int i = 0; i < 2000; i++) {
              got[i] = in.readByte();
            }
            check(at, got);
            assertEquals(at + 2000, in.position());
            in.seek(at); // cursor, in bulk
            in.read(got);
            check(at, got);
          }
          byte[] tail = new byte[100];
          in.read(SIZE - 100, tail);
          check(SIZE - 100, tail);
          try (NativeInput s = in.slice(GIB - 10, 20)) {
            byte[] got = new byte[20];
            s.read(got);
            check(GIB - 10, got);
          }
          if (in.isMapped()) {
            assertThrows(UnsupportedOperationException.class, in::mappedBuffer);
            ByteBuffer b = in.mappedBuffer(2 * GIB - 100, 200);
            byte[] got = new byte[200];
            b.get(got);
            check(2 * GIB - 100, got);
          }
        }
      }
    }
  }
}
