using System;
using System.Collections.Generic;
using System.IO;
using Lucene.Net.Store;
using Lucene.Net.Util;
using LuceneDirectory = Lucene.Net.Store.Directory;
#if NET
using System.Runtime.Versioning;
#endif

namespace NativeDir.Lucene.Misc
{
    /// <summary>
    /// Lucene's <c>NativeUnixDirectory</c> (the <c>lucene/misc</c> class, with the public API of
    /// Lucene.NET's <c>Lucene.Net.Store.NativeUnixDirectory</c>) on nativedir: an
    /// <see cref="FSDirectory"/> whose merges read and write with direct I/O, so that a merge
    /// neither fills the page cache nor evicts the pages searches hold there, while everything
    /// else (searches, flushes, small merges) goes to the <c>delegate</c> directory.
    /// <para>An input or output goes direct when its <see cref="IOContext"/> is a merge
    /// (<see cref="IOContext.UsageContext.MERGE"/>) estimated at <c>minBytesDirect</c> bytes or more
    /// (and, for an input, the file is that large too); every other one is the delegate's. The
    /// direct files are nativedir's direct-I/O inputs and outputs: aligned to the block size the
    /// file system asks for (4 KiB on most, read from the file system, never assumed), writing a
    /// file's unaligned tail padded and truncating it back, a running CRC-32, and reads that
    /// throw <see cref="EndOfStreamException"/> past the end. On a file system without direct I/O
    /// they read and write through the page cache, dropping what they wrote from it.</para>
    /// <para>The delegate should be an FSDirectory on the same folder (files are listed,
    /// measured and opened by path, whichever directory wrote them); locks are the delegate's
    /// lock factory's. <see cref="Sync"/> makes the named files durable whichever directory wrote
    /// them. Disposing this directory leaves the delegate open: it is the caller's.</para>
    /// <para>Linux and macOS only: constructing it elsewhere throws
    /// <see cref="PlatformNotSupportedException"/>.</para>
    /// </summary>
#if NET
    [UnsupportedOSPlatform("windows")]
#endif
    public class NativeUnixDirectory : FSDirectory
    {
        /// <summary>The smallest unit Lucene's contract asks <c>mergeBufferSize</c> to be a multiple
        /// of. The I/O itself is aligned to the file system's own block size by nativedir.</summary>
        private const int BufferSizeUnit = 512;

        /// <summary>The buffer a merge reads and writes through, 256 KiB by default: larger means
        /// fewer system calls, more memory per open merge file.</summary>
        public const int DEFAULT_MERGE_BUFFER_SIZE = 262144;

        /// <summary>Merges estimated smaller than this (10 MiB by default) do not use direct I/O.</summary>
        public const long DEFAULT_MIN_BYTES_DIRECT = 10 * 1024 * 1024;

        private readonly int _mergeBufferSize;
        private readonly long _minBytesDirect;
        private readonly LuceneDirectory m_delegate;
        private readonly NativeFSDirectory _direct; // the merges' files, on the same folder
        private readonly object _gate = new();
        private readonly HashSet<string> _directNames = new(StringComparer.Ordinal); // written by _direct, not deleted since

        /// <summary>A directory at <paramref name="path"/> whose merges use direct I/O.</summary>
        /// <param name="path">The index folder.</param>
        /// <param name="mergeBufferSize">The buffer each direct input and output reads and writes
        /// through; a positive multiple of 512 (see <see cref="DEFAULT_MERGE_BUFFER_SIZE"/>).</param>
        /// <param name="minBytesDirect">Merges, and files opened for them, smaller than this do not
        /// use direct I/O (see <see cref="DEFAULT_MIN_BYTES_DIRECT"/>).</param>
        /// <param name="delegate">The directory for everything that is not a direct merge.</param>
        /// <exception cref="ArgumentException"><paramref name="mergeBufferSize"/> is not a positive
        /// multiple of 512.</exception>
        /// <exception cref="ArgumentNullException"><paramref name="path"/> or
        /// <paramref name="delegate"/> is null.</exception>
        /// <exception cref="PlatformNotSupportedException">Not Linux or macOS.</exception>
        public NativeUnixDirectory(DirectoryInfo path, int mergeBufferSize, long minBytesDirect, LuceneDirectory @delegate)
            : base(path ?? throw new ArgumentNullException(nameof(path)),
                   (@delegate ?? throw new ArgumentNullException(nameof(@delegate))).LockFactory)
        {
            EnsureSupported();
            if (mergeBufferSize <= 0 || mergeBufferSize % BufferSizeUnit != 0)
                throw new ArgumentException($"mergeBufferSize must be a positive multiple of {BufferSizeUnit} (got: {mergeBufferSize})", nameof(mergeBufferSize));
            _mergeBufferSize = mergeBufferSize;
            _minBytesDirect = minBytesDirect;
            m_delegate = @delegate;
            // takes no locks (the delegate's factory does) and creates nothing until a merge writes
            _direct = new NativeFSDirectory(path, NoLockFactory.GetNoLockFactory(), new DirectMerges(mergeBufferSize));
        }

        /// <summary>A directory at <paramref name="path"/> with <see cref="DEFAULT_MERGE_BUFFER_SIZE"/>
        /// and <see cref="DEFAULT_MIN_BYTES_DIRECT"/>.</summary>
        /// <exception cref="PlatformNotSupportedException">Not Linux or macOS.</exception>
        public NativeUnixDirectory(DirectoryInfo path, LuceneDirectory @delegate)
            : this(path, DEFAULT_MERGE_BUFFER_SIZE, DEFAULT_MIN_BYTES_DIRECT, @delegate)
        {
        }

