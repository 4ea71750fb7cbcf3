using System;
using System.Buffers;
using System.Collections.Generic;
using System.IO;
using System.Runtime.CompilerServices;
using Native = NativeDir.Interop.nativedir;

namespace NativeDir
{
    /// <summary>
    /// An open directory. Every file is named by one path component relative to it (no '/', '\',
    /// "." or ".."; at most 255 UTF-8 bytes; <see cref="ArgumentException"/> otherwise) and
    /// symbolic links are never followed. All members are thread-safe. Disposing the directory
    /// leaves the inputs, outputs and locks opened through it working until they are disposed.
    /// </summary>
    public sealed unsafe class NativeDirectory : IDisposable
    {
        private readonly NdSafeHandle _h;

        private NativeDirectory(NdSafeHandle h, string path)
        {
            _h = h;
            Path = path;
        }

        /// <summary>The path the directory was opened with.</summary>
        public string Path { get; }

        /// <summary>The version of the native library, "MAJOR.MINOR.PATCH".</summary>
        /// <exception cref="NativeDirUnavailableException">The native library cannot be loaded.</exception>
        public static string LibraryVersion
        {
            get
            {
                NativeLibraryLoader.EnsureLoaded();
                return Version();
            }
        }

        // Each call into the library sits in a method of its own, called only once it is loaded:
        // Mono binds a DllImport when it compiles the method that calls it (and keeps a failure).
        [MethodImpl(MethodImplOptions.NoInlining)]
        private static string Version() => Utf8.Decode(Native.nd_version());

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static int Abi() => Native.nd_abi_version();

        /// <summary>The ABI version the loaded native library implements.</summary>
        /// <exception cref="NativeDirUnavailableException">The native library cannot be loaded.</exception>
        public static int AbiVersion
        {
            get
            {
                NativeLibraryLoader.EnsureLoaded();
                return Abi();
            }
        }

        /// <summary>Loads nativedir's native library now, if it is not loaded yet (every call that
        /// needs it does so on its own): for an application that wants to know at startup, or to
        /// choose another implementation where it cannot load.</summary>
        /// <exception cref="NativeDirUnavailableException">It cannot be loaded in this process
        /// (the message says for which RID, where it looked, why, and which RIDs the package
        /// carries); every later call throws the same.</exception>
        public static void EnsureNativeLibrary() => NativeLibraryLoader.EnsureLoaded();

        /// <summary>Whether nativedir's native library loads in this process (it is loaded if
        /// so); never throws.</summary>
        public static bool IsNativeLibraryAvailable => NativeLibraryLoader.IsAvailable;

        /// <summary>Opens the directory at <paramref name="path"/>.</summary>
        /// <param name="path">Any path.</param>
        /// <param name="create">Create it, and its parents, when missing.</param>
        /// <exception cref="DirectoryNotFoundException">It does not exist and
        /// <paramref name="create"/> is false.</exception>
        /// <exception cref="NativeDirUnavailableException">The native library cannot be loaded.</exception>
        [SkipLocalsInit]
        public static NativeDirectory Open(string path, bool create = false)
        {
            ArgumentNullException.ThrowIfNull(path);
            NativeLibraryLoader.EnsureLoaded();
            return OpenLoaded(path, create);
        }

        [SkipLocalsInit]
        [MethodImpl(MethodImplOptions.NoInlining)]
        private static NativeDirectory OpenLoaded(string path, bool create)
        {
            byte[] utf8 = Utf8.Encode(path, Span<byte>.Empty, nameof(path)).ToArray();
            var h = new NdSafeHandle();
            long raw;
            int rc;
            fixed (byte* p = utf8)
                rc = Native.nd_open_dir(p, create ? Native.ND_DIR_CREATE : 0u, &raw);
            if (rc < 0)
            {
                Exception e = Errors.For(rc, path, nameof(path));
                h.Dispose();
                throw e is FileNotFoundException ? new DirectoryNotFoundException(e.Message) : e;
            }
            h.Adopt(raw);
            return new NativeDirectory(h, path);
        }

