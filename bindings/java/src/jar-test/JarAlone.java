import io.nativedir.NativeDirectory;
import io.nativedir.NativeInput;
import io.nativedir.NativeLoader;
import io.nativedir.NativeOutput;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;

/**
 * ctest java.jar_alone: run as {@code java -cp nativedir.jar:. JarAlone <folder>} with nothing
 * else, it must load the JNI library from inside the jar and do real I/O with it, and leave no
 * extracted file behind in java.io.tmpdir.
 */
public final class JarAlone {
  public static void main(String[] args) throws Exception {
    byte[] text = "from the jar alone".getBytes(StandardCharsets.UTF_8);
    try (NativeDirectory d = NativeDirectory.open(Paths.get(args[0]), true)) {
      try (NativeOutput out = d.createOutput("a")) {
        out.write(text);
      }
      byte[] back = new byte[text.length];
      try (NativeInput in = d.openInput("a")) {
        in.read(0, back);
      }
      if (!new String(back, StandardCharsets.UTF_8).equals("from the jar alone")) {
        throw new AssertionError("read back " + new String(back, StandardCharsets.UTF_8));
      }
    }
    String from = NativeLoader.loadedFrom();
    System.out.println("loaded " + from);
    if (from == null || !from.startsWith("jar:/native/")) {
      throw new AssertionError("the library did not come from the jar: " + from);
    }
    String[] left = new File(System.getProperty("java.io.tmpdir")).list();
    if (left == null || left.length != 0) {
      throw new AssertionError("left in java.io.tmpdir: " + String.join(", ", left));
    }
    System.out.println("ok " + NativeDirectory.libraryVersion());
  }
}
