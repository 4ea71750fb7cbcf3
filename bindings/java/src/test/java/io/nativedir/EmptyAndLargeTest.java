package io.nativedir;

import static org.junit.Assert.*;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

public class EmptyAndLargeTest {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @Test
  public void emptyFilesReadNothing() throws IOException {
    Path root = tmp.getRoot().toPath();
    TestFiles.write(root, "empty", 0, 0);
    try (NativeDirectory dir = NativeDirectory.open(root)) {
      for (IOFlag[] flags : new IOFlag[][] {{}, {IOFlag.MMAP}}) {
        try (NativeInput in = dir.openInput("empty", flags)) {
          assertEquals(0, in.length());
          assertThrows(EOFException.class, in::readByte);
          in.read(0, new byte[0]);
          assertThrows(EOFException.class, () -> in.read(0, new byte[1]));
          if (in.isMapped()) {
            assertEquals(0, in.mappedBuffer().capacity());
          }
        }
      }
    }
  }

  @Test
  public void directOutputRoundTrips() throws IOException {
    Path root = tmp.getRoot().toPath();
    byte[] data = TestFiles.pattern(3 * 1024 * 1024 + 17, 9); // not a multiple of any block
    try (NativeDirectory dir = NativeDirectory.open(root)) {
      try (NativeOutput out = dir.createOutput("merged", IOFlag.MERGE)) {
        Strategy s = out.strategy();
        assertTrue(s.toString(), s == Strategy.DIRECT || s == Strategy.DROP_BEHIND);
        out.write(data, 0, 5);
        out.write(ByteBuffer.allocateDirect(data.length - 5).put(data, 5, data.length - 5).flip());
        assertEquals(data.length, out.position());
      }
      assertEquals(data.length, dir.length("merged"));
      try (NativeInput in = dir.openInput("merged", IOFlag.MERGE)) {
        byte[] got = new byte[data.length];
        in.read(got);
        assertArrayEquals(data, got);
      }
    }
  }

  @Test
  public void requireDirectEitherDeliversOrSaysSo() throws IOException {
    Path root = tmp.getRoot().toPath();
    TestFiles.write(root, "f", 8192, 1);
    try (NativeDirectory dir = NativeDirectory.open(root)) {
      try (NativeInput in = dir.openInput("f", IOFlag.REQUIRE_DIRECT)) {
        assertEquals(Strategy.DIRECT, in.strategy());
      } catch (NativeIOException e) {
        assertEquals("ND_E_NOT_SUPPORTED", e.statusName());
      }
      assertThrows(IllegalArgumentException.class,
          () -> dir.openInput("f", IOFlag.REQUIRE_DIRECT, IOFlag.MMAP));
      assertThrows(IllegalArgumentException.class, () -> dir.openInput("f", IOFlag.OVERWRITE));
    }
  }
}
