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
    /// owner's Dispose closes the native handle before it returns, and with it the file: its
    /// descriptor, its mapping, and on Windows anything that would keep it from being deleted or
    /// its folder from being removed. An input may be read on another thread than the one that
    /// disposes it, and nothing short of a check per byte could tell whether it is inside its
    /// window right now, so a mapped file's window stays pinned (the window this object took at
    /// open): at the close the library replaces the mapping with zero-filled memory at the same
    /// addresses, which a reader racing the close reads instead of faulting, and the addresses go
    /// when the pin does (the native handle's finalizer, once no input is left). The close empties
    /// every clone's window first (<see cref="CloneList"/>), and inputs check <see cref="Closed"/>
    /// on every slow path and throw <see cref="ObjectDisposedException"/> there, so only a read
    /// racing the close can see those zeros.</para>
    /// </summary>
    internal sealed unsafe class SharedFile
    {
        private readonly NativeInput _input;
        private int _owners = 1;

        internal SharedFile(NativeInput input, bool wantMapped, bool noReuse = false)
        {
            _input = input;
            Name = input.Name;
            Length = input.Length;
            BufferSize = input.BufferSize;
            NoReuse = noReuse;
            // the window stays pinned: the mapping's addresses outlive the close (see above)
            if (wantMapped && Length > 0 && input.Strategy == IoStrategy.Mapped)
                Base = (byte*)System.Runtime.CompilerServices.Unsafe.AsPointer(
                    ref MemoryMarshal.GetReference(input.GetMappedWindow(0)));
        }

        internal string Name { get; }

        /// <summary>Opened <see cref="IoOptions.NoReuse"/>: each read is a block read once per use
        /// (a stored-fields chunk per hit), so a window into its mapping first prefetches the
        /// block (<see cref="BufferSize"/>), which a mapping with random advice would otherwise
        /// fault in a page at a time, one device read after another.</summary>
        internal bool NoReuse { get; }

        internal long Length { get; }

        /// <summary>The library's cursor buffer size for this file (nd_input_buffer_size).</summary>
        internal int BufferSize { get; }

        /// <summary>The start of the whole file's mapping (nd_input_map: one range, whatever the
        /// memory mode), or null when reads go through positional calls (not mapped, or empty).</summary>
        internal byte* Base { get; }

        internal bool Closed => Clones.Closed;

        /// <summary>The clones of the file's inputs, emptied when it closes.</summary>
        internal CloneList Clones { get; } = new CloneList();

        /// <summary>The file's one native input, for positional calls (nd_read_bytes, prefetch and
        /// advice are thread-safe on it); ObjectDisposedException once the last owner is gone.</summary>
        internal NativeInput Input => Closed ? throw Disposed() : _input;

        internal IoStrategy Strategy => _input.Strategy;

        /// <summary>Whether a read of the mapping now goes through it (the library's choice: not
        /// while the page cache thrashes; nd_input_mapped_now). Asked once per window.</summary>
        internal bool MappedNow() => Input.MappedNow;

        internal void AddOwner()
        {
            if (Interlocked.Increment(ref _owners) <= 1)
            {
                Interlocked.Decrement(ref _owners);
                throw Disposed();
            }
        }

        /// <summary>An owner is disposed; the last one closes the file now.</summary>
        internal void ReleaseOwner()
        {
            if (Interlocked.Decrement(ref _owners) != 0)
                return;
            Clones.Close();
            _input.Dispose();
        }

        internal ObjectDisposedException Disposed() =>
            new ObjectDisposedException(Name, $"the input '{Name}' (or the input it was cloned or sliced from) is closed");
    }
}
