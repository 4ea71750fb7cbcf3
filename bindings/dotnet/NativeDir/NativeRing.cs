using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using Native = NativeDir.Interop.nativedir;

namespace NativeDir
{
    /// <summary>What a <see cref="NativeRing"/> runs on.</summary>
    public enum RingBackend
    {
        /// <summary>Linux io_uring: the kernel performs the reads.</summary>
        IoUring = Interop.nativedir.ND_RING_IO_URING,
        /// <summary>A small pool of native threads doing blocking reads (where io_uring is missing
        /// or forbidden, or when asked for).</summary>
        Threads = Interop.nativedir.ND_RING_THREADS,
        /// <summary>Reserved; never reported. Windows rings run their reads on worker threads
        /// (fed through I/O completion ports) and report <see cref="Threads"/>.</summary>
        Iocp = Interop.nativedir.ND_RING_IOCP,
    }

    /// <summary>
    /// A queue of asynchronous positional reads (the library's nd_ring) with one completion
    /// thread. <see cref="NativeInput.ReadAsync"/> uses <see cref="Shared"/>; create your own
    /// ring to give a workload its own queue depth or backend.
    /// <para><b>Nothing is allocated per read.</b> Each read is a pooled
    /// <see cref="System.Threading.Tasks.Sources.IValueTaskSource{TResult}"/>; its buffer is
    /// pinned with <see cref="Memory{T}.Pin"/> (a GC handle, not an allocation) until the read
    /// is over. Only a cancellable token allocates (its registration).</para>
    /// <para><b>Cached reads finish at once.</b> A read whose bytes the page cache already holds
    /// is copied during the call, as a synchronous read would be, and the returned task is
    /// already complete; the rest goes to the kernel and completes on the thread pool. A mapped
    /// input's reads are always copied during the call (a page fault may wait for the device):
    /// use a buffered or <see cref="IoOptions.Merge"/> input where a read must never block. A read that would find the ring full waits in a queue of this ring, in
    /// order, and is submitted as soon as a read in flight completes.</para>
    /// <para><b>Cancellation.</b> A read still queued is dropped at once. A read already in the
    /// kernel cannot be recalled: it finishes (the buffer is never written after the task
    /// completes) and then reports <see cref="OperationCanceledException"/>.</para>
    /// <para><b>Disposal.</b> <see cref="Dispose"/> waits for the reads in flight, then fails
    /// them and every queued read with <see cref="ObjectDisposedException"/>. Disposing an input
    /// with reads in flight is safe: they complete with its bytes.</para>
    /// </summary>
    public sealed unsafe class NativeRing : IDisposable
    {
        private const int ReapBatch = 64;
#if NET
        private const int ReapWaitMs = -1; // until a completion, or nd_close wakes it
#else
        // Mono ends a process only once every thread has come back from native code (to abort
        // it there): the completion thread returns from its wait once a second while idle
        private const int ReapWaitMs = 1000;
#endif

        private static NativeRing? s_shared;

        // Dispose closes the ring through it; a submit's reference keeps nd_close from running
        // under the call (the completion thread uses the raw value: see CompletionLoop)
        private readonly NdSafeHandle _h = new();
        private readonly long _ringValue;
        private readonly Thread _completer;
        private readonly object _gate = new(); // the pool and the table
        private readonly Stack<RingRead> _pool = new();
        private RingRead[] _table = new RingRead[16];
        private int _count;
        private readonly object _queueGate = new(); // the queue of reads that found the ring full
        private RingRead? _queueHead, _queueTail;
        private int _queued;
        private int _disposed;
        private int _pausedForTest, _pauseSeen;
        private long _submitted;
        private const ulong WakeTag = ulong.MaxValue;
        private readonly ManualResetEventSlim _resume = new(true);

