package io.nativedir.lucene.bench;

import io.nativedir.lucene.NativeFSDirectory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.NoMergePolicy;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexInput;
import org.apache.lucene.store.IndexOutput;
import org.apache.lucene.store.MMapDirectory;
import org.apache.lucene.store.NIOFSDirectory;
import org.apache.lucene.store.SimpleFSDirectory;

/**
 * Lucene (Java) on nativedir against Lucene's own directories of the same version (MMapDirectory,
 * NIOFSDirectory, SimpleFSDirectory), in one run: reads through IndexInput (a file scanned in
 * 64 KiB reads, byte by byte, and 64-byte reads at random offsets), indexing, searching with
 * every core, and searching a >= 1 GiB index with 25% and 10% of it allowed as page cache (a child
 * JVM inside nd_memlimit's memory cgroup; the index is built once and kept, named by its
 * parameters). Every row's ratio target is judged per round: the directories run back to back in
 * each round, the first of a round rotating. Writes OUT/lucene_java.json (suite "lucene-java").
 */
public final class LuceneBench {
  enum Kind {
    NATIVE("nativedir-lucene NativeFSDirectory"),
    MMAP("Lucene (Java) MMapDirectory"),
    NIOFS("Lucene (Java) NIOFSDirectory"),
    SIMPLEFS("Lucene (Java) SimpleFSDirectory");

    final String label;

    Kind(String label) {
      this.label = label;
    }

    @SuppressWarnings("deprecation") // SimpleFSDirectory: deprecated in Lucene 8, still shipped
    Directory open(Path p) throws IOException {
      switch (this) {
        case NATIVE: return new NativeFSDirectory(p);
        case MMAP: return new MMapDirectory(p);
        case NIOFS: return new NIOFSDirectory(p);
        default: return new SimpleFSDirectory(p);
      }
    }
  }

  private static final Kind[] KINDS = Kind.values();
  private static final Kind[] BUILTINS = {Kind.MMAP, Kind.NIOFS, Kind.SIMPLEFS};
  // The larger-than-memory cells' built-ins earn their rounds at each level: the first round
  // runs every directory, the rounds after it only those that served at least LTM_FAR_BEHIND
  // of the best built-in's queries of that round there (the rows of the others say so).
  // MMapDirectory makes 0.1-0.3x NIOFSDirectory's queries at 25% and 10%; SimpleFSDirectory
  // (one lock per read) has made 0.8-2.0x of them in a round, so it is not left out by name.
  private static final double LTM_FAR_BEHIND = 0.8;

  private final List<Map<String, Object>> rows = new ArrayList<>();
  private final boolean quick;
  private final Path scratch;
  private long sink;

  private LuceneBench(Path scratch, boolean quick) {
    this.scratch = scratch;
    this.quick = quick;
  }

  // ---- the documents: words drawn from a Zipf distribution over a made-up vocabulary ----

  static final class Corpus {
    final String[] words;
    final double[] cumulative;

    Corpus(int size, long seed) {
      Random r = new Random(seed);
      words = new String[size];
      cumulative = new double[size];
      double sum = 0;
      for (int i = 0; i < size; i++) {
        char[] w = new char[3 + r.nextInt(8)];
        for (int j = 0; j < w.length; j++) {
          w[j] = (char) ('a' + r.nextInt(26));
        }
        words[i] = new String(w);
        sum += 1.0 / (i + 1);
        cumulative[i] = sum;
      }
      for (int i = 0; i < size; i++) {
        cumulative[i] /= sum;
      }
    }

    String word(Random r) {
      int i = Arrays.binarySearch(cumulative, r.nextDouble());
      return words[Math.min(words.length - 1, i < 0 ? -i - 1 : i)];
    }

