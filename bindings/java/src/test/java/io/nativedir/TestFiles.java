package io.nativedir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

/** Shared helpers: deterministic file contents written with java.nio, independent of nativedir. */
final class TestFiles {
  private TestFiles() {}

  static byte[] pattern(int size, long seed) {
    byte[] b = new byte[size];
    new Random(seed).nextBytes(b);
    return b;
  }

  static byte[] write(Path dir, String name, int size, long seed) throws IOException {
    byte[] b = pattern(size, seed);
    Files.write(dir.resolve(name), b);
    return b;
  }
}
