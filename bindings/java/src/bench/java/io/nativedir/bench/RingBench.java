package io.nativedir.bench;

import io.nativedir.IOFlag;
import io.nativedir.NativeDirectory;
import io.nativedir.NativeInput;
import io.nativedir.NativeOutput;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.AsynchronousFileChannel;
import java.nio.channels.CompletionHandler;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * RingRandomQD32 (cold) and RingCachedQD32: 4 KiB random reads, 32 in flight, through {@link
 * NativeInput#readAsync} (the shared ring) against {@link AsynchronousFileChannel#read} with its
 * default thread pool, beside fio at depth 32, rounds interleaved and each target judged on the
 * per-round ratios.
 *
 * <p>Cold: a file read with direct I/O on both sides ({@code IOFlag.MERGE}; the channel opened
 * with {@code ExtendedOpenOption.DIRECT}, page-aligned buffers), so every read reaches the device
 * whatever the page cache holds, as bench/ring.c's rows do. Cached: a file in the page cache, a
 * buffered input (its reads complete during the call) against the channel. Each of the 32 lanes
 * issues its next read when its last one completes (in the completion's callback: the ring's
 * completion thread, the channel's pool threads); every block read is checked (each starts with
 * its own index). CPU is the process's CPU time over the run, every thread included, per read.
 */
final class RingBench {
  private static final int BLOCK = 4096;
  private static final int QD = 32;
  private static final String FIO_ENGINE_DEFAULT = "io_uring";
  private static String fioEngine = FIO_ENGINE_DEFAULT;

  private final Path dir;
  private final int rounds;
  private final List<String> rows = new ArrayList<>();

  private RingBench(Path dir, int rounds) {
    this.dir = dir;
    this.rounds = rounds;
  }

  /** Runs both groups; their rows, as JSON objects of the shared format. */
  static List<String> run(Path dir, boolean quick) throws Exception {
    RingBench b = new RingBench(dir, quick ? 2 : 5);
    int reads = quick ? 512 : 16384;
    try (NativeDirectory nd = NativeDirectory.open(dir)) {
      long coldSize = (quick ? 16L : 1024L) << 20;
      writeBlocks(nd, "ring-cold.dat", coldSize, true);
      writeBlocks(nd, "ring-hot.dat", (quick ? 8L : 64L) << 20, false);
      try {
        b.group(nd, "RingRandomQD32", "ring-cold.dat", true, reads);
        b.group(nd, "RingCachedQD32", "ring-hot.dat", false, 4 * reads);
      } finally {
        Files.deleteIfExists(dir.resolve("ring-cold.dat"));
        Files.deleteIfExists(dir.resolve("ring-hot.dat"));
      }
    }
    return b.rows;
  }

  /** A file whose every 4 KiB block starts with its own index (8 bytes, little-endian). */
  static void writeBlocks(NativeDirectory nd, String name, long size, boolean direct)
      throws IOException {
    byte[] chunk = new byte[1 << 20];
    new Random(5).nextBytes(chunk);
    ByteBuffer view = ByteBuffer.wrap(chunk).order(ByteOrder.LITTLE_ENDIAN);
    IOFlag[] flags = direct ? new IOFlag[] {IOFlag.OVERWRITE, IOFlag.MERGE}
                            : new IOFlag[] {IOFlag.OVERWRITE};
    try (NativeOutput out = nd.createOutput(name, flags)) {
      for (long first = 0; first < size / BLOCK; first += chunk.length / BLOCK) {
        for (int k = 0; k < chunk.length / BLOCK; k++) {
          view.putLong(k * BLOCK, first + k);
        }
        out.write(chunk);
      }
      out.sync();
    }
  }

  /** Throws unless b holds the block at off: n bytes, starting with the block's own index. */
  static void check(ByteBuffer b, long off, int n) {
    if (n != BLOCK || b.order(ByteOrder.LITTLE_ENDIAN).getLong(0) != off / BLOCK) {
      throw new IllegalStateException("RingBench: a read of " + n + " bytes at " + off
          + " returned wrong bytes");
    }
  }

  private static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory
        .getOperatingSystemMXBean()).getProcessCpuTime();
  }

  private static ByteBuffer[] alignedBuffers() {
    ByteBuffer all = ByteBuffer.allocateDirect((QD + 1) * BLOCK).alignedSlice(BLOCK);
    ByteBuffer[] b = new ByteBuffer[QD];
    for (int k = 0; k < QD; k++) {
      b[k] = all.slice(k * BLOCK, BLOCK);
    }
    return b;
  }

  /** One run of `count` reads, 32 lanes: the reads' wall time is what the run returns. */
  private interface Run {
    void run(long[] offs, int count) throws Exception;
  }

  /** The lanes' shared state: the next offset to take, the first failure, the end. */
  private static final class Lanes {
    final long[] offs;
    final int count;
    final AtomicInteger next = new AtomicInteger();
    final AtomicReference<Throwable> failed = new AtomicReference<>();
    final CountDownLatch done = new CountDownLatch(QD);

    Lanes(long[] offs, int count) {
      this.offs = offs;
      this.count = count;
    }

    void await() throws Exception {
      if (!done.await(600, TimeUnit.SECONDS)) {
        throw new IllegalStateException("RingBench: a run did not finish in 600 s");
      }
      if (failed.get() != null) {
        throw new IllegalStateException("RingBench: a read failed", failed.get());
      }
    }
  }

  /** A lane of readAsync: a completion issues the lane's next read. */
  private static final class RingLane implements BiConsumer<Integer, Throwable> {
    final Lanes lanes;
    final NativeInput in;
    final ByteBuffer buf;
    long off;

    RingLane(Lanes lanes, NativeInput in, ByteBuffer buf) {
      this.lanes = lanes;
      this.in = in;
      this.buf = buf;
    }

    void next() {
      for (;;) {
        int i = lanes.next.getAndIncrement();
        if (i >= lanes.count || lanes.failed.get() != null) {
          lanes.done.countDown();
          return;
        }
        off = lanes.offs[i];
        buf.clear();
        CompletableFuture<Integer> f = in.readAsync(off, buf);
        if (!f.isDone()) {
          f.whenComplete(this);
          return;
        }
        // completed in the call (cached): no callback, and no recursion through one
        Integer n = f.getNow(null);
        check(buf, off, n == null ? -1 : n);
      }
    }

    @Override
    public void accept(Integer n, Throwable t) {
      if (t != null) {
        lanes.failed.compareAndSet(null, t);
      } else {
        try {
          check(buf, off, n);
        } catch (RuntimeException e) {
          lanes.failed.compareAndSet(null, e);
        }
      }
      next();
    }
  }

  /** A lane of AsynchronousFileChannel.read: its handler issues the lane's next read. */
  private static final class ChannelLane implements CompletionHandler<Integer, Void> {
    final Lanes lanes;
    final AsynchronousFileChannel ch;
    final ByteBuffer buf;
    long off;

    ChannelLane(Lanes lanes, AsynchronousFileChannel ch, ByteBuffer buf) {
      this.lanes = lanes;
      this.ch = ch;
      this.buf = buf;
    }

    void next() {
      int i = lanes.next.getAndIncrement();
      if (i >= lanes.count || lanes.failed.get() != null) {
        lanes.done.countDown();
        return;
      }
      off = lanes.offs[i];
      buf.clear();
      ch.read(buf, off, null, this);
    }

    @Override
    public void completed(Integer n, Void a) {
      try {
        check(buf, off, n);
      } catch (RuntimeException e) {
        lanes.failed.compareAndSet(null, e);
      }
      next();
    }

    @Override
    public void failed(Throwable t, Void a) {
      lanes.failed.compareAndSet(null, t);
      next();
    }
  }

  private void group(NativeDirectory nd, String group, String file, boolean cold, int reads)
      throws Exception {
    Path path = dir.resolve(file);
    long size = Files.size(path);
    Random rnd = new Random(cold ? 99 : 98);
    long[] offs = new long[reads];
    for (int i = 0; i < reads; i++) {
      offs[i] = (long) BLOCK * rnd.nextInt((int) (size / BLOCK));
    }
    ByteBuffer[] bufs = alignedBuffers();
    String fio = findFio();
    NativeInput in = cold ? nd.openInput(file, IOFlag.MERGE, IOFlag.RANDOM)
                          : nd.openInput(file, IOFlag.RANDOM);
    if (!cold) {
      in.read(0, new byte[(int) size]); // the whole file in the page cache
    }
    List<OpenOption> options = new ArrayList<>(List.of(StandardOpenOption.READ));
    if (cold) {
      options.add(com.sun.nio.file.ExtendedOpenOption.DIRECT);
    }
    AsynchronousFileChannel ch = AsynchronousFileChannel.open(path,
        new java.util.HashSet<>(options), null);
    String ringRow = cold ? "nativedir readAsync (MERGE, direct ByteBuffer) QD32"
                          : "nativedir readAsync (buffered, direct ByteBuffer) QD32";
    String chRow = "AsynchronousFileChannel.read (" + (cold ? "DIRECT, " : "")
        + "default thread pool) QD32";
    String fioRow = "fio randread QD32" + (cold ? " (device limit)" : " (buffered, cached)");
    Map<String, Run> runs = new LinkedHashMap<>();
    runs.put(ringRow, (o, n) -> {
      Lanes lanes = new Lanes(o, n);
      for (int k = 0; k < QD; k++) {
        new RingLane(lanes, in, bufs[k]).next();
      }
      lanes.await();
    });
    runs.put(chRow, (o, n) -> {
      Lanes lanes = new Lanes(o, n);
      for (int k = 0; k < QD; k++) {
        new ChannelLane(lanes, ch, bufs[k]).next();
      }
      lanes.await();
    });
    Map<String, double[]> rate = new LinkedHashMap<>();
    Map<String, double[]> cpu = new LinkedHashMap<>();
    List<String> order = new ArrayList<>(runs.keySet());
    if (fio != null) {
      order.add(fioRow);
    }
    for (String v : order) {
      rate.put(v, new double[rounds]);
      cpu.put(v, new double[rounds]);
    }
    try {
      for (int round = 0; round <= rounds; round++) { // the first warms up (JIT, threads)
        int shift = round % order.size();
        for (int j = 0; j < order.size(); j++) {
          String v = order.get((j + shift) % order.size());
          double iops, cpuUs;
          if (v.equals(fioRow)) {
            double[] f = runFio(fio, path, reads, cold);
            iops = f[0];
            cpuUs = f[1];
          } else {
            System.gc();
            long c0 = processCpuNanos();
            long t0 = System.nanoTime();
            runs.get(v).run(offs, reads);
            long t1 = System.nanoTime();
            long c1 = processCpuNanos();
            iops = reads / ((t1 - t0) / 1e9);
            cpuUs = (c1 - c0) / 1e3 / reads;
          }
          if (round > 0) {
            rate.get(v)[round - 1] = iops;
            cpu.get(v)[round - 1] = cpuUs;
          }
        }
      }
    } finally {
      ch.close();
      in.close();
    }
    String kind = reads + " reads of 4 KiB at random 4 KiB-aligned offsets of a " + (size >> 20)
        + " MiB file, " + (cold ? "direct I/O (cold: every read reaches the device)"
                                : "in the page cache") + "; 32 lanes, each issuing its next read"
        + " from the completion of its last; unpinned";
    StringBuilder line = new StringBuilder("  " + group + ":");
    for (String v : order) {
      line.append(String.format(Locale.ROOT, " %s %.0f/s (%.1f us CPU);", v, median(rate.get(v)),
          median(cpu.get(v))));
    }
    System.out.println(line);
    rows.add(rowJson(group, chRow, rate, cpu, null, null, kind + "; the baseline", List.of()));
    List<String[]> also = new ArrayList<>();
    String target;
    if (cold) {
      target = ">= 1.0";
      also.add(new String[] {fioRow, ">= 0.85", "rate"});
      also.add(new String[] {chRow, "<= 0.5", "cpu"});
    } else {
      target = ">= 2";
      also.add(new String[] {fioRow, null, "rate"});
      also.add(new String[] {chRow, null, "cpu"});
    }
    rows.add(rowJson(group, ringRow, rate, cpu, chRow, target,
        kind + "; NativeRing.shared(); targets: the channel's rate and half its CPU per read"
            + (cold ? ", and 0.85 of fio's rate" : ""), also));
    if (fio != null) {
      rows.add(rowJson(group, fioRow, rate, cpu, chRow, null, "fio --rw=randread --bs=4k "
          + "--iodepth=32 --direct=" + (cold ? 1 : 0) + " --ioengine=" + fioEngine
          + " on the same file, its own offsets; CPU from its usr_cpu + sys_cpu", List.of()));
    }
  }

  private static double median(double[] v) {
    double[] s = v.clone();
    Arrays.sort(s);
    return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  }

  private static double pairedRatio(double[] a, double[] b) {
    double[] r = new double[a.length];
    for (int i = 0; i < a.length; i++) {
      r[i] = a[i] / b[i];
    }
    return median(r);
  }

  private static String num(double d) {
    return String.format(Locale.ROOT, "%.4f", d);
  }

  private static String str(String s) {
    return s == null ? "null" : "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }

  /**
   * A rate row (IOPS, higher is better). {@code also}: {other row, target or null, "rate" or
   * "cpu"}; a "cpu" entry compares CPU per read (lower is better). Every target must be met.
   */
  static String rowJson(String group, String name, Map<String, double[]> rate,
      Map<String, double[]> cpu, String baseline, String target, String note, List<String[]> also) {
    double[] r = rate.get(name);
    double[] s = r.clone();
    Arrays.sort(s);
    StringBuilder b = new StringBuilder();
    b.append("{\"group\": ").append(str(group)).append(", \"name\": ").append(str(name))
        .append(", \"unit\": \"IOPS\", \"median\": ").append(num(median(r)))
        .append(", \"min\": ").append(num(s[0])).append(", \"max\": ").append(num(s[s.length - 1]))
        .append(", \"runs\": ").append(r.length)
        .append(", \"rounds\": ").append(rounds(r)) // a miss is shown round by round
        .append(", \"baseline\": ").append(str(baseline));
    Boolean met = null;
    if (baseline != null) {
      double ratio = median(r) / median(rate.get(baseline));
      double paired = pairedRatio(r, rate.get(baseline));
      b.append(", \"ratio\": ").append(num(ratio)).append(", \"ratio_paired\": ").append(num(paired));
      if (target != null) {
        met = paired >= Double.parseDouble(target.substring(3));
      }
    } else {
      b.append(", \"ratio\": null");
    }
    StringBuilder a = new StringBuilder();
    for (String[] x : also) {
      boolean isCpu = x[2].equals("cpu");
      String other = isCpu ? x[0] + " (CPU per read)" : x[0];
      Map<String, double[]> m = isCpu ? cpu : rate;
      a.append(a.length() == 0 ? "" : ", ").append("{\"baseline\": ").append(str(other));
      Boolean ok = null;
      if (m.containsKey(x[0])) {
        double ratio = median(m.get(name)) / median(m.get(x[0]));
        double paired = pairedRatio(m.get(name), m.get(x[0]));
        a.append(", \"ratio\": ").append(num(ratio)).append(", \"ratio_paired\": ").append(num(paired));
        if (x[1] != null) {
          double limit = Double.parseDouble(x[1].substring(3));
          ok = x[1].startsWith(">=") ? paired >= limit : paired <= limit;
        }
      } else {
        a.append(", \"ratio\": null");
        if (x[1] != null) {
          ok = false; // not measured (fio missing): not met
        }
      }
      a.append(", \"target\": ").append(str(x[1] == null ? null : x[1] + " (per-round)"))
          .append(", \"met\": ").append(ok == null ? "null" : ok.toString()).append('}');
      if (ok != null) {
        met = met != null && met && ok;
      }
    }
    b.append(", \"target\": ").append(str(target == null ? null : target + " (per-round)"))
        .append(", \"met\": ").append(met == null ? "null" : met.toString())
        .append(", \"alloc_bytes\": null, \"cpu_us_per_op\": ").append(num(median(cpu.get(name))))
        .append(", \"also\": [").append(a).append("], \"note\": ").append(str(note)).append('}');
    System.out.printf(Locale.ROOT, "%-22s %-56s %9.0f IOPS %6.1f us CPU/read%s%n", group, name,
        median(r), median(cpu.get(name)), met == null ? "" : met ? "  targets met" : "  NOT MET");
    return b.toString();
  }

  /** The row's rate in each measured round, in round order, as a JSON array. */
  private static String rounds(double[] r) {
    StringBuilder b = new StringBuilder("[");
    for (int k = 0; k < r.length; k++) {
      b.append(k > 0 ? ", " : "").append(num(r[k]));
    }
    return b.append(']').toString();
  }

  // ---- fio ----

  private static String findFio() {
    for (String d : System.getenv().getOrDefault("PATH", "").split(":")) {
      Path p = Path.of(d.isEmpty() ? "." : d, "fio");
      if (Files.isExecutable(p)) {
        return p.toString();
      }
    }
    System.err.println("RingBench: fio is not installed (scripts/deps.sh installs it): the "
        + "device's limit is missing and its targets are not met");
    return null;
  }

  private static double after(String text, int from, String key) {
    Matcher m = Pattern.compile("\"" + Pattern.quote(key) + "\"\\s*:\\s*([-0-9.eE+]+)")
        .matcher(text);
    if (!m.find(from)) {
      throw new IllegalStateException("RingBench: fio printed no " + key);
    }
    return Double.parseDouble(m.group(1));
  }

  /** {IOPS, CPU µs per read} of fio at depth 32 on path. */
  private static double[] runFio(String fio, Path path, int reads, boolean cold) throws Exception {
    List<String> cmd = List.of(fio, "--name=nd-java-ring", "--filename=" + path, "--readonly",
        "--rw=randread", "--bs=4k", "--direct=" + (cold ? 1 : 0), "--invalidate=0",
        "--iodepth=32", "--ioengine=" + fioEngine, "--number_ios=" + reads, "--norandommap",
        "--randrepeat=1", "--output-format=json");
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (p.waitFor() != 0) {
      if (fioEngine.equals(FIO_ENGINE_DEFAULT)) { // io_uring refused here: libaio then
        fioEngine = "libaio";
        return runFio(fio, path, reads, cold);
      }
      throw new IllegalStateException("RingBench: fio failed on " + path);
    }
    int job = out.indexOf("\"jobs\"");
    int read = out.indexOf("\"read\"", job);
    double iops = after(out, read, "iops");
    double total = after(out, read, "total_ios");
    double runtime = after(out, read, "runtime"); // ms
    double usr = after(out, job, "usr_cpu"), sys = after(out, job, "sys_cpu"); // % of runtime
    return new double[] {iops, (usr + sys) / 100 * runtime * 1e3 / Math.max(total, 1)};
  }
}
