package io.nativedir.lucene;

import io.nativedir.Strategy;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.apache.lucene.store.AlreadyClosedException;
import org.apache.lucene.store.BaseDirectoryTestCase;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FlushInfo;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexInput;
import org.apache.lucene.store.IndexOutput;
import org.apache.lucene.store.MergeInfo;
import org.apache.lucene.store.RandomAccessInput;
import org.junit.After;
import org.junit.Before;

/**
 * Lucene's generic directory suite (BaseDirectoryTestCase) on NativeFSDirectory, plus what is
 * this directory's own: the library's policy per IOContext, reads after close, views across the
 * mapping's GiB boundary, sync through the writing handle, and after every test a check that none
 * of the library's descriptors or mappings of the test's files is left (what Lucene's LeakFS
 * checks for I/O through its file system, which the library's I/O goes around).
 */
public class TestNativeFSDirectory extends BaseDirectoryTestCase {
  private Path tempRoot;

  @Override
  protected Directory getDirectory(Path path) throws IOException {
    return new NativeFSDirectory(path);
  }

  @Before
  public void findTempRoot() throws IOException {
    tempRoot = Paths.get(createTempDir("leak-check").getParent().toString()).toRealPath();
  }

  @After
  public void nothingOfTheTestsFilesIsStillOpen() throws IOException {
    assertNothingOpenUnder(tempRoot);
  }

  /** Descriptors (/proc/self/fd) and mappings (/proc/self/maps) of files under {@code root}. */
  static List<String> openUnder(Path root) throws IOException {
    String prefix = root.toString() + "/";
    List<String> found = new ArrayList<>();
    try (Stream<Path> fds = Files.list(Paths.get("/proc/self/fd"))) {
      for (Path fd : (Iterable<Path>) fds::iterator) {
        try {
          String target = Files.readSymbolicLink(fd).toString();
          if (target.startsWith(prefix)) {
            found.add("descriptor " + fd.getFileName() + " -> " + target);
          }
        } catch (IOException gone) {
          // the listing's own descriptor, closed by now
        }
      }
    }
    for (String line : Files.readAllLines(Paths.get("/proc/self/maps"))) {
      int at = line.indexOf(prefix);
      if (at >= 0) {
        found.add("mapping " + line.substring(at));
      }
    }
    return found;
  }

  static void assertNothingOpenUnder(Path root) throws IOException {
    List<String> open = openUnder(root);
    assertTrue("left open: " + open, open.isEmpty());
  }

  /** The negative control of the check above: it does see an input left open, of either kind. */
  public void testLeakCheckSeesInputsLeftOpen() throws IOException {
    Path path = createTempDir();
    int old = memoryMode(MAPPED); // the mapped input's mapping is what is looked for
    try (Directory dir = getDirectory(path)) {
      for (String name : new String[] {"a.bin", "b.bin"}) {
        try (IndexOutput out = dir.createOutput(name, IOContext.DEFAULT)) {
          out.writeBytes(new byte[8192], 8192);
        }
      }
      IndexInput mapped = dir.openInput("a.bin", IOContext.DEFAULT);
      IndexInput buffered = dir.openInput("b.bin", IOContext.READONCE);
      List<String> open = openUnder(tempRoot);
      assertTrue(open.toString(), open.stream().anyMatch(s -> s.startsWith("mapping") && s.endsWith("a.bin")));
      assertTrue(open.toString(), open.stream().anyMatch(s -> s.startsWith("descriptor") && s.endsWith("b.bin")));
      mapped.close();
      buffered.close();
      // the folder's own handle is the directory's until it closes
      assertTrue(openUnder(tempRoot).stream().noneMatch(s -> s.endsWith(".bin")));
    } finally {
      memoryMode(old);
    }
  }

  /** Sets the library's memory mode (nd_memory_mode) and returns the one it replaced. */
  private static int memoryMode(int mode) throws IOException {
    return io.nativedir.jni.nativedir.nd_memory_mode(mode);
  }

  private static final int MAPPED = io.nativedir.jni.nativedirConstants.ND_MEMORY_MAPPED;

  private static void write(Directory dir, String name, int size, long seed) throws IOException {
    byte[] b = new byte[size];
    new Random(seed).nextBytes(b);
    try (IndexOutput out = dir.createOutput(name, IOContext.DEFAULT)) {
      out.writeBytes(b, b.length);
    }
  }

  private static IOContext merge(long bytes) {
    return new IOContext(new MergeInfo(1000, bytes, false, 1));
  }

