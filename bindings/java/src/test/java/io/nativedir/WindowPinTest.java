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
 * releases it, and a reader that never calls again has it released by the Cleaner. "Released"
 * is observed as the process no longer holding a descriptor on the file (/proc/self/fd: Linux;
 * elsewhere those assertions are skipped with a message).
 */
public class WindowPinTest {
  private static final int SIZE = 1 << 20;

  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  private static final Path FDS = Path.of("/proc/self/fd");

  /** Whether this process has a descriptor open on {@code file}. */
  private static boolean holds(Path file) throws java.io.IOException {
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
    TestFiles.write(root, "f", SIZE, 21);
    needFds();
    try (NativeDirectory dir = NativeDirectory.open(root)) {
      NativeInput in = dir.openInput("f");
      in.readByte();
      assertTrue(holds(root.resolve("f")));
      in.close(); // the library cannot tell this thread is the only reader: the window stays
      assertTrue(holds(root.resolve("f")));
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
        in.close(); // the library keeps the window pinned for its reader
        assertTrue("pinned after a close on another thread", holds(f));
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
    Path root = tmp.getRoot().toPath();
    TestFiles.write(root, "f", SIZE, 23);
    needFds();
    Path f = root.resolve("f");
    try (NativeDirectory dir = NativeDirectory.open(root)) {
      readOnAnotherThreadThenClose(dir);
      assertTrue("pinned after a close on another thread", holds(f));
      for (int i = 0; i < 200 && holds(f); i++) {
        System.gc();
        Thread.sleep(10);
      }
      assertFalse("the Cleaner released the pinned window", holds(f));
    }
  }

  private static void readOnAnotherThreadThenClose(NativeDirectory dir) throws Exception {
    NativeInput in = dir.openInput("f");
    CompletableFuture.runAsync(() -> {
      try {
        in.readByte();
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }).get(10, TimeUnit.SECONDS);
    in.close();
  }
}
