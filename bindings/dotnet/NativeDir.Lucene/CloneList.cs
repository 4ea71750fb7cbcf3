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
    /// <para><b>Buffers.</b> An input that reads positionally (a file that is not mapped, or a
    /// mapped one while the page cache thrashes) reads through a buffer of native memory it rents
    /// here (<see cref="Rent"/>). Lucene makes thousands of clones a second and drops them without
    /// a word; a buffer of managed memory per clone would be garbage the collector must find, and
    /// a pinned one (read through a pointer, as the windows are) lives on the pinned heap, which
    /// only a full collection sweeps: under a memory limit that garbage is taken from the page
    /// cache. So each buffer goes back to this file's pool once its input has been collected
    /// (its weak handle is empty), and is never freed or reused while the input may still be
    /// read, on any thread; what is left goes with this object's finalizer, when no input of the
    /// file is reachable.</para>
    /// </summary>
    internal sealed unsafe class CloneList
    {
        private readonly object _gate = new();
        private GCHandle[] _clones = Array.Empty<GCHandle>();
        private int _count;
        private int _closed;
        // the buffers lent (an input's weak handle and its buffer) and those free again
        private GCHandle[] _renters = Array.Empty<GCHandle>();
        private IntPtr[] _lent = Array.Empty<IntPtr>();
        private int _lentCount;
        private IntPtr[] _free = Array.Empty<IntPtr>();
        private int _freeCount;
        private int _bufferSize;

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

        /// <summary>A buffer of <paramref name="size"/> bytes for <paramref name="input"/>, its until
        /// the input is collected: one a collected input no longer needs, or a new one. Every input
        /// of a file rents the same size (the file's).</summary>
        internal byte* Rent(NativeIndexInput input, int size)
        {
            lock (_gate)
            {
                if (_lentCount > 0 && _bufferSize != size)
                    throw new InvalidOperationException($"buffers of {size} bytes asked of a file whose buffers hold {_bufferSize}");
                _bufferSize = size;
                if (_freeCount == 0)
                    Reclaim();
                IntPtr buf = _freeCount > 0 ? _free[--_freeCount] : Marshal.AllocHGlobal(size);
                if (_lentCount == _lent.Length)
                {
                    int cap = Math.Max(8, _lent.Length * 2);
                    Array.Resize(ref _lent, cap);
                    Array.Resize(ref _renters, cap);
                }
                _renters[_lentCount] = GCHandle.Alloc(input, GCHandleType.Weak);
                _lent[_lentCount++] = buf;
                return (byte*)buf;
            }
        }

        /// <summary>Takes back the buffers of collected inputs. Called when no buffer is free, so
        /// its cost is spread over the rents since the last one.</summary>
        private void Reclaim()
        {
            int live = 0;
            for (int i = 0; i < _lentCount; i++)
            {
                if (_renters[i].Target == null)
                {
                    _renters[i].Free();
                    if (_freeCount == _free.Length)
                        Array.Resize(ref _free, Math.Max(8, _free.Length * 2));
                    _free[_freeCount++] = _lent[i];
                }
                else
                {
                    _renters[live] = _renters[i];
                    _lent[live++] = _lent[i];
                }
            }
            _lentCount = live;
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

        /// <summary>No input of the file is reachable: the handles and every buffer go (a file
        /// whose inputs were never disposed, a leak in the application, too).</summary>
        ~CloneList()
        {
            for (int i = 0; i < _count; i++)
                if (_clones[i].IsAllocated)
                    _clones[i].Free();
            for (int i = 0; i < _lentCount; i++)
            {
                if (_renters[i].IsAllocated)
                    _renters[i].Free();
                Marshal.FreeHGlobal(_lent[i]);
            }
            for (int i = 0; i < _freeCount; i++)
                Marshal.FreeHGlobal(_free[i]);
        }
    }
}
