package io.nativedir.lucene;

import java.io.IOException;
import java.nio.file.Path;
import org.apache.lucene.store.BaseLockFactoryTestCase;
import org.apache.lucene.store.Directory;

/** Lucene's generic lock factory suite on NativeLockFactory (nd_lock). */
public class TestNativeLockFactory extends BaseLockFactoryTestCase {
  @Override
  protected Directory getDirectory(Path path) throws IOException {
    return new NativeFSDirectory(path, NativeLockFactory.INSTANCE);
  }
}
