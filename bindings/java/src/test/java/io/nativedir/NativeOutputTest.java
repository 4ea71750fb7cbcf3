package io.nativedir;

import static org.junit.Assert.*;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.CRC32;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

public class NativeOutputTest {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @Test
  public void everyWriteLandsInOrderWithPositionAndCrc() throws IOException {
    Path root = tmp.getRoot().toPath();
    byte[] big = TestFiles.pattern(100_000, 3);
    CRC32 crc = new CRC32();
    try (NativeDirectory dir = NativeDirectory.open(root);
         NativeOutput out = dir.createOutput("out")) {
      assertEquals("out", out.name());
      out.writeByte(0x1ff); // only the low byte
      crc.update(0xff);
      assertEquals(1, out.position());
      out.write(big, 10, 20); // small: buffered
      crc.update(big, 10, 20);
      out.write(big); // big: straight through
      crc.update(big);
      ByteBuffer direct = ByteBuffer.allocateDirect(20_000);
      direct.put(big, 0, 20_000).flip();
      out.write(direct);
      assertFalse(direct.hasRemaining());
      crc.update(big, 0, 20_000);
      ByteBuffer small = ByteBuffer.allocateDirect(3).put(new byte[] {1, 2, 3}).flip();
      out.write(small);
      crc.update(new byte[] {1, 2, 3});
      ByteBuffer readOnly = ByteBuffer.wrap(big, 5, 100).asReadOnlyBuffer();
      out.write(readOnly);
      crc.update(big, 5, 100);
      for (int i = 0; i < 10_000; i++) {
        out.writeByte(i);
        crc.update(i & 0xff);
      }
      assertEquals(1 + 20 + 100_000 + 20_000 + 3 + 100 + 10_000, out.position());
      assertEquals(crc.getValue(), out.crc32());
      out.sync();
    }
    byte[] file = Files.readAllBytes(root.resolve("out"));
    CRC32 check = new CRC32();
    check.update(file);
    assertEquals(crc.getValue(), check.getValue());
    assertEquals((byte) 0xff, file[0]);
  }

  @Test
  public void flushMakesEveryByteVisibleToFileLength() throws IOException {
    // Flushable's contract, and Lucene's IndexOutput.flush: the bytes reach the file, so its
    // length is the position, for buffered and merge (direct) outputs alike
    Path root = tmp.getRoot().toPath();
    byte[] big = TestFiles.pattern(3 << 20, 5);
    for (IOFlag[] flags : new IOFlag[][] {{}, {IOFlag.MERGE}}) {
      String name = flags.length == 0 ? "buffered" : "merge";
      try (NativeDirectory dir = NativeDirectory.open(root);
           NativeOutput out = dir.createOutput(name, flags)) {
        int at = 0;
        for (int cut : new int[] {2, 3, 4097, 70_000, (1 << 20) + 5, 3 << 20}) {
          out.write(big, at, cut - at);
          at = cut;
          out.flush();
          assertEquals(name, at, out.position());
          assertEquals(name, at, Files.size(root.resolve(name)));
          byte[] file = Files.readAllBytes(root.resolve(name));
          assertArrayEquals(name, java.util.Arrays.copyOf(big, at), file);
        }
      }
    }
  }

  @Test
  public void syncCoversBufferedBytes() throws IOException {
    Path root = tmp.getRoot().toPath();
    try (NativeDirectory dir = NativeDirectory.open(root);
         NativeOutput out = dir.createOutput("s")) {
      out.writeByte(7);
      out.sync(); // must hand the Java buffer to the library first (Lucene.NET #1292)
      assertEquals(1, Files.size(root.resolve("s")));
    }
  }

  @Test
  public void badRegionsAndUseAfterClose() throws IOException {
    Path root = tmp.getRoot().toPath();
    try (NativeDirectory dir = NativeDirectory.open(root)) {
      NativeOutput out = dir.createOutput("o");
      assertThrows(IndexOutOfBoundsException.class, () -> out.write(new byte[4], 3, 2));
      assertThrows(NullPointerException.class, () -> out.write((byte[]) null));
      out.write(new byte[] {1, 2, 3});
      out.close();
      out.close(); // idempotent
      assertThrows(IllegalStateException.class, () -> out.writeByte(1));
      assertThrows(IllegalStateException.class, () -> out.write(new byte[1]));
      assertThrows(IllegalStateException.class, () -> out.write(ByteBuffer.allocate(1)));
      assertThrows(IllegalStateException.class, out::position);
      assertThrows(IllegalStateException.class, out::crc32);
      assertThrows(IllegalStateException.class, out::sync);
      assertThrows(IllegalStateException.class, out::strategy);
      assertEquals(3, dir.length("o"));
    }
  }
}
