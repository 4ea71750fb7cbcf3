using System;
using System.Buffers.Binary;
using System.IO;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;
using Lucene.Net.Store;

namespace NativeDir.Lucene
{
    /// <summary>
    /// A Lucene <see cref="IndexInput"/> over a nativedir file, a slice of one, or a clone.
    /// <para>The cursor reads from a window <c>[_win, _end)</c> of memory that holds bytes
    /// <c>[_winStart, ...)</c> of this input: on a mapped file, up to 4 MiB of the mapping
    /// (<c>ND_MAPPED_WINDOW</c>; a byte read is a bounds check and a load, with no call at all);
    /// otherwise, and on a mapped file while the page cache thrashes (the library says which at
    /// each window, <see cref="SharedFile.MappedNow"/>), this input's own managed buffer (pinned,
    /// so it can be read through a pointer), refilled by one positional native read. Reads at
    /// least a buffer long go straight into the caller's array. See <see cref="SharedFile"/> for why clones own nothing native, and what a read
    /// racing the file's close sees; <see cref="CloneList"/> for how a clone learns that its
    /// original was closed.</para>
    /// </summary>
    public sealed unsafe class NativeIndexInput : IndexInput
    {
        private readonly SharedFile _file;
        private readonly long _offset; // of this input (a slice) in the file
        private readonly long _length;
        private readonly int _bufferSize;
        private bool _owner = true; // the opened input or a slice (disposing releases the file); a clone is not
        private bool _disposed;

        private byte* _buf;       // rented from the file (CloneList.Rent); null until the first refill
        private byte* _win;       // bytes [_winStart, _winStart + (_end - _win)) of this input
        private byte* _cur;
        private byte* _end;
        private long _winStart;

        internal NativeIndexInput(string description, SharedFile file, long offset, long length, int bufferSize)
            : base(description)
        {
            _file = file;
            _offset = offset;
            _length = length;
            _bufferSize = bufferSize;
        }

        /// <summary>The size of this input's managed buffer when it reads through one (an input that
        /// is not mapped): <see cref="IoStrategyPolicy.InputBufferSize"/>, by default the library's
        /// own size for the file as opened.</summary>
        public int BufferSize => _bufferSize;

        /// <summary>How the file is read (mapped, buffered, direct or drop-behind).</summary>
        public IoStrategy Strategy => _file.Strategy;

        /// <summary>Whether the file is mapped (its byte reads come straight from the mapping while
        /// the page cache holds what is read; see <see cref="NativeInput.MappedNow"/>).</summary>
        public bool IsMapped => _file.Base != null;

        /// <summary>Whether the bytes the cursor reads now come from the mapping (false: from this
        /// input's buffer, or no window yet).</summary>
        public bool ReadsFromMapping => IsMappedWindow();

        /// <inheritdoc/>
        public override long Length => _length;

        /// <inheritdoc/>
        public override long Position => _winStart + (_cur - _win);

