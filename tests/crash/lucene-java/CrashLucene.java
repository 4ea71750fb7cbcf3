import io.nativedir.lucene.NativeFSDirectory;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.IntPoint;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.CheckIndex;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LogDocMergePolicy;
import org.apache.lucene.index.SegmentInfos;
import org.apache.lucene.index.SerialMergeScheduler;
import org.apache.lucene.index.Term;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.MMapDirectory;
import org.apache.lucene.store.NIOFSDirectory;

/**
 * Lucene (Java)'s commits at every power cut: the recorder and the checker crash_lucene.sh runs,
 * as it runs Lucene.NET's (tests/crash/lucene/Program.cs), with the same marks and files.
 *
 * <pre>
 *   record MOUNT KIND...  on the crash-model file system mounted at MOUNT, one IndexWriter per
 *                         directory kind (java-native, java-mmap, java-niofs) in
 *                         MOUNT/lucene-KIND: documents added, some deleted, committed COMMITS
 *                         times with merges; a mark in the log right after each commit() returns
 *                         names the commit's generation and live document count
 *   check STATES          every state lucene_sweep materialized under STATES opened and judged;
 *                         the verdicts go to STATES/verdicts.tsv
 * </pre>
 *
 * A verdict is one of: ok; empty (no commit, and none had been acknowledged); lost (the latest
 * commit is older than the last acknowledged one, or holds other documents than its commit did);
 * noopen (a commit is there but the index does not open); partial (likewise, but before the first
 * acknowledged commit: nothing was promised yet); checkindex (CheckIndex is not clean).
 */
public final class CrashLucene {
  private static final int COMMITS = 12;
  private static final int DOCS_PER_COMMIT = 6;
  private static final String MARK_NAME = ".crashfs-mark"; // crashlog.h: CL_MARK_NAME

  private CrashLucene() {}

  public static void main(String[] args) {
    int rc = 2;
    try {
      if (args.length >= 3 && args[0].equals("record")) {
        rc = record(Paths.get(args[1]), List.of(args).subList(2, args.length));
      } else if (args.length == 2 && args[0].equals("check")) {
        rc = check(Paths.get(args[1]));
      } else {
        System.err.println("usage: CrashLucene record MOUNT KIND... | check STATES");
      }
    } catch (Exception e) {
      System.err.println("crash_lucene: " + e);
      e.printStackTrace();
    }
    System.exit(rc);
  }

  private static Directory open(String kind, Path path) throws IOException {
    switch (kind) {
      case "java-native": return new NativeFSDirectory(path);
      case "java-mmap": return new MMapDirectory(path);
      case "java-niofs": return new NIOFSDirectory(path);
      default: throw new IllegalArgumentException("unknown directory kind '" + kind + "'");
    }
  }

