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
        private readonly Locks _locks;

        /// <summary>Locks in the directory <paramref name="dir"/> (kept open by the caller).</summary>
        public NativeLockFactory(NativeDirectory dir)
        {
            ArgumentNullException.ThrowIfNull(dir);
            _locks = new Locks(_ => dir, dir.Path, null);
        }

        /// <summary>Locks in a NativeFSDirectory's folder, created when a lock is obtained.</summary>
        internal NativeLockFactory(NativeFSDirectory.LazyNative dir)
        {
            _locks = new Locks(dir.Get, dir.Path, dir);
        }

        /// <summary>
        /// The directory handle lock calls go through. A lock factory outlives its directory in
        /// Lucene: FSDirectory's factories take and release locks by path after the directory is
        /// disposed (an IndexWriter disposed after its directory releases its lock then). So when
        /// a NativeFSDirectory is disposed, a lock call opens a handle of its own for that call
        /// (a held nd_lock does not need the directory handle it came from). And when the folder
        /// was removed under the directory, the lock goes to the folder now at the path, as
        /// FSDirectory's factories (and the directory's outputs) do.
        /// </summary>
        private sealed class Locks
        {
            // the directory; with create false, null when its folder is missing
            private readonly Func<bool, NativeDirectory?> _dir;
            private readonly NativeFSDirectory.LazyNative? _lazy; // null: the caller's own handle

            internal Locks(Func<bool, NativeDirectory?> dir, string path, NativeFSDirectory.LazyNative? lazy)
            {
                _dir = dir;
                Path = path;
                _lazy = lazy;
            }

            internal string Path { get; }

            internal T With<T>(bool create, Func<NativeDirectory?, T> use)
            {
                try
                {
                    NativeDirectory? d = _dir(create);
                    try
                    {
                        return use(d);
                    }
                    catch (FileNotFoundException) when (_lazy != null && d != null)
                    {
                        // no lock file could be made: only in a folder removed under the handle
                        return use(_lazy.Renew(d, create));
                    }
                }
                catch (ObjectDisposedException) when (_lazy != null)
                {
                    NativeDirectory? own;
                    try
                    {
                        own = NativeDirectory.Open(Path, create);
                    }
                    catch (DirectoryNotFoundException) when (!create)
                    {
                        own = null;
                    }
                    using (own)
                        return use(own);
                }
            }
        }

        private string Full(string lockName) =>
            m_lockPrefix != null ? m_lockPrefix + "-" + lockName : lockName;

        /// <inheritdoc/>
        public override LuceneLock MakeLock(string lockName) => new NativeDirLock(_locks, Full(lockName));

        /// <summary>Nothing to clear when nobody holds the lock: an nd_lock dies with its holder.
        /// A lock held by a live writer is never broken.</summary>
        public override void ClearLock(string lockName)
        {
            if (!_locks.With(false, d => d != null))
                return; // no folder, no lock
            using var probe = new NativeDirLock(_locks, Full(lockName));
            probe.Obtain(); // succeeds only when nobody holds it; disposing releases it again
        }

        private sealed class NativeDirLock : LuceneLock
        {
            private readonly Locks _locks;
            private readonly string _name;
            private NativeLock? _held;
            private readonly object _gate = new();

            internal NativeDirLock(Locks locks, string name)
            {
                _locks = locks;
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
                        _held = _locks.With(true, d => d!.Lock(_name));
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
                    return _locks.With(false, dir =>
                    {
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
                    });
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

            public override string ToString() => $"NativeDirLock@{_locks.Path}{Path.DirectorySeparatorChar}{_name}";
        }
    }
}
