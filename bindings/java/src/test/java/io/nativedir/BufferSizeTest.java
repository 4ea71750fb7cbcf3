package io.nativedir;

import static org.junit.Assert.*;

import io.nativedir.jni.nativedir;
import java.nio.file.Path;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * The Java cursor buffer of a buffered input has the size the library gives its own cursor
 * buffer for the same file and flags (issue 14, defect 7: Java said 64 KiB for a sequential
 * input while the library used 256 KiB). The size is the library's answer, never a Java table.
 */
public class BufferSizeTest {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @Test
  public void javaBufferIsTheLibrarysForEveryFlagAndLength() throws Exception {
    Path root = tmp.getRoot().toPath();
    TestFiles.write(root, "big", 3 << 20, 1);
    TestFiles.write(root, "small", 1000, 2);
    IOFlag[][] flagSets = {
      {}, {IOFlag.RANDOM}, {IOFlag.SEQUENTIAL}, {IOFlag.RANDOM, IOFlag.SEQUENTIAL},
      {IOFlag.SEQUENTIAL, IOFlag.RANDOM}, {IOFlag.MERGE}, {IOFlag.MERGE, IOFlag.RANDOM},
      {IOFlag.PRELOAD},
    };
    long raw = nativedir.nd_open_dir(root.toString(), 0);
    try (NativeDirectory dir = NativeDirectory.open(root)) {
      for (String name : new String[] {"big", "small"}) {
        for (IOFlag[] flags : flagSets) {
          long h = nativedir.nd_open_input(raw, name, IOFlag.bits(flags));
          try (NativeInput in = dir.openInput(name, flags)) {
            String what = name + " " + java.util.Arrays.toString(flags);
            assertEquals(what, nativedir.nd_input_buffer_size(h), in.bufferSize());
            try (NativeInput c = in.clone()) {
              assertEquals(what + " clone", in.bufferSize(), c.bufferSize());
            }
          } finally {
            nativedir.nd_close(h);
          }
        }
      }
    } finally {
      nativedir.nd_close(raw);
    }
  }
}
