using System;
using System.Buffers.Binary;
using System.IO;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Lucene.Net.Store;

namespace NativeDir.Lucene
{
    /// <summary>
    /// A Lucene <see cref="IndexInput"/> over a nativedir file, a slice of one, or a clone.
    /// <para>The cursor reads from a window <c>[_win, _end)</c> of memory that holds bytes
    /// <c>[_winStart, ...)</c> of this input: on a mapped file the window is the whole input inside
    /// the mapping (a byte read is a bounds check and a load, with no call at all); otherwise it is
    /// this input's own managed buffer (pinned, so it can be read through a pointer), refilled by
    /// one positional native read. Reads at least a buffer long go straight into the caller's
    /// array. See <see cref="SharedFile"/> for why clones own nothing native, and why a mapping
    /// someone read stays until the garbage collector finds no input left.</para>
    /// </summary>
    public sealed unsafe class NativeIndexInput : IndexInput
    {
        private readonly SharedFile _file;
        private readonly long _offset; // of this input (a slice) in the file
        private readonly long _length;
        private readonly int _bufferSize;
        private bool _owner; // the opened input or a slice (disposing releases the file); never a clone
        private bool _disposed;

        private byte[]? _buffer;  // pinned (POH); null on mapped files and until the first refill
        private byte* _win;       // bytes [_winStart, _winStart + (_end - _win)) of this input
        private byte* _cur;
        private byte* _end;
        private long _winStart;

        internal NativeIndexInput(string description, SharedFile file, long offset, long length, int bufferSize, bool owner)
            : base(description)
        {
            _file = file;
            _offset = offset;
            _length = length;
            _bufferSize = bufferSize;
            _owner = owner;
            if (!owner)
                MapWindow();
            // an owner maps its window on its first read, which tells the file (SharedFile.MapRead)
        }

        /// <summary>How the file is read (mapped, buffered, direct or drop-behind).</summary>
        public IoStrategy Strategy => _file.Strategy;

        /// <summary>Whether byte reads come straight from a mapping.</summary>
        public bool IsMapped => _file.Base != null;

        /// <summary>Points the window at the file's mapping (clones, and owners once read).</summary>
        private void MapWindow()
        {
            if (_file.Base != null)
            {
                _win = _cur = _file.Base + _offset;
                _end = _win + _length;
                _winStart = 0;
            }
        }

        /// <inheritdoc/>
        public override long Length => _length;

        /// <inheritdoc/>
        public override long Position => _winStart + (_cur - _win);

        /// <inheritdoc/>
        public override void Seek(long pos)
        {
            if (_file.Closed || (_owner && _disposed))
                throw Closed();
            if ((ulong)pos > (ulong)_length)
            {
                // as MMapDirectory's inputs: a negative position is a bad argument, one past the
                // end is the end of the stream (Lucene catches the two differently)
                if (pos < 0)
                    throw new ArgumentOutOfRangeException(nameof(pos), $"seek to {pos} in {this}: negative position");
                throw new EndOfStreamException($"seek to {pos} past the end of {this} ({_length} bytes)");
            }
            if (_win != null && pos >= _winStart && pos <= _winStart + (_end - _win))
            {
                _cur = _win + (pos - _winStart);
                return;
            }
            _win = _cur = _end = null;
            _winStart = pos;
        }

