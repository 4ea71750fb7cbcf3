package io.nativedir.bench;

import io.nativedir.IOFlag;
import io.nativedir.NativeDirectory;
import io.nativedir.NativeInput;
import io.nativedir.NativeOutput;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;

/**
 * The Java side of the workload of record: nativedir beside what a Java user would pick instead
 * (FileChannel, MappedByteBuffer), in one process and one run, rows of a group measured in turn
 * so that machine noise hits them alike. Writes java.json in the shared format.
 *
 * <pre>java -cp nativedir.jar:nativedir-bench.jar io.nativedir.bench.JavaBench
 *     --out DIR [--dir SCRATCH_PARENT] [--mib 64] [--runs 15] [--random 100000] [--quick]
 *     [--only GROUP]</pre>
 */
public final class JavaBench {
  private static final int CHUNK = 64 << 10; // as the C suite: sequential chunk
  private static final int SMALL = 64; // random read length
  private static final int THREADS = 4;
  private static final int WARMUP = 3;

  private final long size;
  private final int runs;
  private final long[] offsets;
  private final Path dir;
  private final long byteSum;
  private final long randomSum;
  private final List<Row> rows = new ArrayList<>();
  private String only; // --only GROUP: measure one group (for investigating it)

  private JavaBench(Path dir, long size, int runs, int randomReads, byte[] data) {
    this.dir = dir;
    this.size = size;
    this.runs = runs;
    Random r = new Random(20260101);
    offsets = new long[randomReads];
    for (int i = 0; i < randomReads; i++) {
      offsets[i] = (long) (r.nextDouble() * (size - SMALL + 1));
    }
    long s = 0;
    for (byte b : data) {
      s += b & 0xff;
    }
    byteSum = s;
    long rs = 0;
    for (long off : offsets) {
      for (int k = 0; k < SMALL; k += 8) {
        rs += data[(int) off + k] & 0xff;
      }
    }
    randomSum = rs;
  }

  /** One timed workload; returns a checksum that must match its group's expectation. */
  interface Work {
    long run() throws Exception;
  }

  static final class Row {
    final String group, name, baseline, target, note;
    final Work work;
    final long expect;
    final double[] ms;
    int n;
    double median, min, max;
    Double ratio;
    Boolean met;

    Row(String group, String name, String baseline, String target, String note, long expect,
        Work work, int runs) {
      this.group = group;
      this.name = name;
      this.baseline = baseline;
      this.target = target;
      this.note = note;
      this.expect = expect;
      this.work = work;
      this.ms = new double[runs];
    }
  }

  private Row row(String group, String name, String baseline, String target, String note,
      long expect, Work work) {
    Row r = new Row(group, name, baseline, target, note, expect, work, runs);
    rows.add(r);
    return r;
  }

  /** Warm-up, then `runs` rounds in which every row of the group runs once, in turn. */
  private void measure(String group) throws Exception {
    if (only != null && !only.equals(group)) {
      rows.removeIf(r -> r.group.equals(group));
      return;
    }
    List<Row> g = new ArrayList<>();
    for (Row r : rows) {
      if (r.group.equals(group)) {
        g.add(r);
      }
    }
    for (int w = 0; w < WARMUP; w++) {
      for (Row r : g) {
        check(r, r.work.run());
      }
    }
    for (int i = 0; i < runs; i++) {
      for (Row r : g) {
        long t0 = System.nanoTime();
        long sum = r.work.run();
        r.ms[r.n++] = (System.nanoTime() - t0) / 1e6;
        check(r, sum);
      }
    }
    for (Row r : g) {
      double[] s = Arrays.copyOf(r.ms, r.n);
      Arrays.sort(s);
      r.min = s[0];
      r.max = s[s.length - 1];
      r.median = s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }
    for (Row r : g) {
      if (r.baseline != null) {
        Row b = g.stream().filter(x -> x.name.equals(r.baseline)).findFirst()
            .orElseThrow(() -> new IllegalStateException("no baseline row " + r.baseline));
        r.ratio = r.median / b.median;
        if (r.target != null) {
          r.met = r.ratio <= Double.parseDouble(r.target.replace("<=", "").trim());
        }
      }
      System.out.printf("%-22s %-52s median %9.3f ms  [%8.3f .. %8.3f]%s%n", r.group, r.name,
          r.median, r.min, r.max, r.ratio == null ? "  (baseline)"
              : String.format("  ratio %.3f%s", r.ratio, r.met == null ? "" : r.met ? " met" : " NOT MET"));
    }
  }

  private static void check(Row r, long sum) {
    if (sum != r.expect) {
      throw new IllegalStateException(r.group + " / " + r.name + ": checksum " + sum
          + ", expected " + r.expect + ": the workload read wrong bytes");
    }
  }

