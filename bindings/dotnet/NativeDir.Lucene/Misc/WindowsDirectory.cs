using System;
using System.IO;
using Lucene.Net.Store;
using Lucene.Net.Util;
#if NET
using System.Runtime.Versioning;
#endif

namespace NativeDir.Lucene.Misc
{
    /// <summary>
    /// Lucene's <c>WindowsDirectory</c> (the <c>lucene/misc</c> class, with the public API of
    /// Lucene.NET's <c>Lucene.Net.Store.WindowsDirectory</c>) on nativedir: an
    /// <see cref="FSDirectory"/> for Windows whose inputs never make threads wait for each other
    /// on a file position (an input and its clones read one file at once), with Lucene's
    /// <see cref="NativeFSLockFactory"/> by default, as Lucene's class has.
    /// <para>It is a <see cref="NativeFSDirectory"/>: every read, write and sync goes through
    /// nativedir, as <see cref="IoStrategyPolicy"/> chooses per <see cref="IOContext"/>: files opened
    /// for searching are mapped, so a byte read is a load from the page cache; read-once files and
    /// small merges read through a buffer with positional reads; merges of 10 MiB or more read and
    /// write with unbuffered I/O, leaving the cache to the searches; <see cref="FSDirectory.Sync"/>
    /// flushes the files written (FlushFileBuffers). Every file is opened so that others may read,
    /// write, rename and delete it. Windows frees a deleted file's name only once its last handle
    /// and mapping are gone: an input still open keeps the name taken (as with Lucene.NET's
    /// MMapDirectory), and Lucene's IndexFileDeleter retries such a delete later.</para>
    /// <para>Windows only: constructing it elsewhere throws
    /// <see cref="PlatformNotSupportedException"/>.</para>
    /// </summary>
#if NET
    [SupportedOSPlatform("windows")]
#endif
    public class WindowsDirectory : NativeFSDirectory
    {
        /// <summary>A directory at <paramref name="path"/> locked by <paramref name="lockFactory"/>.</summary>
        /// <param name="path">The index folder.</param>
        /// <param name="lockFactory">The lock factory, or null for <see cref="NativeFSLockFactory"/>.</param>
        /// <exception cref="PlatformNotSupportedException">Not Windows.</exception>
        public WindowsDirectory(DirectoryInfo path, LockFactory? lockFactory)
            : base(OnWindows(path ?? throw new ArgumentNullException(nameof(path))), lockFactory ?? new NativeFSLockFactory())
        {
        }

        /// <summary>A directory at <paramref name="path"/> with <see cref="NativeFSLockFactory"/>.</summary>
        /// <exception cref="PlatformNotSupportedException">Not Windows.</exception>
        public WindowsDirectory(DirectoryInfo path)
            : this(path, null)
        {
        }

        /// <inheritdoc cref="WindowsDirectory(DirectoryInfo, LockFactory)"/>
        public WindowsDirectory(string path, LockFactory? lockFactory)
            : this(new DirectoryInfo(path ?? throw new ArgumentNullException(nameof(path))), lockFactory)
        {
        }

        /// <inheritdoc cref="WindowsDirectory(DirectoryInfo)"/>
        public WindowsDirectory(string path)
            : this(path, null)
        {
        }

        /// <summary>The path, on Windows; nothing is made anywhere else.</summary>
        private static DirectoryInfo OnWindows(DirectoryInfo path)
        {
            if (!Constants.WINDOWS)
                throw new PlatformNotSupportedException($"{nameof(WindowsDirectory)} is only supported on Microsoft Windows.");
            return path;
        }
    }
}
