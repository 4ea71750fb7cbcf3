package io.nativedir;

import static org.junit.Assert.*;

import java.io.EOFException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/** NativeRing and NativeInput.readAsync: bytes, cached reads, cancellation, closes, errors. */
public class NativeRingTest {
  private static final int SIZE = 4 << 20;
  private static final int BLOCK = 4096;

  @Rule public TemporaryFolder tmp = new TemporaryFolder();
  private Path root;
  private byte[] data;

  @Before
  public void setUp() throws Exception {
    root = tmp.getRoot().toPath();
    data = TestFiles.write(root, "f", SIZE, 21);
  }

  /** Page-aligned direct memory, so direct (MERGE) inputs read in the kernel. */
  private static ByteBuffer aligned(int n) {
    return ByteBuffer.allocateDirect(((n + BLOCK - 1) / BLOCK + 1) * BLOCK).alignedSlice(BLOCK)
        .limit(n);
  }

  private void assertBytes(ByteBuffer b, int from, long off, int n) {
    byte[] got = new byte[n];
    b.get(from, got);
    assertArrayEquals("at " + off + ", " + n + " bytes", Arrays.copyOfRange(data, (int) off,
        (int) off + n), got);
  }

  private static Throwable cause(CompletableFuture<?> f) {
    try {
      f.get(10, TimeUnit.SECONDS);
      return null;
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  private static final String[] KINDS = {"warm", "mapped", "merge", "heap-merge"};

  private NativeInput open(NativeDirectory dir, String kind) throws Exception {
    switch (kind) {
      case "mapped":
        return dir.openInput("f", IOFlag.MMAP);
      case "merge":
      case "heap-merge":
        return dir.openInput("f", IOFlag.MERGE, IOFlag.RANDOM);
      default:
        NativeInput in = dir.openInput("f", IOFlag.RANDOM);
        in.read(0, new byte[SIZE]); // every page in the cache
        return in;
    }
  }

  /**
   * Random offsets and lengths, {@code concurrency} reads outstanding on a ring of 16 (at 64 the
   * rest wait in its queue): each slot's read is checked when it completes and refilled.
   */
  private void bytesMatch(boolean threads, String kind, int concurrency) throws Exception {
    int reads = Math.max(200, 20 * concurrency);
    try (NativeDirectory dir = NativeDirectory.open(root);
         NativeRing ring = new NativeRing(16, threads);
         NativeInput in = open(dir, kind)) {
      boolean direct = kind.equals("merge");
      boolean heap = kind.startsWith("heap");
      int from = heap ? 3 : 0; // a heap buffer is read from position 3: the bounce lands there
      Random rnd = new Random(kind.hashCode() * 31L + concurrency + (threads ? 7 : 0));
      ByteBuffer[] bufs = new ByteBuffer[concurrency];
      long[] offs = new long[concurrency];
      List<CompletableFuture<Integer>> pending = new ArrayList<>();
      for (int k = 0; k < concurrency; k++) {
        pending.add(null);
      }
      int issued = 0;
      int checked = 0;
      while (checked < reads) {
        for (int k = 0; k < concurrency; k++) {
          if (pending.get(k) != null) {
            int n = bufs[k].limit() - from;
            assertEquals(n, (int) pending.get(k).get(10, TimeUnit.SECONDS));
            assertEquals(bufs[k].limit(), bufs[k].position());
            assertBytes(bufs[k], from, offs[k], n);
            checked++;
            pending.set(k, null);
          }
          if (issued == reads) {
            continue;
          }
          int n;
          long off;
          if ((direct || heap) && issued % 2 == 0) { // aligned: to the kernel
            n = BLOCK * (1 + rnd.nextInt(4));
            off = (long) BLOCK * rnd.nextInt(SIZE / BLOCK - 4);
          } else {
            n = 1 + rnd.nextInt(3 * BLOCK);
            off = rnd.nextInt(SIZE - n);
          }
          bufs[k] = heap ? ByteBuffer.allocate(n + from).position(from)
                         : direct ? aligned(n) : ByteBuffer.allocateDirect(n);
          offs[k] = off;
          // every third through the shared ring (NativeInput.readAsync)
          pending.set(k, issued % 3 == 0 ? in.readAsync(off, bufs[k]) : ring.read(in, off, bufs[k]));
          issued++;
        }
      }
      if (kind.equals("warm") || kind.equals("mapped")) {
        assertEquals("cached reads never reach the ring", 0, ring.submittedForTest());
      } else {
        assertTrue(ring.submittedForTest() > 0);
      }
      assertEquals(0, ring.inFlightForTest());
    }
  }

  @Test
  public void bytesMatchTheFile() throws Exception {
    for (boolean threads : new boolean[] {false, true}) {
      for (String kind : KINDS) {
        for (int concurrency : new int[] {1, 8, 64}) {
          bytesMatch(threads, kind, concurrency);
        }
      }
    }
  }

  @Test
  public void cachedReadsAreCompleteWhenReturned() throws Exception {
    try (NativeDirectory dir = NativeDirectory.open(root);
         NativeRing ring = new NativeRing(4)) {
      for (String kind : new String[] {"warm", "mapped"}) {
        try (NativeInput in = open(dir, kind)) {
          ByteBuffer b = ByteBuffer.allocateDirect(5000);
          CompletableFuture<Integer> f = ring.read(in, 12345, b);
          assertTrue(f.isDone());
          assertEquals(5000, (int) f.join());
          assertBytes(b, 0, 12345, 5000);
          ByteBuffer h = ByteBuffer.allocate(100);
          assertTrue(ring.read(in, 7, h).isDone()); // a heap buffer: no bounce when cached
          assertEquals(100, h.position());
        }
      }
      assertEquals(0, ring.submittedForTest());
      // the control: a direct input's read needs the ring and its completion thread
      try (NativeInput in = open(dir, "merge")) {
        ring.pauseReapingForTest(true, in);
        ByteBuffer b = aligned(BLOCK);
        CompletableFuture<Integer> f = ring.read(in, 8 * BLOCK, b);
        Thread.sleep(20);
        assertFalse(f.isDone());
        ring.pauseReapingForTest(false, null);
        assertEquals(BLOCK, (int) f.get(10, TimeUnit.SECONDS));
        assertBytes(b, 0, 8 * BLOCK, BLOCK);
        assertEquals(1, ring.submittedForTest());
      }
    }
  }

  @Test
  public void cancelDropsAQueuedReadAndWaitsForOneInTheKernel() throws Exception {
    for (boolean threads : new boolean[] {false, true}) {
      try (NativeDirectory dir = NativeDirectory.open(root);
           NativeRing ring = new NativeRing(1, threads);
           NativeInput in = open(dir, "merge")) {
        ring.pauseReapingForTest(true, in);
        ByteBuffer first = aligned(BLOCK), second = aligned(BLOCK);
        CompletableFuture<Integer> a = ring.read(in, 0, first); // the ring's one slot
        CompletableFuture<Integer> b = ring.read(in, BLOCK, second); // queued
        assertTrue(b.cancel(true));
        assertTrue(b.isCancelled()); // dropped at once
        AtomicBoolean returned = new AtomicBoolean();
        AtomicBoolean result = new AtomicBoolean();
        Thread canceller = new Thread(() -> {
          result.set(a.cancel(true));
          returned.set(true);
        });
        canceller.start();
        Thread.sleep(100);
        assertFalse("cancel waits while the kernel has the buffer", returned.get());
        assertFalse(a.isDone());
        ring.pauseReapingForTest(false, null);
        canceller.join(10_000);
        assertTrue(returned.get());
        assertTrue(result.get());
        assertTrue(a.isCancelled());
        assertEquals(0, ring.inFlightForTest()); // the kernel was done when it completed
        assertBytes(first, 0, 0, BLOCK); // written before, never after
        assertEquals(0, first.position()); // a cancelled read does not move the position
        Thread.sleep(50);
        for (int i = 0; i < BLOCK; i++) {
          assertEquals("the dropped read never ran", 0, second.get(i));
        }
        assertBytes(first, 0, 0, BLOCK);
        // and the ring goes on
        ByteBuffer c = aligned(BLOCK);
        assertEquals(BLOCK, (int) ring.read(in, 5 * BLOCK, c).get(10, TimeUnit.SECONDS));
        assertBytes(c, 0, 5 * BLOCK, BLOCK);
      }
    }
  }

  @Test
  public void aTimeoutTakesEffectOnceTheKernelIsDone() throws Exception {
    try (NativeDirectory dir = NativeDirectory.open(root);
         NativeRing ring = new NativeRing(2);
         NativeInput in = open(dir, "merge")) {
      ring.pauseReapingForTest(true, in);
      ByteBuffer b = aligned(BLOCK);
      CompletableFuture<Integer> f = ring.read(in, 3 * BLOCK, b);
      f.orTimeout(1, TimeUnit.MILLISECONDS);
      Thread.sleep(100);
      assertFalse("the timeout waits for the kernel", f.isDone());
      ring.pauseReapingForTest(false, null);
      assertTrue(cause(f) instanceof TimeoutException);
      assertEquals(0, ring.inFlightForTest());
    }
  }

  @Test
  public void cancelOnTheCompletionThreadDoesNotWaitForItself() throws Exception {
    try (NativeDirectory dir = NativeDirectory.open(root);
         NativeRing ring = new NativeRing(4);
         NativeInput in = open(dir, "merge")) {
      ring.pauseReapingForTest(true, in);
      ByteBuffer b1 = aligned(BLOCK), b2 = aligned(BLOCK);
      CompletableFuture<Integer> f1 = ring.read(in, 0, b1);
      CompletableFuture<Integer> f2 = ring.read(in, 9 * BLOCK, b2);
      AtomicReference<Boolean> inStage = new AtomicReference<>();
      CompletableFuture<Void> stage = f1.thenRun(() -> inStage.set(f2.cancel(true)));
      ring.pauseReapingForTest(false, null);
      stage.get(10, TimeUnit.SECONDS);
      int got = f2.get(10, TimeUnit.SECONDS); // reaped in the same batch or after
      assertEquals(BLOCK, got);
      assertNotNull(inStage.get());
      assertFalse(inStage.get() && f2.isCancelled());
      assertBytes(b2, 0, 9 * BLOCK, BLOCK);
    }
  }

  @Test
  public void closingTheInputWithReadsInFlight() throws Exception {
    for (boolean threads : new boolean[] {false, true}) {
      try (NativeDirectory dir = NativeDirectory.open(root);
           NativeRing ring = new NativeRing(8, threads)) {
        NativeInput in = open(dir, "merge");
        ring.pauseReapingForTest(true, in);
        List<CompletableFuture<Integer>> fs = new ArrayList<>();
        List<ByteBuffer> bs = new ArrayList<>();
        for (int k = 0; k < 32; k++) {
          ByteBuffer b = aligned(BLOCK);
          bs.add(b);
          fs.add(ring.read(in, (long) (k * 7 % 1000) * BLOCK, b)); // 8 in the kernel, 24 queued
        }
        in.close();
        ring.pauseReapingForTest(false, null);
        for (int k = 0; k < 32; k++) {
          assertEquals(BLOCK, (int) fs.get(k).get(10, TimeUnit.SECONDS));
          assertBytes(bs.get(k), 0, (long) (k * 7 % 1000) * BLOCK, BLOCK);
        }
        assertTrue(cause(ring.read(in, 0, aligned(1))) instanceof IllegalStateException);
      }
    }
  }

  @Test
  public void closeRacingReads() throws Exception {
    AtomicInteger read = new AtomicInteger(), refused = new AtomicInteger();
    for (boolean threads : new boolean[] {false, true}) {
      try (NativeDirectory dir = NativeDirectory.open(root);
           NativeRing ring = new NativeRing(8, threads)) {
        for (int round = 0; round < 12; round++) {
          NativeInput in = open(dir, round % 2 == 0 ? "merge" : "warm");
          Random rnd = new Random(round);
          CountDownLatch go = new CountDownLatch(1);
          List<Thread> readers = new ArrayList<>();
          AtomicReference<Throwable> bad = new AtomicReference<>();
          for (int t = 0; t < 4; t++) {
            long seed = round * 10 + t;
            Thread th = new Thread(() -> {
              Random r = new Random(seed);
              ByteBuffer b = aligned(BLOCK);
              try {
                go.await();
                for (int i = 0; i < 50; i++) {
                  long off = (long) BLOCK * r.nextInt(SIZE / BLOCK);
                  Throwable c = cause(ring.read(in, off, b.clear()));
                  if (c instanceof IllegalStateException) {
                    refused.incrementAndGet();
                    return;
                  }
                  if (c != null) {
                    throw c;
                  }
                  assertBytes(b, 0, off, BLOCK);
                  read.incrementAndGet();
                }
              } catch (Throwable e) {
                bad.compareAndSet(null, e);
              }
            });
            th.start();
            readers.add(th);
          }
          go.countDown();
          Thread.sleep(rnd.nextInt(5));
          in.close();
          for (Thread th : readers) {
            th.join(30_000);
          }
          if (bad.get() != null) {
            throw new AssertionError(bad.get());
          }
        }
        assertEquals(0, ring.inFlightForTest());
      }
    }
    assertTrue(read.get() > 0);
    assertTrue(refused.get() > 0);
  }

  @Test
  public void ringClosedWithReadsInFlight() throws Exception {
    for (boolean threads : new boolean[] {false, true}) {
      try (NativeDirectory dir = NativeDirectory.open(root);
           NativeInput in = open(dir, "merge")) {
        NativeRing ring = new NativeRing(4, threads);
        ring.pauseReapingForTest(true, in);
        ByteBuffer all = ByteBuffer.allocateDirect(17 * BLOCK).alignedSlice(BLOCK);
        List<CompletableFuture<Integer>> fs = new ArrayList<>();
        for (int k = 0; k < 16; k++) {
          fs.add(ring.read(in, (long) k * BLOCK, all.slice(k * BLOCK, BLOCK)));
        }
        ring.close(); // 4 in the kernel (waited for), 12 queued; resumes the completion thread
        byte[] snapshot = new byte[16 * BLOCK];
        all.get(0, snapshot);
        for (CompletableFuture<Integer> f : fs) {
          Throwable c = cause(f);
          assertTrue(String.valueOf(c), c instanceof IllegalStateException);
          assertTrue(c.getMessage(), c.getMessage().contains("closed"));
        }
        Thread.sleep(50);
        byte[] after = new byte[16 * BLOCK];
        all.get(0, after);
        assertArrayEquals("nothing wrote a buffer after close()", snapshot, after);
        ring.close(); // twice: nothing
        assertTrue(cause(ring.read(in, 0, aligned(BLOCK))) instanceof IllegalStateException);
        try (NativeInput mapped = open(dir, "mapped")) { // even a read that needs no ring
          assertTrue(cause(ring.read(mapped, 0, ByteBuffer.allocateDirect(8)))
              instanceof IllegalStateException);
        }
        assertFalse(ring.completer.isAlive());
      }
    }
  }

  @Test
  public void errorsAreJavas() throws Exception {
    try (NativeDirectory dir = NativeDirectory.open(root);
         NativeRing ring = new NativeRing(4)) {
      for (String kind : KINDS) {
        NativeInput in = open(dir, kind);
        try {
          ByteBuffer b = kind.startsWith("heap") ? ByteBuffer.allocate(20) : ByteBuffer.allocateDirect(20);
          assertTrue(cause(ring.read(in, SIZE - 10, b)) instanceof EOFException);
          assertEquals(0, b.position()); // nothing read
          assertTrue(cause(in.readAsync(SIZE, b)) instanceof EOFException);
          assertEquals(0, (int) in.readAsync(SIZE, b.limit(0)).join());
          assertThrows(IllegalArgumentException.class, () -> ring.read(in, -1, b));
          assertThrows(ReadOnlyBufferException.class,
              () -> ring.read(in, 0, ByteBuffer.allocateDirect(4).asReadOnlyBuffer()));
        } finally {
          in.close();
        }
        assertTrue(cause(ring.read(in, 0, ByteBuffer.allocateDirect(4))) instanceof IllegalStateException);
      }
    }
    assertThrows(IllegalArgumentException.class, () -> new NativeRing(0));
  }

  @Test
  public void aFailedReadIsANativeIOException() throws Exception {
    TestFiles.write(root, "shrinks", 1 << 20, 3);
    try (NativeDirectory dir = NativeDirectory.open(root);
         NativeRing ring = new NativeRing(4);
         NativeInput in = dir.openInput("shrinks", IOFlag.MERGE)) {
      try (FileChannel ch = FileChannel.open(root.resolve("shrinks"), StandardOpenOption.WRITE)) {
        ch.truncate(0);
      }
      Throwable c = cause(ring.read(in, 64 * BLOCK, aligned(BLOCK)));
      assertTrue(String.valueOf(c), c instanceof NativeIOException);
      assertEquals("ND_E_IO", ((NativeIOException) c).statusName());
      assertTrue(c.getMessage().contains("shrinks"));
    }
  }

  @Test
  public void theSharedRing() throws Exception {
    NativeRing ring = NativeRing.shared();
    assertSame(ring, NativeRing.shared());
    assertEquals(128, ring.depth());
    long before = ring.submittedForTest();
    try (NativeDirectory dir = NativeDirectory.open(root);
         NativeInput in = open(dir, "merge")) {
      ByteBuffer b = aligned(BLOCK);
      assertEquals(BLOCK, (int) in.readAsync(BLOCK, b).get(10, TimeUnit.SECONDS));
      assertBytes(b, 0, BLOCK, BLOCK);
    }
    assertTrue(ring.submittedForTest() > before);
  }

  /**
   * What a read allocates: its future, and nothing else on the caller's thread or the ring's
   * completion thread (the result Integer is shared by reads of one length).
   */
  @Test
  public void aReadAllocatesItsFutureOnly() throws Exception {
    com.sun.management.ThreadMXBean mx =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    assertTrue(mx.isThreadAllocatedMemorySupported());
    mx.setThreadAllocatedMemoryEnabled(true);
    try (NativeDirectory dir = NativeDirectory.open(root);
         NativeRing ring = new NativeRing(32);
         NativeInput warm = open(dir, "warm");
         NativeInput direct = open(dir, "merge")) {
      ByteBuffer b = aligned(BLOCK);
      for (NativeInput in : new NativeInput[] {warm, direct}) {
        int reads = 20_000;
        for (int pass = 0; pass < 2; pass++) { // the first warms the JIT up
          long me = Thread.currentThread().getId();
          long mine = mx.getThreadAllocatedBytes(me);
          long theirs = mx.getThreadAllocatedBytes(ring.completer.getId());
          for (int i = 0; i < reads; i++) {
            ring.read(in, (long) BLOCK * (i % 1000), b.clear()).join();
          }
          mine = mx.getThreadAllocatedBytes(me) - mine;
          theirs = mx.getThreadAllocatedBytes(ring.completer.getId()) - theirs;
          if (pass == 1) {
            System.err.printf("NativeRingTest: %s: %d bytes per read on the caller, %d on the "
                + "completion thread%n", in, mine / reads, theirs / reads);
            // the future is ~60 bytes; join() on a read not yet done adds its waiter node
            assertTrue(in + ": " + mine / reads + " bytes per read on the caller",
                mine / reads <= 160);
            assertTrue(in + ": " + theirs / reads + " bytes per read on the completion thread",
                theirs / reads <= 8);
          }
        }
      }
    }
  }
}
