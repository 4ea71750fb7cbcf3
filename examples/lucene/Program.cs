// Lucene.NET on NativeDir: index two documents on a NativeFSDirectory, commit, search.
using Lucene.Net.Analysis.Standard;
using Lucene.Net.Documents;
using Lucene.Net.Index;
using Lucene.Net.Search;
using Lucene.Net.Util;
using NativeDir.Lucene;

string path = args.Length > 0 ? args[0] : "example-index";
const LuceneVersion version = LuceneVersion.LUCENE_48;

// where FSDirectory.Open(path) would be: searches read mapped, large merges read and write with direct I/O
using var dir = new NativeFSDirectory(path);
using (var writer = new IndexWriter(dir, new IndexWriterConfig(version, new StandardAnalyzer(version))
       { OpenMode = OpenMode.CREATE }))
{
    writer.AddDocument(new Document { new TextField("body", "a native directory for Lucene.NET", Field.Store.YES) });
    writer.AddDocument(new Document { new TextField("body", "something else entirely", Field.Store.YES) });
    writer.Commit();                      // durable: files and directory fsynced
}

using DirectoryReader reader = DirectoryReader.Open(dir);
var searcher = new IndexSearcher(reader);
TopDocs hits = searcher.Search(new TermQuery(new Term("body", "lucene.net")), 10);
foreach (ScoreDoc hit in hits.ScoreDocs)
    Console.WriteLine($"{hit.Score:0.00} {searcher.Doc(hit.Doc).Get("body")}");
if (hits.TotalHits != 1)
    throw new InvalidOperationException($"expected 1 hit, got {hits.TotalHits}");
