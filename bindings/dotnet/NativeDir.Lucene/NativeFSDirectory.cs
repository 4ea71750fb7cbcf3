using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Threading;
using Lucene.Net.Store;
using LuceneDirectory = Lucene.Net.Store.Directory;

namespace NativeDir.Lucene
{
    /// <summary>
    /// A Lucene.NET <see cref="FSDirectory"/> on nativedir: mapped search reads whose byte reads
    /// are loads (no view-accessor or per-byte call), positional reads straight into the caller's
    /// array, merge outputs with direct I/O so merges keep the searches' page cache, the native
    /// CRC-32 as the output checksum, fsync of files and of the directory at commit, and locks on
    /// nd_lock. Files are named relative to one open directory handle.
    /// </summary>
    public class NativeFSDirectory : FSDirectory
    {
        private readonly LazyNative _lazy;
        private readonly IoStrategyPolicy _policy;
        private readonly object _staleLock = new();
        // Written and not yet synced, like FSDirectory's stale files; the value is the output while
        // it is still open (then Sync goes through the writing handle), null once it is closed.
        private readonly Dictionary<string, NativeIndexOutput?> _stale = new(StringComparer.Ordinal);

        // Lucene.NET 4.8.0-beta00018 and later validate names in FSDirectory (EnsureCanWrite,
        // EnsureCanRead: one path component, no separator, not "." or ".."), and its built-in
        // directories refuse with ArgumentException before touching the file system. Built against
        // the oldest supported release, this directory finds the hooks at run time and calls them
        // where the built-ins do (a subclass's override included), so it refuses exactly what the
        // running version's built-ins refuse, with their exception. On older releases the native
        // library's own name rule applies (ArgumentException as well).
        private static readonly MethodInfo? s_ensureCanRead = typeof(FSDirectory).GetMethod(
            "EnsureCanRead", BindingFlags.Instance | BindingFlags.NonPublic, null, new[] { typeof(string) }, null);
        private static readonly MethodInfo? s_ensureCanWrite = typeof(FSDirectory).GetMethod(
            "EnsureCanWrite", BindingFlags.Instance | BindingFlags.NonPublic, null, new[] { typeof(string) }, null);
        private readonly Action<string>? _ensureCanRead;
        private readonly Action<string>? _ensureCanWrite;

        /// <summary>A directory at <paramref name="path"/>, with <see cref="NativeLockFactory"/>.
        /// Like every FSDirectory, it creates a missing folder only on the first write (an output
        /// or a lock); reading a missing folder throws <see cref="DirectoryNotFoundException"/>.
        /// This is the constructor Lucene.NET's CommandLineUtil.NewFSDirectory looks for.</summary>
        public NativeFSDirectory(DirectoryInfo path)
            : this(path, null, null)
        {
        }

        /// <summary>A directory at <paramref name="path"/> locked by <paramref name="lockFactory"/>
        /// (null: <see cref="NativeLockFactory"/>).</summary>
        public NativeFSDirectory(DirectoryInfo path, LockFactory? lockFactory)
            : this(path, lockFactory, null)
        {
        }

        /// <summary>A directory at <paramref name="path"/>; its folder is created on the first
        /// write, as FSDirectory does.</summary>
        /// <param name="path">The index directory.</param>
        /// <param name="lockFactory">null for <see cref="NativeLockFactory"/> on this directory.</param>
        /// <param name="policy">null for the default <see cref="IoStrategyPolicy"/>.</param>
        public NativeFSDirectory(DirectoryInfo path, LockFactory? lockFactory = null, IoStrategyPolicy? policy = null)
            : this(path, new LazyNative(path ?? throw new ArgumentNullException(nameof(path))), lockFactory, policy)
        {
        }

        /// <summary>A directory at <paramref name="path"/>, with <see cref="NativeLockFactory"/>.</summary>
        public NativeFSDirectory(string path)
            : this(path, null, null)
        {
        }

        /// <summary>A directory at <paramref name="path"/> locked by <paramref name="lockFactory"/>.</summary>
        public NativeFSDirectory(string path, LockFactory? lockFactory)
            : this(path, lockFactory, null)
        {
        }

        /// <summary>A directory at <paramref name="path"/>; its folder is created on the first
        /// write, as FSDirectory does.</summary>
        public NativeFSDirectory(string path, LockFactory? lockFactory = null, IoStrategyPolicy? policy = null)
            : this(new DirectoryInfo(path ?? throw new ArgumentNullException(nameof(path))), lockFactory, policy)
        {
        }

