using System;
using System.Runtime.CompilerServices;
using Native = NativeDir.Interop.nativedir;

namespace NativeDir
{
    /// <summary>
    /// A file open for writing front to back. One writer at a time. Small writes collect in an
    /// 8 KiB managed buffer (a P/Invoke per byte would cost ~10x a buffered store); it reaches the
    /// native library on <see cref="Flush"/>, <see cref="Sync"/>, <see cref="Checksum"/>,
    /// <see cref="Seek"/>, when full, and on <see cref="Dispose"/>; <see cref="Flush"/> also
    /// hands the library's own buffer to the OS.
    /// </summary>
    public sealed unsafe class NativeOutput : IDisposable
    {
        private const int BufferSize = 8192;

        private readonly NdSafeHandle _h;
        private readonly byte[] _buf = new byte[BufferSize];
        private int _n;
        private long _flushed; // bytes handed to the native library
        private bool _disposed;

        internal NativeOutput(NdSafeHandle h, string name)
        {
            _h = h;
            Name = name;
        }

        /// <summary>The file name.</summary>
        public string Name { get; }

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
            byte[] buf = _buf;
            if ((uint)n < (uint)buf.Length)
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
            _buf[0] = b;
            _n = 1;
        }

        /// <summary>Appends all of <paramref name="src"/>.</summary>
        public void Write(ReadOnlySpan<byte> src)
        {
            if (src.Length <= _buf.Length - _n)
            {
                src.CopyTo(_buf.AsSpan(_n));
                _n += src.Length;
                return;
            }
            HandOver();
            if (src.Length >= _buf.Length)
                WriteNative(src);
            else
            {
                src.CopyTo(_buf);
                _n = src.Length;
            }
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
            WriteNative(_buf.AsSpan(0, n));
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