  // ---- workloads ----

  private long sumBytes(ByteBuffer b, int n) {
    long s = 0;
    for (int i = 0; i < n; i++) {
      s += b.get(i) & 0xff;
    }
    return s;
  }

  private static long sumBytes(byte[] b, int n) {
    long s = 0;
    for (int i = 0; i < n; i++) {
      s += b[i] & 0xff;
    }
    return s;
  }

  private static long sample(byte[] b) {
    long s = 0;
    for (int k = 0; k < SMALL; k += 8) {
      s += b[k] & 0xff;
    }
    return s;
  }

  private static long sample(ByteBuffer b) {
    long s = 0;
    for (int k = 0; k < SMALL; k += 8) {
      s += b.get(k) & 0xff;
    }
    return s;
  }

  private void benchmarks(NativeDirectory nd, FileChannel ch, MappedByteBuffer mbb) throws Exception {
    String file = "data";
    NativeInput buffered = nd.openInput(file, IOFlag.RANDOM);
    NativeInput sequential = nd.openInput(file, IOFlag.SEQUENTIAL);
    NativeInput mapped = nd.openInput(file, IOFlag.MMAP);
    ByteBuffer direct64 = ByteBuffer.allocateDirect(SMALL);
    byte[] array64 = new byte[SMALL];
    ByteBuffer directChunk = ByteBuffer.allocateDirect(CHUNK);
    byte[] arrayChunk = new byte[CHUNK];
    int n = offsets.length;

    // ---- ReadRandom ----
    String g = "ReadRandom";
    String note = n + " reads of 64 bytes at random offsets, page cache warm";
    String fc = "FileChannel.read(direct ByteBuffer, pos)";
    String mb = "MappedByteBuffer.get(pos, byte[])";
    row(g, fc, null, null, note, randomSum, () -> {
      long s = 0;
      for (long off : offsets) {
        direct64.clear();
        while (direct64.hasRemaining()) {
          if (ch.read(direct64, off + direct64.position()) < 0) {
            throw new IOException("EOF");
          }
        }
        s += sample(direct64);
      }
      return s;
    });
    row(g, "nativedir read(pos, direct ByteBuffer) (buffered)", fc, "<= 1.2", note, randomSum, () -> {
      long s = 0;
      for (long off : offsets) {
        direct64.clear();
        buffered.read(off, direct64);
        s += sample(direct64);
      }
      return s;
    });
    row(g, "nativedir read(pos, byte[]) (buffered)", fc, null, note, randomSum, () -> {
      long s = 0;
      for (long off : offsets) {
        buffered.read(off, array64);
        s += sample(array64);
      }
      return s;
    });
    row(g, mb, null, null, note, randomSum, () -> {
      long s = 0;
      for (long off : offsets) {
        mbb.get((int) off, array64);
        s += sample(array64);
      }
      return s;
    });
    row(g, "nativedir read(pos, byte[]) (mapped)", mb, "<= 1.2", note, randomSum, () -> {
      long s = 0;
      for (long off : offsets) {
        mapped.read(off, array64);
        s += sample(array64);
      }
      return s;
    });
    measure(g);

    // ---- ReadSequential ----
    g = "ReadSequential";
    note = "the whole file front to back in 64 KiB chunks";
    String mbs = "MappedByteBuffer.get(byte[]) 64 KiB";
    String fcs = "FileChannel.read(direct ByteBuffer) 64 KiB";
    row(g, mbs, null, null, note, byteSum, () -> {
      long s = 0;
      ByteBuffer b = mbb.duplicate();
      while (b.hasRemaining()) {
        int k = Math.min(CHUNK, b.remaining());
        b.get(arrayChunk, 0, k);
        s += sumBytes(arrayChunk, k);
      }
      return s;
    });
    row(g, "nativedir read(byte[]) (mapped)", mbs, "<= 1.2", note, byteSum, () -> {
      long s = 0;
      mapped.seek(0);
      for (long left = size; left > 0; ) {
        int k = (int) Math.min(CHUNK, left);
        mapped.read(arrayChunk, 0, k);
        s += sumBytes(arrayChunk, k);
        left -= k;
      }
      return s;
    });
    row(g, fcs, null, null, note, byteSum, () -> {
      long s = 0;
      for (long pos = 0; pos < size; ) {
        directChunk.clear();
        int k = ch.read(directChunk, pos);
        s += sumBytes(directChunk, k);
        pos += k;
      }
      return s;
    });
    row(g, "nativedir read(direct ByteBuffer) (sequential)", fcs, null, note, byteSum, () -> {
      long s = 0;
      sequential.seek(0);
      for (long left = size; left > 0; ) {
        int k = (int) Math.min(CHUNK, left);
        directChunk.clear().limit(k);
        sequential.read(directChunk);
        s += sumBytes(directChunk, k);
        left -= k;
      }
      return s;
    });
    measure(g);

    // ---- ReadByteSequential ----
    g = "ReadByteSequential";
    note = "the whole file one byte at a time through the cursor";
    String mbb1 = "MappedByteBuffer.get()";
    row(g, mbb1, null, null, note, byteSum, () -> {
      long s = 0;
      ByteBuffer b = mbb.duplicate();
      for (long i = 0; i < size; i++) {
        s += b.get() & 0xff;
      }
      return s;
    });
    row(g, "nativedir readByte (mapped)", mbb1, "<= 1.2", note, byteSum, () -> {
      long s = 0;
      mapped.seek(0);
      for (long i = 0; i < size; i++) {
        s += mapped.readByte() & 0xff;
      }
      return s;
    });
    row(g, "nativedir readByte (buffered)", mbb1, null,
        note + "; a native refill every 64 KiB, and the loop around a call cannot be optimised as"
            + " the mapped one is", byteSum, () -> {
      long s = 0;
      sequential.seek(0);
      for (long i = 0; i < size; i++) {
        s += sequential.readByte() & 0xff;
      }
      return s;
    });
    measure(g);

    // ---- ConcurrentCloneReads ----
    g = "ConcurrentCloneReads";
    note = THREADS + " threads, each " + n / THREADS + " random 64-byte reads";
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    long quarterSum = 0;
    int per = n / THREADS;
    long[] partSums = new long[THREADS];
    for (int t = 0; t < THREADS; t++) {
      for (int i = t * per; i < (t + 1) * per; i++) {
        byte[] d = new byte[SMALL];
        mbb.get((int) offsets[i], d);
        partSums[t] += sample(d);
      }
      quarterSum += partSums[t];
    }
    String fcc = "FileChannel.read(direct ByteBuffer, pos), shared channel";
    row(g, fcc, null, null, note, quarterSum, () -> parallel(pool, t -> {
      ByteBuffer b = ByteBuffer.allocateDirect(SMALL);
      long s = 0;
      for (int i = t * per; i < (t + 1) * per; i++) {
        b.clear();
        while (b.hasRemaining()) {
          ch.read(b, offsets[i] + b.position());
        }
        s += sample(b);
      }
      return s;
    }));
    row(g, "nativedir read(pos, direct ByteBuffer), a clone per thread", fcc, null, note, quarterSum,
        () -> parallel(pool, t -> {
          ByteBuffer b = ByteBuffer.allocateDirect(SMALL);
          long s = 0;
          try (NativeInput c = buffered.clone()) {
            for (int i = t * per; i < (t + 1) * per; i++) {
              b.clear();
              c.read(offsets[i], b);
              s += sample(b);
            }
          }
          return s;
        }));
    row(g, "nativedir read(pos, byte[]) (mapped), a clone per thread", fcc, null, note, quarterSum,
        () -> parallel(pool, t -> {
          byte[] b = new byte[SMALL];
          long s = 0;
          try (NativeInput c = mapped.clone()) {
            for (int i = t * per; i < (t + 1) * per; i++) {
              c.read(offsets[i], b);
              s += sample(b);
            }
          }
          return s;
        }));
    measure(g);
    pool.shutdown();

    // ---- Write ----
    g = "Write";
    note = "the whole file in 64 KiB chunks, then close (no fsync)";
    byte[] src = new byte[CHUNK];
    ByteBuffer srcDirect = ByteBuffer.allocateDirect(CHUNK);
    new Random(3).nextBytes(src);
    srcDirect.put(src).flip();
    long writeSum = (size / CHUNK) * sumBytes(src, CHUNK);
    String fcw = "FileChannel.write(direct ByteBuffer)";
    row(g, fcw, null, null, note, writeSum, () -> {
      Path p = dir.resolve("w-fc");
      try (FileChannel w = FileChannel.open(p, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
          StandardOpenOption.TRUNCATE_EXISTING)) {
        for (long done = 0; done + CHUNK <= size; done += CHUNK) {
          srcDirect.clear();
          while (srcDirect.hasRemaining()) {
            w.write(srcDirect);
          }
        }
      }
      return writeSum;
    });
    row(g, "nativedir write(byte[])", fcw, null, note, writeSum, () -> {
      try (NativeOutput out = nd.createOutput("w-nd", IOFlag.OVERWRITE)) {
        for (long done = 0; done + CHUNK <= size; done += CHUNK) {
          out.write(src);
        }
      }
      return writeSum;
    });
    row(g, "nativedir write(byte[]) (merge: direct I/O)", fcw, null,
        note + "; direct I/O: the bytes reach the device instead of the page cache, which MERGE"
            + " exists to leave alone", writeSum, () -> {
      try (NativeOutput out = nd.createOutput("w-merge", IOFlag.OVERWRITE, IOFlag.MERGE)) {
        for (long done = 0; done + CHUNK <= size; done += CHUNK) {
          out.write(src);
        }
      }
      return writeSum;
    });
    measure(g);

    buffered.close();
    sequential.close();
    mapped.close();
  }