        private NativeFSDirectory(DirectoryInfo path, LazyNative native, LockFactory? lockFactory, IoStrategyPolicy? policy)
            : base(path, lockFactory ?? new NativeLockFactory(native))
        {
            _lazy = native;
            _policy = policy ?? new IoStrategyPolicy();
            // our own factory locks in this very directory: plain "write.lock", as FSDirectory
            // names the locks of its own factories, not the lock-ID-prefixed name
            if (lockFactory == null)
                LockFactory.LockPrefix = null;
            // bound to this instance: a virtual call, so a subclass's override is the one called
            if (s_ensureCanRead != null)
                _ensureCanRead = (Action<string>)s_ensureCanRead.CreateDelegate(typeof(Action<string>), this);
            if (s_ensureCanWrite != null)
                _ensureCanWrite = (Action<string>)s_ensureCanWrite.CreateDelegate(typeof(Action<string>), this);
        }

        /// <summary>Whether the running Lucene.NET's FSDirectory validates file names itself
        /// (4.8.0-beta00018 and later), which this directory then follows.</summary>
        internal static bool LuceneValidatesNames => s_ensureCanRead != null;

        /// <summary>
        /// The directory's native handle, opened on first use. Lucene creates an FSDirectory's
        /// folder on the first write, not when the directory object is made, so a reader of a
        /// mistyped path finds nothing and leaves nothing behind: reads open the handle without
        /// creating the folder (and report it missing), writes and locks create it.
        /// </summary>
        internal sealed class LazyNative : IDisposable
        {
            private readonly string _path;
            private readonly object _gate = new();
            private NativeDirectory? _dir;
            private bool _disposed;
            // handles of folders removed under the directory; other threads may still be inside
            // a call on one, so they are closed with the directory, not when replaced
            private readonly List<NativeDirectory> _retired = new();

            internal LazyNative(DirectoryInfo path) => _path = path.FullName;

            internal string Path => _path;

            /// <summary>The handle; with <paramref name="create"/> false, null when the folder is
            /// missing.</summary>
            internal NativeDirectory? Get(bool create)
            {
                NativeDirectory? d = Volatile.Read(ref _dir);
                if (d != null)
                    return d;
                lock (_gate)
                {
                    if (_disposed)
                        throw new ObjectDisposedException(nameof(NativeFSDirectory), $"the directory '{_path}' is closed");
                    if (_dir != null)
                        return _dir;
                    try
                    {
                        d = NativeDirectory.Open(_path, create);
                    }
                    catch (DirectoryNotFoundException) when (!create)
                    {
                        return null;
                    }
                    Volatile.Write(ref _dir, d);
                    return d;
                }
            }

            internal NativeDirectory Existing() =>
                Get(create: false) ?? throw Missing();

            internal DirectoryNotFoundException Missing() => new($"directory '{_path}' does not exist");

            /// <summary>
            /// Whether the folder at the path is no longer the one <paramref name="d"/> has open. An
            /// FSDirectory names its files by path, so when its folder is removed (and perhaps made
            /// again) it sees the folder now at the path; a handle stays on the removed one. A
            /// removed folder is empty, so only an answer of "absent" can come from one: callers
            /// ask this then, with the <paramref name="name"/> they found absent (null: the handle
            /// listed nothing), so the check costs nothing on the paths that find files.
            /// </summary>
            internal bool IsStale(NativeDirectory d, string? name)
            {
                if (!ReferenceEquals(Volatile.Read(ref _dir), d) || !System.IO.Directory.Exists(_path))
                    return true;
                // present at the path and still absent through the handle, asked after the path
                // (a file another thread creates meanwhile is not taken for a removed folder)
                return name != null
                    ? File.Exists(System.IO.Path.Combine(_path, name)) && !d.FileExists(name)
                    : System.IO.Directory.EnumerateFiles(_path).Any() && d.ListAll().Length == 0;
            }

            /// <summary>A handle on the folder now at the path, in place of <paramref name="stale"/>
            /// (null: no folder there and <paramref name="create"/> false).</summary>
            internal NativeDirectory? Renew(NativeDirectory stale, bool create)
            {
                lock (_gate)
                {
                    if (ReferenceEquals(_dir, stale))
                    {
                        _retired.Add(stale);
                        Volatile.Write(ref _dir, null);
                    }
                }
                return Get(create);
            }

