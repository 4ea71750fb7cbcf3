package io.nativedir;

import static org.junit.Assert.*;

import java.io.EOFException;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * Differential sweeps: NativeInput and NativeOutput in lockstep with what a Java user would use
 * instead, over random operation sequences with fixed seeds, for every strategy, clones and
 * slices. Every step compares the result (values, the bytes of the caller's buffer, positions)
 * or the exception's class. A failure names the seed, the configuration and the last steps.
 *
 * <p>Models: an input is a {@link RandomAccessFile} (cursor: readFully, readByte, seek,
 * getFilePointer, length) and its {@link FileChannel} (positional reads, size); an output is a
 * {@link FileOutputStream} and its channel (writes, position).
 *
 * <p>Accepted differences (deliberate, each checked to be exactly this):
 *
 * <ul>
 *   <li>"Exactly n bytes" reads (cursor and positional) that run past the end throw
 *       EOFException having read nothing and, for the cursor, without moving it; RAF.readFully
 *       reads the bytes that exist and leaves its pointer at the end, FileChannel returns a short
 *       count or -1. The models check the range first (nativedir.h: ND_E_EOF reads nothing).
 *   <li>seek past the end throws EOFException and a negative seek IllegalArgumentException,
 *       where RAF allows the first and throws IOException for the second: Lucene's
 *       IndexInput.seek contract, which this input serves. The position does not move.
 *   <li>After close every call but close/name/toString throws IllegalStateException (Lucene's
 *       AlreadyClosedException is one), where RAF/FileChannel/FileOutputStream throw IOException
 *       or ClosedChannelException, and FileOutputStream.flush (and a write of 0 bytes) does
 *       nothing. close is idempotent on both sides.
 *   <li>A read into a read-only ByteBuffer throws ReadOnlyBufferException (documented in the
 *       README: what ByteBuffer.put throws; these objects are not channels) where FileChannel
 *       throws IllegalArgumentException. The buffer is left untouched.
 *   <li>NativeDirectory vs Files (NOFOLLOW_LINKS, CREATE_NEW, ATOMIC_MOVE): list() holds the
 *       regular files sorted by UTF-8 bytes; a directory where a file is expected is refused
 *       with AccessDeniedException (README's table) where Files throws FileSystemException or
 *       IOException, and Files.size/Files.delete/force would act on it; a name over 255 bytes
 *       throws IllegalArgumentException like every invalid name (Java's InvalidPathException is
 *       one too), checked before the OS, where Files throws FileSystemException("File name too
 *       long") and Files.isRegularFile answers false. A name with a separator, "." or ".."
 *       throws IllegalArgumentException and nothing outside the folder changes.
 * </ul>
 *
 * <p>Nothing pending: no undocumented difference was found.
 */
public class IoContractTest {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  static final int STEPS = 300; // per (length, configuration): about 5 s in all on an idle machine
  static final int[] LENGTHS = {0, 1, 4097, 70_001};

  static final IOFlag[][] INPUT_MODES = {
    {}, {IOFlag.RANDOM}, {IOFlag.SEQUENTIAL}, {IOFlag.MMAP}, {IOFlag.MMAP, IOFlag.PRELOAD},
    {IOFlag.MMAP, IOFlag.WARM}, {IOFlag.MERGE}, {IOFlag.MERGE, IOFlag.REQUIRE_DIRECT},
  };
  static final IOFlag[][] OUTPUT_MODES = {{}, {IOFlag.MERGE}, {IOFlag.MERGE, IOFlag.REQUIRE_DIRECT}};

  // ---- outcomes ----

  interface Step {
    Object run() throws Throwable;
  }

  static String outcome(Step s) {
    try {
      return "ok:" + describe(s.run());
    } catch (Throwable t) {
      return "raise:" + t.getClass().getName();
    }
  }

  static String describe(Object o) {
    if (o instanceof byte[]) {
      byte[] b = (byte[]) o;
      CRC32 c = new CRC32();
      c.update(b);
      return "bytes[" + b.length + "]" + Long.toHexString(c.getValue());
    }
    if (o instanceof ByteBuffer) {
      ByteBuffer b = (ByteBuffer) o;
      ByteBuffer all = b.duplicate().clear();
      byte[] copy = new byte[all.remaining()];
      all.get(copy);
      return "buffer(pos=" + b.position() + ",lim=" + b.limit() + ")" + describe(copy);
    }
    return String.valueOf(o);
  }

  static final class Divergence extends AssertionError {
    Divergence(String m) {
      super(m);
    }
  }

  static void check(String config, long seed, List<String> steps, String model, String ours) {
    if (!model.equals(ours)) {
      List<String> last = steps.subList(Math.max(0, steps.size() - 30), steps.size());
      throw new Divergence("seed=" + seed + " config=" + config + ": step " + (steps.size() - 1)
          + " " + steps.get(steps.size() - 1) + "\n  model: " + model + "\n  ours:  " + ours
          + "\n  last steps: " + last);
    }
  }

  static int pick(Random r, int... choices) {
    return choices[r.nextInt(choices.length)];
  }

  static int[] sizes(int length) {
    return new int[] {0, 1, 2, 7, 100, 4095, 4096, 4097, 8192, 65_536, length, length + 1,
                      length + 5000};
  }

  // ---- NativeInput vs RandomAccessFile / FileChannel ----

  /** The model input: a RAF whose "exactly n" reads check the range first (see the class notes). */
  static final class ModelInput {
    final RandomAccessFile raf;
    final FileChannel ch;
    boolean closed;

    ModelInput(Path p) throws IOException {
      raf = new RandomAccessFile(p.toFile(), "r");
      ch = raf.getChannel();
    }

    void readFully(byte[] dst, int off, int len) throws IOException {
      long p = raf.getFilePointer();
      if (!closed && off >= 0 && len >= 0 && off <= dst.length - len && p + len > raf.length()) {
        throw new EOFException(); // nothing read, pointer unchanged
      }
      raf.readFully(dst, off, len);
    }

    void readAt(long offset, byte[] dst, int off, int len) throws IOException {
      ByteBuffer bb = ByteBuffer.wrap(dst, off, len); // IndexOutOfBoundsException first
      readAt(offset, bb);
    }

    void readAt(long offset, ByteBuffer bb) throws IOException {
      if (bb.isReadOnly()) {
        throw new java.nio.ReadOnlyBufferException(); // see the class notes
      }
      if (closed) {
        throw new IllegalStateException("closed"); // see the class notes
      }
      if (offset < 0) {
        throw new IllegalArgumentException("Negative position");
      }
      if (offset + bb.remaining() > ch.size()) {
        throw new EOFException();
      }
      long pos = offset;
      while (bb.hasRemaining()) {
        int n = ch.read(bb, pos);
        assertTrue("FileChannel read nothing before the end", n > 0);
        pos += n;
      }
    }

    void readCursor(ByteBuffer bb) throws IOException {
      if (bb.isReadOnly()) {
        throw new java.nio.ReadOnlyBufferException(); // see the class notes
      }
      long p = raf.getFilePointer();
      if (p + bb.remaining() > raf.length()) {
        throw new EOFException();
      }
      while (bb.hasRemaining()) {
        assertTrue(ch.read(bb) > 0);
      }
    }
  }

  /** One random step on both inputs; returns its label. */
  static String inputStep(Random r, int length, ModelInput m, NativeInput o, List<String> done,
      String config, long seed) {
    int k = r.nextInt(100);
    String label;
    String mo;
    String oo;
    if (k < 20) { // cursor readFully into an array window, incl. bad windows
      int size = pick(r, sizes(length));
      int off = pick(r, 0, 0, 1, 3, -1, size + 1);
      int len = pick(r, size - Math.max(off, 0), 0, 1, -1, size + 1);
      label = "read(byte[" + size + "]," + off + "," + len + ")";
      byte[] a = new byte[Math.max(size, 0)];
      byte[] b = new byte[Math.max(size, 0)];
      Arrays.fill(a, (byte) 0xee);
      Arrays.fill(b, (byte) 0xee);
      mo = outcome(() -> {
        m.readFully(a, off, len);
        return "";
      }) + describe(a) + outcome(() -> m.raf.getFilePointer());
      oo = outcome(() -> {
        o.read(b, off, len);
        return "";
      }) + describe(b) + outcome(o::position);
    } else if (k < 32) {
      label = "readByte";
      mo = outcome(() -> m.raf.readByte()) + outcome(() -> m.raf.getFilePointer());
      oo = outcome(o::readByte) + outcome(o::position);
    } else if (k < 44) { // cursor read(ByteBuffer): heap, direct, with a position, read-only
      int size = pick(r, sizes(length));
      int kind = r.nextInt(4);
      int at = kind == 2 ? Math.min(3, size) : 0;
      label = "read(" + new String[] {"heap", "direct", "heap@3", "readonly"}[kind] + "[" + size + "])";
      ByteBuffer x = buffer(kind, size, at);
      ByteBuffer y = buffer(kind, size, at);
      mo = outcome(() -> {
        m.readCursor(x);
        return "";
      }) + describe(x) + outcome(() -> m.raf.getFilePointer());
      oo = outcome(() -> {
        o.read(y);
        return "";
      }) + describe(y) + outcome(o::position);
    } else if (k < 60) { // positional read into an array window: the cursor must not move
      int size = pick(r, sizes(length));
      long offset = pick(r, 0, 1, length / 2, length - 1, length, length + 1, -1);
      int off = pick(r, 0, 0, 0, 2, -1);
      int len = pick(r, size - Math.max(off, 0), 0, 1, -1, size + 1);
      label = "read(" + offset + ",byte[" + size + "]," + off + "," + len + ")";
      byte[] a = new byte[size];
      byte[] b = new byte[size];
      Arrays.fill(a, (byte) 0xee);
      Arrays.fill(b, (byte) 0xee);
      mo = outcome(() -> {
        m.readAt(offset, a, off, len);
        return "";
      }) + describe(a) + outcome(() -> m.raf.getFilePointer());
      oo = outcome(() -> {
        o.read(offset, b, off, len);
        return "";
      }) + describe(b) + outcome(o::position);
    } else if (k < 70) { // positional read into a ByteBuffer
      int size = pick(r, sizes(length));
      long offset = pick(r, 0, 1, length / 2, length, length + 1, -1);
      int kind = r.nextInt(4);
      int at = kind == 2 ? Math.min(3, size) : 0;
      label = "read(" + offset + "," + new String[] {"heap", "direct", "heap@3", "readonly"}[kind] + "[" + size + "])";
      ByteBuffer x = buffer(kind, size, at);
      ByteBuffer y = buffer(kind, size, at);
      mo = outcome(() -> {
        m.readAt(offset, x);
        return "";
      }) + describe(x) + outcome(() -> m.raf.getFilePointer());
      oo = outcome(() -> {
        o.read(offset, y);
        return "";
      }) + describe(y) + outcome(o::position);
    } else if (k < 84) { // seek: inside [0, length] as RAF; outside, Lucene's contract
      long to = pick(r, 0, 1, length / 3, length - 1, length, length + 1, length + 9000, -1);
      label = "seek(" + to + ")";
      if (to >= 0 && to <= length || m.closed) {
        mo = outcome(() -> {
          if (m.closed) {
            throw new IllegalStateException();
          }
          m.raf.seek(to);
          return "";
        }) + outcome(() -> m.raf.getFilePointer());
      } else {
        String e = to < 0 ? IllegalArgumentException.class.getName() : EOFException.class.getName();
        mo = "raise:" + e + outcome(() -> m.raf.getFilePointer());
      }
      oo = outcome(() -> {
        o.seek(to);
        return "";
      }) + outcome(o::position);
    } else if (k < 90) {
      label = "position/length";
      mo = outcome(() -> m.raf.getFilePointer()) + outcome(() -> m.raf.length())
          + outcome(() -> m.ch.size());
      oo = outcome(o::position) + outcome(o::length) + outcome(o::length);
    } else if (k < 96) {
      label = "null/bad buffers";
      mo = outcome(() -> {
        m.readFully(null, 0, 1);
        return "";
      }) + outcome(() -> {
        m.readAt(0, null, 0, 1);
        return "";
      });
      oo = outcome(() -> {
        o.read((byte[]) null, 0, 1);
        return "";
      }) + outcome(() -> {
        o.read(0, (byte[]) null, 0, 1);
        return "";
      });
    } else if (k < 98) {
      label = "close";
      mo = outcome(() -> {
        m.raf.close();
        m.closed = true;
        return "";
      });
      oo = outcome(() -> {
        o.close();
        return "";
      });
    } else {
      label = "name";
      mo = "ok:" + o.name(); // the name stays readable after close
      oo = outcome(o::name);
    }
    done.add(label);
    if (m.closed) {
      // after close: ours throws IllegalStateException where the model throws its own (see the
      // class notes); every other part of the outcome must match
      mo = mo.replaceAll("raise:(java\\.io\\.IOException|java\\.nio\\.channels\\.ClosedChannelException"
          + "|java\\.lang\\.IllegalStateException|java\\.io\\.EOFException|java\\.lang\\.IllegalArgumentException)",
          "raise:closed");
      oo = oo.replace("raise:java.lang.IllegalStateException", "raise:closed");
      // a bad window or a null array on a closed input: ours reports the argument first, RAF
      // the close (both are the caller's mistake; the order is no contract)
      for (String arg : new String[] {"IndexOutOfBoundsException", "NullPointerException"}) {
        mo = mo.replace("raise:java.lang." + arg, "raise:closed");
        oo = oo.replace("raise:java.lang." + arg, "raise:closed");
      }
      if (label.startsWith("close") || label.equals("name")) {
        mo = mo.replace("raise:closed", "ok:");
      }
    }
    check(config, seed, done, mo, oo);
    return label;
  }

  static ByteBuffer buffer(int kind, int size, int at) {
    ByteBuffer b = kind == 1 ? ByteBuffer.allocateDirect(size) : ByteBuffer.allocate(size);
    while (b.hasRemaining()) {
      b.put((byte) 0xee);
    }
    b.clear().position(at);
    return kind == 3 ? b.asReadOnlyBuffer() : b;
  }

  static String flagsName(IOFlag[] flags) {
    return flags.length == 0 ? "default" : Arrays.toString(flags);
  }

  /** Opens, or prints why the file system refuses direct I/O and returns null (a loud skip). */
  static NativeInput openOrSkip(NativeDirectory d, String name, IOFlag[] flags) throws IOException {
    try {
      return d.openInput(name, flags);
    } catch (NativeIOException e) {
      if (Arrays.asList(flags).contains(IOFlag.REQUIRE_DIRECT)) {
        System.err.println("IoContractTest: SKIPPED the direct strategy: " + e.getMessage());
        return null;
      }
      throw e;
    }
  }

  @Test
  public void nativeInputIsARandomAccessFile() throws IOException {
    Path root = tmp.getRoot().toPath();
    int compared = 0;
    int configs = 0;
    try (NativeDirectory d = NativeDirectory.open(root)) {
      for (IOFlag[] flags : INPUT_MODES) {
        for (String derived : new String[] {"self", "clone", "slice"}) {
          configs++;
          for (int i = 0; i < LENGTHS.length; i++) {
            int length = LENGTHS[i];
            long seed = 1000L * i + 31L * configs;
            byte[] data = TestFiles.write(root, "in-" + length, length, seed);
            NativeInput base = openOrSkip(d, "in-" + length, flags);
            if (base == null) {
              break;
            }
            Random r = new Random(seed);
            NativeInput ours = base;
            Path modelFile = root.resolve("in-" + length);
            if (derived.equals("clone")) {
              if (length > 0) {
                base.seek(length / 3); // a clone starts at 0 whatever the original's cursor
              }
              ours = base.clone();
            } else if (derived.equals("slice")) {
              int off = r.nextInt(length + 1);
              int n = r.nextInt(length - off + 1);
              ours = base.slice(off, n);
              modelFile = root.resolve("slice-" + seed);
              Files.write(modelFile, Arrays.copyOfRange(data, off, off + n));
            }
            ModelInput m = new ModelInput(modelFile);
            int modelLength = (int) Files.size(modelFile);
            String config = flagsName(flags) + "/" + derived + "/len=" + length;
            List<String> done = new ArrayList<>();
            try {
              for (int s = 0; s < STEPS; s++) {
                inputStep(r, modelLength, m, ours, done, config, seed);
                compared++;
              }
            } finally {
              m.raf.close();
              ours.close();
              base.close();
            }
          }
        }
      }
    }
    System.err.println("IoContractTest: NativeInput: " + compared + " steps compared over "
        + configs + " configurations");
    assertTrue(compared >= STEPS * LENGTHS.length * 18);
  }

  // ---- NativeOutput vs FileOutputStream / FileChannel ----

  static String outputStep(Random r, FileOutputStream m, boolean[] mClosed, NativeOutput o,
      List<String> done, String config, long seed) {
    int k = r.nextInt(100);
    String label;
    String mo;
    String oo;
    FileChannel ch = m.getChannel();
    long dataSeed = r.nextLong();
    if (k < 30) {
      int size = pick(r, 0, 1, 7, 100, 4095, 4096, 8191, 8192, 8193, 20_000, 70_000);
      int off = pick(r, 0, 0, 3, -1, size + 1);
      int len = pick(r, size - Math.max(off, 0), 0, 1, -1, size + 1);
      byte[] src = TestFiles.pattern(size, dataSeed);
      label = "write(byte[" + size + "]," + off + "," + len + ")";
      mo = outcome(() -> {
        m.write(src, off, len);
        return "";
      });
      oo = outcome(() -> {
        o.write(src, off, len);
        return "";
      });
    } else if (k < 40) {
      int size = pick(r, 0, 1, 8192, 9000);
      byte[] src = TestFiles.pattern(size, dataSeed);
      label = "write(byte[" + size + "])";
      mo = outcome(() -> {
        m.write(src);
        return "";
      });
      oo = outcome(() -> {
        o.write(src);
        return "";
      });
    } else if (k < 55) {
      int b = pick(r, 0, 1, 255, 256, 0x1ff, -1);
      label = "writeByte(" + b + ")";
      mo = outcome(() -> {
        m.write(b);
        return "";
      });
      oo = outcome(() -> {
        o.writeByte(b);
        return "";
      });
    } else if (k < 72) {
      int size = pick(r, 0, 1, 100, 8191, 8192, 8193, 70_000);
      int kind = r.nextInt(4);
      int at = Math.min(pick(r, 0, 3), size);
      label = "write(" + new String[] {"heap", "direct", "heap-slice", "readonly"}[kind] + "[" + size + "]@" + at + ")";
      ByteBuffer x = source(kind, size, at, dataSeed);
      ByteBuffer y = source(kind, size, at, dataSeed);
      mo = outcome(() -> {
        while (x.hasRemaining()) {
          ch.write(x);
        }
        return "";
      }) + describe(x);
      oo = outcome(() -> {
        o.write(y);
        return "";
      }) + describe(y);
    } else if (k < 85) {
      label = "position";
      mo = outcome(ch::position);
      oo = outcome(o::position);
    } else if (k < 93) {
      label = "flush";
      mo = outcome(() -> {
        m.flush();
        return "";
      });
      oo = outcome(() -> {
        o.flush();
        return "";
      });
    } else if (k < 96) {
      label = "null";
      mo = outcome(() -> {
        m.write((byte[]) null, 0, 1);
        return "";
      });
      oo = outcome(() -> {
        o.write((byte[]) null, 0, 1);
        return "";
      });
    } else {
      label = "close";
      mo = outcome(() -> {
        m.close();
        mClosed[0] = true;
        return "";
      });
      oo = outcome(() -> {
        o.close();
        return "";
      });
    }
    done.add(label);
    if (mClosed[0]) {
      // see the class notes: ours throws IllegalStateException; FileOutputStream throws
      // IOException, its channel ClosedChannelException, and its flush does nothing
      mo = mo.replaceAll("raise:(java\\.io\\.IOException|java\\.nio\\.channels\\.ClosedChannelException)",
          "raise:closed");
      if (label.equals("flush")) {
        mo = "raise:closed";
      }
      if (label.startsWith("write") && mo.startsWith("ok:")) {
        mo = "raise:closed" + mo.substring(3); // FileOutputStream takes 0 bytes after close
      }
      oo = oo.replace("raise:java.lang.IllegalStateException", "raise:closed");
    }
    check(config, seed, done, mo, oo);
    return label;
  }

  static ByteBuffer source(int kind, int size, int at, long seed) {
    byte[] data = TestFiles.pattern(size + 8, seed);
    ByteBuffer b;
    if (kind == 1) {
      b = ByteBuffer.allocateDirect(size).put(data, 0, size).clear();
    } else if (kind == 2) {
      b = ByteBuffer.wrap(data, 4, size).slice(); // a non-zero arrayOffset
    } else {
      b = ByteBuffer.wrap(data, 0, size).slice();
    }
    b.position(at);
    return kind == 3 ? b.asReadOnlyBuffer() : b;
  }

  @Test
  public void nativeOutputIsAFileOutputStream() throws IOException {
    Path root = tmp.getRoot().toPath();
    int compared = 0;
    try (NativeDirectory d = NativeDirectory.open(root)) {
      int mode = 0;
      for (IOFlag[] flags : OUTPUT_MODES) {
        mode++;
        for (long seed = 0; seed < 8; seed++) {
          String name = "out-" + mode + "-" + seed;
          NativeOutput ours;
          try {
            ours = d.createOutput(name, flags);
          } catch (NativeIOException e) {
            if (Arrays.asList(flags).contains(IOFlag.REQUIRE_DIRECT)) {
              System.err.println("IoContractTest: SKIPPED the direct output: " + e.getMessage());
              break;
            }
            throw e;
          }
          Path modelFile = root.resolve("model-" + name);
          FileOutputStream m = new FileOutputStream(modelFile.toFile());
          boolean[] mClosed = {false};
          Random r = new Random(seed);
          List<String> done = new ArrayList<>();
          String config = "output " + flagsName(flags);
          try {
            for (int s = 0; s < STEPS; s++) {
              outputStep(r, m, mClosed, ours, done, config, seed);
              compared++;
            }
          } finally {
            m.close();
            ours.close();
          }
          assertArrayEquals(config + " seed=" + seed + ": the files differ after " + done,
              Files.readAllBytes(modelFile), Files.readAllBytes(root.resolve(name)));
        }
      }
    }
    System.err.println("IoContractTest: NativeOutput: " + compared + " steps compared");
    assertTrue(compared >= STEPS * 8 * 2);
  }

  // ---- NativeDirectory vs java.nio.file.Files ----

  static final String[] GOOD_NAMES = {"a", "b.bin", ".hidden", "\u00dcn\u00efc\u00f6d\u00e9-\u540d\u524d",
                                      "U\u0308nicode", "sub", "x".repeat(255), "\u00e9".repeat(127) + "z",
                                      "\ud83d\ude00-astral"};
  static final String[] LONG_NAMES = {"y".repeat(256), "\u00e9".repeat(128)};

  static List<String> regularFiles(Path dir) throws IOException {
    List<String> out = new ArrayList<>();
    try (java.util.stream.Stream<Path> s = Files.list(dir)) {
      s.filter(p -> Files.isRegularFile(p, java.nio.file.LinkOption.NOFOLLOW_LINKS))
          .forEach(p -> out.add(p.getFileName().toString()));
    }
    // by UTF-8 bytes (String.compareTo orders UTF-16 units: astral names would differ)
    out.sort((x, y) -> Arrays.compareUnsigned(x.getBytes(java.nio.charset.StandardCharsets.UTF_8),
        y.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    return out;
  }

  /** The Files calls a NativeDirectory stands for. */
  static Object modelDir(Path dir, String op, String a, String b, boolean overwrite, byte[] data)
      throws IOException {
    Path pa = dir.resolve(a == null ? "." : a);
    switch (op) {
      case "create":
        try (java.io.OutputStream o = overwrite ? Files.newOutputStream(pa)
            : Files.newOutputStream(pa, java.nio.file.StandardOpenOption.CREATE_NEW,
                java.nio.file.StandardOpenOption.WRITE)) {
          o.write(data);
        }
        return "";
      case "read":
        return Files.readAllBytes(pa);
      case "list":
        return regularFiles(dir);
      case "exists":
        return Files.isRegularFile(pa, java.nio.file.LinkOption.NOFOLLOW_LINKS);
      case "length":
        return Files.size(pa);
      case "delete":
        Files.delete(pa);
        return "";
      case "rename":
        Files.move(pa, dir.resolve(b), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        return "";
      case "fsync":
        try (FileChannel c = FileChannel.open(pa, java.nio.file.StandardOpenOption.READ)) {
          c.force(true);
        }
        return "";
      default:
        throw new AssertionError(op);
    }
  }

  static Object oursDir(NativeDirectory d, String op, String a, String b, boolean overwrite,
      byte[] data) throws IOException {
    switch (op) {
      case "create":
        try (NativeOutput o = overwrite ? d.createOutput(a, IOFlag.OVERWRITE) : d.createOutput(a)) {
          o.write(data);
        }
        return "";
      case "read":
        try (NativeInput in = d.openInput(a)) {
          byte[] all = new byte[(int) in.length()];
          in.read(all);
          return all;
        }
      case "list":
        return Arrays.asList(d.list());
      case "exists":
        return d.exists(a);
      case "length":
        return d.length(a);
      case "delete":
        d.delete(a);
        return "";
      case "rename":
        d.rename(a, b);
        return "";
      case "fsync":
        d.fsync(a);
        return "";
      default:
        throw new AssertionError(op);
    }
  }

  @Test
  public void nativeDirectoryIsTheFilesCalls() throws IOException {
    Path mine = tmp.newFolder("nd").toPath();
    Path model = tmp.newFolder("files").toPath();
    Files.createDirectory(mine.resolve("sub"));
    Files.createDirectory(model.resolve("sub"));
    String[] ops = {"create", "create", "read", "list", "exists", "length", "delete", "rename",
                    "rename", "fsync"};
    int compared = 0;
    try (NativeDirectory d = NativeDirectory.open(mine)) {
      for (long seed = 0; seed < 6; seed++) {
        Random r = new Random(seed);
        List<String> done = new ArrayList<>();
        for (int s = 0; s < STEPS; s++) {
          String op = ops[r.nextInt(ops.length)];
          String a = r.nextInt(12) == 0 ? LONG_NAMES[r.nextInt(LONG_NAMES.length)]
                                        : GOOD_NAMES[r.nextInt(GOOD_NAMES.length)];
          String b = GOOD_NAMES[r.nextInt(GOOD_NAMES.length)];
          boolean overwrite = r.nextBoolean();
          byte[] data = TestFiles.pattern(r.nextInt(3000), r.nextLong());
          done.add(op + "(" + (a.length() > 20 ? a.substring(0, 8) + "...[" + a.length() + "]" : a)
              + (op.equals("rename") ? ", " + b : "") + (op.equals("create") ? ", overwrite=" + overwrite : "") + ")");
          boolean isLong = a.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > 255;
          boolean isDir = !isLong && Files.isDirectory(model.resolve(a))
              || op.equals("rename") && Files.isDirectory(model.resolve(b));
          String oo = outcome(() -> oursDir(d, op, a, b, overwrite, data));
          compared++;
          if (isDir && !isLong && (op.equals("delete") || op.equals("length") || op.equals("fsync"))) {
            // a directory is not an index file: refused (Files.delete would remove an empty one,
            // Files.size gives its inode size); the model is not run
            check("directory", seed, done, "raise:" + java.nio.file.AccessDeniedException.class.getName(), oo);
            continue;
          }
          String mo = outcome(() -> modelDir(model, op, a, b, overwrite, data));
          if (isLong && !op.equals("list")) {
            // names over 255 bytes: IllegalArgumentException, as for every invalid name (Java's
            // own InvalidPathException is one too), checked before the OS; Files reports
            // FileSystemException("File name too long") or, for a rename, NoSuchFileException first
            // (Files.isRegularFile answers false for any failure)
            assertTrue(done + ": " + mo, mo.startsWith("raise:java.nio.file.")
                || op.equals("exists") && mo.equals("ok:false"));
            check("directory", seed, done, "raise:java.lang.IllegalArgumentException", oo);
            continue;
          }
          if (isDir && (mo.startsWith("raise:java.nio.file.") || mo.equals("raise:java.io.IOException"))
              && !mo.equals(oo)) {
            // a directory where a file is expected: AccessDeniedException (documented in the
            // README's table) where Files throws FileSystemException or IOException ("Is a
            // directory"), or for a rename NoSuchFileException (ENOTDIR); both refuse, so the
            // folders stay equal
            check("directory", seed, done, "refused", oo.startsWith("raise:java.nio.file.") ? "refused" : oo);
            continue;
          }
          check("directory", seed, done, mo, oo);
        }
        assertEquals(regularFiles(model), Arrays.asList(d.list()));
        assertEquals(regularFiles(model), regularFiles(mine));
        for (String n : d.list()) {
          assertArrayEquals(n, Files.readAllBytes(model.resolve(n)), Files.readAllBytes(mine.resolve(n)));
        }
      }
    }
    System.err.println("IoContractTest: NativeDirectory: " + compared + " steps compared");
  }

  @Test
  public void nativeDirectoryNeverLeavesItsFolder() throws IOException {
    Path outer = tmp.newFolder("outer").toPath();
    Path inner = Files.createDirectories(outer.resolve("inner"));
    Files.createDirectory(inner.resolve("sub"));
    Files.write(inner.resolve("a"), new byte[] {1});
    Files.write(inner.resolve("sub").resolve("a"), new byte[] {2});
    Files.write(outer.resolve("escape"), new byte[] {3});
    List<String> before;
    try (java.util.stream.Stream<Path> s = Files.walk(outer)) {
      before = s.map(Path::toString).sorted().collect(java.util.stream.Collectors.toList());
    }
    try (NativeDirectory d = NativeDirectory.open(inner)) {
      for (String bad : new String[] {"a/b", "../escape", "..", ".", "", "sub/a", "/abs", "a\0b"}) {
        for (String op : new String[] {"create", "read", "exists", "length", "delete", "rename", "fsync"}) {
          for (boolean overwrite : new boolean[] {false, true}) {
            String oo = outcome(() -> oursDir(d, op, bad, "a", overwrite, new byte[] {9}));
            assertEquals(op + "(" + bad + ")", "raise:java.lang.IllegalArgumentException", oo);
          }
          String to = outcome(() -> oursDir(d, "rename", "a", bad, false, null));
          assertEquals("rename(a, " + bad + ")", "raise:java.lang.IllegalArgumentException", to);
        }
      }
    }
    List<String> after;
    try (java.util.stream.Stream<Path> s = Files.walk(outer)) {
      after = s.map(Path::toString).sorted().collect(java.util.stream.Collectors.toList());
    }
    assertEquals(before, after);
    assertArrayEquals(new byte[] {3}, Files.readAllBytes(outer.resolve("escape")));
    assertArrayEquals(new byte[] {1}, Files.readAllBytes(inner.resolve("a")));
  }
}
