using System;
using System.Buffers;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;

namespace NativeDir
{
    /// <summary>
    /// One asynchronous read, reused across reads: the awaiter of the <see cref="ValueTask{T}"/>
    /// that <see cref="NativeRing.ReadAsync"/> returns. A ring keeps these in a pool, so a read
    /// allocates nothing. The state changes by compare-and-swap only, so a completion, a
    /// cancellation and a ring disposal racing for one read complete it exactly once.
    /// </summary>
    internal sealed class RingRead : IValueTaskSource<int>
#if NET
        , IThreadPoolWorkItem
#endif
    {
        internal const int Free = 0, Pending = 1, InKernel = 2, Completing = 3;

        // Continuations run where the completion is delivered: a thread-pool work item (this
        // object), never the ring's completion thread, which must not run user code.
        private ManualResetValueTaskSourceCore<int> _core = new() { RunContinuationsAsynchronously = false };
        private readonly NativeRing _ring;
        private int _result;
        private Exception? _error;
        private CancellationTokenRegistration _cancel;
#if !NET
        private bool _registered;
#endif
        private readonly object _resultGate = new();

        internal readonly int Index;
        internal uint Generation;
        internal int State;
        internal MemoryHandle Pin;
        internal int Prefix; // bytes copied from the cache before the rest was submitted
        internal CancellationToken Token;

        // what a queued (ring-full) read still has to submit
        internal NativeInput? Input;
        internal long Offset;
        internal int Length;
        internal RingRead? PrevPending, NextPending;

        internal RingRead(NativeRing ring, int index)
        {
            _ring = ring;
            Index = index;
        }

        internal ulong Tag => ((ulong)Generation << 32) | (uint)Index;

        internal short Version => _core.Version;

        /// <summary>Honours <paramref name="token"/> while the read waits (queued or in the
        /// kernel). Registering allocates only for a token that can be cancelled.</summary>
        internal void Watch(CancellationToken token)
        {
            Token = token;
            if (token.CanBeCanceled)
#if NET
                _cancel = token.UnsafeRegister(static s => ((RingRead)s!)._ring.OnCancel((RingRead)s!), this);
#else
            {
                _cancel = token.Register(static s => ((RingRead)s!)._ring.OnCancel((RingRead)s!), this);
                _registered = true;
            }
#endif
        }

        /// <summary>Delivers the outcome on the thread pool; the caller has moved State to
        /// Completing. The pinned buffer is released first: nothing writes it any more.</summary>
        internal void Complete(int result, Exception? error)
        {
            Release();
            if (error == null && Token.IsCancellationRequested)
                error = new OperationCanceledException(Token);
            _result = Prefix + result;
            _error = error;
#if NET
            ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
#else
            // no IThreadPoolWorkItem here: the pool wraps the callback in a work item of its own
            ThreadPool.UnsafeQueueUserWorkItem(s_execute, this);
#endif
        }

        /// <summary>Unpins the buffer and stops watching the token: the read is over.</summary>
        internal void Release()
        {
            Pin.Dispose();
            Pin = default;
#if NET
            _cancel.Unregister();
#else
            // only Dispose unregisters here, and it waits for a callback running on another
            // thread, which may be waiting for a lock the caller holds: let the pool do it (only
            // a cancellable token was registered; a late callback finds its read over, see OnCancel)
            if (_registered)
                ThreadPool.UnsafeQueueUserWorkItem(static r => ((IDisposable)r!).Dispose(), _cancel);
            _registered = false;
#endif
            _cancel = default;
        }

#if NET
        void IThreadPoolWorkItem.Execute() => Execute();
#else
        private static readonly WaitCallback s_execute = static o => ((RingRead)o!).Execute();
#endif

        private void Execute()
        {
            if (_error != null)
                _core.SetException(_error);
            else
                _core.SetResult(_result);
        }

        public int GetResult(short token)
        {
            // Awaiting twice, or reading Result before the read is over, must not hand this op
            // (its pinned buffer possibly still in the kernel) back to the pool: the checks and
            // the Reset that makes the token stale happen under one lock.
            lock (_resultGate)
            {
                if (token != _core.Version)
                    throw new InvalidOperationException(
                        "a ValueTask from ReadAsync was awaited (or its Result read) more than once");
                if (_core.GetStatus(token) == ValueTaskSourceStatus.Pending)
                    throw new InvalidOperationException(
                        "the read has not completed: await the ValueTask instead of reading its Result");
                try
                {
                    return _core.GetResult(token);
                }
                finally
                {
                    _core.Reset();
                    _error = null;
                    _ring.Return(this);
                }
            }
        }

        public ValueTaskSourceStatus GetStatus(short token) => _core.GetStatus(token);

        public void OnCompleted(Action<object?> continuation, object? state, short token,
            ValueTaskSourceOnCompletedFlags flags) => _core.OnCompleted(continuation, state, token, flags);
    }
}
