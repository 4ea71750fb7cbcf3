import io.nativedir.lucene.NativeFSDirectory;
import java.nio.file.Paths;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;

/**
 * Lucene (Java) on nativedir: index two documents, commit, search them.
 *
 * <pre>
 * CP=nativedir.jar:nativedir-lucene.jar:/usr/share/java/lucene-core-8.7.0.jar
 * javac -cp $CP LuceneExample.java && java -cp $CP:. LuceneExample /tmp/idx
 * </pre>
 */
public final class LuceneExample {
  public static void main(String[] args) throws Exception {
    String path = args.length > 0 ? args[0] : "lucene-example-index";
    // where FSDirectory.open(path) would be: searches read mapped, large merges read and write
    // with direct I/O, commits fsync the files and the folder, the lock dies with the process
    try (NativeFSDirectory dir = new NativeFSDirectory(Paths.get(path))) {
      IndexWriterConfig config = new IndexWriterConfig(new StandardAnalyzer())
          .setOpenMode(IndexWriterConfig.OpenMode.CREATE);
      try (IndexWriter writer = new IndexWriter(dir, config)) {
        writer.addDocument(doc("a native directory for Lucene"));
        writer.addDocument(doc("something else entirely"));
        writer.commit(); // durable: files and folder fsynced through nativedir
      }
      try (DirectoryReader reader = DirectoryReader.open(dir)) {
        IndexSearcher searcher = new IndexSearcher(reader);
        TopDocs hits = searcher.search(new TermQuery(new Term("body", "native")), 10);
        if (hits.scoreDocs.length != 1) {
          throw new IllegalStateException("expected one hit, got " + hits.scoreDocs.length);
        }
        for (ScoreDoc hit : hits.scoreDocs) {
          System.out.println("hit: " + searcher.doc(hit.doc).get("body"));
        }
      }
    }
  }

  private static Document doc(String text) {
    Document d = new Document();
    d.add(new TextField("body", text, Field.Store.YES));
    return d;
  }
}
