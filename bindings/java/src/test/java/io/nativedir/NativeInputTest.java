package io.nativedir;

import static org.junit.Assert.*;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collection;
import org.junit.After;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.Parameterized;
import org.junit.runners.Parameterized.Parameters;

/** Every read path, once per way of opening an input (buffered, random, sequential, mapped, merge). */
@RunWith(Parameterized.class)
public class NativeInputTest {
  private static final int SIZE = 200_003; // spans several buffers, not a multiple of any

  @Parameters(name = "{0}")
  public static Collection<Object[]> modes() {
    return Arrays.asList(new Object[][] {
      {"buffered", new IOFlag[0]},
      {"random", new IOFlag[] {IOFlag.RANDOM}},
      {"sequential", new IOFlag[] {IOFlag.SEQUENTIAL}},
      {"mapped", new IOFlag[] {IOFlag.MMAP}},
      {"mapped-preload", new IOFlag[] {IOFlag.MMAP, IOFlag.PRELOAD, IOFlag.RANDOM}},
      {"merge", new IOFlag[] {IOFlag.MERGE}},
    });
  }

  @Rule public TemporaryFolder tmp = new TemporaryFolder();
  private final IOFlag[] flags;
  private final boolean mapped;
  private NativeDirectory dir;
  private byte[] data;
  private NativeInput in;

  public NativeInputTest(String mode, IOFlag[] flags) {
    this.flags = flags;
    this.mapped = Arrays.asList(flags).contains(IOFlag.MMAP);
  }

  @Before
  public void open() throws IOException {
    Path root = tmp.getRoot().toPath();
    data = TestFiles.write(root, "data", SIZE, 42);
    dir = NativeDirectory.open(root);
    in = dir.openInput("data", flags);
  }

  @After
  public void close() throws IOException {
    in.close();
    dir.close();
  }

  @Test
  public void lengthNameAndStrategy() throws IOException {
    assertEquals(SIZE, in.length());
    assertEquals("data", in.name());
    assertEquals(mapped, in.isMapped());
    assertEquals(mapped, in.strategy() == Strategy.MAPPED);
  }

  @Test
  public void positionalReadsIntoArrays() throws IOException {
    byte[] got = new byte[1000];
    in.read(12345, got, 10, 500);
    assertArrayEquals(Arrays.copyOfRange(data, 12345, 12845), Arrays.copyOfRange(got, 10, 510));
    assertEquals(0, got[9]);
    assertEquals(0, got[510]);
    byte[] all = new byte[SIZE];
    in.read(0, all);
    assertArrayEquals(data, all);
    in.read(SIZE, new byte[0]); // an empty read at the end is fine
  }

  @Test
  public void positionalReadsIntoDirectAndHeapBuffers() throws IOException {
    for (ByteBuffer dst : new ByteBuffer[] {ByteBuffer.allocateDirect(300), ByteBuffer.allocate(300),
                                            ByteBuffer.wrap(new byte[400], 50, 300).slice()}) {
      dst.position(100).limit(250);
      in.read(SIZE - 150, dst);
      assertEquals(250, dst.position());
      dst.limit(dst.capacity());
      for (int i = 0; i < 150; i++) {
        assertEquals(data[SIZE - 150 + i], dst.get(100 + i));
      }
      assertEquals(0, dst.get(99));
      assertEquals(0, dst.get(250));
    }
  }

  @Test
  public void positionalReadErrors() {
    assertThrows(EOFException.class, () -> in.read(SIZE - 10, new byte[11]));
    assertThrows(EOFException.class, () -> in.read(Long.MAX_VALUE, new byte[1]));
    assertThrows(IllegalArgumentException.class, () -> in.read(-1, new byte[1]));
    assertThrows(IndexOutOfBoundsException.class, () -> in.read(0, new byte[4], 2, 3));
    assertThrows(IndexOutOfBoundsException.class, () -> in.read(0, new byte[4], -1, 1));
    assertThrows(NullPointerException.class, () -> in.read(0, (byte[]) null));
    assertThrows(ReadOnlyBufferException.class,
        () -> in.read(0, ByteBuffer.allocateDirect(4).asReadOnlyBuffer()));
  }

