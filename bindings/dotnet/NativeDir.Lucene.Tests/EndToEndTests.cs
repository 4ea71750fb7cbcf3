using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Xml.Linq;
using Lucene.Net.Analysis.Standard;
using Lucene.Net.Documents;
using Lucene.Net.Index;
using Lucene.Net.QueryParsers.Classic;
using Lucene.Net.Search;
using Lucene.Net.Store;
using Lucene.Net.Util;
using NativeDir.Testing;
using Xunit;

using LuceneDirectory = Lucene.Net.Store.Directory;

namespace NativeDir.Lucene.Tests
{
    /// <summary>
    /// A real corpus indexed into NativeFSDirectory and into Lucene.NET's SimpleFSDirectory with
    /// the same single-threaded configuration must give the same hits with bit-identical scores,
    /// before and after ForceMerge(1). The corpus is the API documentation the .NET SDK ships
    /// (packs/Microsoft.NETCore.App.Ref/*/ref/net*/*.xml), which every machine with the SDK has.
    /// </summary>
    public class EndToEndTests
    {
        private const int MaxDocs = 25_000;

        private static readonly string[] Queries =
        {
            "string", "exception thrown", "\"returns the\"", "collect*", "+value -null",
            "dispos~", "collection AND generic", "thread OR task", "\"specified index\"~3",
            "buffer^2 span", "encoding utf8", "stream -memory", "id:M\\:System.String.Concat*",
        };

        private readonly ITestOutputHelper _log;

        public EndToEndTests(ITestOutputHelper log) => _log = log;

        private static IndexWriterConfig Config(OpenMode mode)
        {
            var cfg = new IndexWriterConfig(LuceneVersion.LUCENE_48, new StandardAnalyzer(LuceneVersion.LUCENE_48))
            {
                OpenMode = mode,
                MaxBufferedDocs = 1500, // many flushed (compound) segments, then merged ones
                RAMBufferSizeMB = IndexWriterConfig.DISABLE_AUTO_FLUSH,
                MergeScheduler = new SerialMergeScheduler(),
                MergePolicy = new LogDocMergePolicy { MergeFactor = 4 },
            };
            return cfg;
        }

        private static void Index(LuceneDirectory dir, List<(string Id, string Body)> docs)
        {
            using var w = new IndexWriter(dir, Config(OpenMode.CREATE));
            var id = new StringField("id", "", Field.Store.YES);
            var body = new TextField("body", "", Field.Store.NO);
            var doc = new Document { id, body };
            foreach (var (i, b) in docs)
            {
                id.SetStringValue(i);
                body.SetStringValue(b);
                w.AddDocument(doc);
            }
            w.Commit();
        }

        private static void ForceMerge(LuceneDirectory dir)
        {
            using var w = new IndexWriter(dir, Config(OpenMode.APPEND));
            w.ForceMerge(1);
            w.Commit();
        }

        private static List<string> Search(LuceneDirectory dir, out int segments)
        {
            using DirectoryReader r = DirectoryReader.Open(dir);
            segments = r.Leaves.Count;
            var searcher = new IndexSearcher(r);
            var parser = new QueryParser(LuceneVersion.LUCENE_48, "body", new StandardAnalyzer(LuceneVersion.LUCENE_48));
            var lines = new List<string>();
            foreach (string q in Queries)
            {
                TopDocs top = searcher.Search(parser.Parse(q), 40);
                lines.Add($"{q} total={top.TotalHits}");
                foreach (ScoreDoc sd in top.ScoreDocs)
                    lines.Add($"  {sd.Doc} {BitConverter.SingleToInt32Bits(sd.Score):X8} {searcher.Doc(sd.Doc).Get("id")}");
            }
            return lines;
        }

        /// <summary>The whole workload as a list of outcomes, one per step (what it found, or the
        /// exception that stopped it): on Mono, where Lucene.NET 4.8 itself fails, the two
        /// directories must fail alike.</summary>
        private static List<string> Outcomes(LuceneDirectory dir, List<(string Id, string Body)> docs)
        {
            var steps = new List<string>();
            bool Step(string name, Func<string> body)
            {
                try
                {
                    steps.Add($"{name}: {body()}");
                    return true;
                }
                catch (Exception e)
                {
                    steps.Add($"{name}: !{e.GetType().Name}");
                    return false;
                }
            }
            _ = Step("index", () => { Index(dir, docs); return "ok"; })
                && Step("search", () => string.Join("\n", Search(dir, out int s1)) + $"\nsegments={s1}")
                && Step("merge", () => { ForceMerge(dir); return "ok"; })
                && Step("search after merge", () => string.Join("\n", Search(dir, out int s2)) + $"\nsegments={s2}");
            Step("CheckIndex", () => new CheckIndex(dir).DoCheckIndex().Clean ? "clean" : "problems");
            return steps;
        }

