#if !NET
using System;
using System.Runtime.InteropServices;

namespace NativeDir.Lucene
{
    /// <summary>An array pinned for as long as this object lives: netstandard2.0 and .NET
    /// Framework have no pinned object heap, so a cursor buffer that is read through a raw pointer
    /// is pinned with a GC handle, freed by the finalizer when the input holding it is
    /// unreachable (clones are never disposed).</summary>
    internal sealed class PinnedArray
    {
        private GCHandle _handle;

        internal PinnedArray(int length)
        {
            Array = new byte[length];
            _handle = GCHandle.Alloc(Array, GCHandleType.Pinned);
        }

        internal byte[] Array { get; }

        ~PinnedArray()
        {
            if (_handle.IsAllocated)
                _handle.Free();
        }
    }
}
#endif
