using System;
using System.Buffers;
using Lucene.Net.Store;

namespace NativeDir.Lucene
{
    /// <summary>
    /// A Lucene <see cref="IndexOutput"/> over a nativedir output. Bytes collect in a managed
    /// buffer (rented, returned at Dispose) and reach the library in one call per full buffer, so
    /// a direct-I/O merge output gets large aligned-friendly writes. <see cref="Checksum"/> is the
    /// library's running CRC-32 (zlib's, the same as Lucene's CRC32), computed as bytes are written
    /// instead of a second managed pass.
    /// </summary>
    public sealed class NativeIndexOutput : IndexOutput
    {
        private readonly NativeFSDirectory _dir;
        private readonly NativeOutput _out;
        private byte[]? _buf;
        private int _n;
        private long _flushed; // bytes before _buf[0]: handed to the native output
        private long _end;     // the furthest byte written before the last Seek
        private bool _disposed;
        private long _finalChecksum; // the checksum of every byte, kept at Dispose

        internal NativeIndexOutput(NativeFSDirectory dir, NativeOutput output, int bufferSize)
        {
            _dir = dir;
            _out = output;
            _buf = ArrayPool<byte>.Shared.Rent(bufferSize);
            BufferSize = _buf.Length; // the pool may round a size up: then this much collects
        }

        /// <summary>How many bytes collect in the managed buffer before they go to the library in
        /// one call: <see cref="IoStrategyPolicy.OutputBufferSize"/>, by default the library's own
        /// buffer size for the output (<see cref="NativeOutput.BufferSize"/>).</summary>
        public int BufferSize { get; }

        /// <summary>The file name.</summary>
        public string Name => _out.Name;

        /// <summary>How the output writes (buffered, or direct for large merges).</summary>
        public IoStrategy Strategy => _out.Strategy;

        /// <inheritdoc/>
        public override void WriteByte(byte b)
        {
            byte[]? buf = _buf;
            int n = _n;
            if (buf != null && (uint)n < (uint)buf.Length)
            {
                buf[n] = b;
                _n = n + 1;
                return;
            }
            WriteByteSlow(b);
        }

        private void WriteByteSlow(byte b)
        {
            FlushBuffer();
            _buf![0] = b;
            _n = 1;
        }

        /// <inheritdoc/>
        public override void WriteBytes(byte[] b, int offset, int length)
        {
            if ((uint)offset > (uint)b.Length || (uint)length > (uint)(b.Length - offset))
                throw new ArgumentOutOfRangeException(nameof(length), $"[{offset}, {offset}+{length}) is outside the array ({b.Length})");
            byte[] buf = Buffer();
            ReadOnlySpan<byte> src = b.AsSpan(offset, length);
            // a write as large as the buffer goes straight to the library when nothing is
            // buffered: copying it here first would only add a copy per buffer (a merge writes
            // in 1 MiB pieces into a 1 MiB buffer: every other piece was copied twice)
            if (src.Length <= buf.Length - _n && (_n > 0 || src.Length < buf.Length))
            {
                src.CopyTo(buf.AsSpan(_n));
                _n += src.Length;
                return;
            }
            FlushBuffer();
            if (src.Length >= buf.Length)
            {
                Native(src);
                return;
            }
            src.CopyTo(buf);
            _n = src.Length;
        }

        private byte[] Buffer() => _buf ?? throw Closed();

        private ObjectDisposedException Closed() => new(Name, $"the output '{Name}' is closed");

        private void FlushBuffer()
        {
            byte[] buf = Buffer();
            if (_n == 0)
                return;
            int n = _n;
            _n = 0; // a failed native write fails the output for good: never resend
            Native(buf.AsSpan(0, n));
        }

        private void Native(ReadOnlySpan<byte> src)
        {
            _out.Write(src);
            _flushed += src.Length;
        }

        /// <summary>Writes every buffered byte to the file, as Lucene's IndexOutput.Flush
        /// promises: afterwards <see cref="Directory.FileLength"/> sees them (not an fsync: that is
        /// Directory.Sync).</summary>
        public override void Flush()
        {
            FlushBuffer();
            _out.Flush();
        }

        /// <inheritdoc/>
        /// <exception cref="ObjectDisposedException">The output is disposed, as FSDirectory's
        /// outputs throw (their file stream has no position once closed).</exception>
        public override long Position => _buf != null ? _flushed + _n : throw Closed();

        /// <summary>The file's length: the furthest byte written (after a <see cref="Seek"/>
        /// back, more than <see cref="Position"/>), as FSDirectory's outputs report it.</summary>
        /// <exception cref="ObjectDisposedException">The output is disposed.</exception>
        public override long Length => Math.Max(_end, Position);

        /// <inheritdoc/>
        /// <remarks>Still answers once the output is disposed (the checksum of every byte written),
        /// as FSDirectory's outputs do.</remarks>
        public override long Checksum
        {
            get
            {
                if (_disposed)
                    return _finalChecksum;
                FlushBuffer();
                return _out.Checksum;
            }
        }

        /// <summary>
        /// Lucene's deprecated random-access write, as FSDirectory's own outputs do it: the
        /// following bytes overwrite the file from <paramref name="pos"/>; <see cref="Position"/>
        /// moves there, <see cref="Length"/> keeps the furthest byte written, and
        /// <see cref="Checksum"/> goes on covering every byte written, in the order written.
        /// (Lucene 3.x's term dictionary writer rewrites its header this way.)
        /// </summary>
        /// <exception cref="System.IO.IOException">A negative <paramref name="pos"/>, as FSDirectory's
        /// outputs throw (a file stream's seek before the start).</exception>
        [Obsolete("(4.1) this method will be removed in Lucene 5.0")]
        public override void Seek(long pos)
        {
            if (pos < 0)
                throw new System.IO.IOException($"seek to {pos} in '{Name}': before the start of the file");
            FlushBuffer();
            long at = Position;
            _out.Seek(pos);
            _end = Math.Max(_end, at);
            _flushed = pos;
        }

        /// <summary>Durable through this handle: used by Sync for outputs still open.</summary>
        internal void SyncThroughHandle()
        {
            FlushBuffer();
            _out.Sync();
        }

        internal bool IsDisposed => _disposed;

        /// <summary>Flushes and closes; a failed final write or close is thrown here, after the
        /// handle is released.</summary>
        protected override void Dispose(bool disposing)
        {
            if (_disposed)
                return;
            _disposed = true;
            byte[]? buf = _buf;
            try
            {
                try
                {
                    if (buf != null && _n > 0)
                    {
                        int n = _n;
                        _n = 0;
                        Native(buf.AsSpan(0, n));
                    }
                    _finalChecksum = _out.Checksum;
                }
                finally
                {
                    _buf = null;
                    if (buf != null)
                        ArrayPool<byte>.Shared.Return(buf);
                    _out.Dispose(); // throws if the library's final flush (or truncate) failed
                }
            }
            finally
            {
                _dir.OnOutputClosed(this);
            }
        }
    }
}
