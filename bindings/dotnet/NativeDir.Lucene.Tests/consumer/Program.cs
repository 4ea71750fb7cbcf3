using System;
using System.IO;
using Lucene.Net.Analysis.Core;
using Lucene.Net.Documents;
using Lucene.Net.Index;
using Lucene.Net.Search;
using Lucene.Net.Util;
using NativeDir.Lucene;

// Index two documents, commit, reopen and search: the package, its NativeDir dependency and the
// native library must all resolve from the package cache.
string path = args.Length > 0 ? args[0] : Path.Combine(Path.GetTempPath(), "ndlucene-consumer");
if (System.IO.Directory.Exists(path))
    System.IO.Directory.Delete(path, true);
using (var dir = new NativeFSDirectory(path))
{
    using (var w = new IndexWriter(dir, new IndexWriterConfig(LuceneVersion.LUCENE_48, new WhitespaceAnalyzer(LuceneVersion.LUCENE_48))))
    {
        w.AddDocument(new Document { new TextField("body", "native directory for lucene", Field.Store.YES) });
        w.AddDocument(new Document { new TextField("body", "something else entirely", Field.Store.YES) });
        w.Commit();
    }
    using DirectoryReader r = DirectoryReader.Open(dir);
    TopDocs top = new IndexSearcher(r).Search(new TermQuery(new Term("body", "lucene")), 10);
    if (top.TotalHits != 1 || new IndexSearcher(r).Doc(top.ScoreDocs[0].Doc).Get("body") != "native directory for lucene")
    {
        Console.Error.WriteLine($"consumer: wrong search result ({top.TotalHits} hits)");
        return 1;
    }
}
Console.WriteLine($"consumer: NativeDir.Lucene from its package indexed, committed and found 1 hit (native library {NativeDir.NativeDirectory.LibraryVersion})");
return 0;