    /** Document i: its id, a body of `words` Zipf words, a stored-only source of `stored` letters. */
    Document doc(long i, int bodyWords, int stored) {
      Random r = new Random(i * 0x9E3779B97F4A7C15L + 17);
      StringBuilder sb = new StringBuilder(bodyWords * 8);
      for (int k = 0; k < bodyWords; k++) {
        sb.append(k > 0 ? " " : "").append(word(r));
      }
      Document d = new Document();
      d.add(new StringField("id", "d" + i, Field.Store.YES));
      d.add(new TextField("body", sb.toString(), Field.Store.YES));
      if (stored > 0) {
        char[] c = new char[stored];
        for (int k = 0; k < stored; k++) {
          c[k] = (char) ('a' + r.nextInt(26));
        }
        d.add(new StoredField("source", new String(c)));
      }
      return d;
    }

    /** Term queries and two-term disjunctions on words of rank 20 to 2000. */
    Query[] queries(int n, long seed) {
      Random r = new Random(seed);
      Query[] q = new Query[n];
      for (int i = 0; i < n; i++) {
        Term a = new Term("body", words[20 + r.nextInt(1980)]);
        if (r.nextInt(10) < 7) {
          q[i] = new TermQuery(a);
        } else {
          Term b = new Term("body", words[20 + r.nextInt(1980)]);
          q[i] = new BooleanQuery.Builder().add(new TermQuery(a), BooleanClause.Occur.SHOULD)
              .add(new TermQuery(b), BooleanClause.Occur.SHOULD).build();
        }
      }
      return q;
    }
  }

  // ---- rows in the shared format (bench/suites.d/README.md) ----

  private static double median(double[] v) {
    double[] s = v.clone();
    Arrays.sort(s);
    int n = s.length;
    return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  }

  private static double round3(double d) {
    return Math.round(d * 1000) / 1000.0;
  }

  /**
   * A row; with a baseline, its ratio and per-round ratio, and the target judged on the latter.
   * `higher`: a rate (the ratio is this over the baseline either way; the target's sense follows).
   */
  private Map<String, Object> row(String group, String name, String unit, double[] values,
      String baseline, double[] base, String target, Double limit, boolean higher, String note) {
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("group", group);
    r.put("name", name);
    r.put("unit", unit);
    r.put("median", round3(median(values)));
    r.put("min", round3(Arrays.stream(values).min().orElse(0)));
    r.put("max", round3(Arrays.stream(values).max().orElse(0)));
    r.put("runs", values.length);
    double[] rounds = Arrays.stream(values).map(LuceneBench::round3).toArray();
    r.put("rounds", rounds);
    r.put("baseline", baseline);
    r.put("ratio", null);
    r.put("target", null);
    r.put("met", null);
    r.put("alloc_bytes", null);
    r.put("note", note);
    if (baseline != null) {
      r.put("ratio", round3(median(values) / median(base)));
      double[] per = new double[values.length];
      for (int i = 0; i < per.length; i++) {
        per[i] = values[i] / base[i];
      }
      double paired = round3(median(per));
      r.put("ratio_paired", paired);
      if (target != null) {
        r.put("target", target);
        r.put("met", higher ? paired >= limit : paired <= limit);
      }
    }
    rows.add(r);
    return r;
  }

  // ---- reads through IndexInput ----

  private interface Op {
    long run(IndexInput in) throws IOException;
  }

