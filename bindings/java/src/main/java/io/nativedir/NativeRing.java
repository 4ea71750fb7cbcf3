package io.nativedir;

import io.nativedir.jni.nativedir;
import io.nativedir.jni.nativedirConstants;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.ReadOnlyBufferException;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * A queue of asynchronous positional reads (the library's nd_ring) with one completion thread.
 * {@link NativeInput#readAsync} uses {@link #shared()}; open your own ring to give a workload its
 * own queue depth or backend, and close it when done.
 *
 * <p><b>Cached reads complete at once.</b> A read first copies what the page cache (or a mapping)
 * holds, in the calling thread (nd_read_cached: one {@code preadv2(RWF_NOWAIT)}); if that is all
 * of it, the returned future is already complete. Only the rest goes to the ring: io_uring on
 * Linux, where the kernel reads, else a few native threads doing {@code pread}. A read that finds
 * the ring full waits in the ring's queue, in order, and is submitted as soon as a read completes.
 *
 * <p><b>Completions.</b> The ring's one completion thread (a daemon) waits in the library for
 * completions and completes their futures. Dependent stages added with the non-async methods
 * ({@code thenApply}, {@code whenComplete}, ...) therefore run on that thread when the read
 * completes after they were added: keep them short and never block in them (a blocked stage stops
 * every read of the ring), or use the {@code *Async} variants with an executor of your own.
 *
 * <p><b>What a read allocates:</b> its future, which holds the read's state (no other object per
 * read, here or in the library; the result's {@code Integer} is the same object for reads of the
 * same length). A heap buffer adds a direct bounce buffer for the part that was not cached (the
 * kernel cannot write into a heap array that the garbage collector may move); {@code get()} /
 * {@code join()} and dependent stages allocate what {@link CompletableFuture} allocates for them.
 *
 * <p><b>Cancellation</b> ({@code cancel}, and {@code complete}/{@code completeExceptionally} by
 * anyone else, e.g. {@code orTimeout}): a read still queued is dropped at once; a read the kernel
 * has cannot be recalled, so the call waits until the kernel is done with the buffer and the
 * future then completes cancelled (or as asked). The buffer is never written after the future is
 * done.
 *
 * <p><b>Closing.</b> Closing an input with reads in flight is safe: they complete with its bytes
 * (a queued read holds its own handle on the input until it is submitted). {@link #close} waits
 * for the reads the kernel has, then fails them and every queued read with {@link
 * IllegalStateException}; their buffers are never written afterwards. {@link #shared()} is never
 * closed.
 */
public final class NativeRing implements Closeable {
  private static final int REAP_MAX = 64;
  private static final int BUSY = nativedirConstants.ND_E_BUSY;
  private static final Object SHARED_LOCK = new Object();
  private static volatile NativeRing shared;

  private final long ring; // the library's handle; used after close only by the reaper (refused)
  private final int depth;
  private final int backend;
  final Thread completer;
  private final ByteBuffer reaped; // one reap's tags and results (the completion thread's)
  private final Object lock = new Object();
  // under lock: the reads in the kernel by slot (a tag is the slot and its generation), the free
  // slots, the queue of reads that found the ring full
  private final RingRead[] slots;
  private final int[] generation;
  private final int[] free;
  private int freeCount;
  private RingRead head, tail;
  private boolean closed;
  private volatile boolean closing;
  private volatile Integer lastBox; // the last length boxed: reads of one size share it
  private long submitted; // reads that needed the ring (for tests), under lock
  // tests: the completion thread parks before its next reap (see pauseReapingForTest)
  private volatile boolean paused;
  private volatile boolean pauseSeen;

  /** Opens a ring that keeps up to {@code depth} reads in the kernel at once (1..4096). */
  public NativeRing(int depth) throws IOException {
    this(depth, false);
  }

  /**
   * Opens a ring of {@code depth} (1..4096; more reads wait in its queue); {@code forceThreads}
   * uses the library's thread-pool backend even where io_uring works.
   */
  public NativeRing(int depth, boolean forceThreads) throws IOException {
    if (depth < 1 || depth > 4096) {
      throw new IllegalArgumentException("a ring's depth is 1..4096, not " + depth);
    }
    this.ring = nativedir.nd_ring_open(depth, forceThreads ? nativedir.ND_RING_FORCE_THREADS : 0);
    this.depth = depth;
    this.backend = nativedir.nd_ring_backend(ring);
    this.slots = new RingRead[depth];
    this.generation = new int[depth];
    this.free = new int[depth];
    for (int i = 0; i < depth; i++) {
      free[i] = depth - 1 - i;
    }
    this.freeCount = depth;
    this.reaped = ByteBuffer.allocateDirect(16 * REAP_MAX).order(ByteOrder.nativeOrder());
    this.completer = new Thread(this::completions, "nativedir ring completions");
    completer.setDaemon(true);
    completer.start();
  }

  /** The process-wide ring that {@link NativeInput#readAsync} uses: depth 128, never closed. */
  public static NativeRing shared() {
    NativeRing r = shared;
    if (r != null) {
      return r;
    }
    synchronized (SHARED_LOCK) {
      if (shared == null) {
        try {
          shared = new NativeRing(128);
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      }
      return shared;
    }
  }

  /** How many reads the kernel gets at once. */
  public int depth() {
    return depth;
  }

  /** True if the kernel performs the reads (io_uring), false for the library's thread pool. */
  public boolean isIoUring() {
    return backend == nativedir.ND_RING_IO_URING;
  }

  // ---- reads ----

  /**
   * Reads {@code dst.remaining()} bytes of {@code input} at {@code position} into {@code dst},
   * from its position to its limit; the future's value is that count, and dst's position has
   * moved to its limit when it completes. Do not use dst until then.
   *
   * <p>A direct buffer is read into in place. A heap buffer gets the cached part copied in place
   * and the rest through a direct bounce buffer (allocated for the read, copied in on completion).
   * The future fails with {@link java.io.EOFException} if the range passes the end (nothing is
   * read), {@link IllegalStateException} for a closed input or ring, {@link NativeIOException}
   * for an I/O error.
   *
   * @throws IllegalArgumentException for a negative position
   * @throws ReadOnlyBufferException for a read-only dst
   */
  public CompletableFuture<Integer> read(NativeInput input, long position, ByteBuffer dst) {
    Objects.requireNonNull(input, "input");
    if (dst.isReadOnly()) {
      throw new ReadOnlyBufferException();
    }
    if (position < 0) {
      throw new IllegalArgumentException("readAsync: negative position " + position + " on '"
          + input.name() + "'");
    }
    int len = dst.remaining();
    int at = dst.position();
    boolean direct = dst.isDirect();
    long h = input.handleOrZero();
    long got;
    try {
      if (closing) {
        throw NativeErrors.closed(this.toString());
      }
      if (h == 0) {
        throw NativeErrors.closed(input.toString());
      }
      got = direct ? nativedir.nd_java_read_cached(h, position, dst, at, len)
                   : nativedir.nd_java_read_cached_array(h, position, dst.array(),
                         dst.arrayOffset() + at, len);
    } catch (IOException | RuntimeException e) {
      RingRead r = new RingRead(this, input, dst, dst, position, len);
      r.doneExceptionally(e);
      return r;
    }
    RingRead r = new RingRead(this, input, dst,
        direct || got == len ? dst : ByteBuffer.allocateDirect(len - (int) got), position, len);
    if (got == len) {
      r.done();
      return r;
    }
    r.prefix = (int) got;
    submit(r, h);
    return r;
  }

  private void submit(RingRead r, long h) {
    int slot;
    synchronized (lock) {
      if (closed) {
        r.doneExceptionally(NativeErrors.closed(this.toString()));
        return;
      }
      submitted++;
      if (head != null || freeCount == 0) {
        enqueueLocked(r, h);
        return;
      }
      slot = takeSlotLocked(r);
    }
    send(r, h, slot, false);
  }

  /** With lock held: a free slot for r, which is IN_KERNEL from now on; r.tag names it. */
  private int takeSlotLocked(RingRead r) {
    int slot = free[--freeCount];
    slots[slot] = r;
    r.tag = (long) generation[slot] << 32 | slot;
    r.setState(RingRead.IN_KERNEL);
    return slot;
  }

  /** With lock held: gives the slot back; a stale tag can never match its next read. */
  private void freeSlotLocked(int slot) {
    slots[slot] = null;
    generation[slot]++;
    free[freeCount++] = slot;
  }

  /**
   * Hands r (holding slot) to the library. After a successful submit the read belongs to the
   * completion thread, which may already have completed it: r is not touched again here.
   * Returns false if the ring was full (r is back in the queue's head when fromQueue).
   */
  private boolean send(RingRead r, long h, int slot, boolean fromQueue) {
    int rc;
    Throwable failure = null;
    try {
      int into = r.into == r.dst ? r.at + r.prefix : 0;
      rc = nativedir.nd_java_ring_submit(ring, h, r.position + r.prefix, r.into, into,
          r.len - r.prefix, r.tag);
    } catch (IOException | RuntimeException e) {
      rc = -1;
      failure = closing ? NativeErrors.closed(this.toString())
          : e instanceof IllegalStateException ? NativeErrors.closed(r.input.toString()) : e;
    }
    if (rc == 0) {
      return true;
    }
    synchronized (lock) {
      if (slots[slot] == r) {
        freeSlotLocked(slot);
      } else {
        return true; // the ring's close failed it meanwhile
      }
      if (rc == BUSY) { // cannot happen while slots are the gate; kept safe
        r.setState(RingRead.QUEUED);
        if (fromQueue) {
          r.next = head;
          head = r;
          if (tail == null) {
            tail = r;
          }
        } else {
          enqueueLocked(r, h);
        }
        return false;
      }
    }
    if (r.claim(RingRead.IN_KERNEL)) {
      r.fail(failure);
    }
    return true;
  }

  // ---- the queue of reads that found the ring full ----

  /** With lock held: r waits for a slot, with a handle of its own on the input. */
  private void enqueueLocked(RingRead r, long h) {
    if (r.clone == 0) {
      try {
        r.clone = nativedir.nd_input_clone(h);
      } catch (IOException | RuntimeException e) {
        r.doneExceptionally(e instanceof IllegalStateException
            ? NativeErrors.closed(r.input.toString()) : e);
        return;
      }
    }
    r.setState(RingRead.QUEUED);
    r.next = null;
    if (tail == null) {
      head = tail = r;
    } else {
      tail.next = r;
      tail = r;
    }
  }

  /** Submits queued reads in order while slots are free. */
  private void submitQueued() {
    for (;;) {
      RingRead r;
      int slot;
      synchronized (lock) {
        r = head;
        if (r == null || closed || freeCount == 0) {
          return;
        }
        head = r.next;
        if (head == null) {
          tail = null;
        }
        r.next = null;
        if (r.state() != RingRead.QUEUED) {
          continue; // cancelled while it waited
        }
        slot = takeSlotLocked(r);
      }
      long clone = r.clone;
      boolean sent = send(r, clone, slot, true);
      if (!sent) {
        return;
      }
      r.clone = 0;
      closeQuietly(clone); // the ring's read holds the input now
    }
  }

  /** A queued read's cancel: true if it was still queued and is now dropped (COMPLETING). */
  boolean dropQueued(RingRead r) {
    synchronized (lock) {
      if (!r.claim(RingRead.QUEUED)) {
        return false;
      }
      // unlinked lazily: submitQueued skips reads that are no longer QUEUED
    }
    closeQuietly(r.clone);
    r.clone = 0;
    r.setState(RingRead.DONE);
    return true;
  }

  private static void closeQuietly(long h) {
    if (h == 0) {
      return;
    }
    try {
      nativedir.nd_close(h);
    } catch (IOException | RuntimeException ignored) {
      // closing a clone of an input cannot fail but for a stale handle
    }
  }

  // ---- the completion thread ----

  private void completions() {
    RingRead[] batch = new RingRead[REAP_MAX];
    long[] results = new long[REAP_MAX];
    for (;;) {
      if (paused) {
        parkForTest();
      }
      int n = nativedir.nd_java_ring_reap(ring, reaped, -1);
      if (n < 0 || (n == 0 && closing)) {
        return;
      }
      int k = 0;
      synchronized (lock) {
        for (int i = 0; i < n; i++) {
          long tag = reaped.getLong(8 * i);
          int slot = (int) tag;
          if (slot < 0 || slot >= depth || generation[slot] != (int) (tag >>> 32)) {
            continue; // a test's wake-up
          }
          RingRead r = slots[slot];
          if (r == null) {
            continue;
          }
          freeSlotLocked(slot);
          batch[k] = r;
          results[k++] = reaped.getLong(8 * (REAP_MAX + i));
        }
      }
      for (int i = 0; i < k; i++) {
        RingRead r = batch[i];
        batch[i] = null;
        if (r.claim(RingRead.IN_KERNEL)) {
          r.settle(results[i]);
        }
      }
      submitQueued();
    }
  }

  Integer box(int n) {
    Integer b = lastBox;
    if (b == null || b != n) {
      lastBox = b = n;
    }
    return b;
  }

  Throwable failure(RingRead r, int status) {
    String what = "ring read of " + (r.len - r.prefix) + " bytes at " + (r.position + r.prefix)
        + " of '" + r.input.name() + "'";
    return NativeErrors.toThrowable(status, what.getBytes(StandardCharsets.UTF_8), 0);
  }

  // ---- closing ----

  /**
   * Waits for the reads the kernel has, then fails them and every queued read with {@link
   * IllegalStateException}; their buffers are never written afterwards. Idempotent; any thread.
   */
  @Override
  public void close() throws IOException {
    RingRead queued;
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      queued = head;
      head = tail = null;
    }
    closing = true;
    nativedir.nd_close(ring); // waits for the kernel's reads, wakes the completion thread
    paused = false;
    synchronized (this) {
      notifyAll(); // a completion thread a test paused: its next reap finds the ring closed
    }
    if (Thread.currentThread() != completer) {
      boolean interrupted = false;
      for (;;) {
        try {
          completer.join();
          break;
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
    IllegalStateException err = NativeErrors.closed(this.toString());
    RingRead[] inKernel = new RingRead[depth];
    synchronized (lock) {
      for (int i = 0; i < depth; i++) {
        inKernel[i] = slots[i];
        slots[i] = null;
      }
    }
    for (RingRead r : inKernel) {
      if (r != null && r.claim(RingRead.IN_KERNEL)) {
        r.fail(err);
      }
    }
    for (RingRead r = queued; r != null; ) {
      RingRead next = r.next;
      r.next = null;
      if (r.claim(RingRead.QUEUED)) {
        closeQuietly(r.clone);
        r.clone = 0;
        r.fail(err);
      }
      r = next;
    }
  }

  @Override
  public String toString() {
    return "NativeRing(depth " + depth + ", " + (isIoUring() ? "io_uring" : "threads")
        + (closing ? ", closed" : "") + ")";
  }

  // ---- for tests ----

  /** Reads that needed the ring (not wholly cached). */
  long submittedForTest() {
    synchronized (lock) {
      return submitted;
    }
  }

  /** Reads in the library's ring (submitted, not yet reaped). */
  int inFlightForTest() throws IOException {
    return nativedir.nd_ring_in_flight(ring);
  }

  /**
   * Stops (true) or resumes (false) the completion thread, so that reads stay in the kernel or
   * in the queue on purpose. Pausing wakes the thread with an empty read of {@code wakeWith}
   * (done at submit, nothing else in flight) and returns once it has parked.
   */
  void pauseReapingForTest(boolean pause, NativeInput wakeWith) throws IOException {
    if (!pause) {
      paused = false;
      synchronized (this) {
        notifyAll();
      }
      return;
    }
    pauseSeen = false;
    paused = true;
    ByteBuffer empty = ByteBuffer.allocateDirect(1);
    int rc = nativedir.nd_java_ring_submit(ring, wakeWith.handleOrZero(), 0, empty, 0, 0, -1L);
    if (rc != 0) {
      throw new IllegalStateException("pausing a ring for a test: submit returned " + rc);
    }
    long until = System.nanoTime() + 10_000_000_000L;
    while (!pauseSeen) {
      if (System.nanoTime() > until) {
        throw new IllegalStateException("the completion thread did not pause");
      }
      Thread.onSpinWait();
    }
    // It may have parked before it reaped the wake-up, which then still holds a slot of the
    // library's ring. It is parked, so this thread may reap; nothing else is in flight.
    ByteBuffer one = ByteBuffer.allocateDirect(16).order(ByteOrder.nativeOrder());
    while (nativedir.nd_ring_in_flight(ring) > 0) {
      if (nativedir.nd_java_ring_reap(ring, one, 10_000) != 1 || one.getLong(0) != -1L) {
        throw new IllegalStateException("pausing a ring for a test: a read other than the "
            + "wake-up was in flight");
      }
    }
  }

  private void parkForTest() {
    pauseSeen = true;
    synchronized (this) {
      while (paused) {
        try {
          wait();
        } catch (InterruptedException e) {
          return;
        }
      }
    }
  }
}
