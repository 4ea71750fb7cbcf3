using System;
using System.IO;
using System.Runtime.InteropServices;
using System.Threading;

namespace NativeDir.Lucene
{
    /// <summary>
    /// One open file, shared by the <see cref="NativeIndexInput"/> that opened it, its slicer, its
    /// slices and every clone of any of them. It holds the file's native handle (a mapped owner
    /// adds one of its own for its window: see <see cref="NativeIndexInput"/>); clones add none.
    /// <para><b>Why clones own nothing native.</b> Lucene clones inputs all the time (every terms
    /// or postings enumerator) and never disposes a clone. A clone that owned a native handle would
    /// leak it until a finalizer ran, and a parent that tracked its clones' handles to close them
    /// would grow without bound on a long-lived reader. So a clone is only a managed cursor: on a
    /// mapped file it reads the parent's mapping through a pointer; on any other file it fills its
    /// own small managed buffer with positional reads (nd_read_bytes, thread-safe on the shared
    /// handle). Nothing native is created per clone, so nothing can leak.</para>
    /// <para><b>Closing.</b> Owners (the opened input, a slicer, each slice) are counted; the last
    /// owner's Dispose closes the handle at once when it is not mapped, or when it is mapped and
    /// no clone was ever made. A mapping that clones may still point into is not unmapped by
    /// Dispose: a clone used after its parent is closed (undefined in Lucene) must read stale
    /// bytes or throw, never touch unmapped memory. Such a mapping is released by the garbage
    /// collector once the last clone is unreachable (the native handle's finalizer), like Java's
    /// MMapDirectory without its unmap hack. Clones check <see cref="Closed"/> on every slow path
    /// and throw <see cref="ObjectDisposedException"/> there.</para>
    /// </summary>
    internal sealed unsafe class SharedFile
    {
        private readonly NativeInput _input;
        private int _owners = 1;
        private int _cloned;
        private volatile bool _closed;

        internal SharedFile(NativeInput input, bool wantMapped)
        {
            _input = input;
            Name = input.Name;
            Length = input.Length;
            BufferSize = input.BufferSize;
            if (wantMapped && Length > 0 && input.Strategy == IoStrategy.Mapped)
                Base = ContiguousMapping(input);
        }

        internal string Name { get; }

        internal long Length { get; }

        /// <summary>The library's cursor buffer size for this file (nd_input_buffer_size).</summary>
        internal int BufferSize { get; }

        /// <summary>The start of the whole file's mapping, or null when reads go through
        /// positional calls (not mapped, empty, or the mapping is not one contiguous range).</summary>
        internal byte* Base { get; }

        internal bool Closed => _closed;

        internal IoStrategy Strategy => _input.Strategy;

        /// <summary>The mapping's address from its window at 0. A mapped input's window is the rest
        /// of the file; for files past int.MaxValue the window at the last byte must be the same
        /// mapping, else the file is read positionally.</summary>
        private static byte* ContiguousMapping(NativeInput input)
        {
            ReadOnlySpan<byte> w = input.GetWindow(0);
            byte* b = (byte*)System.Runtime.CompilerServices.Unsafe.AsPointer(ref MemoryMarshal.GetReference(w));
            if (w.Length >= input.Length)
                return b;
            ReadOnlySpan<byte> last = input.GetWindow(input.Length - 1);
            byte* l = (byte*)System.Runtime.CompilerServices.Unsafe.AsPointer(ref MemoryMarshal.GetReference(last));
            return l == b + (input.Length - 1) ? b : null;
        }

        /// <summary>Reads exactly <paramref name="dst"/>.Length bytes at <paramref name="offset"/>
        /// of the file (thread-safe).</summary>
        internal void Read(long offset, Span<byte> dst)
        {
            if (_closed)
                throw Disposed();
            _input.ReadBytes(offset, dst);
        }

        /// <summary>A handle of its own on the file, for a mapped owner's window (its
        /// Dispose is the owner's).</summary>
        internal NativeInput OpenReader()
        {
            if (_closed)
                throw Disposed();
            return _input.Clone();
        }

        /// <summary>nd_input_prefetch of [offset, offset + length) of the file.</summary>
        internal void Prefetch(long offset, long length)
        {
            if (_closed)
                throw Disposed();
            _input.Prefetch(offset, length);
        }

        /// <summary>nd_input_advise on the file: every input sharing it gets the advice.</summary>
        internal void Advise(IoOptions advice)
        {
            if (_closed)
                throw Disposed();
            _input.Advise(advice);
        }

        /// <summary>nd_input_advise on a native slice of [offset, offset + length): on a
        /// mapping, only that range's pages get the advice.</summary>
        internal void AdviseRange(long offset, long length, IoOptions advice)
        {
            if (_closed)
                throw Disposed();
            using NativeInput range = _input.Slice(offset, length);
            range.Advise(advice);
        }

        internal void AddOwner()
        {
            if (Interlocked.Increment(ref _owners) <= 1)
            {
                Interlocked.Decrement(ref _owners);
                throw Disposed();
            }
        }

        internal void MarkCloned() => Volatile.Write(ref _cloned, 1);

        internal void ReleaseOwner()
        {
            if (Interlocked.Decrement(ref _owners) != 0)
                return;
            _closed = true;
            if (Base == null || Volatile.Read(ref _cloned) == 0)
                _input.Dispose();
            // else: clones may hold pointers into the mapping; the handle's finalizer unmaps it
            // once they (and this object) are unreachable.
        }

        internal ObjectDisposedException Disposed() =>
            new ObjectDisposedException(Name, $"the input '{Name}' (or the input it was cloned or sliced from) is closed");
    }
}
