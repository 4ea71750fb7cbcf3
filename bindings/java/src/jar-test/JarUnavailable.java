import io.nativedir.IOFlag;
import io.nativedir.NativeDirectory;
import io.nativedir.NativeLibraryUnavailableError;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * ctest java.jar_unavailable: nativedir.jar with this platform's JNI library made unloadable in
 * each way a user meets (removed, corrupted, built for another CPU, needing a C library symbol
 * this system lacks): the first call throws NativeLibraryUnavailableError naming the platform,
 * the file looked for, the loader's reason and the platforms the jar carries, and every later
 * call throws the same again (never NoClassDefFoundError); naming an IOFlag loads nothing. With
 * the library left as it is, the same probe loads it (the negative control).
 *
 * <p>{@code java -cp <nativedir.jar> JarUnavailable.java <nativedir.jar> <work dir> <this file>};
 * each case runs in a JVM of its own ({@code java -cp <jar>:<classes> JarUnavailable probe <dir>})
 * on a copy of the jar in a folder of its own, where no library lies beside it.
 */
public final class JarUnavailable {
  public static void main(String[] args) throws Exception {
    if (args[0].equals("probe")) {
      probe(Paths.get(args[1]));
      return;
    }
    drive(Paths.get(args[0]).toAbsolutePath(), Paths.get(args[1]).toAbsolutePath(),
        Paths.get(args[2]).toAbsolutePath().toString());
  }