  /** Each IOContext reaches the library's policy as its use, and its flags open the file. */
  public void testInputsFollowTheLibrarysPolicy() throws IOException {
    int old = memoryMode(MAPPED); // mapped inputs read through their views
    try (NativeFSDirectory dir = new NativeFSDirectory(createTempDir())) {
      write(dir, "_0.tim", 100_000, 1);
      try (IndexInput search = dir.openInput("_0.tim", IOContext.DEFAULT);
          IndexInput read = dir.openInput("_0.tim", IOContext.READ);
          IndexInput once = dir.openInput("_0.tim", IOContext.READONCE);
          IndexInput smallMerge = dir.openInput("_0.tim", merge(1 << 20));
          IndexInput largeMerge = dir.openInput("_0.tim", merge(1L << 30))) {
        assertTrue(search instanceof MappedIndexInput);
        assertTrue(read instanceof MappedIndexInput);
        assertTrue(smallMerge instanceof MappedIndexInput);
        assertTrue(once instanceof BufferedNativeIndexInput);
        assertEquals(Strategy.BUFFERED, ((BufferedNativeIndexInput) once).strategy());
        assertTrue(largeMerge instanceof BufferedNativeIndexInput);
        Strategy s = ((BufferedNativeIndexInput) largeMerge).strategy();
        assertTrue(s.toString(), s == Strategy.DIRECT || s == Strategy.DROP_BEHIND);
      }
    }
    // the threshold is the directory's: 0 sends every merge around the page cache
    try (NativeFSDirectory dir = new NativeFSDirectory(createTempDir(), NativeLockFactory.INSTANCE, 0)) {
      write(dir, "_1.doc", 10_000, 2);
      try (IndexInput in = dir.openInput("_1.doc", merge(1))) {
        assertTrue(in instanceof BufferedNativeIndexInput);
      }
      try (IndexOutput out = dir.createOutput("_2.doc", merge(1))) {
        out.writeInt(7);
        assertTrue(((NativeIndexOutput) out).strategy() != Strategy.BUFFERED);
      }
      try (IndexOutput out = dir.createOutput("_3.doc", new IOContext(new FlushInfo(10, 1 << 30)))) {
        assertEquals(Strategy.BUFFERED, ((NativeIndexOutput) out).strategy());
      }
    } finally {
      memoryMode(old);
    }
  }

  /** A clone or slice read after the input it came from was closed throws; none reads on. */
  public void testClonesAndSlicesThrowOnceTheirInputIsClosed() throws IOException {
    try (NativeFSDirectory dir = new NativeFSDirectory(createTempDir())) {
      write(dir, "f.bin", 300_000, 3);
      for (IOContext context : new IOContext[] {IOContext.DEFAULT, IOContext.READONCE}) {
        IndexInput in = dir.openInput("f.bin", context);
        IndexInput clone = in.clone();
        IndexInput slice = in.slice("part", 1000, 200_000);
        IndexInput unread = in.slice("unread", 0, 100);
        RandomAccessInput random = in.randomAccessSlice(0, 300_000);
        clone.readByte();
        slice.readInt();
        random.readLong(8);
        in.close();
        // a buffered clone may still serve what its own buffer holds (as NIOFSDirectory's do);
        // anything the file must give (a refill, or any read of a mapping) throws
        expectThrows(AlreadyClosedException.class, () -> {
          clone.seek(290_000); // past the buffer's 256 KiB
          clone.readByte();
        });
        expectThrows(AlreadyClosedException.class, () -> slice.clone().readBytes(new byte[10], 0, 10));
        expectThrows(AlreadyClosedException.class, unread::readByte);
        expectThrows(AlreadyClosedException.class, () -> random.readLong(290_000));
        expectThrows(AlreadyClosedException.class, () -> in.slice("again", 0, 1).readByte());
        expectThrows(AlreadyClosedException.class, () -> in.clone().readByte());
        in.close(); // twice is harmless
      }
    }
  }

  /**
   * A mapped file opened while the library reads mapped files positionally (the page cache
   * thrashing; forced here with nd_memory_mode) is still read through views of the mapping: its
   * input, clones and slices are mapped inputs with the right bytes and the same closed rule, and
   * stay so when the mode changes back. The control: the library itself reports that it reads
   * the file positionally in that mode (MappedFile.mappedNow), so the mode did take effect.
   */
  public void testAFileOpenedWhileTheCacheThrashesReadsTheMapping() throws IOException {
    int old = memoryMode(io.nativedir.jni.nativedirConstants.ND_MEMORY_POSITIONAL);
    try (NativeFSDirectory dir = new NativeFSDirectory(createTempDir())) {
      byte[] data = new byte[100_000];
      new Random(5).nextBytes(data);
      try (IndexOutput out = dir.createOutput("p.bin", IOContext.DEFAULT)) {
        out.writeBytes(data, data.length);
      }
      try (io.nativedir.MappedFile f = dir.nativeDirectory().openMapped("p.bin", 0)) {
        assertFalse(f.mappedNow());
      }
      IndexInput in = dir.openInput("p.bin", IOContext.DEFAULT);
      assertTrue(in instanceof MappedIndexInput);
      in.seek(5000);
      IndexInput clone = in.clone();
      IndexInput slice = in.slice("s", 70_000, 20_000);
      assertTrue(clone instanceof MappedIndexInput);
      assertTrue(slice instanceof MappedIndexInput);
      assertEquals(5000, clone.getFilePointer());
      byte[] got = new byte[30_000];
      clone.readBytes(got, 0, got.length);
      assertArrayEquals(Arrays.copyOfRange(data, 5000, 35_000), got);
      slice.seek(19_999);
      assertEquals(data[89_999], slice.readByte());
      assertEquals(bigEndian(data, 70_004, 8), ((RandomAccessInput) slice).readLong(4));
      memoryMode(MAPPED);
      IndexInput later = in.clone();
      later.seek(99_999);
      assertEquals(data[99_999], later.readByte());
      in.close();
      expectThrows(AlreadyClosedException.class, () -> {
        clone.seek(90_000);
        clone.readByte();
      });
    } finally {
      memoryMode(old);
    }
  }

