// Lucene.NET's commits at every power cut: the recorder and the checker of crash_lucene.sh.
//
//   record MOUNT KIND...   on the crash-model file system mounted at MOUNT, one IndexWriter per
//                          directory kind (native, mmap, niofs, simplefs) in MOUNT/lucene-KIND:
//                          documents added, some deleted, committed COMMITS times with merges; a
//                          mark in the log right after each Commit() returns names the commit's
//                          generation and live document count
//   check STATES           every state lucene_sweep materialized under STATES (states.tsv: id,
//                          the last acknowledged generation and its documents; commits.tsv: every
//                          recorded commit) opened and judged; the verdicts go to verdicts.tsv
//
// A verdict is one of: ok; empty (no commit, and none had been acknowledged); lost (the latest
// commit is older than the last acknowledged one, or holds other documents than its commit did);
// noopen (a commit is there but the index does not open); partial (likewise, but before the first
// acknowledged commit: nothing was promised yet); checkindex (CheckIndex is not clean).
using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Runtime.InteropServices;
using System.Text;
using Lucene.Net.Analysis.Standard;
using Lucene.Net.Documents;
using Lucene.Net.Index;
using Lucene.Net.Store;
using Lucene.Net.Util;
using LuceneDirectory = Lucene.Net.Store.Directory;

internal static class Program
{
    private const int Commits = 12;
    private const int DocsPerCommit = 6;
    private const string MarkName = ".crashfs-mark"; // crashlog.h: CL_MARK_NAME

    private static int Main(string[] args)
    {
        try
        {
            if (args.Length >= 3 && args[0] == "record")
                return Record(args[1], args[2..]);
            if (args.Length == 2 && args[0] == "check")
                return Check(args[1]);
        }
        catch (Exception e)
        {
            Console.Error.WriteLine($"crash_lucene: {e}");
            return 2;
        }
        Console.Error.WriteLine("usage: NativeDir.CrashLucene record MOUNT KIND... | check STATES");
        return 2;
    }

    private static LuceneDirectory Open(string kind, string path)
    {
        var info = new DirectoryInfo(path);
        return kind switch
        {
            "native" => new NativeDir.Lucene.NativeFSDirectory(info),
            "mmap" => new MMapDirectory(info),
            "niofs" => new NIOFSDirectory(info),
            "simplefs" => new SimpleFSDirectory(info),
            _ => throw new ArgumentException($"unknown directory kind '{kind}'"),
        };
    }

    // ---- record ----

    [DllImport("libc", SetLastError = true)]
    private static extern int open([MarshalAs(UnmanagedType.LPUTF8Str)] string path, int flags);

    [DllImport("libc", SetLastError = true)]
    private static extern int fsync(int fd);

    [DllImport("libc")]
    private static extern int close(int fd);

    [DllImport("libc", SetLastError = true)]
    private static extern nint write(int fd, byte[] buf, nint count);

    // The index directory is made durable in its parent before the index is written in it, as an
    // existing index directory would be: what is judged is what the Directory does inside it.
    private static void SyncDir(string path)
    {
        int fd = open(path, 0);
        if (fd < 0 || fsync(fd) != 0)
            throw new IOException($"fsync of directory {path} failed: errno {Marshal.GetLastPInvokeError()}");
        close(fd);
    }

    private static string Words(Random rng, int n)
    {
        var sb = new StringBuilder();
        for (int i = 0; i < n; i++)
        {
            if (i > 0)
                sb.Append(' ');
            int len = 3 + rng.Next(6);
            for (int j = 0; j < len; j++)
                sb.Append((char)('a' + rng.Next(12)));
        }
        return sb.ToString();
    }

