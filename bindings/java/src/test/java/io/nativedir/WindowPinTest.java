package io.nativedir;

import static org.junit.Assert.*;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.Assume;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * A buffered input's cursor reads the library's pinned window (nd_input_window): a close on
 * another thread leaves the reader's window readable, the reader's next refill throws and
 * releases it, and a reader that never calls again has it released by the Cleaner. The file
 * itself goes with the close, pinned window or not (the window is the input's buffer): seen as
 * the process no longer holding a descriptor on it (/proc/self/fd: Linux; elsewhere those
 * assertions are skipped with a message), and as the file deleted and re-created at once.
 */
public class WindowPinTest {
  private static final int SIZE = 1 << 20;

  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  private static final Path FDS = Path.of("/proc/self/fd");

  /** Whether this process has a descriptor open on {@code file}. */
  static boolean holds(Path file) throws java.io.IOException {
    Path real = file.toRealPath();
    try (var fds = Files.list(FDS)) {
      return fds.anyMatch(fd -> {
        try {
          return Files.readSymbolicLink(fd).equals(real);
        } catch (java.io.IOException | UnsupportedOperationException gone) {
          return false; // closed meanwhile, or not a link
        }
      });
    }
  }

  private static void needFds() {
    if (!Files.isDirectory(FDS)) {
      System.err.println("WindowPinTest: SKIPPED: no /proc/self/fd to see the file's descriptors");
    }
    Assume.assumeTrue("no /proc/self/fd to see the file's descriptors", Files.isDirectory(FDS));
  }

  @Test
  public void closeOnTheReadingThreadLeavesTheWindowToTheCursorsNextCall() throws Exception {
    Path root = tmp.getRoot().toPath();
    byte[] data = TestFiles.write(root, "f", SIZE, 21);
    needFds();
    try (NativeDirectory dir = NativeDirectory.open(root)) {
      NativeInput in = dir.openInput("f");
      in.readByte();
      ByteBuffer w = in.win;
      assertTrue(holds(root.resolve("f")));
      in.close(); // the library cannot tell this thread is the only reader: the window stays...
      assertFalse(holds(root.resolve("f"))); // ...but not the file
      for (int i = 0; i < w.limit(); i++) {
        assertEquals(data[i], w.get(i));
      }
      assertThrows(IllegalStateException.class, in::readByte); // the cursor's call releases it
      assertFalse(holds(root.resolve("f")));
    }
  }

  @Test
  public void windowHandedToAnotherThreadOutlivesItsTakersClose() throws Exception {
    // the input moves, window and all, to another thread that reads it while the thread that
    // took the window closes it (a close on the taker's thread freed the window under it)
    Path root = tmp.getRoot().toPath();
    byte[] data = TestFiles.write(root, "f", SIZE, 24);
    TestFiles.write(root, "g", SIZE, 25);
    ExecutorService reader = Executors.newSingleThreadExecutor();
    try (NativeDirectory dir = NativeDirectory.open(root)) {
      for (IOFlag[] flags : new IOFlag[][] {{}, {IOFlag.RANDOM}, {IOFlag.SEQUENTIAL}, {IOFlag.MERGE}}) {
        NativeInput in = dir.openInput("f", flags);
        in.seek(100);
        assertEquals(data[100], in.readByte()); // the window is taken here
        ByteBuffer w = in.win;
        java.util.concurrent.CountDownLatch closed = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.Future<?> read = reader.submit(() -> {
          closed.await();
          for (int i = w.position(); i < w.limit(); i++) {
            assertEquals(data[100 + i], w.get(i));
          }
          assertThrows(IllegalStateException.class, in::readByte);
          return null;
        });
        in.close();
        // another input of the same size takes a buffer now: freed memory would be reused here
        try (NativeInput other = dir.openInput("g", flags)) {
          other.readByte();
          closed.countDown();
          read.get(10, TimeUnit.SECONDS);
        }
        if (Files.isDirectory(FDS)) {
          assertFalse("the reader's call released the window", holds(root.resolve("f")));
        }
      }
    } finally {
      reader.shutdownNow();
    }
  }

  @Test
  public void closeOnAnotherThreadKeepsTheWindowUntilTheReadersNextRefill() throws Exception {
    Path root = tmp.getRoot().toPath();
    byte[] data = TestFiles.write(root, "f", SIZE, 22);
    needFds();
    Path f = root.resolve("f");
    ExecutorService reader = Executors.newSingleThreadExecutor();
    try (NativeDirectory dir = NativeDirectory.open(root)) {
      for (IOFlag[] flags : new IOFlag[][] {{}, {IOFlag.RANDOM}, {IOFlag.SEQUENTIAL}, {IOFlag.MERGE}}) {
        NativeInput in = dir.openInput("f", flags);
        in.seek(100);
        ByteBuffer w = reader.submit(() -> {
          assertEquals(data[100], in.readByte());
          return in.win; // the window the reader holds (package-private, for this test)
        }).get(10, TimeUnit.SECONDS);
        assertTrue(w.remaining() > 0);
        in.close(); // the library keeps the window pinned for its reader...
        assertFalse("...but lets go of the file at once", holds(f));
        reader.submit(() -> {
          // the bytes still in the reader's window are the file's (memory kept, not freed)
          for (int i = w.position(); i < w.limit(); i++) {
            assertEquals(data[100 + i], w.get(i));
          }
          assertThrows(IllegalStateException.class, in::readByte); // the refill sees the close
          assertFalse("the reader's failed refill released the window", holds(f));
          return null;
        }).get(10, TimeUnit.SECONDS);
      }
    } finally {
      reader.shutdownNow();
    }
  }

  @Test
  public void aReaderThatNeverCallsAgainIsReleasedByTheCleaner() throws Exception {
    // the file goes with the close, so what the Cleaner releases (the window's buffer) shows
    // only in the handle table: nd_input_unpin finds the closed handle while its pin holds it,
    // and nothing of it once the Cleaner's unpin has run (the probe unpins too, so it runs once,
    // after the input was collected and the Cleaner had time to act)
    Path root = tmp.getRoot().toPath();
    TestFiles.write(root, "f", SIZE, 23);
    try (NativeDirectory dir = NativeDirectory.open(root)) {
      java.lang.ref.WeakReference<?>[] collected = new java.lang.ref.WeakReference<?>[1];
      long raw = readOnAnotherThreadThenClose(dir, collected);
      if (Files.isDirectory(FDS)) {
        assertFalse("the close let go of the file", holds(root.resolve("f")));
      }
      for (int i = 0; i < 500 && collected[0].get() != null; i++) {
        System.gc();
        Thread.sleep(10);
      }
      assertNull("the input was never collected", collected[0].get());
      Thread.sleep(500); // the Cleaner's thread runs the unpin
      assertThrows("the Cleaner released the pinned window", Exception.class,
          () -> io.nativedir.jni.nativedir.nd_input_unpin(raw));
    }
  }

  private static long readOnAnotherThreadThenClose(NativeDirectory dir,
      java.lang.ref.WeakReference<?>[] collected) throws Exception {
    NativeInput in = dir.openInput("f");
    CompletableFuture.runAsync(() -> {
      try {
        in.readByte();
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }).get(10, TimeUnit.SECONDS);
    java.lang.reflect.Field f = NativeInput.class.getDeclaredField("raw");
    f.setAccessible(true);
    long raw = f.getLong(in);
    in.close();
    collected[0] = new java.lang.ref.WeakReference<>(in);
    return raw;
  }
}
