using System;
using System.Runtime.CompilerServices;
using Native = NativeDir.Interop.nativedir;

namespace NativeDir
{
    /// <summary>
    /// A file open for writing front to back. One writer at a time. Small writes collect in a
    /// managed buffer of <see cref="BufferSize"/> bytes (a P/Invoke per byte would cost ~10x a
    /// buffered store), allocated on the first small write; it reaches the native library on
    /// <see cref="Flush"/>, <see cref="Sync"/>, <see cref="Checksum"/>, <see cref="Seek"/>, when
    /// full, and on <see cref="Dispose"/>; writes of a buffer's size or more go to the library in
    /// one call. <see cref="Flush"/> also hands the library's own buffer to the OS.
    /// </summary>
    public sealed unsafe class NativeOutput : IDisposable
    {
        private readonly NdSafeHandle _h;
        private byte[]? _buf; // BufferSize bytes once a small write needs it
        private int _n;
        private long _flushed; // bytes handed to the native library
        private bool _disposed;

        private NativeOutput(NdSafeHandle h, string name, int bufferSize)
        {
            _h = h;
            Name = name;
            BufferSize = bufferSize;
        }

        /// <summary>Wraps a newly created output, asking the library its buffer size; on failure
        /// the handle is closed.</summary>
        internal static NativeOutput Wrap(NdSafeHandle h, string name)
        {
            long size = Native.nd_output_buffer_size(h.Value); // fresh: no other thread has it yet
            if (size < 0)
            {
                Exception e = Errors.For(size, name);
                h.Dispose();
                throw e;
            }
            return new NativeOutput(h, name, (int)size);
        }

        /// <summary>The file name.</summary>
        public string Name { get; }

        /// <summary>The size of the library's buffer for this output when it was created (from its
        /// strategy: nd_output_buffer_size): the managed buffer's size, and what a writer that
        /// keeps a buffer of its own should use, so that each full buffer is one native call.</summary>
        public int BufferSize { get; }

        /// <summary>The managed buffer's length (0 until a small write needs it), for tests.</summary>
        internal int ManagedBufferLength => _buf?.Length ?? 0;

        /// <summary>The library's answer now, for tests.</summary>
        internal long LibraryBufferSize()
        {
            long h = Enter();
            try
            {
                return Native.nd_output_buffer_size(h);
            }
            finally
            {
                _h.Exit();
            }
        }

        /// <summary>Bytes written so far (the file's length once disposed); after
        /// <see cref="Seek"/>, where the next byte goes.</summary>
        public long Position => _flushed + _n;

        /// <summary>How the output writes: buffered or direct.</summary>
        public IoStrategy Strategy
        {
            get
            {
                long h = Enter();
                try
                {
                    int rc = Native.nd_output_strategy(h);
                    return rc < 0 ? throw Errors.For(rc, Name) : (IoStrategy)rc;
                }
                finally
                {
                    _h.Exit();
                }
            }
        }

        /// <summary>zlib's CRC-32 of every byte written so far, in the order written.</summary>
        public uint Checksum
        {
            get
            {
                HandOver();
                long h = Enter();
                try
                {
                    long rc = Native.nd_output_crc32(h);
                    return rc < 0 ? throw Errors.For(rc, Name) : (uint)rc;
                }
                finally
                {
                    _h.Exit();
                }
            }
        }

