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

        [Fact]
        public void SameHitsAndScoresAsSimpleFSDirectory()
        {
            var docs = SdkDocsCorpus.Load(MaxDocs);
            using var t = new TestDir("e2e");
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
