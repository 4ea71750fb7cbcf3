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
 *     [--only GROUP] [--memlimit ND_MEMLIMIT]</pre> (--only Ring: the two ring groups of RingBench
 * alone; --only LargerThanMemory: LtmBench's group, which runs inside nd_memlimit's cgroup)
 */
public final class JavaBench {
  private static final int CHUNK = 64 << 10; // as the C suite: sequential chunk
  private static final int SMALL = 64; // random read length
  private static final int THREADS = 4;
  private static final int WARMUP = 3;
  private static final int SLICES = 16; // see measure()

  private final long size;
  private final int runs;
  private final long[] offsets;
  private final Path dir;
  private final long byteSum;
  private final long randomSum;
  private final List<Row> rows = new ArrayList<>();
  private final List<String> jsonRows = new ArrayList<>(); // RingBench's and LtmBench's, as JSON
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

  /**
   * One timed workload, in `slices` parts: part `slice` does its share and returns its share of
   * a checksum; the shares of one run must add up to the group's expectation.
   */
  interface Work {
    long run(int slice, int slices) throws Exception;
  }

  /** [from, to) of `n` items for part `slice` of `slices`. */
  private static long from(long n, int slice, int slices) {
    return n * slice / slices;
  }

  static final class Row {
    final String group, name, baseline, target, note;
    final Work work;
    final long expect;
    final double[] ms;
    int n;
    double median, min, max;
    Double ratio;
    /** Median of the per-round ratios to the baseline (rows of a round run slice by slice). */
    Double ratioPaired;
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

