package io.nativedir;

import static org.junit.Assert.*;

import java.io.EOFException;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * MappedFile (NativeDirectory.openMapped): read-only views of the mapping, independent of each
 * other, that do not keep the file past close: after it they read zeros and the mapping of the
 * file is gone, where NativeInput.mappedBuffer() (the negative control) keeps reading the file.
 */
public class MappedFileTest {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  private static boolean mapped(Path file) throws Exception {
    String name = file.toRealPath().toString();
    return Files.readAllLines(Paths.get("/proc/self/maps")).stream().anyMatch(l -> l.endsWith(name));
  }

  @Test
  public void viewsReadTheFileUntilCloseAndZerosAfter() throws Exception {
    Path root = tmp.getRoot().toPath();
    byte[] data = TestFiles.write(root, "f", 200_001, 7);
    try (NativeDirectory dir = NativeDirectory.open(root)) {
      MappedFile f = dir.openMapped("f", IOFlag.bitsOf(IOFlag.RANDOM));
      assertEquals(200_001, f.length());
      assertEquals(1, f.viewCount());
      ByteBuffer a = f.view(0);
      ByteBuffer b = f.view(0);
      assertTrue(a.isReadOnly());
      assertThrows(ReadOnlyBufferException.class, () -> a.put(0, (byte) 1));
      byte[] got = new byte[data.length];
      a.get(got);
      assertArrayEquals(data, got);
      assertEquals(0, b.position()); // views are independent
      f.advise(1000, 5000, IOFlag.SEQUENTIAL);
      f.advise(0, 200_001);
      assertThrows(EOFException.class, () -> f.advise(200_000, 2, IOFlag.RANDOM));
      f.prefetch(0, 200_001);
      assertThrows(EOFException.class, () -> f.prefetch(1, 200_001));
      assertTrue(mapped(root.resolve("f")));

      // the negative control: a NativeInput's mapped buffer keeps the file after its close
      NativeInput in = dir.openInput("f", IOFlag.MMAP);
      ByteBuffer kept = in.mappedBuffer();
      in.close();

      f.close();
      f.close(); // idempotent
      assertTrue(f.isClosed());
      assertThrows(IllegalStateException.class, () -> f.view(0));
      assertThrows(IllegalStateException.class, () -> f.prefetch(0, 1));
      // the view read after close: zeros where the file has none of them
      int nonZero = 0;
      for (int i = 0; i < data.length; i++) {
        nonZero += b.get(i) != 0 ? 1 : 0;
      }
      assertEquals(0, nonZero);
      assertEquals(data[12345], kept.get(12345));
      assertTrue(mapped(root.resolve("f"))); // kept's mapping, not f's
      kept = null;
      in = null;
      for (int i = 0; i < 50 && mapped(root.resolve("f")); i++) {
        System.gc();
        Thread.sleep(20);
      }
      assertFalse("the file is still mapped", mapped(root.resolve("f")));
    }
  }

  @Test
  public void emptyFilesAndBadNames() throws Exception {
    Path root = tmp.getRoot().toPath();
    Files.write(root.resolve("empty"), new byte[0]);
    try (NativeDirectory dir = NativeDirectory.open(root)) {
      try (MappedFile f = dir.openMapped("empty", 0)) {
        assertEquals(0, f.length());
        assertEquals(0, f.viewCount());
      }
      assertThrows(java.nio.file.NoSuchFileException.class, () -> dir.openMapped("missing", 0));
      assertThrows(IllegalArgumentException.class, () -> dir.openMapped("a/b", 0));
    }
  }
}
