import io.nativedir.IOFlag;
import io.nativedir.NativeDirectory;
import io.nativedir.NativeInput;
import io.nativedir.NativeOutput;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.Arrays;

/**
 * nativedir from Java: open a directory, write a file and make it durable, read it back.
 *
 * <pre>javac -cp nativedir.jar Example.java && java -cp nativedir.jar:. Example /tmp/idx</pre>
 */
public final class Example {
  public static void main(String[] args) throws Exception {
    String path = args.length > 0 ? args[0] : "example-index";
    byte[] text = "nativedir: durable on return".getBytes(StandardCharsets.UTF_8);
    try (NativeDirectory dir = NativeDirectory.open(Paths.get(path), true)) {
      // write under a temporary name, make the bytes durable, then rename: the final name
      // always holds a whole file
      try (NativeOutput out = dir.createOutput("notes.tmp", IOFlag.OVERWRITE)) {
        out.write(text);
        out.sync(); // flush and fsync through this handle
        System.out.printf("crc32 %08x%n", out.crc32());
      }
      dir.rename("notes.tmp", "notes");
      dir.syncDir(); // the rename is durable too

      // read it back through a mapping: positional reads are thread-safe
      byte[] back = new byte[text.length];
      try (NativeInput in = dir.openInput("notes", IOFlag.MMAP, IOFlag.RANDOM)) {
        in.read(0, back);
      }
      if (!Arrays.equals(back, text)) {
        throw new IllegalStateException("read back something else");
      }
    }
    System.out.println("wrote and read back " + text.length + " bytes with nativedir "
        + NativeDirectory.libraryVersion());
  }
}