  /**
   * Warm-up, then `runs` rounds. Within a round every row does 1/slices of its work in turn, slice
   * after slice, so a load spike on this shared machine lands on all rows alike instead of on
   * whichever row happened to be running; a row's time for the round is the sum of its slices.
   */
  private void measure(String group, int slices) throws Exception {
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
        long sum = 0;
        for (int k = 0; k < slices; k++) {
          sum += r.work.run(k, slices);
        }
        check(r, sum);
      }
    }
    long[] sums = new long[g.size()];
    long[] nanos = new long[g.size()];
    for (int i = 0; i < runs; i++) {
      Arrays.fill(sums, 0);
      Arrays.fill(nanos, 0);
      for (int k = 0; k < slices; k++) {
        for (int j = 0; j < g.size(); j++) {
          long t0 = System.nanoTime();
          sums[j] += g.get(j).work.run(k, slices);
          nanos[j] += System.nanoTime() - t0;
        }
      }
      for (int j = 0; j < g.size(); j++) {
        Row r = g.get(j);
        check(r, sums[j]);
        r.ms[r.n++] = nanos[j] / 1e6;
      }
    }
    for (Row r : g) {
      double[] s = Arrays.copyOf(r.ms, r.n);
      Arrays.sort(s);
      r.min = s[0];
      r.max = s[s.length - 1];
      r.median = medianOfSorted(s);
    }
    for (Row r : g) {
      if (r.baseline != null) {
        Row b = g.stream().filter(x -> x.name.equals(r.baseline)).findFirst()
            .orElseThrow(() -> new IllegalStateException("no baseline row " + r.baseline));
        r.ratio = r.median / b.median;
        double[] per = new double[r.n];
        for (int i = 0; i < r.n; i++) {
          per[i] = r.ms[i] / b.ms[i];
        }
        Arrays.sort(per);
        r.ratioPaired = medianOfSorted(per);
        if (r.target != null) {
          // judged on the per-round ratio, as every suite judges its targets: a row and its
          // baseline share each round's machine, the ratio of the medians need not
          r.met = r.ratioPaired <= Double.parseDouble(r.target.replace("<=", "").trim());
        }
      }
      System.out.printf("%-22s %-52s median %9.3f ms  [%8.3f .. %8.3f]%s%n", r.group, r.name,
          r.median, r.min, r.max, r.ratio == null ? "  (baseline)"
              : String.format("  ratio %.3f, per-round %.3f%s", r.ratio, r.ratioPaired,
                  r.met == null ? "" : r.met ? " met" : " NOT MET"));
    }
  }

  private static double medianOfSorted(double[] s) {
    return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
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
    row(g, fc, null, null, note, randomSum, (k, ks) -> {
      long s = 0;
      for (int i = (int) from(n, k, ks), end = (int) from(n, k + 1, ks); i < end; i++) {
        direct64.clear();
        while (direct64.hasRemaining()) {
          if (ch.read(direct64, offsets[i] + direct64.position()) < 0) {
            throw new IOException("EOF");
          }
        }
        s += sample(direct64);
      }
      return s;
    });
    row(g, "nativedir read(pos, direct ByteBuffer) (buffered)", fc, "<= 1.2", note, randomSum,
        (k, ks) -> {
          long s = 0;
          for (int i = (int) from(n, k, ks), end = (int) from(n, k + 1, ks); i < end; i++) {
            direct64.clear();
            buffered.read(offsets[i], direct64);
            s += sample(direct64);
          }
          return s;
        });
    row(g, "nativedir read(pos, byte[]) (buffered)", fc, null, note, randomSum, (k, ks) -> {
      long s = 0;
      for (int i = (int) from(n, k, ks), end = (int) from(n, k + 1, ks); i < end; i++) {
        buffered.read(offsets[i], array64);
        s += sample(array64);
      }
      return s;
    });
    row(g, mb, null, null, note, randomSum, (k, ks) -> {
      long s = 0;
      for (int i = (int) from(n, k, ks), end = (int) from(n, k + 1, ks); i < end; i++) {
        mbb.get((int) offsets[i], array64);
        s += sample(array64);
      }
      return s;
    });
    row(g, "nativedir read(pos, byte[]) (mapped)", mb, "<= 1.2", note, randomSum, (k, ks) -> {
      long s = 0;
      for (int i = (int) from(n, k, ks), end = (int) from(n, k + 1, ks); i < end; i++) {
        mapped.read(offsets[i], array64);
        s += sample(array64);
      }
      return s;
    });
    measure(g, SLICES);

    // ---- ReadSequential: slices are runs of whole 64 KiB chunks ----
    g = "ReadSequential";
    note = "the whole file front to back in 64 KiB chunks";
    String mbs = "MappedByteBuffer.get(byte[]) 64 KiB";
    String fcs = "FileChannel.read(direct ByteBuffer) 64 KiB";
    long chunks = (size + CHUNK - 1) / CHUNK;
    row(g, mbs, null, null, note, byteSum, (k, ks) -> {
      long s = 0;
      ByteBuffer b = mbb.duplicate();
      b.position((int) (from(chunks, k, ks) * CHUNK)).limit((int) Math.min(size, from(chunks, k + 1, ks) * CHUNK));
      while (b.hasRemaining()) {
        int len = Math.min(CHUNK, b.remaining());
        b.get(arrayChunk, 0, len);
        s += sumBytes(arrayChunk, len);
      }
      return s;
    });
    row(g, "nativedir read(byte[]) (mapped)", mbs, "<= 1.2", note, byteSum, (k, ks) -> {
      long s = 0;
      long pos = from(chunks, k, ks) * CHUNK;
      long end = Math.min(size, from(chunks, k + 1, ks) * CHUNK);
      mapped.seek(pos);
      for (long left = end - pos; left > 0; ) {
        int len = (int) Math.min(CHUNK, left);
        mapped.read(arrayChunk, 0, len);
        s += sumBytes(arrayChunk, len);
        left -= len;
      }
      return s;
    });
    row(g, fcs, null, null, note, byteSum, (k, ks) -> {
      long s = 0;
      long end = Math.min(size, from(chunks, k + 1, ks) * CHUNK);
      for (long pos = from(chunks, k, ks) * CHUNK; pos < end; ) {
        directChunk.clear().limit((int) Math.min(CHUNK, end - pos));
        int len = ch.read(directChunk, pos);
        s += sumBytes(directChunk, len);
        pos += len;
      }
      return s;
    });
    row(g, "nativedir read(direct ByteBuffer) (sequential)", fcs, null, note, byteSum, (k, ks) -> {
      long s = 0;
      long pos = from(chunks, k, ks) * CHUNK;
      long end = Math.min(size, from(chunks, k + 1, ks) * CHUNK);
      sequential.seek(pos);
      for (long left = end - pos; left > 0; ) {
        int len = (int) Math.min(CHUNK, left);
        directChunk.clear().limit(len);
        sequential.read(directChunk);
        s += sumBytes(directChunk, len);
        left -= len;
      }
      return s;
    });
    measure(g, SLICES);

    // ---- ReadByteSequential ----
    g = "ReadByteSequential";
    note = "the whole file one byte at a time through the cursor";
    String mbb1 = "MappedByteBuffer.get()";
    row(g, mbb1, null, null, note, byteSum, (k, ks) -> {
      long s = 0;
      ByteBuffer b = mbb.duplicate();
      long end = from(size, k + 1, ks); // the same loop shape as the rows below
      long i = from(size, k, ks);
      b.position((int) i);
      for (; i < end; i++) {
        s += b.get() & 0xff;
      }
      return s;
    });
    row(g, "nativedir readByte (mapped)", mbb1, "<= 1.2", note, byteSum, (k, ks) -> {
      long s = 0;
      long end = from(size, k + 1, ks);
      long i = from(size, k, ks);
      mapped.seek(i);
      for (; i < end; i++) {
        s += mapped.readByte() & 0xff;
      }
      return s;
    });
    row(g, "nativedir readByte (buffered)", mbb1, null,
        note + "; a native refill every 64 KiB, and the loop around a call cannot be optimised as"
            + " the mapped one is", byteSum, (k, ks) -> {
      long s = 0;
      long end = from(size, k + 1, ks);
      long i = from(size, k, ks);
      sequential.seek(i);
      for (; i < end; i++) {
        s += sequential.readByte() & 0xff;
      }
      return s;
    });
    measure(g, SLICES);

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
    row(g, fcc, null, null, note, quarterSum, (k, ks) -> parallel(pool, t -> {
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
        (k, ks) -> parallel(pool, t -> {
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
        (k, ks) -> parallel(pool, t -> {
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
    measure(g, 1); // a run is one whole workload (threads; a file opened and closed)
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
    row(g, fcw, null, null, note, writeSum, (k, ks) -> {
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
    row(g, "nativedir write(byte[])", fcw, null, note, writeSum, (k, ks) -> {
      try (NativeOutput out = nd.createOutput("w-nd", IOFlag.OVERWRITE)) {
        for (long done = 0; done + CHUNK <= size; done += CHUNK) {
          out.write(src);
        }
      }
      return writeSum;
    });
    row(g, "nativedir write(byte[]) (merge: direct I/O)", fcw, null,
        note + "; direct I/O: the bytes reach the device instead of the page cache, which MERGE"
            + " exists to leave alone", writeSum, (k, ks) -> {
      try (NativeOutput out = nd.createOutput("w-merge", IOFlag.OVERWRITE, IOFlag.MERGE)) {
        for (long done = 0; done + CHUNK <= size; done += CHUNK) {
          out.write(src);
        }
      }
      return writeSum;
    });
    measure(g, 1); // a run is one whole workload (threads; a file opened and closed)

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
          .append(", \"rounds\": ").append(rounds(r)) // a miss is shown round by round
          .append(", \"baseline\": ").append(json(r.baseline))
          .append(", \"ratio\": ").append(r.ratio == null ? "null" : num(r.ratio))
          .append(r.ratioPaired == null ? "" : ", \"ratio_paired\": " + num(r.ratioPaired))
          .append(", \"target\": ").append(json(r.target == null ? null : r.target + " (per-round)"))
          .append(", \"met\": ").append(r.met == null ? "null" : r.met.toString())
          .append(", \"alloc_bytes\": null, \"note\": ").append(json(r.note)).append('}')
          .append(i + 1 < rows.size() || !jsonRows.isEmpty() ? ",\n" : "\n");
    }
    for (int i = 0; i < jsonRows.size(); i++) {
      b.append("   ").append(jsonRows.get(i)).append(i + 1 < jsonRows.size() ? ",\n" : "\n");
    }
    b.append(" ]}\n");
    Files.createDirectories(out.getParent());
    Files.writeString(out, b.toString());
  }

  /** The row's time in each measured round (ms), in round order, as a JSON array. */
  private static String rounds(Row r) {
    StringBuilder b = new StringBuilder("[");
    for (int k = 0; k < r.n; k++) {
      b.append(k > 0 ? ", " : "").append(num(r.ms[k]));
    }
    return b.append(']').toString();
  }

    public static void main(String[] args) throws Exception {
    Path out = null;
    Path scratchParent = Paths.get(System.getProperty("java.io.tmpdir"));
    long mib = 64;
    int runs = 15;
    int random = 100_000;
    String only = null;
    Path memlimit = null;
    boolean quick = false;
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
        case "--memlimit": memlimit = Paths.get(args[++i]); break;
        case "--quick": mib = 8; runs = 3; random = 5000; quick = true; break;
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
        if (only == null || !(only.startsWith("Ring") || only.equals("LargerThanMemory"))) {
          b.benchmarks(nd, ch, mbb);
        }
      }
      if (only == null || only.startsWith("Ring")) {
        b.jsonRows.addAll(RingBench.run(scratch, quick));
      }
      if (only == null || only.equals("LargerThanMemory")) {
        b.jsonRows.addAll(LtmBench.run(scratch, quick, memlimit));
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