            public void Dispose()
            {
                lock (_gate)
                {
                    _disposed = true;
                    _dir?.Dispose();
                    foreach (NativeDirectory d in _retired)
                        d.Dispose();
                    _retired.Clear();
                }
            }
        }

        /// <summary>The nativedir handle of the directory (opening it creates a missing
        /// folder).</summary>
        public NativeDirectory Native => _lazy.Get(create: true)!;

        /// <summary>The strategy chosen per IOContext.</summary>
        public IoStrategyPolicy Policy => _policy;

        /// <inheritdoc/>
        public override string[] ListAll()
        {
            EnsureOpen();
            NativeDirectory d = _lazy.Existing();
            string[] names = d.ListAll();
            if (names.Length == 0 && _lazy.IsStale(d, null))
                names = (_lazy.Renew(d, create: false) ?? throw _lazy.Missing()).ListAll();
            return names;
        }

        /// <inheritdoc/>
        [Obsolete("Lucene.NET marks Directory.FileExists obsolete; kept for its callers.")]
        public override bool FileExists(string name)
        {
            EnsureOpen();
            ArgumentNullException.ThrowIfNull(name);
            NativeDirectory? d = _lazy.Get(create: false);
            if (d == null)
                return false;
            if (d.FileExists(name))
                return true;
            if (!_lazy.IsStale(d, name))
                return false;
            d = _lazy.Renew(d, create: false);
            return d != null && d.FileExists(name);
        }

        /// <inheritdoc/>
        public override long FileLength(string name)
        {
            EnsureOpen();
            NativeDirectory? d = _lazy.Get(create: false);
            try
            {
                try
                {
                    if (d != null)
                        return d.FileLength(name);
                }
                catch (FileNotFoundException) when (_lazy.IsStale(d!, name))
                {
                    d = _lazy.Renew(d!, create: false);
                    if (d != null)
                        return d.FileLength(name);
                }
            }
            catch (UnauthorizedAccessException e) when (IsFolder(name))
            {
                throw NotAFile(name, e);
            }
            // as FileInfo.Length: a file in a missing folder is a missing file
            throw new FileNotFoundException($"'{name}' does not exist: directory '{_lazy.Path}' does not exist", name);
        }

        // FSDirectory asks File.Exists first: a folder's name is a missing file, not a denied one
        private bool IsFolder(string name) => System.IO.Directory.Exists(Path.Combine(_lazy.Path, name));

        private FileNotFoundException NotAFile(string name, Exception e) =>
            new($"'{name}' in '{_lazy.Path}' is a folder, not a file", name, e);

        /// <inheritdoc/>
        public override void DeleteFile(string name)
        {
            EnsureOpen();
            NativeDirectory? d = _lazy.Get(create: false);
            try
            {
                try
                {
                    d?.DeleteFile(name);
                }
                catch (FileNotFoundException) when (_lazy.IsStale(d!, name))
                {
                    d = _lazy.Renew(d!, create: false);
                    d?.DeleteFile(name);
                }
            }
            catch (UnauthorizedAccessException e) when (IsFolder(name))
            {
                throw NotAFile(name, e);
            }
            if (d == null)
                throw new FileNotFoundException($"Cannot delete '{name}': directory '{_lazy.Path}' does not exist", name);
            lock (_staleLock)
                _stale.Remove(name);
        }

        /// <inheritdoc/>
        public override IndexInput OpenInput(string name, IOContext context)
        {
            EnsureOpen();
            _ensureCanRead?.Invoke(name);
            SharedFile file = Open(name, context);
            int size = _policy.InputBufferSize(context);
            return new NativeIndexInput($"NativeIndexInput(path=\"{Path.Combine(m_directory.FullName, name)}\")",
                file, 0, file.Length, size > 0 ? size : file.BufferSize);
        }

        private SharedFile Open(string name, IOContext context)
        {
            IoOptions flags = _policy.ForInput(name, context);
            NativeDirectory d = _lazy.Existing();
            NativeInput input;
            try
            {
                input = d.OpenInput(name, flags);
            }
            catch (FileNotFoundException) when (_lazy.IsStale(d, name))
            {
                input = (_lazy.Renew(d, create: false) ?? throw _lazy.Missing()).OpenInput(name, flags);
            }
            try
            {
                return new SharedFile(input, (flags & IoOptions.Mapped) != 0, (flags & IoOptions.NoReuse) != 0);
            }
            catch
            {
                input.Dispose();
                throw;
            }
        }

