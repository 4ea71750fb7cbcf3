package io.nativedir;

import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * A child JVM for {@link StatusTableTest}: the failures that need a process limit (set by the
 * shell that starts it) or a private mount. It prints the exception's class and its message,
 * {@code <class> <message>} on one line.
 */
public final class StatusChild {
  private StatusChild() {}

  public static void main(String[] args) throws Exception {
    Path dir = Paths.get(args[1]);
    try (NativeDirectory d = NativeDirectory.open(dir)) {
      switch (args[0]) {
        case "no_space": // under `ulimit -f`: write(2) fails with EFBIG
          try (NativeOutput out = d.createOutput("big")) {
            out.write(new byte[1 << 20]);
          }
          break;
        case "too_many_open": // under `ulimit -n`
          java.util.List<NativeInput> kept = new java.util.ArrayList<>();
          for (int i = 0; i < 100_000; i++) {
            kept.add(d.openInput("f"));
          }
          break;
        case "not_supported": // on ramfs, which refuses O_DIRECT
          d.openInput("f", IOFlag.REQUIRE_DIRECT).close();
          break;
        default:
          throw new AssertionError(args[0]);
      }
      System.out.println("no-exception");
    } catch (Exception e) {
      System.out.println(e.getClass().getName() + " " + e.getMessage().replace('\n', ' '));
    }
  }
}