  /** One JVM's view: three calls, each must fail alike, or all must work. */
  static void probe(Path dir) throws IOException {
    long bits = IOFlag.MMAP.ordinal(); // naming a flag must load nothing
    List<Throwable> errors = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      try {
        if (i == 1) {
          System.out.println("LOADED " + NativeDirectory.libraryVersion() + " " + bits);
        } else {
          NativeDirectory.open(dir, true).close();
        }
      } catch (Throwable t) {
        errors.add(t);
      }
    }
    if (errors.isEmpty()) {
      return;
    }
    Throwable first = errors.get(0);
    System.out.println("THROWN " + errors.size() + " " + first.getClass().getName());
    for (Throwable t : errors) {
      if (t.getClass() != first.getClass() || !String.valueOf(t.getMessage()).equals(first.getMessage())) {
        System.out.println("DIFFERENT " + t);
      }
    }
    if (first instanceof NativeLibraryUnavailableError) {
      NativeLibraryUnavailableError e = (NativeLibraryUnavailableError) first;
      System.out.println("UNSATISFIED_LINK " + (first instanceof UnsatisfiedLinkError));
      System.out.println("PLATFORM " + e.platform());
      System.out.println("LOOKED_FOR " + e.lookedFor());
      System.out.println("REASON " + e.reason());
      System.out.println("CARRIED " + String.join(",", e.carried()));
    }
    System.out.println("MESSAGE " + first.getMessage());
  }

  static void drive(Path jar, Path work, String source) throws Exception {
    String os = System.getProperty("os.name").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
    if (!os.startsWith("linux")) {
      throw new AssertionError("the cases below patch ELF files: a Linux host only");
    }
    String platform = "linux-" + (arch.equals("amd64") ? "x86_64" : arch);
    String entry = "native/" + platform + "/libnativedir_jni.so";
    byte[] original = read(jar, entry);
    if (original == null) {
      throw new AssertionError(jar + " carries no " + entry);
    }
    // a library of another CPU: the jar's own other Linux one where it carries one, else this
    // one with another machine in its ELF header
    String otherCpu = platform.equals("linux-x86_64") ? "linux-aarch64" : "linux-x86_64";
    byte[] foreign = read(jar, "native/" + otherCpu + "/libnativedir_jni.so");
    if (foreign == null) {
      foreign = original.clone();
      foreign[18] = (byte) (otherCpu.equals("linux-aarch64") ? 183 : 62); // e_machine
      foreign[19] = 0;
    }
    String otherName = otherCpu.equals("linux-aarch64") ? "AARCH64" : "AMD 64";
    Object[][] cases = {
      {"removed", null, "no libnativedir_jni.so for " + platform},
      {"corrupted", "this is not a shared library\n".repeat(64).getBytes(StandardCharsets.US_ASCII),
          "invalid ELF header"},
      {"another CPU", foreign, "can't load " + otherName},
      {"missing libc symbol", renameSymbol(original, "preadv2", "preadv9"), "preadv9"},
    };
    // the probe compiled once (the children would each compile this file again in source mode)
    Path classes = Files.createDirectories(work.resolve("classes"));
    int rc = javax.tools.ToolProvider.getSystemJavaCompiler().run(null, null, null, "-d",
        classes.toString(), "-cp", jar.toString(), source);
    if (rc != 0) {
      throw new AssertionError("javac " + source + " failed: " + rc);
    }
    List<String> failures = new ArrayList<>();
    String carried = new String(read(jar, "native/platforms.txt"), StandardCharsets.UTF_8).strip()
        .replace('\n', ',');
    for (Object[] c : cases) {
      String name = (String) c[0];
      Path dir = Files.createDirectories(work.resolve(name.replace(' ', '-')));
      Path copy = dir.resolve("nativedir.jar");
      Files.copy(jar, copy, StandardCopyOption.REPLACE_EXISTING);
      try (FileSystem zip = FileSystems.newFileSystem(URI.create("jar:" + copy.toUri()), Map.of())) {
        Path inJar = zip.getPath(entry);
        Files.delete(inJar);
        if (c[1] != null) {
          Files.write(inJar, (byte[]) c[1]);
        }
      }
      Map<String, String> out = run(copy, dir, classes);
      System.out.println("jar_unavailable: " + name + ": " + out.get("MESSAGE"));
      String message = out.getOrDefault("MESSAGE", "");
      check(failures, name, "throws NativeLibraryUnavailableError",
          out.getOrDefault("THROWN", "").equals("3 io.nativedir.NativeLibraryUnavailableError"));
      check(failures, name, "is an UnsatisfiedLinkError", "true".equals(out.get("UNSATISFIED_LINK")));
      check(failures, name, "throws the same error on every call", !out.containsKey("DIFFERENT"));
      check(failures, name, "names the platform " + platform,
          out.getOrDefault("PLATFORM", "").startsWith(platform + " ") && message.contains(platform));
      check(failures, name, "names the file looked for (jar:/" + entry + ")",
          out.getOrDefault("LOOKED_FOR", "").contains("jar:/" + entry) && message.contains(entry));
      check(failures, name, "gives the loader's reason (" + c[2] + ")",
          out.getOrDefault("REASON", "").contains((String) c[2]) && message.contains((String) c[2]));
      check(failures, name, "names the platforms the jar carries (" + carried + ")",
          carried.equals(out.get("CARRIED")) && message.contains(carried.replace(",", ", ")));
    }
    // the negative control: the jar as built loads, with the same probe
    Path asBuilt = Files.createDirectories(work.resolve("as-built"));
    Files.copy(jar, asBuilt.resolve("nativedir.jar"), StandardCopyOption.REPLACE_EXISTING);
    Map<String, String> out = run(asBuilt.resolve("nativedir.jar"), asBuilt, classes);
    check(failures, "as built", "loads the library", out.containsKey("LOADED") && !out.containsKey("THROWN"));
    if (!failures.isEmpty()) {
      throw new AssertionError(String.join("\n", failures));
    }
    System.out.println("jar_unavailable: " + cases.length + " ways of losing the JNI library, each"
        + " NativeLibraryUnavailableError, the same on every call; as built, it loads");
  }

  static void check(List<String> failures, String name, String what, boolean ok) {
    if (!ok) {
      failures.add(name + ": does not " + what);
    }
  }

  static byte[] read(Path jar, String entry) throws IOException {
    try (FileSystem zip = FileSystems.newFileSystem(URI.create("jar:" + jar.toUri()), Map.of())) {
      Path p = zip.getPath(entry);
      return Files.exists(p) ? Files.readAllBytes(p) : null;
    }
  }

  /** The library with one undefined C library symbol renamed (same length) in its dynamic
   * string table, as if linked against a libc that has it and this one does not. */
  static byte[] renameSymbol(byte[] lib, String from, String to) {
    byte[] needle = ("\0" + from + "\0").getBytes(StandardCharsets.US_ASCII);
    outer:
    for (int i = 0; i + needle.length <= lib.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (lib[i + j] != needle[j]) {
          continue outer;
        }
      }
      byte[] copy = lib.clone();
      byte[] name = to.getBytes(StandardCharsets.US_ASCII);
      System.arraycopy(name, 0, copy, i + 1, name.length);
      return copy;
    }
    throw new AssertionError("the library references no " + from);
  }

  /** Runs the probe in a JVM of its own with only {@code jar} (and the probe) on the class path. */
  static Map<String, String> run(Path jar, Path dir, Path classes) throws Exception {
    String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    ProcessBuilder pb = new ProcessBuilder(java, "-Djava.io.tmpdir=" + dir, "-cp",
        jar + File.pathSeparator + classes, "JarUnavailable", "probe",
        dir.resolve("data").toString());
    pb.directory(dir.toFile());
    pb.environment().remove("LD_LIBRARY_PATH");
    pb.environment().remove("JAVA_TOOL_OPTIONS");
    pb.environment().remove("CLASSPATH");
    pb.redirectErrorStream(true);
    Process p = pb.start();
    String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    int rc = p.waitFor();
    Map<String, String> out = new java.util.HashMap<>();
    for (String line : text.split("\n")) {
      int sp = line.indexOf(' ');
      if (sp > 0 && line.substring(0, sp).matches("[A-Z_]+")) {
        out.putIfAbsent(line.substring(0, sp), line.substring(sp + 1));
      }
    }
    if (rc != 0) {
      out.put("DIFFERENT", "the probe exited " + rc + ":\n" + text);
    }
    return out;
  }
}
