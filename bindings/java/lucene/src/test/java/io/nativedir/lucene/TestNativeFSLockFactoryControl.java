package io.nativedir.lucene;

import java.io.IOException;
import java.nio.file.Path;
import org.apache.lucene.store.BaseLockFactoryTestCase;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.NIOFSDirectory;
import org.apache.lucene.store.NativeFSLockFactory;

/** The control: the same suite on Lucene's own NIOFSDirectory and NativeFSLockFactory. */
public class TestNativeFSLockFactoryControl extends BaseLockFactoryTestCase {
  @Override
  protected Directory getDirectory(Path path) throws IOException {
    return new NIOFSDirectory(path, NativeFSLockFactory.INSTANCE);
  }
}
