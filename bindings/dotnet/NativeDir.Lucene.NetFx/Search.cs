using System;
using Lucene.Net.Analysis.Core;
using Lucene.Net.Documents;
using Lucene.Net.Index;
using Lucene.Net.Search;
using Lucene.Net.Util;
using LuceneDirectory = Lucene.Net.Store.Directory;

namespace NetFxSearch
{
    /// <summary>What the library does with whatever directory it is given: index, commit, search.</summary>
    public static class IndexAndSearch
    {
        /// <summary>Indexes 50 documents into <paramref name="dir"/>, commits, and returns how many
        /// contain "word3" (10), after checking a stored field of each hit.</summary>
        public static int Run(LuceneDirectory dir)
        {
            var config = new IndexWriterConfig(LuceneVersion.LUCENE_48, new WhitespaceAnalyzer(LuceneVersion.LUCENE_48));
            using (var w = new IndexWriter(dir, config))
            {
                for (int i = 0; i < 50; i++)
                    w.AddDocument(new Document
                    {
                        new StringField("id", "doc" + i, Field.Store.YES),
                        new TextField("body", "document " + i + " word" + (i % 5), Field.Store.NO),
                    });
                w.Commit();
            }
            using (DirectoryReader r = DirectoryReader.Open(dir))
            {
                var searcher = new IndexSearcher(r);
                TopDocs top = searcher.Search(new TermQuery(new Term("body", "word3")), 100);
                foreach (ScoreDoc sd in top.ScoreDocs)
                {
                    string id = searcher.Doc(sd.Doc).Get("id");
                    if (int.Parse(id.Substring(3)) % 5 != 3)
                        throw new InvalidOperationException($"hit {id} does not contain word3");
                }
                return top.TotalHits;
            }
        }
    }
}