  @Test
  public void cursorReadsByteAtATime() throws IOException {
    for (int i = 0; i < SIZE; i++) {
      if (in.readByte() != data[i]) {
        fail("byte " + i);
      }
    }
    assertEquals(SIZE, in.position());
    assertThrows(EOFException.class, in::readByte);
    assertEquals(SIZE, in.position());
  }

  @Test
  public void cursorMixesBytesArraysAndBuffers() throws IOException {
    in.seek(99_999);
    assertEquals(data[99_999], in.readByte());
    byte[] small = new byte[7];
    in.read(small);
    assertArrayEquals(Arrays.copyOfRange(data, 100_000, 100_007), small);
    byte[] big = new byte[90_000]; // larger than any buffer: goes around it
    in.read(big, 0, big.length);
    assertArrayEquals(Arrays.copyOfRange(data, 100_007, 190_007), big);
    ByteBuffer direct = ByteBuffer.allocateDirect(5000);
    in.read(direct);
    direct.flip();
    for (int i = 0; i < 5000; i++) {
      assertEquals(data[190_007 + i], direct.get(i));
    }
    ByteBuffer heap = ByteBuffer.allocate(SIZE - 195_007);
    in.read(heap);
    assertFalse(heap.hasRemaining());
    assertEquals(data[SIZE - 1], heap.get(heap.limit() - 1));
    assertEquals(SIZE, in.position());
    // backwards, into what an earlier buffer held
    in.seek(3);
    assertEquals(data[3], in.readByte());
  }

  @Test
  public void cursorErrorsLeaveThePositionAlone() throws IOException {
    in.seek(SIZE - 4);
    assertThrows(EOFException.class, () -> in.read(new byte[5]));
    assertEquals(SIZE - 4, in.position());
    assertThrows(EOFException.class, () -> in.seek(SIZE + 1));
    assertThrows(IllegalArgumentException.class, () -> in.seek(-1));
    in.seek(SIZE);
    assertThrows(EOFException.class, in::readByte);
  }

  @Test
  public void clonesHaveTheirOwnCursor() throws IOException {
    in.seek(1000);
    try (NativeInput c = in.clone()) {
      assertEquals(0, c.position());
      assertEquals(data[0], c.readByte());
      assertEquals(data[1000], in.readByte());
      in.close(); // the clone outlives its origin
      assertEquals(data[1], c.readByte());
      byte[] got = new byte[10];
      c.read(SIZE - 10, got);
      assertArrayEquals(Arrays.copyOfRange(data, SIZE - 10, SIZE), got);
    }
  }

  @Test
  public void slicesSeeOnlyTheirRange() throws IOException {
    try (NativeInput s = in.slice(5000, 3000); NativeInput ss = s.slice(1000, 10)) {
      assertEquals(3000, s.length());
      assertEquals(data[5000], s.readByte());
      byte[] got = new byte[3000];
      s.read(0, got);
      assertArrayEquals(Arrays.copyOfRange(data, 5000, 8000), got);
      assertThrows(EOFException.class, () -> s.read(2999, new byte[2]));
      s.seek(2999);
      assertEquals(data[7999], s.readByte());
      assertThrows(EOFException.class, s::readByte);
      byte[] inner = new byte[10];
      ss.read(inner);
      assertArrayEquals(Arrays.copyOfRange(data, 6000, 6010), inner);
    }
    assertThrows(EOFException.class, () -> in.slice(SIZE - 1, 2));
    assertThrows(IllegalArgumentException.class, () -> in.slice(-1, 2));
  }

