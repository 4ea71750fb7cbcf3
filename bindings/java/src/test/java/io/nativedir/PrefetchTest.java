package io.nativedir;

import static org.junit.Assert.*;

import java.io.EOFException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.Assume;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * NativeInput.prefetch and advise (nd_input_prefetch, nd_input_advise): the range rules and the
 * advice values reach the library and come back as Java exceptions, on every strategy, clones and
 * slices; nothing read changes. That pages really come in is test_prefetch's (C) to show.
 */
public class PrefetchTest {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  private static final IOFlag[][] FLAGS = {
    {}, {IOFlag.RANDOM}, {IOFlag.MMAP}, {IOFlag.MMAP, IOFlag.RANDOM}, {IOFlag.MMAP, IOFlag.PRELOAD},
    {IOFlag.MERGE},
  };

  private static void rangeRules(NativeInput in, long len) throws Exception {
    in.prefetch(0, 0);
    in.prefetch(0, len);
    in.prefetch(len, 0);
    in.prefetch(len - 1, 1);
    assertThrows(EOFException.class, () -> in.prefetch(0, len + 1));
    assertThrows(EOFException.class, () -> in.prefetch(len, 1));
    assertThrows(EOFException.class, () -> in.prefetch(Long.MAX_VALUE, 1));
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> in.prefetch(-1, 1));
    assertTrue(e.getMessage(), e.getMessage().contains("nd_input_prefetch"));
    assertThrows(IllegalArgumentException.class, () -> in.prefetch(0, -1));
  }

  @Test
  public void prefetchAndAdviseOnEveryStrategy() throws Exception {
    Path root = tmp.getRoot().toPath();
    int size = 300_001;
    byte[] data = TestFiles.write(root, "f", size, 18);
    try (NativeDirectory dir = NativeDirectory.open(root)) {
      for (IOFlag[] flags : FLAGS) {
        String what = Arrays.toString(flags);
        try (NativeInput in = dir.openInput("f", flags);
            NativeInput slice = in.slice(4097, 70_001);
            NativeInput clone = in.clone()) {
          rangeRules(in, size);
          rangeRules(slice, 70_001);
          for (int i = 0; i < 500; i++) { // through the back-off's looks and skips
            (i % 2 == 0 ? in : clone).prefetch((i * 104_729L) % (size - 65_536), 1 + (i * 7919) % 65_536);
          }
          for (NativeInput x : new NativeInput[] {in, slice, clone}) {
            x.advise(IOFlag.RANDOM);
            x.advise(IOFlag.SEQUENTIAL);
            x.advise();
            for (IOFlag[] bad :
                new IOFlag[][] {{IOFlag.RANDOM, IOFlag.SEQUENTIAL}, {IOFlag.MMAP}, {IOFlag.MERGE}}) {
              IllegalArgumentException e =
                  assertThrows(what, IllegalArgumentException.class, () -> x.advise(bad));
              assertTrue(e.getMessage(), e.getMessage().contains("nd_input_advise"));
            }
          }
          byte[] got = new byte[70_001];
          slice.read(0, got);
          assertArrayEquals(what, Arrays.copyOfRange(data, 4097, 4097 + 70_001), got);
        }
      }
      NativeInput closed = dir.openInput("f");
      closed.close();
      assertThrows(IllegalStateException.class, () -> closed.prefetch(0, 1));
      assertThrows(IllegalStateException.class, () -> closed.advise(IOFlag.RANDOM));
    }
  }

  /** Slices on 64 KiB boundaries are page-aligned with 4 KiB and 64 KiB pages alike. */
  private static final int ALIGN = 64 * 1024;

  /** One of this process's mappings of a file: its file offset, length and VmFlags. */
  private static final class Vma {
    final long offset, length;
    final Set<String> flags;

    Vma(long offset, long length, Set<String> flags) {
      this.offset = offset;
      this.length = length;
      this.flags = flags;
    }
  }

  private static List<Vma> mappings(Path file) throws Exception {
    List<Vma> found = new ArrayList<>();
    boolean ours = false;
    long offset = 0, length = 0;
    for (String line : Files.readAllLines(Paths.get("/proc/self/smaps"))) {
      String[] f = line.trim().split("\\s+", 6);
      if (f[0].indexOf('-') > 0 && !f[0].endsWith(":") && f.length >= 5) {
        ours = f.length == 6 && f[5].equals(file.toString());
        String[] range = f[0].split("-");
        length = Long.parseUnsignedLong(range[1], 16) - Long.parseUnsignedLong(range[0], 16);
        offset = Long.parseLong(f[2], 16);
      } else if (ours && line.startsWith("VmFlags:")) {
        found.add(new Vma(offset, length, new HashSet<>(Arrays.asList(line.substring(8).trim().split("\\s+")))));
        ours = false;
      }
    }
    return found;
  }

  private static Set<String> flagsAt(Path file, long off) throws Exception {
    List<Set<String>> hits = new ArrayList<>();
    for (Vma v : mappings(file)) {
      if (off >= v.offset && off < v.offset + v.length) {
        hits.add(v.flags);
      }
    }
    assertEquals("mappings of " + file + " covering " + off, 1, hits.size());
    return hits.get(0);
  }

  /**
   * advise(RANDOM) is MADV_RANDOM (VmFlags "rr"), SEQUENTIAL MADV_SEQUENTIAL ("sr"), nothing
   * MADV_NORMAL, and a slice advises its own pages only: a binding passing the wrong flag value
   * (or none) would still return without error; only the kernel's record shows it.
   */
  @Test
  public void adviceReachesTheMapping() throws Exception {
    boolean smaps = Files.exists(Paths.get("/proc/self/smaps"));
    if (!smaps) {
      System.err.println("PrefetchTest.adviceReachesTheMapping: SKIPPED: no /proc/self/smaps (Linux only)");
    }
    Assume.assumeTrue("the kernel's advice of a mapping is read from /proc/self/smaps (Linux only)", smaps);
    Path root = tmp.getRoot().toPath().toRealPath();
    TestFiles.write(root, "m", 16 * ALIGN, 7);
    Path file = root.resolve("m");
    try (NativeDirectory dir = NativeDirectory.open(root)) {
      try (NativeInput in = dir.openInput("m", IOFlag.MMAP)) {
        assertTrue(in.isMapped());
        Object[][] cases = {
          {new IOFlag[] {IOFlag.RANDOM}, "rr"}, {new IOFlag[] {IOFlag.SEQUENTIAL}, "sr"}, {new IOFlag[0], null},
        };
        for (Object[] c : cases) {
          in.advise((IOFlag[]) c[0]);
          List<Vma> vmas = mappings(file);
          assertFalse("no mapping of " + file, vmas.isEmpty());
          for (Vma v : vmas) {
            assertEquals(Arrays.toString((IOFlag[]) c[0]) + " " + v.flags, "rr".equals(c[1]), v.flags.contains("rr"));
            assertEquals(Arrays.toString((IOFlag[]) c[0]) + " " + v.flags, "sr".equals(c[1]), v.flags.contains("sr"));
          }
        }
        try (NativeInput slice = in.slice(4 * ALIGN, 4 * ALIGN)) {
          slice.advise(IOFlag.RANDOM);
          for (long off = 4 * ALIGN; off < 8 * ALIGN; off += 4096) {
            assertTrue("page at " + off, flagsAt(file, off).contains("rr"));
          }
          assertFalse(flagsAt(file, 4 * ALIGN - 1).contains("rr"));
          assertFalse(flagsAt(file, 8 * ALIGN).contains("rr"));
        }
      }
      // another file: the first one's mapping may outlive its close until the GC runs
      TestFiles.write(root, "r", 16 * ALIGN, 8);
      try (NativeInput in = dir.openInput("r", IOFlag.MMAP, IOFlag.RANDOM)) {
        assertTrue(in.isMapped());
        assertFalse(mappings(root.resolve("r")).isEmpty());
        for (Vma v : mappings(root.resolve("r"))) {
          assertTrue(v.flags.toString(), v.flags.contains("rr"));
        }
      }
    }
  }
}
