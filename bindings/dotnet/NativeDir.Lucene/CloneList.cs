using System;
using System.Runtime.InteropServices;
using System.Threading;

namespace NativeDir.Lucene
{
    /// <summary>
    /// The clones of every input of one open file (<see cref="SharedFile"/>), by weak reference,
    /// and whether the file is closed.
    /// <para>Lucene never disposes a clone, and promises that a clone read after its original is
    /// closed throws. A clone's byte read is a bounds check and a load from its window (on a mapped
    /// file the window is the whole input), with no flag to look at, so the file's close empties
    /// every live clone's window (<see cref="Close"/>): the clone's next read takes the slow path,
    /// which sees <see cref="Closed"/> and throws. The original is the file's opened input: as in
    /// Lucene.NET's own directories, a compound file's slices are views of it, and a clone of a
    /// slice reads on after the slice is disposed until the compound file itself is closed. The
    /// references are weak GC handles (no finalizer per clone): a clone that is collected costs
    /// nothing more.</para>
    /// </summary>
    internal sealed class CloneList
    {
        private readonly object _gate = new();
        private GCHandle[] _clones = Array.Empty<GCHandle>();
        private int _count;
        private int _closed;

        /// <summary>Whether the file is closed (so are its clones, whatever their windows say).</summary>
        internal bool Closed => Volatile.Read(ref _closed) != 0;

        /// <summary>Registers <paramref name="clone"/>, whose window <see cref="Close"/> will empty;
        /// false when the file was closed first (the clone must not be read).</summary>
        internal bool Add(NativeIndexInput clone)
        {
            lock (_gate)
            {
                if (_closed != 0)
                    return false;
                if (_count == _clones.Length)
                    MakeRoom();
                _clones[_count++] = GCHandle.Alloc(clone, GCHandleType.Weak);
                return true;
            }
        }

        /// <summary>Frees the handles of collected clones, and grows the array when more than half
        /// of it is still live, so that adding costs amortized constant time.</summary>
        private void MakeRoom()
        {
            int live = 0;
            for (int i = 0; i < _count; i++)
            {
                if (_clones[i].Target == null)
                    _clones[i].Free();
                else
                    _clones[live++] = _clones[i];
            }
            _count = live;
            if (live * 2 >= _clones.Length)
                Array.Resize(ref _clones, Math.Max(8, _clones.Length * 2));
        }

        /// <summary>Marks the file closed and empties the window of every clone still alive. A
        /// clone that refills its window concurrently checks <see cref="Closed"/> after a full
        /// fence (<see cref="NativeIndexInput"/>), so it either sees the mark or has its new
        /// window emptied here.</summary>
        internal void Close()
        {
            GCHandle[] clones;
            int n;
            lock (_gate)
            {
                if (_closed != 0)
                    return;
                Volatile.Write(ref _closed, 1);
                clones = _clones;
                n = _count;
                _clones = Array.Empty<GCHandle>();
                _count = 0;
            }
            Interlocked.MemoryBarrier();
            for (int i = 0; i < n; i++)
            {
                (clones[i].Target as NativeIndexInput)?.EmptyWindow();
                clones[i].Free();
            }
        }

        /// <summary>A file whose inputs were collected without being disposed (a leak in the
        /// application): the handles still go.</summary>
        ~CloneList()
        {
            for (int i = 0; i < _count; i++)
                if (_clones[i].IsAllocated)
                    _clones[i].Free();
        }
    }
}