  private void reads(int rounds, long mib, int randomReads) throws IOException {
    Path dir = scratch.resolve("reads");
    Files.createDirectories(dir);
    long size = mib << 20;
    try (Directory d = new NIOFSDirectory(dir); IndexOutput out = d.createOutput("data.bin", IOContext.DEFAULT)) {
      byte[] b = new byte[1 << 20];
      Random r = new Random(7);
      for (long w = 0; w < size; w += b.length) {
        r.nextBytes(b);
        out.writeBytes(b, b.length);
      }
    }
    long[] offsets = new Random(11).longs(randomReads, 0, size - 64).toArray();
    Map<String, Op> ops = new LinkedHashMap<>();
    ops.put("ReadSequential", in -> {
      byte[] b = new byte[64 << 10];
      long s = 0;
      for (long p = 0; p < size; p += b.length) {
        in.readBytes(b, 0, b.length);
        s += b[7];
      }
      return s;
    });
    ops.put("ReadByteSequential", in -> {
      long s = 0;
      for (long p = 0; p < size; p++) {
        s += in.readByte();
      }
      return s;
    });
    ops.put("ReadRandom", in -> {
      byte[] b = new byte[64];
      long s = 0;
      for (long o : offsets) {
        in.seek(o);
        in.readBytes(b, 0, 64);
        s += b[3];
      }
      return s;
    });
    String[] notes = {
      mib + " MiB file, cached, read front to back in 64 KiB readBytes through an IndexInput opened with IOContext.DEFAULT",
      mib + " MiB file, cached, readByte() front to back",
      randomReads + " seek + readBytes(64) at random offsets of a cached " + mib + " MiB file",
    };
    int g = 0;
    for (Map.Entry<String, Op> e : ops.entrySet()) {
      String group = e.getKey();
      double[][] ms = new double[KINDS.length][rounds];
      for (int round = -1; round < rounds; round++) { // round -1: the JIT's, untimed
        for (int j = 0; j < KINDS.length; j++) {
          Kind k = KINDS[(j + Math.max(round, 0)) % KINDS.length];
          try (Directory d = k.open(dir); IndexInput in = d.openInput("data.bin", IOContext.DEFAULT)) {
            long t0 = System.nanoTime();
            sink += e.getValue().run(in);
            double t = (System.nanoTime() - t0) / 1e6;
            if (round >= 0) {
              ms[k.ordinal()][round] = t;
            }
          }
        }
      }
      String base = Kind.MMAP.label;
      for (Kind k : KINDS) {
        boolean isBase = k == Kind.MMAP;
        boolean mine = k == Kind.NATIVE;
        row(group, k.label, "ms", ms[k.ordinal()], isBase ? null : base, ms[Kind.MMAP.ordinal()],
            mine ? "<= 1.1 (per-round)" : null, mine ? 1.1 : null, false, notes[g]);
      }
      g++;
      System.out.println("  " + group + " done");
    }
  }

  // ---- indexing ----

  private void indexing(Corpus corpus, int rounds, int docs) throws IOException {
    double[][] rate = new double[KINDS.length][rounds];
    for (int round = -1; round < rounds; round++) {
      for (int j = 0; j < KINDS.length; j++) {
        Kind k = KINDS[(j + Math.max(round, 0)) % KINDS.length];
        Path p = scratch.resolve("index-" + k);
        deleteTree(p);
        long t0 = System.nanoTime();
        try (Directory d = k.open(p);
            IndexWriter w = new IndexWriter(d, new IndexWriterConfig(new StandardAnalyzer()))) {
          for (int i = 0; i < (round < 0 ? docs / 4 : docs); i++) {
            w.addDocument(corpus.doc(i, 120, 0));
            if (i % 5000 == 4999) {
              w.commit();
            }
          }
          w.commit();
        }
        double s = (System.nanoTime() - t0) / 1e9;
        if (round >= 0) {
          rate[k.ordinal()][round] = docs / s;
        }
        deleteTree(p);
      }
    }
    judgeAgainstBestBuiltin("Indexing", "docs/s", rate, ">= 1.0x the best built-in (per round)",
        1.0, docs + " documents of 120 words, one thread, a commit every 5000 and at the end"
        + " (files and folder fsynced), default merge policy and scheduler");
    System.out.println("  Indexing done");
  }

  private void judgeAgainstBestBuiltin(String group, String unit, double[][] v, String target,
      double limit, String note) {
    Kind best = Kind.MMAP;
    for (Kind b : BUILTINS) {
      if (median(v[b.ordinal()]) > median(v[best.ordinal()])) {
        best = b;
      }
    }
    for (Kind k : KINDS) {
      boolean mine = k == Kind.NATIVE;
      row(group, k.label, unit, v[k.ordinal()], k == best ? null : best.label,
          v[best.ordinal()], mine ? target : null, mine ? limit : null, true,
          note + (k == best ? " (best built-in: the baseline)" : ""));
    }
  }