  interface PerThread {
    long run(int thread) throws Exception;
  }

  private static long parallel(ExecutorService pool, PerThread body) throws Exception {
    List<Future<Long>> fs = new ArrayList<>();
    for (int t = 0; t < THREADS; t++) {
      int id = t;
      fs.add(pool.submit((Callable<Long>) () -> body.run(id)));
    }
    long s = 0;
    for (Future<Long> f : fs) {
      s += f.get();
    }
    return s;
  }

  // ---- output ----

  private static String json(String s) {
    if (s == null) {
      return "null";
    }
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') {
        b.append('\\').append(c);
      } else if (c < 0x20) {
        b.append(String.format("\\u%04x", (int) c));
      } else {
        b.append(c);
      }
    }
    return b.append('"').toString();
  }

  private static String num(double d) {
    return String.format(java.util.Locale.ROOT, "%.4f", d);
  }

  private void write(Path out, String host) throws IOException {
    StringBuilder b = new StringBuilder();
    b.append("{\"suite\": \"java\", \"file_mib\": ").append(size >> 20)
        .append(", \"host\": ").append(json(host))
        .append(", \"date\": ").append(json(java.time.Instant.now().toString()))
        .append(", \"runtime\": ").append(json("Java " + System.getProperty("java.version")
            + " (" + System.getProperty("java.vm.name") + ")"))
        .append(",\n \"results\": [\n");
    for (int i = 0; i < rows.size(); i++) {
      Row r = rows.get(i);
      b.append("   {\"group\": ").append(json(r.group)).append(", \"name\": ").append(json(r.name))
          .append(", \"unit\": \"ms\", \"median\": ").append(num(r.median))
          .append(", \"min\": ").append(num(r.min)).append(", \"max\": ").append(num(r.max))
          .append(", \"runs\": ").append(r.n)
          .append(", \"baseline\": ").append(json(r.baseline))
          .append(", \"ratio\": ").append(r.ratio == null ? "null" : num(r.ratio))
          .append(", \"target\": ").append(json(r.target))
          .append(", \"met\": ").append(r.met == null ? "null" : r.met.toString())
          .append(", \"alloc_bytes\": null, \"note\": ").append(json(r.note)).append('}')
          .append(i + 1 < rows.size() ? ",\n" : "\n");
    }
    b.append(" ]}\n");
    Files.createDirectories(out.getParent());
    Files.writeString(out, b.toString());
  }

  public static void main(String[] args) throws Exception {
    Path out = null;
    Path scratchParent = Paths.get(System.getProperty("java.io.tmpdir"));
    long mib = 64;
    int runs = 15;
    int random = 100_000;
    String only = null;
    String host = System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
        + System.getProperty("os.arch");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--out": out = Paths.get(args[++i]); break;
        case "--dir": scratchParent = Paths.get(args[++i]); break;
        case "--mib": mib = Long.parseLong(args[++i]); break;
        case "--runs": runs = Integer.parseInt(args[++i]); break;
        case "--random": random = Integer.parseInt(args[++i]); break;
        case "--host": host = args[++i]; break;
        case "--only": only = args[++i]; break;
        case "--quick": mib = 8; runs = 3; random = 5000; break;
        default: throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    if (out == null) {
      throw new IllegalArgumentException("--out DIR is required");
    }
    long size = mib << 20;
    Files.createDirectories(scratchParent);
    Path scratch = Files.createTempDirectory(scratchParent, "nd-java-bench-");
    try {
      byte[] data = new byte[(int) size];
      new Random(7).nextBytes(data);
      Files.write(scratch.resolve("data"), data);
      JavaBench b = new JavaBench(scratch, size, runs, random, data);
      b.only = only;
      data = null;
      try (NativeDirectory nd = NativeDirectory.open(scratch);
           FileChannel ch = FileChannel.open(scratch.resolve("data"), StandardOpenOption.READ)) {
        MappedByteBuffer mbb = ch.map(FileChannel.MapMode.READ_ONLY, 0, size);
        b.benchmarks(nd, ch, mbb);
      }
      b.write(out.resolve("java.json"), host);
      System.out.println("wrote " + out.resolve("java.json"));
    } finally {
      try (Stream<Path> s = Files.walk(scratch)) {
        s.sorted(Comparator.reverseOrder()).forEach(p -> {
          try {
            Files.delete(p);
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        });
      }
    }
  }
}
