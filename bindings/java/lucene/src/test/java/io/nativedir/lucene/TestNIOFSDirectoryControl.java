package io.nativedir.lucene;

import java.io.IOException;
import java.nio.file.Path;
import org.apache.lucene.store.BaseDirectoryTestCase;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.NIOFSDirectory;

/** The control: Lucene's generic directory suite on its own NIOFSDirectory, run beside ours. */
public class TestNIOFSDirectoryControl extends BaseDirectoryTestCase {
  @Override
  protected Directory getDirectory(Path path) throws IOException {
    return new NIOFSDirectory(path);
  }
}