  // ---- searching ----

  static final class Drive {
    long queries;
    double seconds;
    double p99;
  }

  /** Threads take the next query from a shared counter for `seconds`: top 10 and their stored docs. */
  static Drive search(IndexSearcher s, Query[] queries, int threads, double seconds) throws Exception {
    AtomicLong next = new AtomicLong();
    long end = System.nanoTime() + (long) (seconds * 1e9);
    List<double[]> lat = new ArrayList<>();
    Thread[] ts = new Thread[threads];
    Exception[] failure = new Exception[1];
    long t0 = System.nanoTime();
    for (int t = 0; t < threads; t++) {
      double[] mine = new double[1 << 20];
      lat.add(mine);
      ts[t] = new Thread(() -> {
        int n = 0;
        try {
          while (System.nanoTime() < end && n < mine.length - 1) {
            long q0 = System.nanoTime();
            TopDocs top = s.search(queries[(int) (next.getAndIncrement() % queries.length)], 10);
            for (ScoreDoc sd : top.scoreDocs) {
              if (s.doc(sd.doc).get("id") == null) {
                throw new IllegalStateException("a hit without its id");
              }
            }
            mine[++n] = (System.nanoTime() - q0) / 1e6;
          }
        } catch (Exception e) {
          failure[0] = e;
        }
        mine[0] = n;
      });
      ts[t].start();
    }
    for (Thread t : ts) {
      t.join();
    }
    if (failure[0] != null) {
      throw failure[0];
    }
    Drive d = new Drive();
    d.seconds = (System.nanoTime() - t0) / 1e9;
    List<Double> all = new ArrayList<>();
    for (double[] m : lat) {
      for (int i = 1; i <= (int) m[0]; i++) {
        all.add(m[i]);
      }
    }
    d.queries = all.size();
    all.sort(null);
    d.p99 = all.isEmpty() ? 0 : all.get(Math.min(all.size() - 1, (int) Math.ceil(0.99 * all.size()) - 1));
    return d;
  }

  private void parallelSearch(Corpus corpus, int rounds, int docs, double window) throws Exception {
    Path p = scratch.resolve("search-index");
    try (Directory d = new NIOFSDirectory(p);
        IndexWriter w = new IndexWriter(d, new IndexWriterConfig(new StandardAnalyzer()))) {
      for (int i = 0; i < docs; i++) {
        w.addDocument(corpus.doc(i, 120, 300));
      }
      w.commit();
    }
    Query[] queries = corpus.queries(2000, 5);
    int threads = Runtime.getRuntime().availableProcessors();
    double[][] qps = new double[KINDS.length][rounds];
    for (int round = -1; round < rounds; round++) {
      for (int j = 0; j < KINDS.length; j++) {
        Kind k = KINDS[(j + Math.max(round, 0)) % KINDS.length];
        try (Directory d = k.open(p); DirectoryReader r = DirectoryReader.open(d)) {
          Drive dr = search(new IndexSearcher(r), queries, threads, round < 0 ? 1 : window);
          if (round >= 0) {
            qps[k.ordinal()][round] = dr.queries / dr.seconds;
          }
        }
      }
    }
    judgeAgainstBestBuiltin("ParallelSearch", "q/s", qps, ">= 1.0x the best built-in (per round)",
        1.0, docs + " documents (cached index), " + threads + " threads, " + window
        + " s a directory a round: term and two-term queries, top 10 and their stored documents");
    System.out.println("  ParallelSearch done");
  }

  // ---- searching an index larger than the memory allowed ----

