using System;
using System.Runtime.InteropServices;
using System.Threading;
using Native = NativeDir.Interop.nativedir;

namespace NativeDir
{
    /// <summary>
    /// One native handle (directory, input, output or lock). ReleaseHandle calls nd_close once the
    /// last user is done: SafeHandle reference counting makes Dispose racing a call safe, and the
    /// native library itself tolerates a stale handle. The nd_handle is a 64-bit integer, kept in
    /// its own field because IntPtr is 32 bits wide on some platforms.
    /// </summary>
    internal class NdSafeHandle : SafeHandle
    {
        private long _value;

        public NdSafeHandle() : base(IntPtr.Zero, ownsHandle: true) { }

        /// <summary>The nd_handle; valid while a reference is held (see <see cref="Enter"/>).</summary>
        internal long Value => _value;

        /// <summary>nd_close's status when ReleaseHandle ran (an output's final flush).</summary>
        internal int CloseStatus { get; private set; }

        public override bool IsInvalid => _value == 0;

        internal void Adopt(long value)
        {
            _value = value;
            SetHandle((IntPtr)1); // marks the SafeHandle valid; the real handle is _value
        }

        /// <summary>Takes a reference for one native call; throws if the handle is closed.</summary>
        internal long Enter(string owner)
        {
            bool added = false;
            try
            {
                DangerousAddRef(ref added);
            }
            catch (ObjectDisposedException)
            {
                throw Errors.Disposed(owner);
            }
            return _value;
        }

        internal void Exit() => DangerousRelease();

        /// <summary>Whether nd_close has run (for tests).</summary>
        internal bool Released { get; private set; }

        protected override bool ReleaseHandle()
        {
            Released = true;
            CloseStatus = Native.nd_close(_value);
            return true;
        }
    }

    /// <summary>
    /// An input's handle, plus the <em>window lease</em>: one extra reference that an input takes
    /// when it caches its first zero-copy window and keeps while any window may be read, so
    /// nd_close (which frees the buffer or unmaps the file) cannot run under a reader. The lease
    /// belongs to the thread that last filled a window (<see cref="LeaseThread"/>).
    /// </summary>
    internal sealed class InputSafeHandle : NdSafeHandle
    {
        /// <summary>Managed thread id of the lease's owner; 0 when no lease is held.</summary>
        internal int LeaseThread;

        /// <summary>Takes the lease for <paramref name="thread"/> (or takes it over from the
        /// thread that filled the previous window).</summary>
        internal void TakeLease(int thread, string owner)
        {
            // CompareExchange is a full fence: it pairs with NativeInput.Dispose, which sets its
            // disposed flag and then reads LeaseThread.
            while (true)
            {
                int current = Volatile.Read(ref LeaseThread);
                if (current == thread)
                    return;
                if (current != 0)
                {
                    if (Interlocked.CompareExchange(ref LeaseThread, thread, current) == current)
                        return;
                    continue;
                }
                Enter(owner);
                if (Interlocked.CompareExchange(ref LeaseThread, thread, 0) == 0)
                    return;
                DangerousRelease(); // another thread took the lease meanwhile
            }
        }

        /// <summary>Gives the lease back if <paramref name="thread"/> holds it.</summary>
        internal void DropLease(int thread)
        {
            if (Interlocked.CompareExchange(ref LeaseThread, 0, thread) == thread)
                DangerousRelease();
        }

        protected override void Dispose(bool disposing)
        {
            // Finalization: the input is unreachable, so nobody can be reading its window.
            if (!disposing && Interlocked.Exchange(ref LeaseThread, 0) != 0)
                DangerousRelease();
            base.Dispose(disposing);
        }
    }
}
