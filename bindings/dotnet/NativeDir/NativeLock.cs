using System;

namespace NativeDir
{
    /// <summary>An exclusive lock taken with <see cref="NativeDirectory.Lock"/>; disposing
    /// releases it. The lock file stays in the directory.</summary>
    public sealed class NativeLock : IDisposable
    {
        private readonly NdSafeHandle _h;

        internal NativeLock(NdSafeHandle h, string name)
        {
            _h = h;
            Name = name;
        }

        /// <summary>The lock's name (its file in the directory).</summary>
        public string Name { get; }

        /// <summary>Whether this object still holds the lock (false once disposed).</summary>
        public bool IsHeld => !_h.IsClosed;

        /// <summary>Releases the lock. Disposing twice does nothing.</summary>
        public void Dispose() => _h.Dispose();
    }
}