    private static int Record(string mount, string[] kinds)
    {
        // one write() per mark: crashfs makes each write to the mark file one log record (and the
        // file cannot seek, so it is written with the plain system call)
        int marks = open(Path.Combine(mount, MarkName), 1 /* O_WRONLY */);
        if (marks < 0)
            throw new IOException($"cannot open the mark file: errno {Marshal.GetLastPInvokeError()}");
        void Mark(string text)
        {
            byte[] b = Encoding.UTF8.GetBytes(text);
            if (write(marks, b, b.Length) != b.Length)
                throw new IOException($"mark not written: errno {Marshal.GetLastPInvokeError()}");
        }

        foreach (string kind in kinds)
        {
            string sub = "lucene-" + kind;
            string path = Path.Combine(mount, sub);
            Mark($"lucene begin {kind} {sub}\n");
            System.IO.Directory.CreateDirectory(path);
            SyncDir(mount);
            var rng = new Random(4242); // every kind writes the same documents
            using (LuceneDirectory dir = Open(kind, path))
            {
                var config = new IndexWriterConfig(LuceneVersion.LUCENE_48, new StandardAnalyzer(LuceneVersion.LUCENE_48))
                {
                    OpenMode = OpenMode.CREATE,
                    // a merge every third segment: several merges (and merged segments replacing
                    // flushed ones) within the run, each in the thread that commits
                    MergePolicy = new LogDocMergePolicy { MergeFactor = 3, MinMergeDocs = 1 },
                    MergeScheduler = new SerialMergeScheduler(),
                };
                var writer = new IndexWriter(dir, config);
                int next = 0, live = 0;
                long gen = 0;
                for (int c = 1; c <= Commits; c++)
                {
                    for (int d = 0; d < DocsPerCommit; d++, next++, live++)
                    {
                        var doc = new Document
                        {
                            new StringField("id", next.ToString(CultureInfo.InvariantCulture), Field.Store.YES),
                            new TextField("body", Words(rng, 40 + rng.Next(200)), Field.Store.YES),
                            new Int32Field("n", next, Field.Store.YES),
                        };
                        writer.AddDocument(doc);
                    }
                    if (c % 4 == 0)
                    {
                        // deletes: live-docs files beside the segments
                        for (int k = 0; k < 2; k++, live--)
                            writer.DeleteDocuments(new Term("id", (next - 1 - 3 * k).ToString(CultureInfo.InvariantCulture)));
                    }
                    writer.Commit();
                    gen = SegmentInfos.GetLastCommitGeneration(dir);
                    Mark($"lucene commit {kind} {gen} {live}\n");
                }
                writer.Dispose(); // commits the merges that ran after the last Commit(), if any
                long last = SegmentInfos.GetLastCommitGeneration(dir);
                if (last != gen)
                    Mark($"lucene commit {kind} {last} {live}\n");
            }
            Mark($"lucene end {kind}\n");
        }
        close(marks);
        return 0;
    }

    // ---- check ----

    private static int Check(string states)
    {
        var commits = new Dictionary<long, int>();
        foreach (string line in File.ReadAllLines(Path.Combine(states, "commits.tsv")))
        {
            string[] f = line.Split('\t');
            commits[long.Parse(f[0], CultureInfo.InvariantCulture)] = int.Parse(f[1], CultureInfo.InvariantCulture);
        }
        var output = new StringBuilder();
        var tally = new SortedDictionary<string, int>(StringComparer.Ordinal);
        int shown = 0;
        foreach (string line in File.ReadAllLines(Path.Combine(states, "states.tsv")))
        {
            string[] f = line.Split('\t');
            string id = f[0];
            long acked = long.Parse(f[1], CultureInfo.InvariantCulture);
            int ackedDocs = int.Parse(f[2], CultureInfo.InvariantCulture);
            string why;
            string verdict = Judge(Path.Combine(states, "s" + id), acked, ackedDocs, commits, out long gen, out int docs, out why);
            output.Append(id).Append('\t').Append(verdict).Append('\t').Append(gen).Append('\t').Append(docs).Append('\n');
            tally[verdict] = tally.TryGetValue(verdict, out int n) ? n + 1 : 1;
            if (verdict != "ok" && verdict != "empty" && verdict != "partial" && shown++ < 6)
                Console.Error.WriteLine($"crash_lucene: state {id} ({f[3]}): {verdict}: {why}");
        }
        File.WriteAllText(Path.Combine(states, "verdicts.tsv"), output.ToString());
        var sb = new StringBuilder($"crash_lucene check {states}:");
        foreach (var (verdict, n) in tally)
            sb.Append(' ').Append(verdict).Append('=').Append(n);
        Console.WriteLine(sb.ToString());
        return 0;
    }

    private static string Judge(string path, long acked, int ackedDocs, Dictionary<long, int> commits,
                                out long gen, out int docs, out string why)
    {
        gen = 0;
        docs = 0;
        why = "";
        using var dir = new NIOFSDirectory(new DirectoryInfo(path));
        if (!DirectoryReader.IndexExists(dir))
        {
            why = $"no commit, though generation {acked} ({ackedDocs} documents) was acknowledged";
            return acked == 0 ? "empty" : "lost";
        }
        try
        {
            using var reader = DirectoryReader.Open(dir);
            gen = reader.IndexCommit.Generation;
            docs = reader.NumDocs;
        }
        catch (Exception e)
        {
            why = $"the index does not open: {e.GetType().Name}: {e.Message}";
            // before the first acknowledged commit nothing was promised: a first commit cut
            // short (its segments_1 named but not all written) is counted apart
            return acked == 0 ? "partial" : "noopen";
        }
        if (gen < acked)
        {
            why = $"the latest commit is generation {gen}, but generation {acked} was acknowledged";
            return "lost";
        }
        if (commits.TryGetValue(gen, out int want) && want != docs)
        {
            why = $"generation {gen} holds {docs} documents, its commit {want}";
            return "lost";
        }
        try
        {
            var status = new CheckIndex(dir).DoCheckIndex();
            if (!status.Clean)
            {
                why = $"CheckIndex: not clean (generation {gen}, {status.NumBadSegments} bad segments)";
                return "checkindex";
            }
        }
        catch (Exception e)
        {
            why = $"CheckIndex threw {e.GetType().Name}: {e.Message}";
            return "checkindex";
        }
        return "ok";
    }
}