        /// <summary>Opens a ring that keeps up to <paramref name="depth"/> reads in the kernel
        /// at once (1..4096; more wait in the ring's queue).</summary>
        /// <param name="depth">Reads in flight at most.</param>
        /// <param name="forceThreads">Use the thread-pool backend even where io_uring works.</param>
        public NativeRing(int depth = 128, bool forceThreads = false)
        {
            if (depth < 1 || depth > 4096)
                throw new ArgumentOutOfRangeException(nameof(depth), depth, "a ring's depth is 1..4096");
            NativeLibraryLoader.EnsureLoaded();
            _ringValue = OpenRing(depth, forceThreads, _h, out RingBackend backend);
            Depth = depth;
            Backend = backend;
            _completer = new Thread(CompletionLoop)
            {
                IsBackground = true,
                Name = "NativeDir ring completions",
            };
            _completer.Start();
        }

        // called once the library is loaded: Mono binds a DllImport when it compiles its caller
        [MethodImpl(MethodImplOptions.NoInlining)]
        private static long OpenRing(int depth, bool forceThreads, NdSafeHandle h, out RingBackend backend)
        {
            long raw;
            int rc = Native.nd_ring_open((uint)depth, forceThreads ? Native.ND_RING_FORCE_THREADS : 0u, &raw);
            if (rc < 0)
                throw Errors.For(rc);
            h.Adopt(raw);
            backend = (RingBackend)Native.nd_ring_backend(raw);
            return raw;
        }

        /// <summary>The process-wide ring that <see cref="NativeInput.ReadAsync"/> uses, created
        /// on first use (depth 128) and never disposed.</summary>
        public static NativeRing Shared
        {
            get
            {
                NativeRing? r = Volatile.Read(ref s_shared);
                if (r != null)
                    return r;
                r = new NativeRing();
                NativeRing? won = Interlocked.CompareExchange(ref s_shared, r, null);
                if (won == null)
                    return r;
                r.Dispose();
                return won;
            }
        }

        /// <summary>How many reads the kernel gets at once.</summary>
        public int Depth { get; }

        /// <summary>What the ring runs on.</summary>
        public RingBackend Backend { get; }

        /// <summary>
        /// Reads up to <c>buffer.Length</c> bytes of <paramref name="input"/> at
        /// <paramref name="offset"/> into <paramref name="buffer"/>; the result is the number of
        /// bytes read: fewer only at the end of the input, 0 at or past it. The buffer must not
        /// be used for anything else until the task completes.
        /// </summary>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="offset"/> is negative.</exception>
        /// <exception cref="ObjectDisposedException">The input or the ring is disposed.</exception>
        public ValueTask<int> ReadAsync(NativeInput input, long offset, Memory<byte> buffer,
            CancellationToken cancellationToken = default)
        {
            ArgumentNullException.ThrowIfNull(input);
            if (offset < 0)
                throw new ArgumentOutOfRangeException(nameof(offset), offset, "negative offset");
            if (cancellationToken.IsCancellationRequested)
                return ValueTask.FromCanceled<int>(cancellationToken);
            if (Volatile.Read(ref _disposed) != 0)
                throw Errors.Disposed(nameof(NativeRing));
            long avail = input.Length - offset; // throws if the input is disposed
            int len = avail <= 0 ? 0 : (int)Math.Min(buffer.Length, avail);
            if (len == 0)
                return new ValueTask<int>(0);
            // The cached part first, straight into the caller's memory: for a hot file that is
            // the whole read, at the cost of a synchronous one, with nothing to pin or rent. This
            // method stays small for that path; the rest is in Submit. No SafeHandle reference
            // here, as in the synchronous NativeInput.ReadBytes: the call ends before this method
            // returns, and a handle that Dispose closed meanwhile is refused by the library
            // (ND_E_BAD_HANDLE: ObjectDisposedException, from Submit). Two interlocked
            // operations per read fewer on the path a hot index takes for every read.
            long got;
            fixed (byte* p = buffer.Span)
                got = Native.nd_read_cached(input.Handle.Value, offset, p, len);
            if (got == len)
                return new ValueTask<int>(len);
            return Submit(input, offset, buffer, len, got, cancellationToken);
        }

