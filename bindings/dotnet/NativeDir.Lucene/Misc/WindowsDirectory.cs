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
    /// <see cref="FSDirectory"/> for Windows whose inputs read through nativedir, so that threads
    /// reading one file (an input and its clones) never wait for each other on a file position,
    /// and whose outputs, locks and sync are <see cref="FSDirectory"/>'s own.
    /// <para>Inputs are opened as <see cref="NativeFSDirectory"/> opens them
    /// (<see cref="IoStrategyPolicy"/>): files opened for searching are mapped, so a byte read is a
    /// load from the page cache; read-once files and small merges read through a buffer with
    /// positional reads; merges of 10 MiB or more read with unbuffered I/O, leaving the cache to
    /// the searches. Every file is opened so that others may read, write, rename and delete it.
    /// Windows frees a deleted file's name only once its last handle and mapping are gone: an
    /// input still open keeps the name taken (as with Lucene.NET's MMapDirectory); Lucene's
    /// IndexFileDeleter retries such a delete later.</para>
    /// <para>Windows only: constructing it elsewhere throws
    /// <see cref="PlatformNotSupportedException"/>.</para>
    /// </summary>
#if NET
    [SupportedOSPlatform("windows")]
#endif
    public class WindowsDirectory : FSDirectory
    {
        private readonly NativeFSDirectory _reader; // the inputs, on the same folder

        /// <summary>A directory at <paramref name="path"/> locked by <paramref name="lockFactory"/>.</summary>
        /// <param name="path">The index folder.</param>
        /// <param name="lockFactory">The lock factory, or null for <see cref="NativeFSLockFactory"/>.</param>
        /// <exception cref="PlatformNotSupportedException">Not Windows.</exception>
        public WindowsDirectory(DirectoryInfo path, LockFactory? lockFactory)
            : base(path ?? throw new ArgumentNullException(nameof(path)), lockFactory)
        {
            EnsureWindows();
            // takes no locks (this directory's factory does) and creates nothing
            _reader = new NativeFSDirectory(path, NoLockFactory.GetNoLockFactory());
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

        private static void EnsureWindows()
        {
            if (!Constants.WINDOWS)
                throw new PlatformNotSupportedException($"{nameof(WindowsDirectory)} is only supported on Microsoft Windows.");
        }

        /// <summary>An input read through nativedir (see the class's remarks). Reads past the end
        /// throw <see cref="EndOfStreamException"/>; clones share the file, each with its own
        /// position; disposing twice is allowed.</summary>
        public override IndexInput OpenInput(string name, IOContext context)
        {
            EnsureOpen();
            return _reader.OpenInput(name, context);
        }

        /// <summary>Slices of one opened file (compound files), read as <see cref="OpenInput"/>
        /// reads.</summary>
        public override IndexInputSlicer CreateSlicer(string name, IOContext context)
        {
            EnsureOpen();
            return _reader.CreateSlicer(name, context);
        }

        /// <summary>Closes the inputs' directory handle (open inputs keep working until
        /// disposed).</summary>
        protected override void Dispose(bool disposing)
        {
            if (disposing)
                _reader.Dispose();
            base.Dispose(disposing);
        }
    }
}