  @Test
  public void mappedBufferIsAReadOnlyZeroCopyView() throws IOException {
    if (!mapped) {
      assertThrows(UnsupportedOperationException.class, in::mappedBuffer);
      return;
    }
    ByteBuffer b = in.mappedBuffer();
    assertTrue(b.isReadOnly());
    assertTrue(b.isDirect());
    assertEquals(SIZE, b.remaining());
    for (int i = 0; i < SIZE; i += 997) {
      assertEquals(data[i], b.get(i));
    }
    ByteBuffer part = in.mappedBuffer(10, 20);
    assertEquals(20, part.capacity());
    assertEquals(data[10], part.get(0));
    assertThrows(EOFException.class, () -> in.mappedBuffer(SIZE - 1, 2));
    try (NativeInput s = in.slice(100, 50)) {
      assertEquals(data[100], s.mappedBuffer().get(0));
      assertEquals(50, s.mappedBuffer().capacity());
    }
  }

  @Test
  public void mappedBufferOutlivesEveryClose() throws Exception {
    if (!mapped) {
      return;
    }
    ByteBuffer b = in.mappedBuffer().slice(1, 100).duplicate();
    in.close();
    dir.close();
    // the view alone keeps the mapping: reading it after every handle closed is still defined
    for (int round = 0; round < 3; round++) {
      System.gc();
      Thread.sleep(20);
      for (int i = 0; i < 100; i++) {
        assertEquals(data[1 + i], b.get(i));
      }
    }
  }

  @Test
  public void useAfterCloseThrowsIllegalState() throws IOException {
    in.seek(10);
    in.readByte(); // fills a buffer or window the fast path could still see
    NativeInput c = in.clone();
    c.readByte();
    c.close();
    c.close(); // idempotent
    assertThrows(IllegalStateException.class, c::readByte);
    assertThrows(IllegalStateException.class, c::length);
    assertThrows(IllegalStateException.class, c::position);
    assertThrows(IllegalStateException.class, () -> c.seek(0));
    assertThrows(IllegalStateException.class, () -> c.read(new byte[1]));
    assertThrows(IllegalStateException.class, () -> c.read(ByteBuffer.allocate(1)));
    assertThrows(IllegalStateException.class, () -> c.read(0, new byte[1]));
    assertThrows(IllegalStateException.class, () -> c.read(0, ByteBuffer.allocateDirect(1)));
    assertThrows(IllegalStateException.class, c::clone);
    assertThrows(IllegalStateException.class, () -> c.slice(0, 1));
    assertThrows(IllegalStateException.class, c::strategy);
    assertThrows(IllegalStateException.class, c::mappedBuffer);
    assertEquals(data[11], in.readByte()); // the origin is untouched
  }

  /**
   * What Lucene does right after it closes a segment's inputs: delete the file and create a new
   * one under its name. A buffered input's close lets go of the file at once although its
   * cursor's last window stays pinned (the window is the input's buffer, not the file); on
   * Windows a file still open refuses this, on Linux its descriptor would stay in /proc.
   */
  @Test
  public void closeLetsGoOfTheFileAtOnceThoughAWindowIsPinned() throws Exception {
    Path root = tmp.getRoot().toPath();
    Path file = root.resolve("data");
    in.seek(1000);
    assertEquals(data[1000], in.readByte()); // through a window
    byte[] got = new byte[3000];
    in.seek(100_000);
    in.read(got); // smaller than the buffer: through windows too
    assertArrayEquals(Arrays.copyOfRange(data, 100_000, 103_000), got);
    ByteBuffer w = in.win.duplicate();
    byte[] before = new byte[w.limit()];
    w.get(0, before);
    in.close(); // no further cursor call: the window stays pinned
    if (!mapped && Files.isDirectory(Path.of("/proc/self/fd"))) {
      assertFalse("the close let go of the file", WindowPinTest.holds(file));
    }
    byte[] after = new byte[w.limit()];
    w.get(0, after);
    assertArrayEquals("the window outlives the close", before, after);
    if (!mapped) { // a mapping keeps a Windows file until it is collected (mappedBuffer)
      Files.delete(file);
      byte[] fresh = TestFiles.write(root, "data", 5000, 43);
      assertArrayEquals(fresh, Files.readAllBytes(file));
      try (NativeInput again = dir.openInput("data")) {
        byte[] back = new byte[fresh.length];
        again.read(0, back);
        assertArrayEquals(fresh, back);
      }
    }
    assertThrows(IllegalStateException.class, in::readByte); // releases the window
  }
}