        /// <summary>Appends one byte.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void WriteByte(byte b)
        {
            int n = _n;
            byte[]? buf = _buf;
            if (buf != null && (uint)n < (uint)buf.Length)
            {
                buf[n] = b;
                _n = n + 1;
                return;
            }
            WriteByteSlow(b);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private void WriteByteSlow(byte b)
        {
            HandOver();
            Buffer()[0] = b;
            _n = 1;
        }

        /// <summary>Appends all of <paramref name="src"/>.</summary>
        public void Write(ReadOnlySpan<byte> src)
        {
            if (src.Length >= BufferSize)
            {
                // a buffer's worth or more: what is buffered first, then all of it in one call
                HandOver();
                WriteNative(src);
                return;
            }
            if (src.Length > BufferSize - _n)
                HandOver();
            src.CopyTo(Buffer().AsSpan(_n));
            _n += src.Length;
        }

        private byte[] Buffer()
        {
            if (_disposed)
                throw Errors.Disposed(nameof(NativeOutput));
            return _buf ??= new byte[BufferSize];
        }

        /// <summary>Appends all of <paramref name="src"/>.</summary>
        public void Write(ReadOnlyMemory<byte> src) => Write(src.Span);

        /// <summary>Hands every byte written so far to the OS (no fsync: see <see cref="Sync"/>):
        /// afterwards the file's length is <see cref="Position"/> (after a <see cref="Seek"/> back,
        /// the furthest byte written) and readers see every byte; a direct output writes its
        /// tail.</summary>
        public void Flush()
        {
            HandOver();
            long h = Enter();
            try
            {
                int rc = Native.nd_output_flush(h);
                if (rc < 0)
                    throw Errors.For(rc, Name);
            }
            finally
            {
                _h.Exit();
            }
        }

        /// <summary>
        /// Moves the cursor to <paramref name="position"/> (0 or more): the following writes
        /// overwrite the file from there, as a <see cref="System.IO.FileStream"/> does after a
        /// seek (past the end, the gap reads as zeros). The file never shrinks;
        /// <see cref="Checksum"/> goes on covering every byte written, in the order written.
        /// A direct output writes drop-behind from then on. Experimental (nd_output_seek): for
        /// Lucene's deprecated IndexOutput.Seek.
        /// </summary>
        public void Seek(long position)
        {
            if (position < 0)
                throw new ArgumentOutOfRangeException(nameof(position), position, "a position is 0 or more");
            HandOver();
            long h = Enter();
            try
            {
                int rc = Native.nd_output_seek(h, position);
                if (rc < 0)
                    throw Errors.For(rc, Name);
                _flushed = position;
            }
            finally
            {
                _h.Exit();
            }
        }

        /// <summary>Hands the managed buffer to the native library (which may keep it in its own
        /// buffer).</summary>
        private void HandOver()
        {
            if (_disposed)
                throw Errors.Disposed(nameof(NativeOutput));
            if (_n == 0)
                return;
            int n = _n;
            _n = 0; // a failed native write fails the output for good: never resend
            WriteNative(_buf.AsSpan(0, n)); // _n > 0: the buffer exists
        }

        private void WriteNative(ReadOnlySpan<byte> src)
        {
            long h = Enter();
            try
            {
                long rc;
                fixed (byte* p = src)
                    rc = Native.nd_write_bytes(h, p, src.Length);
                if (rc < 0)
                    throw Errors.For(rc, Name);
                _flushed += src.Length;
            }
            finally
            {
                _h.Exit();
            }
        }

        /// <summary>Flushes and fsyncs through this handle: every byte written so far is durable
        /// on return. After a failed sync every later sync fails too.</summary>
        public void Sync()
        {
            HandOver();
            long h = Enter();
            try
            {
                int rc = Native.nd_output_sync(h);
                if (rc < 0)
                    throw Errors.For(rc, Name);
            }
            finally
            {
                _h.Exit();
            }
        }

        private long Enter()
        {
            if (_disposed)
                throw Errors.Disposed(nameof(NativeOutput));
            return _h.Enter(nameof(NativeOutput));
        }

        /// <summary>Flushes and closes (no fsync: call <see cref="Sync"/> first for durability).
        /// Throws if the final flush fails; the handle is closed either way. Disposing twice does
        /// nothing.</summary>
        public void Dispose()
        {
            if (_disposed)
                return;
            try
            {
                HandOver();
            }
            finally
            {
                _disposed = true;
                _h.Dispose();
            }
            // nd_close ran now unless another thread was inside a call; then it runs when that
            // call returns and its status cannot be reported here.
            if (_h.CloseStatus < 0)
                throw Errors.For(_h.CloseStatus, Name);
        }
    }
}