        [Fact]
        public void SameHitsAndScoresAsSimpleFSDirectory()
        {
            var docs = SdkDocsCorpus.Load(MaxDocs);
            using var t = new TestDir("e2e");
            if (Platform.Mono != null)
            {
                // Lucene.NET 4.8 on Mono breaks on its own directories too (README.md, "Mono"):
                // each step's outcome must be SimpleFSDirectory's on this runtime
                using var n = new NativeFSDirectory(t.Sub("native"));
                using var sfs = new SimpleFSDirectory(new DirectoryInfo(t.Sub("simple")));
                List<string> ours = Outcomes(n, docs), theirs = Outcomes(sfs, docs);
                foreach (string step in theirs)
                    _log.WriteLine("SimpleFSDirectory on Mono: " + step.Split('\n')[0] + (step.Contains('\n') ? " ..." : ""));
                Assert.Equal(theirs, ours);
                return;
            }
            var watch = System.Diagnostics.Stopwatch.StartNew();
            using var native = new NativeFSDirectory(t.Sub("native"));
            using var simple = new SimpleFSDirectory(new DirectoryInfo(t.Sub("simple")));
            Index(native, docs);
            Index(simple, docs);
            _log.WriteLine($"indexed {docs.Count} documents twice in {watch.ElapsedMilliseconds} ms");

            List<string> a = Search(native, out int segA);
            List<string> b = Search(simple, out int segB);
            Assert.True(segA > 1, $"expected several segments, got {segA}");
            Assert.Equal(segB, segA);
            Assert.Equal(b, a);
            int withHits = a.Count(l => !l.StartsWith(" ") && !l.EndsWith("total=0"));
            Assert.True(withHits >= Queries.Length - 1, string.Join("\n", a.Where(l => !l.StartsWith(" "))));
            Assert.Contains(native.ListAll(), f => f.EndsWith(".cfs"));

            ForceMerge(native);
            ForceMerge(simple);
            List<string> a2 = Search(native, out segA);
            List<string> b2 = Search(simple, out segB);
            Assert.Equal(1, segA);
            Assert.Equal(1, segB);
            Assert.Equal(b2, a2);
            // the same documents match after the merge (doc ids may be renumbered)
            Assert.Equal(a.Where(l => !l.StartsWith(" ")), a2.Where(l => !l.StartsWith(" ")));

            // every file's footer checksum verifies (written with the native CRC-32)
            var check = new CheckIndex(native);
            CheckIndex.Status st = check.DoCheckIndex();
            Assert.True(st.Clean, "CheckIndex found problems");
            _log.WriteLine($"total {watch.ElapsedMilliseconds} ms; files: {string.Join(" ", native.ListAll())}");
        }

        [Fact]
        public void SecondWriterIsRefused()
        {
            using var t = new TestDir("twowriters");
            using var d1 = new NativeFSDirectory(t.Path);
            using var d2 = new NativeFSDirectory(t.Path);
            using var w = new IndexWriter(d1, Config(OpenMode.CREATE));
            w.AddDocument(new Document { new StringField("id", "1", Field.Store.YES) });
            w.Commit();
            var cfg = Config(OpenMode.APPEND);
            cfg.WriteLockTimeout = 100;
            Assert.Throws<LockObtainFailedException>(() => new IndexWriter(d2, cfg));
            var same = Config(OpenMode.APPEND);
            same.WriteLockTimeout = 50;
            Assert.Throws<LockObtainFailedException>(() => new IndexWriter(d1, same)); // same directory object too
            w.Dispose();
            using (var w2 = new IndexWriter(d2, Config(OpenMode.APPEND)))
            {
                w2.AddDocument(new Document { new StringField("id", "2", Field.Store.YES) });
                w2.Commit();
            }
            using DirectoryReader r = DirectoryReader.Open(d1);
            Assert.Equal(2, r.NumDocs);
        }

        [Fact]
        public void CommittedIndexSurvivesReopeningFromAnotherDirectoryObject()
        {
            using var t = new TestDir("reopen");
            var docs = SdkDocsCorpus.Load(2000);
            if (Platform.Mono != null)
            {
                // Lucene.NET 4.8 on Mono: the verdicts must be those of its own directory
                string Verdicts(Func<string, LuceneDirectory> make, string sub)
                {
                    try
                    {
                        using (LuceneDirectory w = make(t.Sub(sub)))
                            Index(w, docs);
                        using var s = new SimpleFSDirectory(new DirectoryInfo(t.Sub(sub)));
                        using DirectoryReader dr = DirectoryReader.Open(s);
                        return $"{dr.NumDocs} docs, CheckIndex clean: {new CheckIndex(s).DoCheckIndex().Clean}";
                    }
                    catch (Exception e)
                    {
                        return "!" + e.GetType().Name;
                    }
                }
                string builtIn = Verdicts(p => new SimpleFSDirectory(new DirectoryInfo(p)), "simple");
                _log.WriteLine($"SimpleFSDirectory on Mono: {builtIn}");
                Assert.Equal(builtIn, Verdicts(p => new NativeFSDirectory(p), "native"));
                return;
            }
            using (var d = new NativeFSDirectory(t.Path))
                Index(d, docs);
            // the files are ordinary Lucene files: Lucene.NET's own directory reads them
            using var simple = new SimpleFSDirectory(new DirectoryInfo(t.Path));
            using DirectoryReader r = DirectoryReader.Open(simple);
            Assert.Equal(docs.Count, r.NumDocs);
            Assert.True(new CheckIndex(simple).DoCheckIndex().Clean);
        }
    }
}
