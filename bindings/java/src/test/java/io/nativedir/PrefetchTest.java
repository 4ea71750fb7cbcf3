package io.nativedir;

import static org.junit.Assert.*;

import java.io.EOFException;
import java.nio.file.Path;
import java.util.Arrays;
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
}