        /// <summary>Slices share the file's native handle (compound files open every sub-file as a
        /// slice). A compound file is
        /// opened with the advice of its own name (none); each sub-file's slice then gets the
        /// advice its own name calls for (<see cref="IoStrategyPolicy.ForInput(string, IOContext)"/>)
        /// on its range of the mapping, so a compound segment's stored fields are read as randomly
        /// as a separate <c>.fdt</c>.</summary>
        public override IndexInputSlicer CreateSlicer(string name, IOContext context)
        {
            EnsureOpen();
            _ensureCanRead?.Invoke(name);
            var full = (NativeIndexInput)OpenInput(name, context);
            return new Slicer(full, _policy, context, _policy.ForInput(name, context));
        }

        private sealed class Slicer : IndexInputSlicer
        {
            private const IoOptions Advice = IoOptions.Random | IoOptions.Sequential;
            private readonly NativeIndexInput _full;
            private readonly IoStrategyPolicy _policy;
            private readonly IOContext _context;
            private readonly IoOptions _fileFlags;

            internal Slicer(NativeIndexInput full, IoStrategyPolicy policy, IOContext context, IoOptions fileFlags)
            {
                _full = full;
                _policy = policy;
                _context = context;
                _fileFlags = fileFlags;
            }

            public override IndexInput OpenSlice(string sliceDescription, long offset, long length)
            {
                NativeIndexInput slice = _full.Slice($"NativeIndexInput(slice={sliceDescription} of {_full})", offset, length);
                // Only a mapping takes advice per range: on a descriptor (buffered) the advice is
                // the whole file's, and the last sub-file opened would set it for all of them.
                // CompoundFileDirectory names each slice after its sub-file ("_0.fdt").
                if (_full.IsMapped && length > 0 && (_fileFlags & Advice) == 0)
                {
                    IoOptions advice = _policy.ForInput(sliceDescription, _context) & Advice;
                    if (advice != IoOptions.None)
                        slice.AdviseRange(advice);
                }
                return slice;
            }

            [Obsolete("Only for reading CFS files from 3.x indexes.")]
            public override IndexInput OpenFullSlice() => _full.Slice(_full.ToString(), 0, _full.Length);

            protected override void Dispose(bool disposing) => _full.Dispose();
        }

        /// <inheritdoc/>
        public override IndexOutput CreateOutput(string name, IOContext context)
        {
            EnsureOpen();
            // beta00018+: the name check, then FSDirectory's own preparation (the folder made, an
            // old file of that name deleted), which the native create below would do the same way
            _ensureCanWrite?.Invoke(name);
            IoOptions flags = _policy.ForOutput(context);
            NativeDirectory native = _lazy.Get(create: true)!; // like EnsureCanWrite: the first write makes the folder
            NativeOutput o;
            try
            {
                try
                {
                    o = native.CreateOutput(name, flags);
                }
                catch (FileNotFoundException)
                {
                    // creating a file gets "not found" only in a folder removed under the handle:
                    // like EnsureCanWrite, make the folder at the path and write there
                    native = _lazy.Renew(native, create: true)!;
                    o = native.CreateOutput(name, flags);
                }
            }
            catch (NativeDirException e) when (e.StatusName == "ND_E_EXISTS")
            {
                // Like FSDirectory.EnsureCanWrite: Lucene rewrites a name only when the old file
                // is garbage (segments.gen). Delete and create, instead of IoOptions.Overwrite's
                // write-aside-and-rename, which costs a rename and leaves nothing Lucene needs.
                native.DeleteFile(name);
                o = native.CreateOutput(name, flags);
            }
            int size = _policy.OutputBufferSize(flags);
            var output = new NativeIndexOutput(this, o, size > 0 ? size : o.BufferSize);
            lock (_staleLock)
                _stale[name] = output;
            return output;
        }

        internal void OnOutputClosed(NativeIndexOutput output)
        {
            lock (_staleLock)
            {
                // every byte reached the OS before this: the native close flushed it
                if (_stale.TryGetValue(output.Name, out NativeIndexOutput? o) && ReferenceEquals(o, output))
                    _stale[output.Name] = null;
            }
        }