        /// <summary>Sends the part of a read that was not cached to the kernel.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        private ValueTask<int> Submit(NativeInput input, long offset, Memory<byte> buffer, int len, long got,
            CancellationToken cancellationToken)
        {
            if (got < 0)
                throw Errors.For(got, input.Name);
            RingRead op;
            int rc;
            long h = input.Handle.Enter(nameof(NativeInput));
            try
            {
                Interlocked.Increment(ref _submitted);
                op = Rent();
                op.Prefix = (int)got;
                op.Pin = buffer.Slice((int)got).Pin();
                op.State = RingRead.InKernel;
                op.Watch(cancellationToken); // before the kernel can complete it
                // A reference on the ring: nd_close (Dispose) must not return while this call may
                // still use the buffer, or Dispose could unpin it under the call.
                long ring;
                try
                {
                    ring = _h.Enter(nameof(NativeRing));
                }
                catch (ObjectDisposedException e)
                {
                    return Fail(op, e);
                }
                try
                {
                    rc = Native.nd_ring_submit_read(ring, h, offset + got, (byte*)op.Pin.Pointer, len - got, op.Tag);
                    if (rc < 0 && rc != Native.ND_E_BUSY)
                        return Fail(op, Errors.For(rc, input.Name));
                }
                finally
                {
                    _h.Exit();
                }
                if (rc == Native.ND_E_BUSY)
                    Enqueue(op, input, offset + got, len - (int)got);
            }
            finally
            {
                input.Handle.Exit();
            }
            return new ValueTask<int>(op, op.Version);
        }

        private ValueTask<int> Fail(RingRead op, Exception e)
        {
            if (!Claim(op, RingRead.InKernel))
                return new ValueTask<int>(op, op.Version); // Dispose failed it meanwhile
            op.Release();
            Return(op);
            return ValueTask.FromException<int>(e);
        }

        private RingRead Rent()
        {
            lock (_gate)
            {
                if (_pool.TryPop(out RingRead? op))
                    return op;
                if (_count == _table.Length)
                    Array.Resize(ref _table, _count * 2); // the completion thread reads either copy
                op = new RingRead(this, _count);
                Volatile.Write(ref _table[_count], op);
                _count++;
                return op;
            }
        }

        internal void Return(RingRead op)
        {
            op.Generation++; // a stale completion tag can never match the next read
            op.Token = default;
            op.State = RingRead.Free;
            lock (_gate)
                _pool.Push(op);
        }

        /// <summary>Moves an op to Completing if it is still in <paramref name="from"/>; the
        /// winner delivers its outcome.</summary>
        private static bool Claim(RingRead op, int from) =>
            Interlocked.CompareExchange(ref op.State, RingRead.Completing, from) == from;

        // ---- the queue of reads that found the ring full ----

        private void Enqueue(RingRead op, NativeInput input, long offset, int len)
        {
            // the input stays open (its native close deferred) until the read is submitted
            input.Handle.Enter(nameof(NativeInput));
            lock (_queueGate)
            {
                // Dispose sweeps the queue under this lock after setting _disposed: a read that
                // comes later fails here instead of waiting forever
                bool disposed = Volatile.Read(ref _disposed) != 0;
                if (disposed || Interlocked.CompareExchange(ref op.State, RingRead.Pending, RingRead.InKernel) != RingRead.InKernel)
                {
                    input.Handle.Exit();
                    if (disposed && Claim(op, RingRead.InKernel))
                        op.Complete(0, Errors.Disposed(nameof(NativeRing)));
                    return;
                }
                op.Input = input;
                op.Offset = offset;
                op.Length = len;
                Link(op, atHead: false);
            }
            // Reads in flight meanwhile may all have completed, and the completion thread found
            // an empty queue: try now, or a read that completes later submits this one.
            SubmitQueued();
        }