        /// <inheritdoc cref="NativeUnixDirectory(DirectoryInfo, int, long, LuceneDirectory)"/>
        public NativeUnixDirectory(string path, int mergeBufferSize, long minBytesDirect, LuceneDirectory @delegate)
            : this(new DirectoryInfo(path ?? throw new ArgumentNullException(nameof(path))), mergeBufferSize, minBytesDirect, @delegate)
        {
        }

        /// <inheritdoc cref="NativeUnixDirectory(DirectoryInfo, LuceneDirectory)"/>
        public NativeUnixDirectory(string path, LuceneDirectory @delegate)
            : this(new DirectoryInfo(path ?? throw new ArgumentNullException(nameof(path))), @delegate)
        {
        }

        private static void EnsureSupported()
        {
            if (!Constants.LINUX && !Constants.MAC_OS_X)
                throw new PlatformNotSupportedException(
                    $"{nameof(NativeUnixDirectory)} uses the direct I/O of Linux and macOS and is not supported on {Constants.OS_NAME}.");
        }

        /// <summary>The directory everything but direct merges goes to.</summary>
        public LuceneDirectory Delegate => m_delegate;

        private bool IsDirectMerge(IOContext context) =>
            context != null && context.Context == IOContext.UsageContext.MERGE
            && context.MergeInfo != null && context.MergeInfo.EstimatedMergeBytes >= _minBytesDirect;

        /// <summary>A direct-I/O input for a merge of at least <c>minBytesDirect</c> bytes reading a
        /// file of at least that size; the delegate's input otherwise.</summary>
        public override IndexInput OpenInput(string name, IOContext context)
        {
            EnsureOpen();
            return ReadsDirect(name, context) ? _direct.OpenInput(name, context) : m_delegate.OpenInput(name, context);
        }

        /// <summary>Slices as <see cref="OpenInput"/> chooses: the direct directory's or the
        /// delegate's.</summary>
        public override IndexInputSlicer CreateSlicer(string name, IOContext context)
        {
            EnsureOpen();
            return ReadsDirect(name, context) ? _direct.CreateSlicer(name, context) : m_delegate.CreateSlicer(name, context);
        }

        /// <summary>A direct merge reading a file of at least minBytesDirect bytes. A name whose
        /// length cannot be had (missing, a folder, no folder at all) goes to the delegate, which
        /// refuses it as FSDirectory refuses it.</summary>
        private bool ReadsDirect(string name, IOContext context)
        {
            if (!IsDirectMerge(context))
                return false;
            try
            {
                return FileLength(name) >= _minBytesDirect;
            }
            catch (Exception e) when (e is IOException || e is UnauthorizedAccessException || e is ArgumentException)
            {
                return false;
            }
        }

        /// <summary>A direct-I/O output for a merge estimated at <c>minBytesDirect</c> bytes or
        /// more; the delegate's output otherwise.</summary>
        public override IndexOutput CreateOutput(string name, IOContext context)
        {
            EnsureOpen();
            if (!IsDirectMerge(context))
            {
                IndexOutput o = m_delegate.CreateOutput(name, context);
                lock (_gate)
                    _directNames.Remove(name);
                return o;
            }
            IndexOutput direct = _direct.CreateOutput(name, context);
            lock (_gate)
                _directNames.Add(name);
            return direct;
        }

        /// <summary>Deletes the file through the directory that wrote it (so that directory does
        /// not sync it later), the delegate for any file this instance did not write directly.</summary>
        public override void DeleteFile(string name)
        {
            EnsureOpen();
            bool direct;
            lock (_gate)
                direct = _directNames.Remove(name);
            if (direct)
                _direct.DeleteFile(name);
            else
                m_delegate.DeleteFile(name);
        }

        /// <summary>Makes the named files durable, whichever directory wrote them: the delegate
        /// syncs its own, the direct merges' are synced here (their bytes never sat in the page
        /// cache, so this costs the device's flush), then the folder.</summary>
        public override void Sync(ICollection<string> names)
        {
            EnsureOpen();
            if (names == null)
                throw new ArgumentNullException(nameof(names));
            m_delegate.Sync(names);
            _direct.Sync(names);
        }

        /// <summary>Closes the direct merges' directory handle (open inputs and outputs keep
        /// working until disposed); the delegate stays open.</summary>
        protected override void Dispose(bool disposing)
        {
            if (disposing)
                _direct.Dispose();
            base.Dispose(disposing);
        }

        /// <summary>Every file of a direct merge: nativedir's direct I/O, through buffers of
        /// mergeBufferSize bytes.</summary>
        private sealed class DirectMerges : IoStrategyPolicy
        {
            private readonly int _bufferSize;

            internal DirectMerges(int bufferSize) : base(0) => _bufferSize = bufferSize;

            public override IoOptions ForOutput(IOContext context) => IoOptions.Merge;

            public override IoOptions ForInput(IOContext context) => IoOptions.Merge;

            public override IoOptions ForInput(string name, IOContext context) => IoOptions.Merge;

            public override int InputBufferSize(IOContext context) => _bufferSize;

            public override int OutputBufferSize(IoOptions flags) => _bufferSize;
        }
    }
}
