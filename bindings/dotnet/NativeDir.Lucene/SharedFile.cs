using System;
using System.IO;
using System.Runtime.InteropServices;
using System.Threading;

namespace NativeDir.Lucene
{
    /// <summary>
    /// One open file, shared by the <see cref="NativeIndexInput"/> that opened it, its slicer, its
    /// slices and every clone of any of them. It holds the file's one native handle; inputs add none.
    /// <para><b>Why clones own nothing native.</b> Lucene clones inputs all the time (every terms
    /// or postings enumerator) and never disposes a clone. A clone that owned a native handle would
    /// leak it until a finalizer ran, and a parent that tracked its clones' handles to close them
    /// would grow without bound on a long-lived reader. So a clone is only a managed cursor: on a
    /// mapped file it reads the parent's mapping through a pointer; on any other file it fills its
    /// own small managed buffer with positional reads (nd_read_bytes, thread-safe on the shared
    /// handle). Nothing native is created per clone, so nothing can leak.</para>
    /// <para><b>Closing.</b> Owners (the opened input, a slicer, each slice) are counted; the last
    /// owner's Dispose closes the handle at once when it is not mapped, or when it is mapped and
    /// nothing ever read the mapping. A mapping that an input (owner or clone) may still point
    /// into is not unmapped by Dispose: an input may be read on another thread than the one that
    /// disposes it, and nothing short of a check per byte can tell whether it is inside its
    /// window right now. Such a mapping is released by the garbage collector once the last input
    /// is unreachable (the native handle's finalizer), like Java's MMapDirectory without its unmap
    /// hack. Inputs check <see cref="Closed"/> on every slow path and throw
    /// <see cref="ObjectDisposedException"/> there.</para>
    /// </summary>
    internal sealed unsafe class SharedFile
    {
        private readonly NativeInput _input;
        private int _owners = 1;
        private int _mapRead; // an input points into the mapping: Dispose leaves it to the GC
        private int _closed;

        internal SharedFile(NativeInput input, bool wantMapped)
        {
            _input = input;
            Name = input.Name;
            Length = input.Length;
            BufferSize = input.BufferSize;
            if (wantMapped && Length > 0 && input.Strategy == IoStrategy.Mapped)
            {
                Base = ContiguousMapping(input);
                input.ReleaseWindow(); // the mapping stays while the handle is open; Dispose may unmap
            }
        }

        internal string Name { get; }

        internal long Length { get; }

        /// <summary>The library's cursor buffer size for this file (nd_input_buffer_size).</summary>
        internal int BufferSize { get; }

        /// <summary>The start of the whole file's mapping, or null when reads go through
        /// positional calls (not mapped, empty, or the mapping is not one contiguous range).</summary>
        internal byte* Base { get; }

        internal bool Closed => Volatile.Read(ref _closed) != 0;

        /// <summary>The file's one native input, for positional calls (nd_read_bytes, prefetch and
        /// advice are thread-safe on it); ObjectDisposedException once the last owner is gone.</summary>
        internal NativeInput Input => Closed ? throw Disposed() : _input;

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

        internal void AddOwner()
        {
            if (Interlocked.Increment(ref _owners) <= 1)
            {
                Interlocked.Decrement(ref _owners);
                throw Disposed();
            }
        }

        /// <summary>Called before an input first points into the mapping (a clone is made, an owner
        /// reads); false if the last owner's Dispose came first (it unmapped: read nothing).</summary>
        internal bool MapRead()
        {
            // Dekker with ReleaseOwner, both sides full fences: either it sees this mark and
            // leaves the mapping, or this sees its close
            Interlocked.Exchange(ref _mapRead, 1);
            return Volatile.Read(ref _closed) == 0;
        }

        internal void ReleaseOwner()
        {
            if (Interlocked.Decrement(ref _owners) != 0)
                return;
            Interlocked.Exchange(ref _closed, 1);
            if (Base == null || Volatile.Read(ref _mapRead) == 0)
                _input.Dispose();
            // else: inputs may hold pointers into the mapping; the handle's finalizer unmaps it
            // once they (and this object) are unreachable.
        }

        internal ObjectDisposedException Disposed() =>
            new ObjectDisposedException(Name, $"the input '{Name}' (or the input it was cloned or sliced from) is closed");
    }
}