  /** Reads of every width across the boundary between two of the mapping's 1 GiB views. */
  public void testReadsAcrossTheMappingsViews() throws IOException {
    Path path = createTempDir();
    long gib = io.nativedir.MappedFile.CHUNK;
    int span = 1 << 16;
    byte[] pattern = new byte[span];
    new Random(4).nextBytes(pattern);
    // a sparse file: the bytes around the boundary are written, the rest are holes
    try (RandomAccessFile f = new RandomAccessFile(Paths.get(path.toString(), "big.bin").toFile(), "rw")) {
      f.setLength(gib + span);
      f.seek(gib - span / 2);
      f.write(pattern);
    }
    long base = gib - span / 2;
    int old = memoryMode(MAPPED); // the views are what is tried
    try (NativeFSDirectory dir = new NativeFSDirectory(path);
        IndexInput in = dir.openInput("big.bin", IOContext.DEFAULT)) {
      assertTrue(in instanceof MappedIndexInput);
      assertEquals(gib + span, in.length());
      in.seek(base);
      for (int i = 0; i < span; i++) {
        assertEquals(pattern[i], in.readByte());
      }
      for (int k = 1; k < 8; k++) { // every multi-byte read straddling the boundary
        long at = gib - k;
        int rel = (int) (at - base);
        in.seek(at);
        assertEquals(bigEndian(pattern, rel, 2), in.readShort() & 0xFFFFL);
        in.seek(at);
        assertEquals(bigEndian(pattern, rel, 4), in.readInt() & 0xFFFFFFFFL);
        in.seek(at);
        assertEquals(bigEndian(pattern, rel, 8), in.readLong());
        RandomAccessInput r = (RandomAccessInput) in;
        assertEquals(bigEndian(pattern, rel, 2), r.readShort(at) & 0xFFFFL);
        assertEquals(bigEndian(pattern, rel, 4), r.readInt(at) & 0xFFFFFFFFL);
        assertEquals(bigEndian(pattern, rel, 8), r.readLong(at));
        in.seek(at);
        long[] le = new long[3];
        in.readLELongs(le, 0, 3);
        for (int j = 0; j < 3; j++) {
          assertEquals(Long.reverseBytes(bigEndian(pattern, rel + 8 * j, 8)), le[j]);
        }
        assertEquals(at + 24, in.getFilePointer());
      }
      byte[] got = new byte[span];
      in.seek(base);
      in.readBytes(got, 0, span);
      assertArrayEquals(pattern, got);
      // a slice across the boundary, and a clone of it
      IndexInput slice = in.slice("across", base + 100, span - 200);
      IndexInput clone = slice.clone();
      clone.seek(span / 2 - 100);
      assertEquals(pattern[span / 2], clone.readByte());
      slice.seek(span - 201);
      assertEquals(pattern[span - 101], slice.readByte());
      expectThrows(java.io.EOFException.class, slice::readByte);
      in.seek(gib + span);
      expectThrows(java.io.EOFException.class, in::readByte);
    } finally {
      memoryMode(old);
    }
  }

  private static long bigEndian(byte[] b, int at, int n) {
    long v = 0;
    for (int i = 0; i < n; i++) {
      v = (v << 8) | (b[at + i] & 0xFF);
    }
    return v;
  }

  /**
   * sync of an output still open goes through its writing handle with the bytes it has not
   * handed over yet: before it, the file holds none of them (the negative control); after it, all.
   */
  public void testSyncGoesThroughTheWritingHandle() throws IOException {
    try (NativeFSDirectory dir = new NativeFSDirectory(createTempDir());
        IndexOutput out = dir.createOutput("open.bin", IOContext.DEFAULT)) {
      out.writeBytes(new byte[1000], 1000);
      assertEquals(0, dir.fileLength("open.bin"));
      dir.sync(Collections.singleton("open.bin"));
      assertEquals(1000, dir.fileLength("open.bin"));
      assertEquals(1000, out.getFilePointer());
    }
  }
}