        private void Link(RingRead op, bool atHead)
        {
            if (atHead)
            {
                op.PrevPending = null;
                op.NextPending = _queueHead;
                if (_queueHead != null)
                    _queueHead.PrevPending = op;
                else
                    _queueTail = op;
                _queueHead = op;
            }
            else
            {
                op.PrevPending = _queueTail;
                op.NextPending = null;
                if (_queueTail != null)
                    _queueTail.NextPending = op;
                else
                    _queueHead = op;
                _queueTail = op;
            }
            _queued++;
        }

        private void Unlink(RingRead op)
        {
            if (op.PrevPending != null)
                op.PrevPending.NextPending = op.NextPending;
            else
                _queueHead = op.NextPending;
            if (op.NextPending != null)
                op.NextPending.PrevPending = op.PrevPending;
            else
                _queueTail = op.PrevPending;
            op.PrevPending = op.NextPending = null;
            _queued--;
        }

        /// <summary>Submits queued reads, in order, until the ring is full again. Their cached
        /// part was copied when they were issued: only the rest goes to the kernel.</summary>
        private void SubmitQueued()
        {
            if (Volatile.Read(ref _queued) == 0)
                return;
            lock (_queueGate)
            {
                while (_queueHead is RingRead op && Volatile.Read(ref _disposed) == 0)
                {
                    // off the queue before the kernel sees it: its completion may be reaped,
                    // delivered and the op reused before nd_ring_submit_read even returns
                    Unlink(op);
                    NativeInput input = op.Input!;
                    op.Input = null;
                    op.State = RingRead.InKernel;
                    int rc = Native.nd_ring_submit_read(_ringValue, input.Handle.Value, op.Offset,
                        (byte*)op.Pin.Pointer, op.Length, op.Tag);
                    if (rc == Native.ND_E_BUSY)
                    {
                        op.Input = input;
                        op.State = RingRead.Pending;
                        Link(op, atHead: true);
                        return;
                    }
                    Exception? error = rc < 0 ? Errors.For(rc, input.Name) : null;
                    input.Handle.Exit();
                    if (rc < 0 && Claim(op, RingRead.InKernel))
                        op.Complete(0, error);
                }
            }
        }

        /// <summary>A watched token was cancelled: a queued read completes now, a read in the
        /// kernel when the kernel is done.</summary>
        internal void OnCancel(RingRead op)
        {
            NativeInput? input;
            lock (_queueGate)
            {
                // A callback of an earlier read of this (pooled) op may run late: it finds a
                // token that is not cancelled, or one that is and so cancels this read too.
                if (!op.Token.IsCancellationRequested || !Claim(op, RingRead.Pending))
                    return; // in the kernel: its completion reports the cancellation
                Unlink(op);
                input = op.Input;
                op.Input = null;
            }
            input!.Handle.Exit();
            op.Complete(0, null); // the cancelled token turns it into OperationCanceledException
        }

        // ---- the completion thread ----

        private void CompletionLoop()
        {
            ulong* tags = stackalloc ulong[ReapBatch];
            long* results = stackalloc long[ReapBatch];
            while (true)
            {
                if (Volatile.Read(ref _pausedForTest) != 0)
                {
                    Volatile.Write(ref _pauseSeen, 1);
                    _resume.Wait();
                    Volatile.Write(ref _pauseSeen, 0);
                }
                // nd_close wakes this wait (and later calls fail with ND_E_BAD_HANDLE), so the
                // raw handle is used: a SafeHandle reference held here would defer the close
                int n = Native.nd_ring_reap(_ringValue, tags, results, ReapBatch, ReapWaitMs);
                if (n < 0)
                    return; // the ring is closed
                if (n == 0)
                {
                    if (Volatile.Read(ref _disposed) != 0)
                        return;
                    continue;
                }
                RingRead[] table = Volatile.Read(ref _table);
                for (int i = 0; i < n; i++)
                {
                    uint index = (uint)tags[i];
                    if (index >= (uint)table.Length)
                        table = Volatile.Read(ref _table);
                    if (index >= (uint)table.Length)
                        continue; // a test's wake-up (WakeTag)
                    RingRead op = table[index];
                    if (op.Generation != (uint)(tags[i] >> 32) || !Claim(op, RingRead.InKernel))
                        continue; // Dispose failed it already
                    long res = results[i];
                    op.Complete(res < 0 ? 0 : (int)res, res < 0 ? Errors.For(res) : null);
                }
                SubmitQueued();
            }
        }