        /// <inheritdoc/>
        public override void Seek(long pos)
        {
            Check(pos, 0, seek: true);
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
            byte b;
            ReadBytesSlow(new Span<byte>(&b, 1));
            return b;
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

        /// <summary>Where the window ends, for owners and clones alike: copies what the window
        /// holds, then takes the next window and goes on. On a mapped file, while the library
        /// reads it through the mapping, the window is the mapping's next 4 MiB (so this comes
        /// back, and asks again, at least that often); otherwise the rest goes straight into
        /// <paramref name="dst"/> when it is at least a buffer long, else the buffer is refilled
        /// with one positional read.</summary>
        private void ReadBytesSlow(Span<byte> dst)
        {
            long pos = Position;
            Check(pos, dst.Length, seek: false);
            while (true)
            {
                int have = (int)Math.Min(dst.Length, Math.Max(0, _end - _cur)); // Dispose on another thread nulls _end
                new ReadOnlySpan<byte>(_cur, have).CopyTo(dst);
                _cur += have;
                if (have == dst.Length)
                    return;
                dst = dst.Slice(have);
                pos += have;
                _win = _cur = _end = null;
                _winStart = pos;
                if (_file.Base != null && _file.MappedNow())
                {
                    if (_file.NoReuse)
                        _file.Input.Prefetch(_offset + pos, Math.Min(_file.BufferSize, _length - pos));
                    long end = Math.Min(_length, pos + MappedWindow);
                    _win = _cur = _file.Base + _offset + pos;
                    _end = _win + (end - pos);
                    ClosedSinceRefill();
                    continue;
                }
                if (dst.Length >= _bufferSize)
                {
                    _file.Input.ReadBytes(_offset + pos, dst); // straight into the caller's array
                    _winStart = pos + dst.Length;
                    return;
                }
                // native memory, so the window is a raw pointer like a mapping's; the file takes it
                // back once this input is collected (CloneList)
                if (_buf == null)
                    _buf = _file.Clones.Rent(this, _bufferSize);
                int n = (int)Math.Min(_bufferSize, _length - pos);
                _file.Input.ReadBytes(_offset + pos, new Span<byte>(_buf, n));
                _win = _cur = _buf;
                _end = _win + n;
                ClosedSinceRefill();
            }
        }

        /// <summary>The most a window into the mapping covers: the library's own (ND_MAPPED_WINDOW).</summary>
        private const long MappedWindow = NativeInput.MappedWindowSize;

        /// <summary>A window was just set: if the file closed meanwhile, its close may have emptied
        /// the window before this set it (CloneList.Close), so look again after a full fence and
        /// give the window up. Either this sees the close or the close sees the window.</summary>
        private void ClosedSinceRefill()
        {
            Interlocked.MemoryBarrier();
            if (_file.Closed || (_owner && _disposed))
                throw Closed();
        }

        /// <summary>The file emptied this clone's window as it closed: the next read takes the
        /// slow path and throws. Only _end, for the reason <see cref="Dispose"/> gives.</summary>
        internal void EmptyWindow() => _end = null;

        /// <summary>Whether the window points into the mapping (not at this input's buffer).</summary>
        private bool IsMappedWindow() => _win != null && _file.Base != null && _win >= _file.Base && _win < _file.Base + _file.Length;

        /// <summary>What every slow path checks: the input is open and [pos, pos + n) inside it.</summary>
        private void Check(long pos, long n, bool seek)
        {
            if (_file.Closed || (_owner && _disposed))
                throw Closed();
            // as MMapDirectory's inputs: a negative seek is a bad argument, one past the end the
            // end of the stream (Lucene catches the two differently)
            if (seek && pos < 0)
                throw new ArgumentOutOfRangeException(nameof(pos), $"seek to {pos} in {this}: negative position");
            if (pos < 0 || pos > _length - n)
                throw new EndOfStreamException(seek ? $"seek to {pos} past the end of {this} ({_length} bytes)"
                    : $"read past EOF: {n} bytes at {pos} of {this} ({_length} bytes)");
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
            bytes = new ReadOnlySpan<byte>(p, n); // read only when the window holds it
            if (_end - p < n)
                return false;
            _cur = p + n;
            return true;
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
            if (_end - p < 5)
                return base.ReadVInt32();
            int b = *p++, v = b & 0x7F;
            for (int shift = 7; b >= 0x80; shift += 7)
            {
                b = *p++;
                if (shift == 28 && (b & 0xF0) != 0)
                    throw new IOException("Invalid vInt detected (too many bits)");
                v |= (b & 0x7F) << shift; // the fifth byte (< 0x10) ends the loop
            }
            _cur = p;
            return v;
        }

        /// <inheritdoc/>
        public override long ReadVInt64()
        {
            byte* p = _cur;
            if (_end - p < 9)
                return base.ReadVInt64();
            long b = *p++, v = b & 0x7F;
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

        /// <summary>A cursor of its own on the same file (no native handle: see
        /// <see cref="SharedFile"/>). Lucene never disposes clones; disposing one does nothing.
        /// A clone's reads throw <see cref="ObjectDisposedException"/> once the file's opened input
        /// (a compound file's, for a slice) and every slice of it are disposed.</summary>
        public override object Clone()
        {
            if (_file.Closed || (_owner && _disposed))
                throw Closed();
            var c = (NativeIndexInput)base.Clone(); // memberwise: same file, slice, position and owner
            c._disposed = false;
            c._owner = false;
            // The clone starts with no window: its first read asks the library where to read
            // (an inherited window into the mapping would be read from, the whole window long,
            // after the library turned to positional reads: the parent's was set before), and the
            // parent refills its buffer under any clone that shared it.
            c._buf = null;
            c._win = c._cur = c._end = null;
            c._winStart = Position;
            if (!_file.Clones.Add(c)) // closed meanwhile: the clone would not learn it
                throw Closed();
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
            _file.Input.Prefetch(_offset + offset, length);
        }

        /// <summary>
        /// Changes the OS access advice of the file under this input to <see cref="IoOptions.Random"/>,
        /// <see cref="IoOptions.Sequential"/> or <see cref="IoOptions.None"/> (normal): Lucene 10's
        /// <c>updateReadAdvice</c>, e.g. before reading a randomly accessed file front to back once.
        /// The file is shared, so its clones, its slicer and their slices get the advice too.
        /// </summary>
        /// <exception cref="ArgumentException">Anything but one of those three values.</exception>
        public void UpdateReadAdvice(IoOptions advice) => _file.Input.Advise(advice);

        /// <summary>Gives only this input's own range of the file (a slice's bytes) the access
        /// <paramref name="advice"/>; on a mapping that is the range's pages, on a descriptor
        /// the whole file (see nd_input_advise).</summary>
        internal void AdviseRange(IoOptions advice)
        {
            using NativeInput range = _file.Input.Slice(_offset, _length);
            range.Advise(advice);
        }

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
            return new NativeIndexInput(description, _file, _offset + offset, length, _bufferSize);
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
            _file.ReleaseOwner(); // the last owner's closes the file and empties its clones' windows
        }

    }
}
