package io.nativedir.lucene;

import io.nativedir.NativeDirectory;
import io.nativedir.NativeIOException;
import io.nativedir.NativeLock;
import java.io.IOException;
import org.apache.lucene.store.AlreadyClosedException;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.store.FSLockFactory;
import org.apache.lucene.store.Lock;
import org.apache.lucene.store.LockObtainFailedException;

/**
 * Locks on the library's nd_lock: exclusive across processes and within this one, released by
 * the OS when the process dies (no stale lock file to remove by hand), the lock file created if
 * missing and left in place. For any FSDirectory, as Lucene's NativeFSLockFactory.
 */
public final class NativeLockFactory extends FSLockFactory {
  /** The one instance (it keeps no state: every lock holds its own handles). */
  public static final NativeLockFactory INSTANCE = new NativeLockFactory();

  private NativeLockFactory() {}

  @Override
  protected Lock obtainFSLock(FSDirectory dir, String lockName) throws IOException {
    // a directory handle of the lock's own: the lock may outlive the Directory that made it
    NativeDirectory nd = NativeDirectory.open(NativeFSDirectory.localPath(dir.getDirectory()), true);
    try {
      return new NativeDirLock(nd, nd.lock(lockName));
    } catch (NativeIOException e) {
      nd.close();
      if ("ND_E_LOCKED".equals(e.statusName())) {
        throw new LockObtainFailedException("Lock held by another program or this process: "
            + dir.getDirectory().resolve(lockName), e);
      }
      throw e;
    } catch (IOException | RuntimeException e) {
      nd.close();
      throw e;
    }
  }

  @Override
  public String toString() {
    return "NativeLockFactory";
  }

  private static final class NativeDirLock extends Lock {
    private final NativeDirectory dir;
    private final NativeLock lock;
    private volatile boolean closed;

    NativeDirLock(NativeDirectory dir, NativeLock lock) {
      this.dir = dir;
      this.lock = lock;
    }

    @Override
    public void ensureValid() throws IOException {
      if (closed) {
        throw new AlreadyClosedException("Lock instance already released: " + this);
      }
      // the lock is the file's: one deleted (or replaced by a folder) by an external force no
      // longer excludes anyone who opens the name now
      if (!dir.exists(lock.name())) {
        throw new AlreadyClosedException("the lock file was removed by an external force: " + this);
      }
    }

    @Override
    public synchronized void close() throws IOException {
      if (closed) {
        return;
      }
      closed = true;
      try {
        lock.close();
      } finally {
        dir.close();
      }
    }

    @Override
    public String toString() {
      return "NativeDirLock(" + dir.path().resolve(lock.name()) + (closed ? ", released" : "") + ")";
    }
  }
}
