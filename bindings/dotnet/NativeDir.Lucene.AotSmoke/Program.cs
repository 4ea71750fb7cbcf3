using System;
using System.IO;
using Lucene.Net.Analysis.Standard;
using Lucene.Net.Documents;
using Lucene.Net.Index;
using Lucene.Net.Search;
using Lucene.Net.Util;
using NativeDir.Lucene;

// Lucene.NET on NativeFSDirectory, compiled ahead of time: index, commit, search, add more,
// reopen the reader and search again. Every result is checked; any failure exits non-zero.
string path = args.Length > 0 ? args[0] : Path.Combine(Path.GetTempPath(), "ndlucene-aot");
if (System.IO.Directory.Exists(path))
    System.IO.Directory.Delete(path, true);
const LuceneVersion V = LuceneVersion.LUCENE_48;
int failures = 0;
void Check(bool ok, string what)
{
    if (!ok)
    {
        Console.Error.WriteLine($"lucene-aot: FAILED: {what}");
        failures++;
    }
}
static Document Doc(int id, string body) => new Document
{
    new StringField("id", id.ToString(System.Globalization.CultureInfo.InvariantCulture), Field.Store.YES),
    new TextField("body", body, Field.Store.YES),
    new Int32Field("n", id, Field.Store.YES),
};

using (var dir = new NativeFSDirectory(path))
using (var w = new IndexWriter(dir, new IndexWriterConfig(V, new StandardAnalyzer(V))))
{
    for (int i = 0; i < 50; i++)
        w.AddDocument(Doc(i, i % 5 == 0 ? $"native directory number {i}" : $"plain document {i}"));
    w.Commit();
    DirectoryReader r = DirectoryReader.Open(dir);
    var s = new IndexSearcher(r);
    TopDocs top = s.Search(new TermQuery(new Term("body", "native")), 100);
    Check(top.TotalHits == 10, $"10 hits for 'native', got {top.TotalHits}");
    TopDocs range = s.Search(NumericRangeQuery.NewInt32Range("n", 10, 19, true, true), 100);
    Check(range.TotalHits == 10, $"10 hits for n in [10,19], got {range.TotalHits}");
    Check(s.Doc(s.Search(new TermQuery(new Term("id", "7")), 1).ScoreDocs[0].Doc).Get("body") == "plain document 7",
          "stored field of doc 7");

    // more documents, a delete, a commit, and the reader reopened on the new commit
    for (int i = 50; i < 60; i++)
        w.AddDocument(Doc(i, $"native late arrival {i}"));
    w.DeleteDocuments(new Term("id", "0"));
    w.Commit();
    DirectoryReader? newer = DirectoryReader.OpenIfChanged(r);
    Check(newer != null, "OpenIfChanged saw the new commit");
    if (newer != null)
    {
        r.Dispose();
        r = newer;
    }
    s = new IndexSearcher(r);
    top = s.Search(new TermQuery(new Term("body", "native")), 100);
    Check(top.TotalHits == 19, $"19 hits for 'native' after the reopen, got {top.TotalHits}");
    Check(r.NumDocs == 59, $"59 live documents, got {r.NumDocs}");
    w.ForceMerge(1); // a merge: NativeDir.Lucene's merge outputs
    w.Commit();
    r.Dispose();
    using DirectoryReader merged = DirectoryReader.Open(dir);
    Check(merged.Leaves.Count == 1 && merged.NumDocs == 59, $"one segment of 59 documents after ForceMerge, got {merged.Leaves.Count} of {merged.NumDocs}");
}
if (failures != 0)
    return 1;
Console.WriteLine($"lucene-aot: Lucene.NET on NativeFSDirectory ran compiled ahead of time: indexed, committed, searched, reopened and merged (native library {NativeDir.NativeDirectory.LibraryVersion})");
return 0;