        /// <summary>For tests: stops (true) or resumes (false) reaping, so that reads stay in the
        /// kernel or in the queue on purpose. Pausing wakes the completion thread with an empty
        /// read of <paramref name="wakeWith"/> and waits until it has stopped.</summary>
        internal void PauseReapingForTest(bool pause, NativeInput? wakeWith = null)
        {
            if (!pause)
            {
                Volatile.Write(ref _pausedForTest, 0);
                _resume.Set();
                return;
            }
            _resume.Reset();
            Volatile.Write(ref _pausedForTest, 1);
            int rc = Native.nd_ring_submit_read(_ringValue, wakeWith!.Handle.Value, 0, null, 0, WakeTag);
            if (rc < 0)
                throw Errors.For(rc);
            if (!SpinWait.SpinUntil(() => Volatile.Read(ref _pauseSeen) != 0, TimeSpan.FromSeconds(10)))
                throw new TimeoutException("the completion thread did not pause");
            // The completion thread may have parked before it reaped the wake-up (it checks the
            // flag first): then the wake-up still counts as in flight. It is parked, so this
            // thread may reap; the tests pause a ring with nothing else in flight, so whatever
            // comes back here is the wake-up.
            ulong tag;
            long result;
            while (Native.nd_ring_in_flight(_ringValue) > 0)
            {
                if (Native.nd_ring_reap(_ringValue, &tag, &result, 1, 10_000) <= 0 || tag != WakeTag)
                    throw new InvalidOperationException("pausing a ring for a test: a read other than the wake-up was in flight");
            }
        }

        /// <summary>Reads that needed the kernel (not wholly cached), for tests.</summary>
        internal long SubmittedForTest => Volatile.Read(ref _submitted);

        /// <summary>Reads in the kernel or queued (for tests).</summary>
        internal int InFlightForTest => Native.nd_ring_in_flight(_ringValue) + Volatile.Read(ref _queued);

        /// <summary>Waits for the reads in the kernel, then fails them and the queued ones with
        /// <see cref="ObjectDisposedException"/>. Disposing twice does nothing.</summary>
        public void Dispose()
        {
            if (Interlocked.Exchange(ref _disposed, 1) != 0)
                return;
            PauseReapingForTest(false);
            _h.Dispose(); // nd_close: waits for reads in flight, wakes the completion thread
            if (Thread.CurrentThread != _completer)
                _completer.Join();
            var disposed = new ObjectDisposedException(nameof(NativeRing),
                "the ring was disposed before the read completed");
            lock (_queueGate) // Enqueue checks _disposed under this lock
            {
                while (_queueHead is RingRead op)
                {
                    Unlink(op);
                    NativeInput input = op.Input!;
                    op.Input = null;
                    input.Handle.Exit();
                    if (Claim(op, RingRead.Pending))
                        op.Complete(0, disposed);
                }
                RingRead[] table;
                int count;
                lock (_gate)
                {
                    table = _table;
                    count = _count;
                }
                for (int i = 0; i < count; i++)
                    if (Claim(table[i], RingRead.InKernel))
                        table[i].Complete(0, disposed);
            }
        }
    }
}
