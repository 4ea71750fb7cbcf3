package io.nativedir;

import static org.junit.Assert.*;

import io.nativedir.jni.nativedirConstants;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * Every status a Java caller can see, from every kind of real failure: each ND_E_* status of the
 * library is produced through the public API (a missing file, a held lock, a full file system...)
 * and the exception must be the class the README's "Exceptions" table names, carrying the
 * status and the OS error of the failure. The table is parsed from the README, so the two cannot
 * drift apart; the statuses are read from the generated constants, so a new one without a row
 * fails here. Statuses no real failure can produce through Java are listed in UNREACHABLE with
 * the reason; the mapping function is checked for every status (and an unknown one) directly.
 */
public class StatusTableTest {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  private static final Map<String, String> UNREACHABLE = Map.of(
      "ND_E_BUSY", "a full ring: Java binds no rings (nd_ring_* are %ignore'd in bindings/swig/java.i)");

  /** A failure as seen: the exception's class, the status and OS error its message names. */
  private static final class Seen {
    final String cls;
    final String status; // null when the message names none (Java's own checks)
    final int osError;

    Seen(String cls, String message) {
      this.cls = cls;
      Matcher m = Pattern.compile("\\[(ND_E_\\w+)(?:, OS error (\\d+))?\\]").matcher(message);
      boolean found = m.find();
      this.status = found ? m.group(1) : null;
      this.osError = found && m.group(2) != null ? Integer.parseInt(m.group(2)) : 0;
    }
  }

  private interface Failure {
    void run() throws Exception;
  }

  private static Seen caught(Failure f) {
    try {
      f.run();
    } catch (Exception e) {
      return new Seen(e.getClass().getName(), String.valueOf(e.getMessage()));
    }
    throw new AssertionError("the call did not fail");
  }

  /** A case to skip, with its reason (printed: JUnit 4's text runner does not show skips). */
  private static final class Skip extends Exception {
    private static final long serialVersionUID = 1L;

    Skip(String reason) {
      super(reason);
    }
  }

  private interface Producer {
    Seen produce(NativeDirectory d, Path root) throws Exception;
  }

  private static final class Case {
    final String status;
    final String what;
    final int osError; // the errno the failure carries; -1: not checked
    final Producer producer;

    Case(String status, String what, int osError, Producer producer) {
      this.status = status;
      this.what = what;
      this.osError = osError;
      this.producer = producer;
    }
  }

  // Linux errno values the failures below carry
  private static final int ENOENT = 2, EIO = 5, ENOMEM = 12, EEXIST = 17, EISDIR = 21,
      EMFILE = 24, EFBIG = 27, ELOOP = 40;