  /** The index of this shape under `cache`, built first if no complete copy is there. */
  static Path ensureIndex(Path cache, Corpus corpus, int docs, int segments) throws Exception {
    String key = "ltm-java-g1-d" + docs + "-s" + segments + "-b60-m3000";
    Path path = cache.resolve(key);
    if (Files.exists(path.resolve("ltm-index.txt"))) {
      return path;
    }
    Files.createDirectories(cache);
    try (Stream<Path> old = Files.list(cache)) {
      for (Path o : (Iterable<Path>) old::iterator) {
        deleteTree(o); // one shape is kept: other sizes' copies are stale
      }
    }
    Path partial = cache.resolve(key + ".partial");
    long t0 = System.nanoTime();
    try (Directory d = new NativeFSDirectory(partial)) {
      IndexWriterConfig c = new IndexWriterConfig(new StandardAnalyzer())
          .setOpenMode(IndexWriterConfig.OpenMode.CREATE)
          .setMergePolicy(NoMergePolicy.INSTANCE) // segments of one size, none merged
          .setUseCompoundFile(false)
          .setMaxBufferedDocs(Math.max(2, docs / segments))
          .setRAMBufferSizeMB(IndexWriterConfig.DISABLE_AUTO_FLUSH);
      try (IndexWriter w = new IndexWriter(d, c)) {
        AtomicLong next = new AtomicLong();
        Thread[] ts = new Thread[Runtime.getRuntime().availableProcessors()];
        Exception[] failure = new Exception[1];
        for (int t = 0; t < ts.length; t++) {
          ts[t] = new Thread(() -> {
            try {
              for (long i; (i = next.getAndIncrement()) < docs;) {
                w.addDocument(corpus.doc(i, 60, 3000));
              }
            } catch (Exception e) {
              failure[0] = e;
            }
          });
          ts[t].start();
        }
        for (Thread t : ts) {
          t.join();
        }
        if (failure[0] != null) {
          throw failure[0];
        }
        w.commit();
      }
    }
    Files.write(partial.resolve("ltm-index.txt"), String.format(Locale.ROOT,
        "%s built in %.0f s%n", key, (System.nanoTime() - t0) / 1e9).getBytes(StandardCharsets.UTF_8));
    Files.move(partial, path);
    return path;
  }

  static long indexBytes(Path p) throws IOException {
    try (Stream<Path> s = Files.list(p)) {
      return s.filter(f -> !f.getFileName().toString().endsWith(".txt"))
          .mapToLong(f -> f.toFile().length()).sum();
    }
  }

