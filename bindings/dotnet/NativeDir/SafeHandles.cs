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
    /// An input's handle. The window a cursor reads is pinned by the library itself
    /// (nd_input_window) and nd_close leaves it to the cursor's next call. Finalization is the
    /// other place where no thread can read a window any more, so there the pin is dropped.
    /// </summary>
    internal sealed class InputSafeHandle : NdSafeHandle
    {
        protected override void Dispose(bool disposing)
        {
            // Finalization: the input is unreachable, so nobody reads its window. This also runs
            // for a handle Dispose already closed (NativeInput re-registers it when it took a
            // window), whose pin may be all that keeps the native input alive.
            if (!disposing && Value != 0)
                Native.nd_input_unpin(Value);
            base.Dispose(disposing);
        }
    }
}