        /// <summary>
        /// Makes the named files durable, then the directory (so their names survive a crash too).
        /// A file still open is synced through its own writing handle; a closed one with nd_fsync.
        /// Only files written through this directory and not synced yet are synced, as in
        /// FSDirectory.
        /// </summary>
        public override void Sync(ICollection<string> names)
        {
            EnsureOpen();
            ArgumentNullException.ThrowIfNull(names);
            var toSync = new List<KeyValuePair<string, NativeIndexOutput?>>();
            lock (_staleLock)
            {
                foreach (string name in names)
                    if (_stale.TryGetValue(name, out NativeIndexOutput? o))
                        toSync.Add(new(name, o));
            }
            foreach (var (name, output) in toSync)
            {
                if (output != null && !output.IsDisposed)
                {
                    try
                    {
                        output.SyncThroughHandle();
                        continue;
                    }
                    catch (ObjectDisposedException)
                    {
                        // closed meanwhile: all its bytes reached the OS; fsync by name below
                    }
                }
                _lazy.Existing().Sync(new[] { name });
            }
            if (toSync.Count == 0)
                return;
            _lazy.Existing().SyncDirectory();
            lock (_staleLock)
            {
                foreach (var (name, output) in toSync)
                    // an output still open may be written again: it stays stale until closed
                    if (_stale.TryGetValue(name, out NativeIndexOutput? now) && now == null)
                        _stale.Remove(name);
            }
        }

        /// <summary>Fsyncs one file through nativedir (FSDirectory's hook).</summary>
        protected override void Fsync(string name) => _lazy.Existing().Sync(new[] { name });

        /// <summary>Closes the directory handle; open inputs and outputs keep working until
        /// disposed.</summary>
        protected override void Dispose(bool disposing)
        {
            base.Dispose(disposing);
            if (disposing)
                _lazy.Dispose();
        }

        /// <inheritdoc/>
        public override string ToString() => $"{GetType().Name}@{m_directory.FullName} lockFactory={LockFactory}";

        /// <summary>Opens a <see cref="NativeFSDirectory"/> (for code that calls FSDirectory.Open).</summary>
        /// <exception cref="NativeDirUnavailableException">Not thrown here: the native library
        /// is loaded by the first call that reads or writes (see <see cref="OpenOrFallback(string)"/>).</exception>
        public static new NativeFSDirectory Open(string path) => new(path);

        /// <summary>
        /// A <see cref="NativeFSDirectory"/> at <paramref name="path"/> where nativedir's native
        /// library loads in this process, otherwise Lucene.NET's own choice,
        /// <see cref="FSDirectory.Open(DirectoryInfo)"/> (MMapDirectory, NIOFSDirectory or
        /// SimpleFSDirectory for the platform). Which one it chose: the returned type
        /// (<c>is NativeFSDirectory</c>), the overload with an <c>out</c> reason, and the
        /// <see cref="FellBack"/> event, raised for each fallback with the library's reason.
        /// </summary>
        public static FSDirectory OpenOrFallback(string path) =>
            OpenOrFallback(new DirectoryInfo(path ?? throw new ArgumentNullException(nameof(path))), out _);

        /// <inheritdoc cref="OpenOrFallback(string)"/>
        public static FSDirectory OpenOrFallback(DirectoryInfo path) => OpenOrFallback(path, out _);

        /// <inheritdoc cref="OpenOrFallback(string)"/>
        /// <param name="path">The index directory.</param>
        /// <param name="unavailable">null when the result is a <see cref="NativeFSDirectory"/>;
        /// otherwise why nativedir's library did not load (RID, files looked for, the loader's
        /// reason, the RIDs the package carries).</param>
        public static FSDirectory OpenOrFallback(DirectoryInfo path, out NativeDirUnavailableException? unavailable)
        {
            ArgumentNullException.ThrowIfNull(path);
            try
            {
                NativeDirectory.EnsureNativeLibrary();
            }
            catch (NativeDirUnavailableException e)
            {
                unavailable = e;
                FSDirectory builtIn = FSDirectory.Open(path);
                FellBack?.Invoke(null, new NativeFallbackEventArgs(path.FullName, builtIn, e));
                return builtIn;
            }
            unavailable = null;
            return new NativeFSDirectory(path);
        }

        /// <summary>Raised by <see cref="OpenOrFallback(DirectoryInfo, out NativeDirUnavailableException)"/>
        /// each time it returns one of Lucene.NET's own directories because nativedir's library
        /// does not load (the sender is null).</summary>
        public static event EventHandler<NativeFallbackEventArgs>? FellBack;
    }
}
