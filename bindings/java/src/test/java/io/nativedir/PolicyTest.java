package io.nativedir;

import static org.junit.Assert.*;

import java.nio.file.Path;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * NativeDirectory.policyInput / policyOutput (nd_policy_input, nd_policy_output): each FileUse
 * reaches the library as its ND_USE_* value, the merge threshold as given, failures as Java
 * exceptions, and the bits open the file they are for (the table itself is test_policy's, in C).
 */
public class PolicyTest {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @Test
  public void eachUseReachesTheLibrary() throws Exception {
    Path root = tmp.getRoot().toPath();
    TestFiles.write(root, "_0.tim", 70_000, 1);
    try (NativeDirectory dir = NativeDirectory.open(root)) {
      // a merge at or above min_direct bypasses the page cache, reading and writing; below, not
      assertTrue(IOFlag.MERGE.in(dir.policyInput("_0.tim", FileUse.MERGE, 1 << 20, 0)));
      assertTrue(IOFlag.MERGE.in(dir.policyOutput("_0.tim", FileUse.MERGE, 1 << 20, 1 << 20)));
      assertFalse(IOFlag.MERGE.in(dir.policyInput("_0.tim", FileUse.MERGE, 1 << 20, (1 << 20) + 1)));
      assertFalse(IOFlag.MERGE.in(dir.policyOutput("_0.tim", FileUse.MERGE, 1L << 40, Long.MAX_VALUE)));
      // the size means nothing to the other uses
      for (FileUse use : new FileUse[] {FileUse.SEARCH, FileUse.READ_ONCE, FileUse.FLUSH}) {
        assertFalse(use.toString(), IOFlag.MERGE.in(dir.policyInput("_0.tim", use, 1L << 40, 0)));
        assertFalse(use.toString(), IOFlag.MERGE.in(dir.policyOutput("_0.tim", use, 1L << 40, 0)));
      }
      // read once is read front to back, never mapped; the uses differ from each other
      long once = dir.policyInput("_0.tim", FileUse.READ_ONCE, 0, -1);
      assertTrue(IOFlag.SEQUENTIAL.in(once));
      assertFalse(IOFlag.MMAP.in(once));
      assertNotEquals(once, dir.policyInput("_0.tim", FileUse.SEARCH, 0, -1));
      // every use's bits open the file and read it
      for (FileUse use : FileUse.values()) {
        for (long bytes : new long[] {0, 1L << 30}) {
          long flags = dir.policyInput("_0.tim", use, bytes, -1);
          if (IOFlag.MMAP.in(flags)) {
            try (MappedFile f = dir.openMapped("_0.tim", flags)) {
              assertEquals(70_000, f.length());
            }
          } else {
            try (NativeInput in = dir.openInput("_0.tim", flags)) {
              byte[] b = new byte[100];
              in.read(69_900, b);
              assertEquals(70_000, in.length());
            }
          }
          try (NativeOutput out = dir.createOutput("out", dir.policyOutput("out", use, bytes, -1)
              | IOFlag.OVERWRITE.bits())) {
            out.write(new byte[5000]);
          }
          assertEquals(5000, dir.length("out"));
        }
      }
    }
  }

  @Test
  public void badArgumentsAreJavaExceptions() throws Exception {
    NativeDirectory dir = NativeDirectory.open(tmp.getRoot().toPath());
    try {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> dir.policyInput("a/b", FileUse.SEARCH, 0, -1));
      assertTrue(e.getMessage(), e.getMessage().contains("nd_policy_input"));
      e = assertThrows(IllegalArgumentException.class,
          () -> dir.policyOutput("x", FileUse.MERGE, 0, -2));
      assertTrue(e.getMessage(), e.getMessage().contains("nd_policy_output"));
    } finally {
      dir.close();
    }
    assertThrows(IllegalStateException.class, () -> dir.policyInput("x", FileUse.SEARCH, 0, -1));
  }
}