  private void largerThanMemory(Corpus corpus, Path memlimit, Path cache, int docs, int rounds,
      double warm, double window) throws Exception {
    String group = "SearchLargerThanMemory";
    if (memlimit == null || !Files.isExecutable(memlimit)) {
      System.out.println("  " + group + ": SKIPPED: no nd_memlimit (" + memlimit + ")");
      return;
    }
    Process check = new ProcessBuilder(memlimit.toString(), "check").redirectErrorStream(true).start();
    String why = new String(check.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    if (check.waitFor() != 0) {
      System.out.println("  " + group + ": SKIPPED: " + why);
      return;
    }
    Path index = ensureIndex(cache, corpus, docs, 8);
    long bytes = indexBytes(index);
    Path res = scratch.resolve("ltm-cells.tsv");
    String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    int threads = Math.max(2, Runtime.getRuntime().availableProcessors());
    List<String> cmd = List.of(memlimit.toString(), "run", "--", java, "-Xms256m", "-Xmx256m",
        "-XX:+AlwaysPreTouch", "-cp", System.getProperty("java.class.path"),
        "-Dnativedir.memory.mode=" + System.getProperty("nativedir.memory.mode", "auto"),
        LuceneBench.class.getName(), "ltm-child", res.toString(), index.toString(),
        memlimit.toString(), Integer.toString(rounds), Double.toString(warm),
        Double.toString(window), Integer.toString(threads));
    Process p = new ProcessBuilder(cmd).inheritIO().start();
    int rc = p.waitFor();
    if (rc == 77) {
      System.out.println("  " + group + ": SKIPPED: no memory cgroup");
      return;
    }
    if (rc != 0) {
      throw new IllegalStateException(group + ": the child failed (" + rc + ")");
    }
    // cells: pct, round, kind, qps, p99
    Map<Integer, double[][]> qps = new LinkedHashMap<>();
    Map<Integer, double[][]> p99 = new LinkedHashMap<>();
    Map<Integer, int[]> ranAt = new LinkedHashMap<>(); // rounds each directory ran at a level
    for (String line : Files.readAllLines(res)) {
      String[] f = line.split("\t");
      int pct = Integer.parseInt(f[0]);
      int round = Integer.parseInt(f[1]);
      Kind k = Kind.valueOf(f[2]);
      qps.computeIfAbsent(pct, x -> new double[KINDS.length][rounds])[k.ordinal()][round] = Double.parseDouble(f[3]);
      p99.computeIfAbsent(pct, x -> new double[KINDS.length][rounds])[k.ordinal()][round] = Double.parseDouble(f[4]);
      ranAt.computeIfAbsent(pct, x -> new int[KINDS.length])[k.ordinal()]++;
    }
    for (Map.Entry<Integer, double[][]> e : qps.entrySet()) {
      int pct = e.getKey();
      double[][] v = e.getValue();
      int[] ranOf = ranAt.get(pct);
      // the best built-in is the fastest of those that ran every round
      Kind best = null;
      double firstBest = 0;
      for (Kind b : BUILTINS) {
        firstBest = Math.max(firstBest, v[b.ordinal()][0]);
        if (ranOf[b.ordinal()] == rounds && (best == null || median(v[b.ordinal()]) > median(v[best.ordinal()]))) {
          best = b;
        }
      }
      if (best == null) {
        throw new IllegalStateException(group + ": no built-in ran every round at " + pct + "%");
      }
      for (Kind k : KINDS) {
        boolean mine = k == Kind.NATIVE;
        int ran = ranOf[k.ordinal()];
        double[] mineV = Arrays.copyOf(v[k.ordinal()], ran);
        String note = String.format(Locale.ROOT, "%d MiB index (%d docs, 8 segments), %d%% of it "
            + "(%d MiB) as page cache, %d threads, %.1f s window after %.1f s untimed; p99 %.1f ms",
            bytes >> 20, docs, pct, (long) (bytes * pct / 100.0) >> 20, threads, window, warm,
            median(Arrays.copyOf(p99.get(pct)[k.ordinal()], ran)))
            + (ran < rounds ? String.format(Locale.ROOT, "; %d of %d rounds (far behind at this limit: its first "
                + "round %.2fx the best built-in's, below %.1fx)", ran, rounds, v[k.ordinal()][0] / firstBest,
                LTM_FAR_BEHIND) : "");
        Map<String, Object> r = row(group, k.label + ", " + pct + "% of the index in memory", "q/s",
            mineV, k == best ? null : best.label + ", " + pct + "% of the index in memory",
            Arrays.copyOf(v[best.ordinal()], ran), mine ? ">= 1.2x the best built-in (per round)" : null,
            mine ? 1.2 : null, true, note + (k == best ? " (best built-in: the baseline)" : ""));
        r.put("limit_pct", pct);
      }
    }
    System.out.println("  " + group + " done");
  }

  /** In the child, inside the cgroup: every cell, written to `res` as it is measured. */
  static void ltmChild(String[] a) throws Exception {
    Path res = Paths.get(a[1]);
    Path index = Paths.get(a[2]);
    String tool = a[3];
    int rounds = Integer.parseInt(a[4]);
    double warm = Double.parseDouble(a[5]);
    double window = Double.parseDouble(a[6]);
    int threads = Integer.parseInt(a[7]);
    long bytes = indexBytes(index);
    // an A/B switch: how the library reads mapped files (nd_memory_mode; the default is auto)
    String mode = System.getProperty("nativedir.memory.mode", "auto");
    io.nativedir.jni.nativedir.nd_memory_mode(mode.equals("mapped")
        ? io.nativedir.jni.nativedirConstants.ND_MEMORY_MAPPED
        : mode.equals("positional") ? io.nativedir.jni.nativedirConstants.ND_MEMORY_POSITIONAL
        : io.nativedir.jni.nativedirConstants.ND_MEMORY_AUTO);
    Query[] queries = new Corpus(50_000, 3).queries(4000, 9);
    long slack = 24L << 20; // the JVM's growth during a cell: code, stacks, the kernel's objects
    StringBuilder out = new StringBuilder();
    Map<Integer, Set<Kind>> farBehind = new HashMap<>(); // after the first round, per level
    for (int round = 0; round < rounds; round++) {
      for (int pct : new int[] {25, 10}) {
        Map<Kind, Double> first = new EnumMap<>(Kind.class);
        for (int j = 0; j < KINDS.length; j++) {
          Kind k = KINDS[(j + round) % KINDS.length];
          if (round > 0 && farBehind.getOrDefault(pct, Set.of()).contains(k)) {
            continue;
          }
          for (int i = 0; i < 2; i++) {
            System.gc(); // mappings of the last cell go with their buffers
          }
          tool(tool, "limit", "max");
          tool(tool, "evict", index.toString());
          tool(tool, "limit", "--cache", Long.toString((long) (bytes * pct / 100.0) + slack));
          try (Directory d = k.open(index); DirectoryReader r = DirectoryReader.open(d)) {
            IndexSearcher s = new IndexSearcher(r);
            search(s, queries, threads, warm);
            Drive dr = search(s, queries, threads, window);
            out.append(String.format(Locale.ROOT, "%d\t%d\t%s\t%.2f\t%.3f%n", pct, round, k,
                dr.queries / dr.seconds, dr.p99));
            System.out.printf(Locale.ROOT, "    %d%% %-30s %8.1f q/s%n", pct, k.label, dr.queries / dr.seconds);
            first.put(k, dr.queries / dr.seconds);
          }
        }
        if (round == 0) {
          double best = Arrays.stream(BUILTINS).mapToDouble(b -> first.getOrDefault(b, 0.0)).max().orElse(0);
          Set<Kind> far = EnumSet.noneOf(Kind.class);
          for (Kind b : BUILTINS) {
            if (first.getOrDefault(b, 0.0) < LTM_FAR_BEHIND * best) {
              far.add(b);
              System.out.printf(Locale.ROOT, "    %d%% %s: %.2fx the best built-in, below %.1fx: no more rounds here%n",
                  pct, b.label, first.getOrDefault(b, 0.0) / best, LTM_FAR_BEHIND);
            }
          }
          farBehind.put(pct, far);
        }
      }
    }
    tool(tool, "limit", "max");
    Files.write(res, out.toString().getBytes(StandardCharsets.UTF_8));
  }

  private static String tool(String tool, String... args) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(tool);
    cmd.addAll(Arrays.asList(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String o = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (p.waitFor() != 0) {
      throw new IllegalStateException(String.join(" ", cmd) + ": " + o.trim());
    }
    return o;
  }

  static void deleteTree(Path p) throws IOException {
    if (!Files.exists(p)) {
      return;
    }
    try (Stream<Path> s = Files.walk(p)) {
      s.sorted(Comparator.reverseOrder()).forEach(f -> {
        try {
          Files.delete(f);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
    }
  }

  // ---- JSON ----

  private static String json(Object o) {
    if (o == null) {
      return "null";
    }
    if (o instanceof String) {
      StringBuilder sb = new StringBuilder("\"");
      for (char c : ((String) o).toCharArray()) {
        if (c == '"' || c == '\\') {
          sb.append('\\').append(c);
        } else if (c < 0x20) {
          sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
        } else {
          sb.append(c);
        }
      }
      return sb.append('"').toString();
    }
    if (o instanceof double[]) {
      StringBuilder sb = new StringBuilder("[");
      for (double d : (double[]) o) {
        sb.append(sb.length() > 1 ? ", " : "").append(json(d));
      }
      return sb.append(']').toString();
    }
    if (o instanceof Double) {
      double d = (Double) o;
      return Double.isFinite(d) ? Double.toString(d) : "null";
    }
    return o.toString();
  }

  private void write(Path file, String host) throws IOException {
    StringBuilder sb = new StringBuilder();
    sb.append("{\"suite\": \"lucene-java\", \"file_mib\": ").append(quick ? 8 : 64)
        .append(", \"host\": ").append(json(host)).append(", \"date\": ")
        .append(json(java.time.Instant.now().toString())).append(",\n \"results\": [\n");
    for (int i = 0; i < rows.size(); i++) {
      sb.append("  {");
      int n = 0;
      for (Map.Entry<String, Object> e : rows.get(i).entrySet()) {
        sb.append(n++ > 0 ? ", " : "").append(json(e.getKey())).append(": ").append(json(e.getValue()));
      }
      sb.append(i + 1 < rows.size() ? "},\n" : "}\n");
    }
    sb.append(" ]}\n");
    Files.createDirectories(file.getParent());
    Files.write(file, sb.toString().getBytes(StandardCharsets.UTF_8));
  }

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("ltm-child")) {
      ltmChild(args);
      return;
    }
    Path out = null;
    Path dir = Paths.get(System.getProperty("java.io.tmpdir"));
    Path memlimit = null;
    Path cache = null;
    boolean quick = false;
    String only = null;
    String host = System.getProperty("os.name") + " " + System.getProperty("os.version");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--out": out = Paths.get(args[++i]); break;
        case "--dir": dir = Paths.get(args[++i]); break;
        case "--memlimit": memlimit = Paths.get(args[++i]); break;
        case "--cache": cache = Paths.get(args[++i]); break;
        case "--host": host = args[++i]; break;
        case "--only": only = args[++i]; break;
        case "--quick": quick = true; break;
        default: throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    if (out == null) {
      throw new IllegalArgumentException("--out DIR is required");
    }
    Path scratch = dir.resolve("bench-scratch-lucene-java");
    deleteTree(scratch);
    Files.createDirectories(scratch);
    LuceneBench b = new LuceneBench(scratch, quick);
    Corpus corpus = new Corpus(50_000, 3);
    try {
      if (only == null || only.startsWith("Read")) {
        b.reads(quick ? 3 : 11, quick ? 8 : 64, quick ? 20_000 : 200_000);
      }
      if (only == null || only.equals("Indexing")) {
        // many short rounds, not a few long ones: a virtual machine's host slows a CPU for
        // seconds at a time, which then takes one round of twelve, not one of three
        b.indexing(corpus, quick ? 2 : 12, quick ? 4_000 : 10_000);
      }
      if (only == null || only.equals("ParallelSearch")) {
        // nine 1 s rounds, not three of 3 s, for the same reason: a slowed CPU then takes one
        // round of nine, where it took a third of the row's rounds
        b.parallelSearch(corpus, quick ? 2 : 9, quick ? 5_000 : 50_000, 1);
      }
      if (only == null || only.equals("SearchLargerThanMemory")) {
        b.largerThanMemory(corpus, memlimit, cache != null ? cache : dir.resolve("ltm-cache-java"),
            quick ? 20_000 : 320_000, quick ? 2 : 3, 1.5, 1.5); // two: a quick run screens too
      }
      b.write(out.resolve("lucene_java.json"), host);
      System.out.println("wrote " + out.resolve("lucene_java.json") + " (checksum " + b.sink + ")");
    } finally {
      deleteTree(scratch);
    }
  }
}
