package io.nativedir;

import io.nativedir.jni.nativedir;
import java.io.Closeable;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * An exclusive lock on a name in a directory, held until {@link #close()}; it excludes other
 * holders in this process and in others. Closing twice is harmless.
 */
public final class NativeLock implements Closeable {
  private static final VarHandle HANDLE;

  static {
    try {
      HANDLE = MethodHandles.lookup().findVarHandle(NativeLock.class, "handle", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private volatile long handle;
  private final String name;

  NativeLock(long handle, String name) {
    this.handle = handle;
    this.name = name;
  }

  /** Whether this lock is still held (not closed). */
  public boolean isHeld() {
    return handle != 0;
  }

  /** The lock's name in its directory. */
  public String name() {
    return name;
  }

  /** Releases the lock. */
  @Override
  public void close() throws IOException {
    long h = (long) HANDLE.getAndSet(this, 0L);
    if (h != 0) {
      nativedir.nd_close(h);
    }
  }

  @Override
  public String toString() {
    return "NativeLock('" + name + "'" + (handle == 0 ? ", released" : "") + ")";
  }
}
