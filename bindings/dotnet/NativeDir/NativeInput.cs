using System;
using System.IO;
using System.Runtime.CompilerServices;
using System.Threading;
using Native = NativeDir.Interop.nativedir;

namespace NativeDir
{
    /// <summary>
    /// A file open for reading.
    /// <para><b>Threads.</b> Positional members (<see cref="ReadBytes(long, Span{byte})"/>,
    /// <see cref="Length"/>, <see cref="Clone"/>, <see cref="Slice"/>) are thread-safe. The cursor
    /// (<see cref="ReadByte"/>, <see cref="ReadBytes(Span{byte})"/>, <see cref="Seek"/>,
    /// <see cref="Position"/>) and <see cref="GetWindow"/> belong to one thread at a time: give
    /// each thread its own <see cref="Clone"/>.</para>
    /// <para><b>Zero-copy reads.</b> The cursor reads from a cached window of native memory (the
    /// mapping, or the handle's buffer) obtained with one nd_input_window call; a byte read is a
    /// bounds check and a load. A mapped input's window is the rest of the file, up to 4 MiB
    /// (while the page cache thrashes, mapped inputs read through the buffer: see
    /// <see cref="MappedNow"/>).</para>
    /// <para><b>Dispose closes the file; racing a reader never crashes.</b> <see cref="Dispose"/>
    /// closes the native handle at once, on any thread, and the Dispose of the file's last input
    /// (this one, its clones and slices) closes the file before it returns: its descriptor, its
    /// mapping, anything that would keep Windows from deleting it. The window it hands out
    /// (nd_input_window) stays readable memory: a reader may still be inside it (the input may
    /// have moved to another thread since its last refill). A buffer window keeps its bytes; a
    /// mapped window reads the file while any input of the file is open, and zeros once the file
    /// is closed (bytes a read racing Dispose must discard). The cursor's next call throws
    /// <see cref="ObjectDisposedException"/> and frees the window's memory; if none comes, the
    /// garbage collector does (memory only: the file is already closed).</para>
    /// </summary>
    public sealed unsafe class NativeInput : IDisposable
    {
        private readonly InputSafeHandle _h;
        private readonly long _length;
        private readonly int _bufferSize;

        // The cached window: bytes [_winStart, _winStart + (_end - _win)) of the input at _win.
        // The cursor is at _winStart + (_cur - _win). With no window all three are null and the
        // cursor is _winStart. Another thread's Dispose only ever nulls _end, so a racing reader
        // sees either its old window (pinned by the library) or an empty one.
        private byte* _win;
        private byte* _cur;
        private byte* _end;
        private long _winStart;
        private int _disposed;
        private bool _pinned; // a window was taken: Dispose leaves it to the cursor or the finalizer

        private NativeInput(InputSafeHandle h, string name, long length, int bufferSize)
        {
            _h = h;
            Name = name;
            _length = length;
            _bufferSize = bufferSize;
        }

        /// <summary>Owns a handle the library just returned (a clone, a slice).</summary>
        private static NativeInput Wrap(long raw, string name)
        {
            var h = new InputSafeHandle();
            h.Adopt(raw);
            return Wrap(h, name);
        }

        internal static NativeInput Wrap(InputSafeHandle h, string name)
        {
            long len, size = 0;
            int rc = Native.nd_input_length(h.Value, &len);
            if (rc >= 0 && (size = Native.nd_input_buffer_size(h.Value)) < 0)
                rc = (int)size;
            if (rc < 0)
            {
                Exception e = Errors.For(rc, name);
                h.Dispose();
                throw e;
            }
            return new NativeInput(h, name, len, (int)size);
        }

        /// <summary>The size of the library's cursor buffer for this input (from its strategy,
        /// access flags and length: nd_input_buffer_size): what a reader that keeps a buffer of its
        /// own should use.</summary>
        public int BufferSize => Volatile.Read(ref _disposed) == 0 ? _bufferSize : throw OnDisposed();

        /// <summary>The file name this input was opened from (clones and slices keep it).</summary>
        public string Name { get; }

        /// <summary>The input's length in bytes (a slice's own length).</summary>
        public long Length => Volatile.Read(ref _disposed) == 0 ? _length : throw OnDisposed();

        /// <summary>How the input reads: buffered, mapped, direct or drop-behind.</summary>
        public IoStrategy Strategy => (IoStrategy)Check(Native.nd_input_strategy(Value));

        /// <summary>The cursor: where the next <see cref="ReadByte"/> reads.</summary>
        public long Position
        {
            get => _winStart + (_cur - _win);
            set => Seek(value);
        }