        /// <summary>The names of the regular files, sorted by their UTF-8 bytes.</summary>
        public string[] ListAll()
        {
            long dir = _h.Enter(nameof(NativeDirectory));
            try
            {
                long need = Native.nd_list(dir, null, 0);
                while (true)
                {
                    if (need < 0)
                        throw Errors.For(need);
                    if (need == 0)
                        return Array.Empty<string>();
                    byte[] buf = ArrayPool<byte>.Shared.Rent(checked((int)need));
                    try
                    {
                        long got;
                        fixed (byte* p = buf)
                            got = Native.nd_list(dir, p, buf.Length);
                        if (got >= 0 && got <= buf.Length)
                            return Split(buf.AsSpan(0, (int)got));
                        need = got; // files appeared meanwhile: ask again with more room
                    }
                    finally
                    {
                        ArrayPool<byte>.Shared.Return(buf);
                    }
                }
            }
            finally
            {
                _h.Exit();
            }
        }

        private static string[] Split(ReadOnlySpan<byte> names)
        {
            var list = new List<string>();
            while (!names.IsEmpty)
            {
                int end = names.IndexOf((byte)0);
                list.Add(System.Text.Encoding.UTF8.GetString(names.Slice(0, end)));
                names = names.Slice(end + 1);
            }
            return list.ToArray();
        }

        /// <summary>Whether <paramref name="name"/> is a regular file (a symlink is not).</summary>
        [SkipLocalsInit]
        public bool FileExists(string name)
        {
            Span<byte> scratch = stackalloc byte[Utf8.NameScratch];
            Span<byte> n = Utf8.Encode(name, scratch, nameof(name));
            long dir = _h.Enter(nameof(NativeDirectory));
            int rc;
            try
            {
                fixed (byte* p = n)
                    rc = Native.nd_file_exists(dir, p);
                if (rc < 0)
                    throw Errors.For(rc, name);
            }
            finally
            {
                _h.Exit();
            }
            return rc == 1;
        }

        /// <summary>The length in bytes of the file <paramref name="name"/>.</summary>
        /// <exception cref="FileNotFoundException">No such file.</exception>
        [SkipLocalsInit]
        public long FileLength(string name)
        {
            Span<byte> scratch = stackalloc byte[Utf8.NameScratch];
            Span<byte> n = Utf8.Encode(name, scratch, nameof(name));
            long dir = _h.Enter(nameof(NativeDirectory));
            try
            {
                long len;
                int rc;
                fixed (byte* p = n)
                    rc = Native.nd_file_length(dir, p, &len);
                if (rc < 0)
                    throw Errors.For(rc, name);
                return len;
            }
            finally
            {
                _h.Exit();
            }
        }

        /// <summary>Deletes <paramref name="name"/> (a symlink itself, never its target).</summary>
        /// <exception cref="FileNotFoundException">No such file.</exception>
        [SkipLocalsInit]
        public void DeleteFile(string name)
        {
            Span<byte> scratch = stackalloc byte[Utf8.NameScratch];
            Call(Utf8.Encode(name, scratch, nameof(name)), name, &Native.nd_delete_file);
        }

        /// <summary>Renames <paramref name="from"/> to <paramref name="to"/>, atomically
        /// replacing <paramref name="to"/>.</summary>
        [SkipLocalsInit]
        public void Rename(string from, string to)
        {
            Span<byte> s1 = stackalloc byte[Utf8.NameScratch];
            Span<byte> s2 = stackalloc byte[Utf8.NameScratch];
            Span<byte> a = Utf8.Encode(from, s1, nameof(from));
            Span<byte> b = Utf8.Encode(to, s2, nameof(to));
            long dir = _h.Enter(nameof(NativeDirectory));
            try
            {
                int rc;
                fixed (byte* pa = a)
                fixed (byte* pb = b)
                    rc = Native.nd_rename(dir, pa, pb);
                if (rc < 0)
                    throw Errors.For(rc, from);
            }
            finally
            {
                _h.Exit();
            }
        }

        /// <summary>Makes each file's bytes durable (fsync; F_FULLFSYNC on macOS). Prefer
        /// <see cref="NativeOutput.Sync"/> through the writing output: it also covers bytes still
        /// buffered there. Call <see cref="SyncDirectory"/> to make creates and renames durable.</summary>
        [SkipLocalsInit]
        public void Sync(IEnumerable<string> names)
        {
            ArgumentNullException.ThrowIfNull(names);
            Span<byte> scratch = stackalloc byte[Utf8.NameScratch];
            foreach (string name in names)
                Call(Utf8.Encode(name, scratch, nameof(names)), name, &Native.nd_fsync);
        }