  private static String words(Random rng, int n) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < n; i++) {
      if (i > 0) {
        sb.append(' ');
      }
      int len = 3 + rng.nextInt(6);
      for (int j = 0; j < len; j++) {
        sb.append((char) ('a' + rng.nextInt(12)));
      }
    }
    return sb.toString();
  }

  // ---- record ----

  private static int record(Path mount, List<String> kinds) throws IOException {
    // one write() per mark: crashfs makes each write to the mark file one log record (the file
    // cannot seek, and a channel opened for writing alone writes without seeking)
    try (FileChannel marks = FileChannel.open(mount.resolve(MARK_NAME), StandardOpenOption.WRITE)) {
      for (String kind : kinds) {
        String sub = "lucene-" + kind;
        Path path = mount.resolve(sub);
        mark(marks, "lucene begin " + kind + " " + sub + "\n");
        Files.createDirectories(path);
        // the index folder is durable in its parent before the index is written in it, as an
        // existing index folder would be: what is judged is what the Directory does inside it
        try (FileChannel d = FileChannel.open(mount, StandardOpenOption.READ)) {
          d.force(true);
        }
        Random rng = new Random(4242); // every kind writes the same documents
        try (Directory dir = open(kind, path)) {
          LogDocMergePolicy mp = new LogDocMergePolicy();
          // a merge every third segment: several merges (and merged segments replacing flushed
          // ones) within the run, each in the thread that commits
          mp.setMergeFactor(3);
          mp.setMinMergeDocs(1);
          IndexWriterConfig config = new IndexWriterConfig(new StandardAnalyzer())
              .setOpenMode(IndexWriterConfig.OpenMode.CREATE)
              .setMergePolicy(mp)
              .setMergeScheduler(new SerialMergeScheduler());
          IndexWriter writer = new IndexWriter(dir, config);
          int next = 0;
          int live = 0;
          long gen = 0;
          for (int c = 1; c <= COMMITS; c++) {
            for (int d = 0; d < DOCS_PER_COMMIT; d++, next++, live++) {
              Document doc = new Document();
              doc.add(new StringField("id", Integer.toString(next), Field.Store.YES));
              doc.add(new TextField("body", words(rng, 40 + rng.nextInt(200)), Field.Store.YES));
              doc.add(new IntPoint("n", next));
              doc.add(new StoredField("n", next));
              writer.addDocument(doc);
            }
            if (c % 4 == 0) {
              // deletes: live-docs files beside the segments
              for (int k = 0; k < 2; k++, live--) {
                writer.deleteDocuments(new Term("id", Integer.toString(next - 1 - 3 * k)));
              }
            }
            writer.commit();
            gen = SegmentInfos.getLastCommitGeneration(dir);
            mark(marks, "lucene commit " + kind + " " + gen + " " + live + "\n");
          }
          writer.close(); // commits the merges that ran after the last commit(), if any
          long last = SegmentInfos.getLastCommitGeneration(dir);
          if (last != gen) {
            mark(marks, "lucene commit " + kind + " " + last + " " + live + "\n");
          }
        }
        mark(marks, "lucene end " + kind + "\n");
      }
    }
    return 0;
  }

  private static void mark(FileChannel marks, String text) throws IOException {
    ByteBuffer b = ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
    int n = marks.write(b);
    if (b.hasRemaining()) {
      throw new IOException("mark not written whole (" + n + " bytes of " + b.limit() + ")");
    }
  }

  // ---- check ----

  private static int check(Path states) throws IOException {
    Map<Long, Integer> commits = new HashMap<>();
    for (String line : Files.readAllLines(states.resolve("commits.tsv"))) {
      String[] f = line.split("\t");
      commits.put(Long.parseLong(f[0]), Integer.parseInt(f[1]));
    }
    StringBuilder out = new StringBuilder();
    Map<String, Integer> tally = new TreeMap<>();
    int shown = 0;
    for (String line : Files.readAllLines(states.resolve("states.tsv"))) {
      String[] f = line.split("\t");
      String id = f[0];
      long acked = Long.parseLong(f[1]);
      int ackedDocs = Integer.parseInt(f[2]);
      Verdict v = judge(states.resolve("s" + id), acked, ackedDocs, commits);
      out.append(id).append('\t').append(v.verdict).append('\t').append(v.gen).append('\t')
          .append(v.docs).append('\n');
      tally.merge(v.verdict, 1, Integer::sum);
      if (!v.verdict.equals("ok") && !v.verdict.equals("empty") && !v.verdict.equals("partial")
          && shown++ < 6) {
        System.err.println("crash_lucene: state " + id + " (" + f[3] + "): " + v.verdict + ": " + v.why);
      }
    }
    Files.write(states.resolve("verdicts.tsv"), out.toString().getBytes(StandardCharsets.UTF_8));
    StringBuilder sb = new StringBuilder("crash_lucene check " + states + ":");
    tally.forEach((k, n) -> sb.append(' ').append(k).append('=').append(n));
    System.out.println(sb);
    return 0;
  }

  private static final class Verdict {
    String verdict;
    long gen;
    int docs;
    String why = "";
  }

  private static Verdict judge(Path path, long acked, int ackedDocs, Map<Long, Integer> commits)
      throws IOException {
    Verdict v = new Verdict();
    try (Directory dir = new NIOFSDirectory(path)) {
      if (!DirectoryReader.indexExists(dir)) {
        v.why = "no commit, though generation " + acked + " (" + ackedDocs + " documents) was acknowledged";
        v.verdict = acked == 0 ? "empty" : "lost";
        return v;
      }
      try (DirectoryReader reader = DirectoryReader.open(dir)) {
        v.gen = reader.getIndexCommit().getGeneration();
        v.docs = reader.numDocs();
      } catch (Exception e) {
        v.why = "the index does not open: " + e;
        // before the first acknowledged commit nothing was promised: a first commit cut short
        // (its segments_1 named but not all written) is counted apart
        v.verdict = acked == 0 ? "partial" : "noopen";
        return v;
      }
      if (v.gen < acked) {
        v.why = "the latest commit is generation " + v.gen + ", but generation " + acked + " was acknowledged";
        v.verdict = "lost";
        return v;
      }
      Integer want = commits.get(v.gen);
      if (want != null && want != v.docs) {
        v.why = "generation " + v.gen + " holds " + v.docs + " documents, its commit " + want;
        v.verdict = "lost";
        return v;
      }
      try (CheckIndex checker = new CheckIndex(dir)) {
        CheckIndex.Status status = checker.checkIndex();
        if (!status.clean) {
          v.why = "CheckIndex: not clean (generation " + v.gen + ", " + status.numBadSegments + " bad segments)";
          v.verdict = "checkindex";
          return v;
        }
      } catch (Exception e) {
        v.why = "CheckIndex threw " + e;
        v.verdict = "checkindex";
        return v;
      }
      v.verdict = "ok";
      return v;
    }
  }
}