        /// <summary>Moves the cursor to <paramref name="pos"/> (0 to <see cref="Length"/>).</summary>
        public void Seek(long pos)
        {
            if (Volatile.Read(ref _disposed) != 0)
                throw CursorDisposed();
            if ((ulong)pos > (ulong)_length)
                throw new ArgumentOutOfRangeException(nameof(pos), pos, $"outside 0..{_length} of '{Name}'");
            byte* end = _end; // read once: Dispose on another thread may null it
            if (end != null && pos >= _winStart && pos <= _winStart + (end - _win))
            {
                _cur = _win + (pos - _winStart);
                return;
            }
            _win = _cur = _end = null;
            _winStart = pos;
        }

        /// <summary>Reads the byte at the cursor and advances it.</summary>
        /// <exception cref="EndOfStreamException">The cursor is at the end.</exception>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public byte ReadByte()
        {
            byte* p = _cur;
            if (p < _end)
            {
                _cur = p + 1;
                return *p;
            }
            return ReadByteSlow();
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private byte ReadByteSlow()
        {
            byte b;
            Load(Position, &b, 1);
            return b;
        }

        /// <summary>Fills <paramref name="dst"/> from the cursor and advances it.</summary>
        /// <exception cref="EndOfStreamException">Fewer bytes remain (nothing is consumed).</exception>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void ReadBytes(Span<byte> dst)
        {
            byte* p = _cur;
            if (dst.Length <= _end - p)
            {
                new ReadOnlySpan<byte>(p, dst.Length).CopyTo(dst);
                _cur = p + dst.Length;
                return;
            }
            fixed (byte* d = dst)
                Load(Position, d, dst.Length);
        }

        /// <summary>Reads exactly <c>dst.Length</c> bytes at <paramref name="offset"/> without
        /// touching the cursor. Thread-safe.</summary>
        /// <exception cref="EndOfStreamException">The range passes the end (nothing is read).</exception>
        public void ReadBytes(long offset, Span<byte> dst)
        {
            if (offset < 0)
                throw new ArgumentOutOfRangeException(nameof(offset), offset, "negative offset");
            fixed (byte* p = dst)
                Check(Native.nd_read_bytes(Value, offset, p, dst.Length));
        }

        /// <summary>Reads exactly <c>dst.Length</c> bytes at <paramref name="offset"/>; see
        /// <see cref="ReadBytes(long, Span{byte})"/>.</summary>
        public void ReadBytes(long offset, Memory<byte> dst) => ReadBytes(offset, dst.Span);

        /// <summary>
        /// Reads up to <c>buffer.Length</c> bytes at <paramref name="offset"/> asynchronously,
        /// through <see cref="NativeRing.Shared"/>; the result is the number of bytes read, fewer
        /// only at the end of the input (0 at or past it). Nothing is allocated per read; bytes
        /// already in the page cache are copied during the call and the task is complete when it
        /// returns. Thread-safe; the cursor does not move. See <see cref="NativeRing"/> for
        /// cancellation and disposal.
        /// </summary>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="offset"/> is negative.</exception>
        /// <exception cref="ObjectDisposedException">The input is disposed.</exception>
        public System.Threading.Tasks.ValueTask<int> ReadAsync(long offset, Memory<byte> buffer,
            CancellationToken cancellationToken = default) =>
            NativeRing.Shared.ReadAsync(this, offset, buffer, cancellationToken);

        /// <summary>
        /// Zero copy: the input's bytes from <paramref name="pos"/> on, as many as are readable
        /// there without another native call (at least one; a mapped input's window reaches the
        /// end of the file or 4 MiB, whichever comes first). The cursor does not move. The span is valid
        /// until the next cursor or window call on this input, or its disposal; never use it
        /// after either. For a <see cref="IoStrategy.Mapped"/> input the window is the mapping
        /// itself: it reads the file until the file's last input (this one, a clone or a slice) is
        /// disposed, and zeros after that.
        /// </summary>
        /// <exception cref="EndOfStreamException"><paramref name="pos"/> is at or past the end.</exception>
        public ReadOnlySpan<byte> GetWindow(long pos)
        {
            // every field another thread's Dispose may change (_end) is read once
            byte* win = _win, end = _end;
            long start = _winStart;
            if (end != null && pos >= start && pos < start + (end - win))
            {
                byte* at = win + (pos - start);
                return new ReadOnlySpan<byte>(at, (int)Math.Min(int.MaxValue, end - at));
            }
            long cursor = Position;
            if ((ulong)pos >= (ulong)_length)
                throw new EndOfStreamException($"read past the end of '{Name}' ({_length} bytes) at {pos}");
            long n = Load(pos, null, 0);
            byte* p = _win;
            // keep the cursor where it was: inside the new window if it can be, else windowless
            if (cursor >= pos && cursor <= pos + n)
                _cur = p + (cursor - pos);
            else
            {
                _win = _cur = _end = null;
                _winStart = cursor;
            }
            return new ReadOnlySpan<byte>(p, (int)Math.Min(int.MaxValue, n));
        }

        /// <summary>The cursor's one native call, where its window ends: reads
        /// <paramref name="len"/> bytes at <paramref name="pos"/> into <paramref name="dst"/>
        /// (nd_input_read_from: the rest of the window, refills or one read straight into
        /// <paramref name="dst"/>, and the range check) and makes the window the one at
        /// pos + len, with the cursor at its start; returns its length. On failure nothing is
        /// consumed. Callers never re-read _end, which Dispose on another thread may null.</summary>
        private long Load(long pos, byte* dst, int len)
        {
            if (Volatile.Read(ref _disposed) != 0)
                throw CursorDisposed();
            // No SafeHandle reference around the call: the handle table makes a closed handle a
            // clean ND_E_BAD_HANDLE, and the window stays pinned until this cursor's next call.
            byte* w;
            _pinned = true; // before the call: Dispose reads it after its nd_close
            long n = Native.nd_input_read_from(_h.Value, pos, dst, len, &w);
            _win = _cur = _end = null; // the library may have refilled the buffer under the old one
            _winStart = pos;
            if (n < 0)
            {
                if (n == Native.ND_E_BAD_HANDLE && Volatile.Read(ref _disposed) != 0)
                    throw Errors.Disposed(nameof(NativeInput)); // closed under us: the failed call released the window
                throw Errors.For(n, Name);
            }
            _winStart = pos + len;
            if (n > 0)
            {
                _win = _cur = w;
                _end = w + n;
            }
            return n;
        }

        /// <summary>Lets the library free this input's window now (nd_input_unpin) instead of at
        /// the next refill, <see cref="Dispose"/>'s next cursor call or the finalizer: call it
        /// on the thread that reads the input, when no span from <see cref="GetWindow"/> is in use
        /// (e.g. right before Dispose, for a prompt release of the window's memory). Dispose does
        /// not need it to close the file: only the window's buffer, or a mapped input's mapping,
        /// waits for the release. The cursor keeps its position.</summary>
        public void ReleaseWindow()
        {
            _winStart = Position;
            _win = _cur = _end = null;
            Native.nd_input_unpin(_h.Value);
        }

        /// <summary>Whether a read of this input goes through its mapping at this moment: false for
        /// an input that is not mapped, and for a mapped one while the page cache the process may
        /// use thrashes (the library then reads it with positional reads; nd_input_mapped_now,
        /// nd_memory_mode).</summary>
        public bool MappedNow => Check(Native.nd_input_mapped_now(Value)) == 1;

        /// <summary>
        /// For a reader that reads the mapping itself (with clones that share one pointer): the
        /// bytes of a mapped input's mapping from <paramref name="pos"/> to its end (at most
        /// int.MaxValue of them), whatever <see cref="IoPolicy.MemoryMode"/> says; ask
        /// <see cref="MappedNow"/> before reading through it, and read positionally while it says
        /// false. Valid as a span of <see cref="GetWindow"/> is: until the next cursor or window
        /// call on this input, or its disposal; the memory stays readable after the disposal (the
        /// file's bytes while any input of the file is open, zeros after) until the next call or
        /// the finalizer releases it (nd_input_map).
        /// </summary>
        /// <exception cref="NotSupportedException">The input is not mapped.</exception>
        /// <exception cref="EndOfStreamException"><paramref name="pos"/> is at or past the end.</exception>
        public ReadOnlySpan<byte> GetMappedWindow(long pos)
        {
            if ((ulong)pos >= (ulong)_length)
                throw new EndOfStreamException($"read past the end of '{Name}' ({_length} bytes) at {pos}");
            _winStart = Position; // the cursor's window goes: the pin moves to the mapping
            _win = _cur = _end = null;
            _pinned = true; // before the call: Dispose reads it after its nd_close
            byte* p;
            long n = Check(Native.nd_input_map(Value, pos, &p));
            return new ReadOnlySpan<byte>(p, (int)Math.Min(int.MaxValue, n));
        }

        /// <summary>The most bytes a window of a mapped input covers (ND_MAPPED_WINDOW): a reader
        /// that points windows into a mapping itself uses the same size, so that it asks
        /// <see cref="MappedNow"/> again at least this often.</summary>
        public const int MappedWindowSize = Native.ND_MAPPED_WINDOW;

        /// <summary>A new input on the same file with its own cursor (at 0) and window; the
        /// way to read one file from several threads. Dispose it separately.</summary>
        public NativeInput Clone()
        {
            long raw;
            Check(Native.nd_input_clone(Value, &raw));
            return Wrap(raw, Name);
        }

        /// <summary>A new input on bytes [<paramref name="offset"/>, <paramref name="offset"/> +
        /// <paramref name="length"/>) of this one; offsets are relative to the slice and nothing
        /// outside it is readable. Dispose it separately.</summary>
        public NativeInput Slice(long offset, long length)
        {
            if (offset < 0 || length < 0 || offset > _length - length)
                throw new ArgumentOutOfRangeException(nameof(offset),
                    $"slice [{offset}, {offset}+{length}) is outside '{Name}' ({_length} bytes)");
            long raw;
            Check(Native.nd_input_slice(Value, offset, length, &raw));
            return Wrap(raw, Name); // its buffer size is the library's for the slice
        }

        /// <summary>
        /// Asks the OS to start bringing bytes [<paramref name="offset"/>, <paramref name="offset"/> +
        /// <paramref name="length"/>) of this input into memory and returns at once: Lucene's
        /// <c>IndexInput.prefetch</c>. Call it for the blocks about to be read, then read them; their
        /// reads then overlap on the device. Costs a few nanoseconds when the bytes are already in
        /// memory (the library stops looking after repeated hits). A no-op for direct inputs and, on
        /// Windows, for unmapped ones. Experimental (nd_input_prefetch).
        /// </summary>
        /// <exception cref="EndOfStreamException">The range passes the end of the input.</exception>
        /// <exception cref="ArgumentException">A negative offset or length.</exception>
        public void Prefetch(long offset, long length) => Check(Native.nd_input_prefetch(Value, offset, length));

        /// <summary>
        /// Changes the access advice of this open input to <see cref="IoOptions.Random"/>,
        /// <see cref="IoOptions.Sequential"/> or <see cref="IoOptions.None"/> (normal), as Lucene 10's
        /// read-advice update does. The advice belongs to the file: clones share it, and a slice's
        /// covers its own range (see nd_input_advise). The buffer size chosen at open stays.
        /// Experimental (nd_input_advise).
        /// </summary>
        /// <exception cref="ArgumentException">Anything but one of those three values.</exception>
        public void Advise(IoOptions advice) => Check(Native.nd_input_advise(Value, (uint)advice));

        /// <summary>The native handle, for rings (which take their own references).</summary>
        internal InputSafeHandle Handle => _h;

        /// <summary>For tests: whether nd_close has run on this input's handle.</summary>
        internal bool NativeReleased => _h.Released;

        /// <summary>The native handle for a call. No SafeHandle reference is taken around calls:
        /// the library's handle table makes a call racing nd_close safe, and a closed handle a
        /// clean ND_E_BAD_HANDLE (<see cref="Check"/> turns it into ObjectDisposedException).</summary>
        private long Value => Volatile.Read(ref _disposed) == 0 ? _h.Value : throw OnDisposed();

        private long Check(long rc) => rc >= 0 ? rc
            : throw (rc == Native.ND_E_BAD_HANDLE && Volatile.Read(ref _disposed) != 0 ? OnDisposed() : Errors.For(rc, Name));

        private ObjectDisposedException OnDisposed() => Errors.Disposed(nameof(NativeInput));

        /// <summary>A cursor call on a disposed input: the cursor has one user at a time, so the
        /// caller is not inside the window, and the library may free what Dispose left pinned.</summary>
        private ObjectDisposedException CursorDisposed()
        {
            _win = _cur = _end = null;
            Native.nd_input_unpin(_h.Value);
            return OnDisposed();
        }

        /// <summary>Closes the input; see the class remarks for Dispose on another thread.
        /// Disposing twice does nothing.</summary>
        public void Dispose()
        {
            if (Interlocked.Exchange(ref _disposed, 1) != 0)
                return;
            _end = null; // the cursor's next read takes the slow path and sees the flag
            _h.Dispose(); // nd_close: a pinned window stays for its reader
            // ...whose next cursor call releases it; if none comes, the finalizer does
            // (InputSafeHandle). Read after the close: a window call writes it before calling.
            if (Volatile.Read(ref _pinned))
                GC.ReRegisterForFinalize(_h);
        }
    }
}