        /// <inheritdoc/>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public override byte ReadByte()
        {
            byte* p = _cur;
            if (p < _end)
            {
                byte b = *p;
                _cur = p + 1; // the store keeps this input (hence the mapping) alive past the load
                return b;
            }
            return ReadByteSlow();
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private byte ReadByteSlow()
        {
            Refill(Position, 1);
            return *_cur++;
        }

        /// <inheritdoc/>
        public override void ReadBytes(byte[] b, int offset, int len)
        {
            ArgumentNullException.ThrowIfNull(b); // as MMapDirectory's inputs, not a NullReferenceException
            if ((uint)offset > (uint)b.Length || (uint)len > (uint)(b.Length - offset))
                throw new ArgumentOutOfRangeException(nameof(len), $"[{offset}, {offset}+{len}) is outside the array ({b.Length})");
            Span<byte> dst = b.AsSpan(offset, len);
            byte* p = _cur;
            if (len <= _end - p)
            {
                new ReadOnlySpan<byte>(p, len).CopyTo(dst);
                _cur = p + len;
                return;
            }
            ReadBytesSlow(dst);
        }

        /// <inheritdoc/>
        public override void ReadBytes(byte[] b, int offset, int len, bool useBuffer) => ReadBytes(b, offset, len);

        private void ReadBytesSlow(Span<byte> dst)
        {
            long pos = Position;
            if (_file.Closed || (_owner && _disposed))
                throw Closed();
            if (dst.Length > _length - pos)
                throw new EndOfStreamException($"read past EOF: {dst.Length} bytes at {pos} of {this} ({_length} bytes)");
            int have = (int)(_end - _cur);
            if (have > 0)
            {
                new ReadOnlySpan<byte>(_cur, have).CopyTo(dst);
                _cur = _end;
                dst = dst.Slice(have);
                pos += have;
            }
            if (dst.Length >= _bufferSize)
            {
                _file.Read(_offset + pos, dst); // straight into the caller's array
                _win = _cur = _end = null;
                _winStart = pos + dst.Length;
                return;
            }
            Refill(pos, dst.Length);
            new ReadOnlySpan<byte>(_cur, dst.Length).CopyTo(dst);
            _cur += dst.Length;
        }

        /// <summary>Makes the window start at <paramref name="pos"/> holding at least
        /// <paramref name="need"/> bytes (positional read into this input's buffer).</summary>
        private void Refill(long pos, int need)
        {
            if (_file.Closed || (_owner && _disposed))
                throw Closed();
            if (pos + need > _length || pos < 0)
                throw new EndOfStreamException($"read past EOF: {need} bytes at {pos} of {this} ({_length} bytes)");
            if (_file.Base != null)
            {
                if (_owner && !_file.MapRead())
                    throw Closed(); // disposed under us before its first read of the mapping
                MapWindow(); // a mapped window only ever lacks bytes past the end
                _cur = _win + pos;
                return;
            }
            // GC.AllocateArray(pinned) puts the buffer on the pinned heap: its address never moves,
            // so the window can be a raw pointer like a mapping's; the GC frees it with the input.
            _buffer ??= GC.AllocateUninitializedArray<byte>(_bufferSize, pinned: true);
            int n = (int)Math.Min(_buffer.Length, _length - pos);
            _file.Read(_offset + pos, _buffer.AsSpan(0, n));
            fixed (byte* p = _buffer)
            {
                _win = _cur = p;
                _end = p + n;
            }
            _winStart = pos;
        }

        private ObjectDisposedException Closed()
        {
            _win = _cur = _end = null;
            return _file.Disposed();
        }

        // Lucene's multi-byte values are big-endian; reading them in one load from the window
        // saves a virtual ReadByte per byte on the hot path of postings and terms decoding.

        /// <summary>The next <paramref name="n"/> bytes straight from the window, advancing the
        /// cursor, when the window holds them all; false (nothing consumed) otherwise.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        private bool TryTake(int n, out ReadOnlySpan<byte> bytes)
        {
            byte* p = _cur;
            if (_end - p >= n)
            {
                bytes = new ReadOnlySpan<byte>(p, n);
                _cur = p + n;
                return true;
            }
            bytes = default;
            return false;
        }

        /// <inheritdoc/>
        public override short ReadInt16() =>
            TryTake(2, out ReadOnlySpan<byte> b) ? BinaryPrimitives.ReadInt16BigEndian(b) : base.ReadInt16();

        /// <inheritdoc/>
        public override int ReadInt32() =>
            TryTake(4, out ReadOnlySpan<byte> b) ? BinaryPrimitives.ReadInt32BigEndian(b) : base.ReadInt32();

        /// <inheritdoc/>
        public override long ReadInt64() =>
            TryTake(8, out ReadOnlySpan<byte> b) ? BinaryPrimitives.ReadInt64BigEndian(b) : base.ReadInt64();

        /// <inheritdoc/>
        public override int ReadVInt32()
        {
            byte* p = _cur;
            if (_end - p >= 5)
            {
                int b = *p++;
                int v = b & 0x7F;
                for (int shift = 7; b >= 0x80; shift += 7)
                {
                    b = *p++;
                    if (shift == 28)
                    {
                        if ((b & 0xF0) != 0)
                            throw new IOException("Invalid vInt detected (too many bits)");
                        v |= b << 28;
                        break;
                    }
                    v |= (b & 0x7F) << shift;
                }
                _cur = p;
                return v;
            }
            return base.ReadVInt32();
        }

        /// <inheritdoc/>
        public override long ReadVInt64()
        {
            byte* p = _cur;
            if (_end - p >= 9)
            {
                long b = *p++;
                long v = b & 0x7F;
                for (int shift = 7; b >= 0x80; shift += 7)
                {
                    if (shift > 56)
                        throw new IOException("Invalid vLong detected (negative values disallowed)");
                    b = *p++;
                    v |= (b & 0x7F) << shift;
                }
                _cur = p;
                return v;
            }
            return base.ReadVInt64();
        }

        /// <summary>A cursor of its own on the same file (no native handle: see
        /// <see cref="SharedFile"/>). Lucene never disposes clones; disposing one does nothing.</summary>
        public override object Clone()
        {
            if (!_file.MapRead()) // the clone may point into the mapping from now on
                throw _file.Disposed();
            var c = (NativeIndexInput)base.Clone(); // memberwise: same file, slice and position
            c._disposed = false;
            c._owner = false;
            // a mapped window is the file's mapping (or none yet) for every input: shared as is
            if (_file.Base == null)
            {
                // the parent refills its buffer under the clone: the clone gets its own
                long pos = Position;
                c._buffer = null;
                c._win = c._cur = c._end = null;
                c._winStart = pos;
            }
            return c;
        }

        /// <summary>
        /// Asks the OS to start reading bytes [<paramref name="offset"/>, <paramref name="offset"/> +
        /// <paramref name="length"/>) of this input (a slice's own offsets) into memory and returns
        /// at once: Lucene 9.12+'s <c>IndexInput.prefetch</c>, for applications that know which
        /// blocks they read next (Lucene.NET 4.8's codecs never call it). Next to free when the
        /// bytes are cached; see <see cref="NativeInput.Prefetch"/>.
        /// </summary>
        /// <exception cref="EndOfStreamException">The range passes the end of this input.</exception>
        public void Prefetch(long offset, long length)
        {
            if (offset < 0 || length < 0)
                throw new ArgumentOutOfRangeException(offset < 0 ? nameof(offset) : nameof(length),
                    $"negative {(offset < 0 ? "offset" : "length")} prefetching {this}");
            if (offset > _length - length)
                throw new EndOfStreamException($"prefetch of {length} bytes at {offset} passes the end of {this} ({_length} bytes)");
            _file.Prefetch(_offset + offset, length);
        }

        /// <summary>
        /// Changes the OS access advice of the file under this input to <see cref="IoOptions.Random"/>,
        /// <see cref="IoOptions.Sequential"/> or <see cref="IoOptions.None"/> (normal): Lucene 10's
        /// <c>updateReadAdvice</c>, e.g. before reading a randomly accessed file front to back once.
        /// The file is shared, so its clones, its slicer and their slices get the advice too.
        /// </summary>
        /// <exception cref="ArgumentException">Anything but one of those three values.</exception>
        public void UpdateReadAdvice(IoOptions advice) => _file.Advise(advice);

        /// <summary>Gives only this input's own range of the file (a slice's bytes) the access
        /// <paramref name="advice"/>; on a mapping that is the range's pages, on a descriptor
        /// the whole file (see nd_input_advise).</summary>
        internal void AdviseRange(IoOptions advice) => _file.AdviseRange(_offset, _length, advice);

        /// <summary>A slice of this input; an owner of the file until disposed.</summary>
        internal NativeIndexInput Slice(string description, long offset, long length)
        {
            // the exception types of MMapDirectory's slices: a negative bound is out of range, a
            // slice past the end a bad argument
            if (offset < 0 || length < 0)
                throw new ArgumentOutOfRangeException(offset < 0 ? nameof(offset) : nameof(length),
                    $"slice [{offset}, {offset}+{length}) of {this}: negative {(offset < 0 ? "offset" : "length")}");
            if (offset > _length - length)
                throw new ArgumentException($"slice [{offset}, {offset}+{length}) is past the end of {this} ({_length} bytes)", nameof(length));
            _file.AddOwner();
            return new NativeIndexInput(description, _file, _offset + offset, length, _bufferSize, owner: true);
        }

        /// <inheritdoc/>
        protected override void Dispose(bool disposing)
        {
            if (_disposed)
                return;
            _disposed = true;
            if (!_owner)
                return;
            // Only _end: a reader racing this on another thread sees its old window or an empty
            // one, never a torn pair such as (_cur = null, _end = old), which reads address 0.
            _end = null;
            _file.ReleaseOwner();
        }

    }
}