  private static List<Case> cases() {
    List<Case> c = new ArrayList<>();
    c.add(new Case("ND_E_INVALID_ARGUMENT", "MMAP and REQUIRE_DIRECT together", -1, (d, root) -> {
      Files.write(root.resolve("f"), new byte[] {1});
      return caught(() -> d.openInput("f", IOFlag.MMAP, IOFlag.REQUIRE_DIRECT).close());
    }));
    // Java checks for close itself (IllegalStateException, the README's class for BAD_HANDLE);
    // the library's own ND_E_BAD_HANDLE needs a close racing a call on another thread
    c.add(new Case("ND_E_BAD_HANDLE", "a read after close", -1, (d, root) -> {
      Files.write(root.resolve("f"), new byte[] {1});
      NativeInput in = d.openInput("f");
      in.close();
      return caught(() -> in.read(0, new byte[1]));
    }));
    c.add(new Case("ND_E_NOT_FOUND", "a missing file", ENOENT,
        (d, root) -> caught(() -> d.openInput("missing"))));
    c.add(new Case("ND_E_EXISTS", "create an existing file", EEXIST, (d, root) -> {
      d.createOutput("made").close();
      return caught(() -> d.createOutput("made"));
    }));
    c.add(new Case("ND_E_ACCESS", "a directory where a file is expected", EISDIR, (d, root) -> {
      Files.createDirectory(root.resolve("sub"));
      return caught(() -> d.openInput("sub"));
    }));
    c.add(new Case("ND_E_ACCESS", "a symbolic link", ELOOP, (d, root) -> {
      Files.write(root.resolve("target"), new byte[] {1});
      Files.createSymbolicLink(root.resolve("link"), Paths.get("target"));
      return caught(() -> d.openInput("link"));
    }));
    c.add(new Case("ND_E_INVALID_NAME", "a name with a slash", -1,
        (d, root) -> caught(() -> d.openInput("a/b"))));
    c.add(new Case("ND_E_EOF", "a read past the end", -1, (d, root) -> {
      Files.write(root.resolve("f"), new byte[10]);
      try (NativeInput in = d.openInput("f")) {
        return caught(() -> in.read(5, new byte[6]));
      }
    }));
    c.add(new Case("ND_E_LOCKED", "a lock held by another handle", -1, (d, root) -> {
      NativeLock held = d.lock("write.lock");
      try {
        return caught(() -> d.lock("write.lock"));
      } finally {
        held.close();
      }
    }));
    // POSIX lets another process truncate an open file: the read finds its bytes gone
    c.add(new Case("ND_E_IO", "a read of a file truncated after open", -1, (d, root) -> {
      Files.write(root.resolve("f"), new byte[100_000]);
      try (NativeInput in = d.openInput("f")) {
        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(
            root.resolve("f"), java.nio.file.StandardOpenOption.WRITE)) {
          ch.truncate(1000);
        }
        return caught(() -> in.read(50_000, new byte[100]));
      }
    }));
    c.add(new Case("ND_E_NO_SPACE", "a write past RLIMIT_FSIZE", EFBIG,
        (d, root) -> child(root, "no_space", root, "ulimit -f 64")));
    c.add(new Case("ND_E_TOO_MANY_OPEN", "inputs past RLIMIT_NOFILE", EMFILE, (d, root) -> {
      Files.write(root.resolve("f"), new byte[] {1});
      return child(root, "too_many_open", root, "ulimit -n 256");
    }));
    c.add(new Case("ND_E_NO_MEMORY", "a mapping bigger than the address space", ENOMEM,
        (d, root) -> noMemory()));
    c.add(new Case("ND_E_NOT_SUPPORTED", "REQUIRE_DIRECT on ramfs", -1, (d, root) -> {
      Path mnt = Files.createDirectory(root.resolve("ramfs"));
      return child(root, "not_supported", mnt, null);
    }));
    return c;
  }

  /**
   * A mapping larger than the whole user address space (128 TiB on x86-64 and arm64) fails with
   * ENOMEM; only a file system taking a sparse file that big will do: tmpfs does, ext4 does not.
   */
  private static Seen noMemory() throws Exception {
    boolean tmpfs = Files.readAllLines(Paths.get("/proc/mounts")).stream()
        .anyMatch(l -> l.split(" ").length > 2 && l.split(" ")[1].equals("/dev/shm")
            && l.split(" ")[2].equals("tmpfs"));
    if (!tmpfs) {
      throw new Skip("no tmpfs at /dev/shm for a 200 TiB sparse file");
    }
    Path sub = Files.createTempDirectory(Paths.get("/dev/shm"), "nd-status-");
    try {
      try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(sub.resolve("huge").toFile(), "rw")) {
        f.setLength(200L << 40);
      }
      try (NativeDirectory d = NativeDirectory.open(sub)) {
        return caught(() -> d.openInput("huge", IOFlag.MMAP).close());
      }
    } finally {
      Files.deleteIfExists(sub.resolve("huge"));
      Files.deleteIfExists(sub);
    }
  }

  /**
   * Runs StatusChild in a child JVM: under a shell limit (`ulimit`), so this JVM keeps its own
   * limits, or (with no limit) in a private mount namespace holding a fresh ramfs at `dir`.
   */
  private static Seen child(Path root, String what, Path dir, String limit) throws Exception {
    String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    List<String> cmd = new ArrayList<>();
    String script;
    if (limit != null) {
      // an ignored SIGXFSZ stays ignored across exec: a write past the limit fails with EFBIG
      script = "trap '' XFSZ; " + limit + " && exec \"$@\"";
    } else {
      if (!new java.io.File("/usr/bin/unshare").canExecute()) {
        throw new Skip("no unshare(1) to make a private ramfs mount");
      }
      cmd.add("unshare");
      cmd.add("--mount");
      if (!"root".equals(System.getProperty("user.name"))) {
        cmd.add("--map-root-user");
      }
      script = "mount -t ramfs ramfs \"$0\" || exit 77; echo data > \"$0/f\"; exec \"$@\"";
    }
    cmd.addAll(List.of("sh", "-c", script, dir.toString(), java, "-cp",
        System.getProperty("java.class.path"), StatusChild.class.getName(), what, dir.toString()));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    int rc = p.waitFor();
    if (limit == null && rc != 0 && (rc == 77 || out.startsWith("unshare"))) {
      throw new Skip("cannot mount a private ramfs here (" + out + ")");
    }
    assertEquals(what + ": child said " + out, 0, rc);
    String last = out.substring(out.lastIndexOf('\n') + 1);
    int space = last.indexOf(' ');
    assertTrue(what + ": child said " + out, space > 0);
    return new Seen(last.substring(0, space), last.substring(space + 1));
  }

  /** The README's table: status name -> exception class ("other" for any other code). */
  static Map<String, String> readmeTable() throws IOException {
    String dir = System.getProperty("nativedir.source.dir");
    assertNotNull("-Dnativedir.source.dir is not set: run this suite through ctest", dir);
    String text = Files.readString(Paths.get(dir, "README.md"));
    String section = text.split("\n## Exceptions", 2)[1].split("\n## ", 2)[0];
    Map<String, String> table = new LinkedHashMap<>();
    Pattern cls = Pattern.compile("^`([\\w.]+)`");
    Pattern status = Pattern.compile("`(ND_E_\\w+)`");
    for (String line : section.split("\n")) {
      String[] cells = line.trim().replaceAll("^\\||\\|$", "").split("\\|");
      if (cells.length != 2) {
        continue;
      }
      Matcher m = cls.matcher(cells[1].trim());
      if (!m.find()) {
        continue;
      }
      String name = m.group(1).contains(".") ? m.group(1) : "java.lang." + m.group(1);
      Matcher s = status.matcher(cells[0]);
      while (s.find()) {
        assertNull(s.group(1) + " has two rows in the README", table.put(s.group(1), name));
      }
      if (cells[0].contains("any other code")) {
        table.put("other", name);
      }
    }
    return table;
  }

  /** Every ND_E_* constant the generated layer has (from the header). */
  static Map<String, Integer> libraryStatuses() throws IllegalAccessException {
    Map<String, Integer> all = new LinkedHashMap<>();
    for (Field f : nativedirConstants.class.getFields()) {
      if (f.getName().startsWith("ND_E_")) {
        all.put(f.getName(), f.getInt(null));
      }
    }
    return all;
  }

  @Test
  public void everyStatusFromARealFailureMatchesTheReadme() throws Exception {
    Map<String, String> table = readmeTable();
    Map<String, Integer> statuses = libraryStatuses();
    List<String> failures = new ArrayList<>();
    // the README has a row for every status and for any other code
    TreeSet<String> rows = new TreeSet<>(table.keySet());
    rows.remove("other");
    assertEquals("README rows vs the library's statuses", new TreeSet<>(statuses.keySet()), rows);
    assertNotNull("README has no row for any other code", table.get("other"));
    // the cases produce every status but the unreachable ones
    TreeSet<String> produced = new TreeSet<>();
    for (Case c : cases()) {
      produced.add(c.status);
    }
    TreeSet<String> covered = new TreeSet<>(produced);
    covered.addAll(UNREACHABLE.keySet());
    assertEquals(new TreeSet<>(statuses.keySet()), covered);

    int run = 0;
    for (Case c : cases()) {
      Path root = tmp.newFolder().toPath();
      Seen seen;
      try (NativeDirectory d = NativeDirectory.open(root)) {
        seen = c.producer.produce(d, root);
      } catch (Skip s) {
        System.err.println("*** SKIPPED " + c.status + " (" + c.what + "): " + s.getMessage());
        continue;
      }
      run++;
      String want = table.get(c.status);
      if (!want.equals(seen.cls)) {
        failures.add(c.status + " (" + c.what + "): " + seen.cls + ", README says " + want);
      }
      if (seen.status != null || !c.status.equals("ND_E_BAD_HANDLE")) {
        if (!c.status.equals(seen.status)) {
          failures.add(c.status + " (" + c.what + "): the message names " + seen.status);
        }
      }
      if (c.osError >= 0 && seen.osError != c.osError) {
        failures.add(c.status + " (" + c.what + "): OS error " + seen.osError + ", not " + c.osError);
      }
    }
    // the mapping itself, for every status (the unreachable ones too) and an unknown one
    Map<String, Integer> all = new LinkedHashMap<>(statuses);
    all.put("other", -999);
    for (Map.Entry<String, Integer> e : all.entrySet()) {
      Throwable t = NativeErrors.toThrowable(e.getValue(), "m".getBytes(StandardCharsets.UTF_8), 5);
      if (!table.get(e.getKey()).equals(t.getClass().getName())) {
        failures.add("mapping of " + e.getKey() + ": " + t.getClass().getName() + ", README says "
            + table.get(e.getKey()));
      }
      if (t instanceof NativeIOException && (((NativeIOException) t).status() != e.getValue()
          || ((NativeIOException) t).osError() != 5)) {
        failures.add("mapping of " + e.getKey() + " loses its status or OS error");
      }
    }
    assertTrue(String.join("\n", failures), failures.isEmpty());
    assertTrue("only " + run + " cases ran", run >= 10);
  }
}
