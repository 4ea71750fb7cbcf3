package io.nativedir;

import static org.junit.Assert.*;

import io.nativedir.jni.nativedir;
import java.nio.file.Path;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * The Java buffers have the sizes the library gives its own: an input's cursor buffer for the
 * same file and flags (a table of its own in Java once said 64 KiB for a sequential input while
 * the library used 256 KiB), an output's for the same flags. The size is the library's answer,
 * never a Java constant.
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

  @Test
  public void outputBufferIsTheLibrarysForEveryFlag() throws Exception {
    Path root = tmp.getRoot().toPath();
    IOFlag[][] flagSets = {{}, {IOFlag.MERGE}, {IOFlag.SEQUENTIAL}, {IOFlag.MERGE, IOFlag.RANDOM}};
    long raw = nativedir.nd_open_dir(root.toString(), 0);
    try (NativeDirectory dir = NativeDirectory.open(root)) {
      int i = 0;
      for (IOFlag[] flags : flagSets) {
        String what = java.util.Arrays.toString(flags);
        long h = nativedir.nd_create_output(raw, "raw" + i, IOFlag.bits(flags));
        byte[] data;
        try (NativeOutput out = dir.createOutput("out" + i, flags)) {
          assertEquals(what, nativedir.nd_output_buffer_size(h), out.bufferSize());
          // a buffer's worth goes through in one call, the rest collects: bytes stay right
          data = new byte[3 * out.bufferSize() + 5];
          new java.util.Random(i).nextBytes(data);
          out.writeByte(data[0]);
          out.write(data, 1, out.bufferSize());
          out.write(data, 1 + out.bufferSize(), data.length - 1 - out.bufferSize());
          assertEquals(what, data.length, out.position());
        } finally {
          nativedir.nd_close(h);
        }
        assertArrayEquals(what, data, java.nio.file.Files.readAllBytes(root.resolve("out" + i)));
        i++;
      }
    } finally {
      nativedir.nd_close(raw);
    }
  }
}
