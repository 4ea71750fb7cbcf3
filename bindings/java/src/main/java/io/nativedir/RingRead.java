package io.nativedir;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * One asynchronous read: the future {@link NativeRing#read} returns, holding the read's own state,
 * so a read allocates nothing else (a heap buffer adds its bounce buffer).
 *
 * <p>The state moves by compare-and-swap only (QUEUED or IN_KERNEL, then COMPLETING, then DONE), so
 * a completion, a cancellation and a ring's close racing for one read settle it exactly once. A
 * read's buffer may be written while it is QUEUED (never), IN_KERNEL or COMPLETING (the copy of a
 * bounce buffer, the position update); it is DONE before its future completes, so nothing writes
 * the buffer after the future is done.
 */
final class RingRead extends CompletableFuture<Integer> {
  static final int DONE = 0, QUEUED = 1, IN_KERNEL = 2, COMPLETING = 3;
  private static final VarHandle STATE;
  private static final VarHandle OUTSIDE;

  static {
    try {
      MethodHandles.Lookup l = MethodHandles.lookup();
      STATE = l.findVarHandle(RingRead.class, "state", int.class);
      OUTSIDE = l.findVarHandle(RingRead.class, "outside", Object.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  final NativeRing ring;
  final NativeInput input;
  final ByteBuffer dst; // the caller's buffer, held (reachable) until the read is over
  final ByteBuffer into; // where the ring reads: dst itself, or a direct bounce buffer for a heap dst
  final int at; // dst's position at the call
  final int len;
  final long position;
  int prefix; // bytes nd_read_cached copied before the rest was submitted
  long clone; // a queued read's own handle on the input (closed once submitted)
  long tag; // the ring's slot and its generation while IN_KERNEL
  RingRead next; // the ring's queue
  @SuppressWarnings("unused") // through STATE
  private volatile int state = DONE;
  /** What a caller asked the read to end with instead (cancel, complete, completeExceptionally). */
  @SuppressWarnings("unused") // through OUTSIDE
  private volatile Object outside;

  RingRead(NativeRing ring, NativeInput input, ByteBuffer dst, ByteBuffer into, long position,
      int len) {
    this.ring = ring;
    this.input = input;
    this.dst = dst;
    this.into = into;
    this.at = dst.position();
    this.len = len;
    this.position = position;
  }

  int state() {
    return (int) STATE.getVolatile(this);
  }

  void setState(int s) {
    STATE.setVolatile(this, s);
  }

  /** Moves the read from {@code from} to COMPLETING; the winner settles it. */
  boolean claim(int from) {
    return STATE.compareAndSet(this, from, COMPLETING);
  }

  // ---- how the ring ends a read ----

  /**
   * The kernel is done with the buffer (the read is COMPLETING): finish the buffer's part, then
   * the future, with the ring's result or what a caller asked for meanwhile.
   */
  void settle(long result) {
    if (result >= 0 && outside == null) {
      if (into != dst) {
        dst.put(at + prefix, into, 0, len - prefix);
      }
      dst.position(at + len);
    }
    setState(DONE);
    Object o = outside;
    if (o != null) {
      finishOutside(o);
    } else if (result < 0) {
      super.completeExceptionally(ring.failure(this, (int) result));
    } else {
      super.complete(ring.box(len));
    }
  }

  /** The read never happened (ring closed, input closed, submit refused); it is COMPLETING. */
  void fail(Throwable t) {
    setState(DONE);
    Object o = outside;
    if (o != null) {
      finishOutside(o);
    } else {
      super.completeExceptionally(t);
    }
  }

  /** Completed without the ring: the cached path (the read is DONE). */
  void done() {
    dst.position(at + len);
    super.complete(ring.box(len));
  }

  void doneExceptionally(Throwable t) {
    super.completeExceptionally(t);
  }

  private void finishOutside(Object o) {
    if (o instanceof Outcome c) {
      if (c.cancel) {
        super.cancel(false);
      } else if (c.error != null) {
        super.completeExceptionally(c.error);
      } else {
        super.complete(c.value);
      }
    }
  }

  /** An outcome a caller asked for while the read was in the kernel. */
  private record Outcome(boolean cancel, Throwable error, Integer value) {}

  // ---- what callers may do: none of it lets the future complete while the kernel has the buffer

  /**
   * Cancels the read. A read waiting in the ring's queue is dropped at once. A read the kernel
   * has cannot be recalled: this waits until the kernel is done with the buffer (a device's
   * latency), then the future completes cancelled, so the buffer is never written after this
   * returns. Called on the ring's own completion thread (a dependent stage), a read in the kernel
   * cannot be waited for there: it returns false and the read completes normally.
   */
  @Override
  public boolean cancel(boolean mayInterruptIfRunning) {
    return endFromOutside(new Outcome(true, null, null));
  }

  /**
   * Completes the future with {@code value} instead of the read's result; a read in the kernel is
   * waited for first, as by {@link #cancel}. ({@code completeOnTimeout} comes here.)
   */
  @Override
  public boolean complete(Integer value) {
    return endFromOutside(new Outcome(false, null, value));
  }

  /**
   * Completes the future with {@code ex}; a read in the kernel is waited for first, as by {@link
   * #cancel}. ({@code orTimeout} comes here: its timeout takes effect once the kernel is done.)
   */
  @Override
  public boolean completeExceptionally(Throwable ex) {
    if (ex == null) {
      throw new NullPointerException("completeExceptionally(null)");
    }
    return endFromOutside(new Outcome(false, ex, null));
  }

  private boolean endFromOutside(Outcome o) {
    for (;;) {
      int s = state();
      if (s == QUEUED) {
        if (ring.dropQueued(this)) {
          finishOutside(o);
          return o.cancel ? isCancelled() : isDone();
        }
        continue; // submitted meanwhile
      }
      if (s == IN_KERNEL || s == COMPLETING) {
        if (Thread.currentThread() == ring.completer) {
          return false; // it cannot wait for itself; the read completes as it will
        }
        if (!OUTSIDE.compareAndSet(this, null, o)) {
          awaitQuietly();
          return false; // another caller's outcome wins
        }
        if (state() == DONE && !isDone()) {
          // settled meanwhile without seeing the outcome: whichever completion comes first
          finishOutside(o);
        }
        awaitQuietly();
        return o.cancel ? isCancelled() : isCompletedExceptionally() == (o.error != null);
      }
      // DONE: the buffer is no longer written; the future takes whichever outcome comes first
      if (o.cancel) {
        return super.cancel(false);
      }
      return o.error != null ? super.completeExceptionally(o.error) : super.complete(o.value);
    }
  }

  private void awaitQuietly() {
    try {
      join();
    } catch (CancellationException | CompletionException e) {
      // the outcome is what the caller reads; here only the waiting counts
    }
  }
}
