using System;
using System.IO;
using Lucene.Net.Store;
using LuceneLock = Lucene.Net.Store.Lock;

namespace NativeDir.Lucene
{
    /// <summary>
    /// Locks on nd_lock: exclusive between handles of one process and between processes, released
    /// by the OS if the process dies (no stale lock file to clear). The lock file stays in place,
    /// as with Lucene's NativeFSLockFactory, which also creates a missing folder only when a lock
    /// is obtained.
    /// </summary>
    public sealed class NativeLockFactory : LockFactory
    {
        // the directory; with create false, null when its folder is missing
        private readonly Func<bool, NativeDirectory?> _dir;
        private readonly string _path;

        /// <summary>Locks in the directory <paramref name="dir"/> (kept open by the caller).</summary>
        public NativeLockFactory(NativeDirectory dir)
        {
            ArgumentNullException.ThrowIfNull(dir);
            _dir = _ => dir;
            _path = dir.Path;
        }

        /// <summary>Locks in a NativeFSDirectory's folder, created when a lock is obtained.</summary>
        internal NativeLockFactory(NativeFSDirectory.LazyNative dir)
        {
            _dir = dir.Get;
            _path = dir.Path;
        }

        private string Full(string lockName) =>
            m_lockPrefix != null ? m_lockPrefix + "-" + lockName : lockName;

        /// <inheritdoc/>
        public override LuceneLock MakeLock(string lockName) => new NativeDirLock(_dir, _path, Full(lockName));

        /// <summary>Nothing to clear when nobody holds the lock: an nd_lock dies with its holder.
        /// A lock held by a live writer is never broken.</summary>
        public override void ClearLock(string lockName)
        {
            if (_dir(false) == null)
                return; // no folder, no lock
            using var probe = new NativeDirLock(_dir, _path, Full(lockName));
            probe.Obtain(); // succeeds only when nobody holds it; disposing releases it again
        }

        private sealed class NativeDirLock : LuceneLock
        {
            private readonly Func<bool, NativeDirectory?> _dir;
            private readonly string _path;
            private readonly string _name;
            private NativeLock? _held;
            private readonly object _gate = new();

            internal NativeDirLock(Func<bool, NativeDirectory?> dir, string path, string name)
            {
                _dir = dir;
                _path = path;
                _name = name;
            }

            public override bool Obtain()
            {
                lock (_gate)
                {
                    if (_held != null)
                        return false; // Lucene: a second Obtain on a held lock fails
                    try
                    {
                        _held = _dir(true)!.Lock(_name);
                        return true;
                    }
                    catch (NativeDirLockedException e)
                    {
                        FailureReason = e;
                        return false;
                    }
                }
            }

            public override bool IsLocked()
            {
                lock (_gate)
                {
                    if (_held != null)
                        return true;
                    NativeDirectory? dir = _dir(false);
                    if (dir == null)
                        return false; // no folder: nobody can hold a lock in it
                    try
                    {
                        using NativeLock probe = dir.Lock(_name);
                        return false;
                    }
                    catch (NativeDirLockedException)
                    {
                        return true;
                    }
                }
            }

            protected override void Dispose(bool disposing)
            {
                lock (_gate)
                {
                    _held?.Dispose();
                    _held = null;
                }
            }

            public override string ToString() => $"NativeDirLock@{_path}{Path.DirectorySeparatorChar}{_name}";
        }
    }
}