        /// <summary>Makes the directory's creates, renames and deletes durable.</summary>
        public void SyncDirectory()
        {
            long dir = _h.Enter(nameof(NativeDirectory));
            try
            {
                int rc = Native.nd_sync_dir(dir);
                if (rc < 0)
                    throw Errors.For(rc);
            }
            finally
            {
                _h.Exit();
            }
        }

        /// <summary>Takes the exclusive, non-blocking lock <paramref name="name"/> (the file is
        /// created if missing and left in place). It excludes other handles in this process and
        /// other processes; dispose the lock to release it.</summary>
        /// <exception cref="NativeDirLockedException">The lock is held.</exception>
        [SkipLocalsInit]
        public NativeLock Lock(string name)
        {
            Span<byte> scratch = stackalloc byte[Utf8.NameScratch];
            Span<byte> n = Utf8.Encode(name, scratch, nameof(name));
            var h = new NdSafeHandle();
            OpenHandle(n, name, 0, h, &LockIgnoringFlags, null);
            return new NativeLock(h, name);
        }

        /// <summary>Opens <paramref name="name"/> for reading.</summary>
        /// <param name="name">The file.</param>
        /// <param name="options">Access advice and strategy; <see cref="IoOptions.Overwrite"/> is
        /// refused.</param>
        /// <exception cref="FileNotFoundException">No such file.</exception>
        [SkipLocalsInit]
        public NativeInput OpenInput(string name, IoOptions options = IoOptions.None)
        {
            Span<byte> scratch = stackalloc byte[Utf8.NameScratch];
            Span<byte> n = Utf8.Encode(name, scratch, nameof(name));
            var h = new InputSafeHandle();
            OpenHandle(n, name, (uint)options, h, &Native.nd_open_input, nameof(options));
            return NativeInput.Wrap(h, name);
        }

        /// <summary>Creates <paramref name="name"/> for writing.</summary>
        /// <param name="name">The file.</param>
        /// <param name="options"><see cref="IoOptions.Overwrite"/> replaces an existing file;
        /// <see cref="IoOptions.Merge"/> writes with direct I/O where the file system allows it.</param>
        /// <exception cref="NativeDirException">The file exists (Status ND_E_EXISTS) or the
        /// create failed.</exception>
        [SkipLocalsInit]
        public NativeOutput CreateOutput(string name, IoOptions options = IoOptions.None)
        {
            Span<byte> scratch = stackalloc byte[Utf8.NameScratch];
            Span<byte> n = Utf8.Encode(name, scratch, nameof(name));
            var h = new NdSafeHandle();
            OpenHandle(n, name, (uint)options, h, &Native.nd_create_output, nameof(options));
            return NativeOutput.Wrap(h, name);
        }

        /// <summary>Runs a call that makes a new native handle for <paramref name="name"/> and gives
        /// it to <paramref name="h"/>, which is disposed if the call fails. With
        /// <paramref name="optionsParam"/>, an invalid name is reported as an ArgumentException
        /// for the name parameter and other invalid arguments against the options.</summary>
        private void OpenHandle(Span<byte> n, string name, uint flags, NdSafeHandle h,
                                delegate*<long, byte*, uint, long*, int> open, string? optionsParam)
        {
            long dir = _h.Enter(nameof(NativeDirectory));
            try
            {
                long raw;
                int rc;
                fixed (byte* p = n)
                    rc = open(dir, p, flags, &raw);
                if (rc < 0)
                {
                    Exception e = Errors.For(rc, name, optionsParam);
                    h.Dispose();
                    throw optionsParam != null && e is ArgumentException ae && rc == Native.ND_E_INVALID_NAME
                        ? new ArgumentException(ae.Message, nameof(name)) : e;
                }
                h.Adopt(raw);
            }
            finally
            {
                _h.Exit();
            }
        }

        private static int LockIgnoringFlags(long dir, byte* name, uint flags, long* outLock) =>
            Native.nd_lock(dir, name, outLock);

        private void Call(Span<byte> name, string managedName, delegate*<long, byte*, int> fn)
        {
            long dir = _h.Enter(nameof(NativeDirectory));
            try
            {
                int rc;
                fixed (byte* p = name)
                    rc = fn(dir, p);
                if (rc < 0)
                    throw Errors.For(rc, managedName);
            }
            finally
            {
                _h.Exit();
            }
        }

        /// <summary>Closes the directory handle (open inputs, outputs and locks keep working).</summary>
        public void Dispose() => _h.Dispose();
    }
}
