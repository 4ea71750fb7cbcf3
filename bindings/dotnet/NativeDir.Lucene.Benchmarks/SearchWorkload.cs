using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Lucene.Net.Analysis.Standard;
using Lucene.Net.Documents;
using Lucene.Net.Index;
using Lucene.Net.QueryParsers.Classic;
using Lucene.Net.Search;
using Lucene.Net.Store;
using Lucene.Net.Util;
using NativeDir.Lucene.Tests;
using LuceneDirectory = Lucene.Net.Store.Directory;

namespace NativeDir.Lucene.Benchmarks
{
    /// <summary>
    /// Indexing and parallel search on the SDK documentation corpus: many queries through
    /// Parallel.For over one IndexReader/IndexSearcher, as in the report of apache/lucenenet#1151.
    /// </summary>
    internal static class SearchWorkload
    {
        private static List<(string Id, string Body)> _corpus;

        internal static List<(string Id, string Body)> Corpus(int max)
        {
            if (_corpus == null || _corpus.Count < max)
                _corpus = SdkDocsCorpus.Load(max);
            return _corpus.Count > max ? _corpus.GetRange(0, max) : _corpus;
        }

        /// <summary>Indexes <paramref name="docs"/> with the default IndexWriterConfig and commits
        /// (which syncs every file).</summary>
        internal static void Index(LuceneDirectory dir, List<(string Id, string Body)> docs)
        {
            var cfg = new IndexWriterConfig(LuceneVersion.LUCENE_48, new StandardAnalyzer(LuceneVersion.LUCENE_48))
            {
                OpenMode = OpenMode.CREATE,
            };
            using var w = new IndexWriter(dir, cfg);
            var id = new StringField("id", "", Field.Store.YES);
            var body = new TextField("body", "", Field.Store.YES);
            var doc = new Document { id, body };
            foreach (var (i, b) in docs)
            {
                id.SetStringValue(i);
                body.SetStringValue(b);
                w.AddDocument(doc);
            }
            w.Commit();
        }

        /// <summary>A fixed mix of term, boolean, phrase and prefix queries over the corpus'
        /// <paramref name="vocabulary"/> most frequent words (the same for every directory).</summary>
        internal static Query[] Queries(List<(string Id, string Body)> docs, int count, int vocabulary = 400)
        {
            var words = docs.Take(Math.Max(5000, vocabulary * 5))
                .SelectMany(d => d.Body.Split(new[] { ' ', '.', ',', '(', ')', '<', '>', '"' }, StringSplitOptions.RemoveEmptyEntries))
                .Where(w => w.Length >= 5 && w.All(char.IsLetter))
                .Select(w => w.ToLowerInvariant())
                .GroupBy(w => w)
                .OrderByDescending(g => g.Count()).ThenBy(g => g.Key, StringComparer.Ordinal)
                .Select(g => g.Key)
                .Take(vocabulary)
                .ToArray();
            var parser = new QueryParser(LuceneVersion.LUCENE_48, "body", new StandardAnalyzer(LuceneVersion.LUCENE_48));
            var rnd = new Random(1151);
            var queries = new Query[count];
            for (int i = 0; i < count; i++)
            {
                string a = words[rnd.Next(words.Length)], b = words[rnd.Next(words.Length)];
                string q = (i % 4) switch
                {
                    0 => a,
                    1 => $"+{a} +{b}",
                    2 => $"\"{a} {b}\"~4 {a}",
                    _ => $"{a.Substring(0, 4)}* {b}",
                };
                queries[i] = parser.Parse(q);
            }
            return queries;
        }

        /// <summary>Runs every query <paramref name="rounds"/> times in parallel, each returning
        /// its top 10 with their stored ids (a results page); returns the total hit count (the
        /// same for every directory).</summary>
        internal static long ParallelSearch(IndexSearcher searcher, Query[] queries, int rounds)
        {
            long total = 0;
            Parallel.For(0, queries.Length * rounds, i =>
            {
                TopDocs top = searcher.Search(queries[i % queries.Length], 10);
                long hits = top.TotalHits;
                // a results page: the stored id of every hit shown
                foreach (ScoreDoc sd in top.ScoreDocs)
                    hits += searcher.Doc(sd.Doc).Get("id").Length > 0 ? 0 : 1_000_000;
                Interlocked.Add(ref total, hits);
            });
            return total;
        }
    }
}
