using System;
using System.IO;
using Lucene.Net.Util;
using Microsoft.Win32.SafeHandles;
#if NET
using System.Runtime.Versioning;
#endif

namespace NativeDir.Lucene.Misc
{
    /// <summary>
    /// Lucene's <c>NativePosixUtil</c> (the <c>lucene/misc</c> class, with the public API of
    /// Lucene.NET's <c>Lucene.Net.Store.NativePosixUtil</c>) on nativedir: direct-I/O opens,
    /// positional reads, and file and memory advice. Every call is one call into nativedir
    /// (<see cref="OsFile"/>), which is compiled against each OS's own headers: the value of
    /// <c>O_DIRECT</c> (0x4000 on x86-64 Linux, 0x10000 on arm64), macOS's <c>F_NOCACHE</c> and the
    /// advice codes are the OS's, not restated here.
    /// <para>The advice constants are Lucene's numbering (not the OS's, where
    /// <see cref="SEQUENTIAL"/> and <see cref="RANDOM"/> are the other way round); the library
    /// turns them into the OS's. Every failure is an <see cref="IOException"/>, as in Lucene, with
    /// the OS's reason; an unknown advice value too.</para>
    /// <para>Linux and macOS only: every member throws <see cref="PlatformNotSupportedException"/>
    /// elsewhere.</para>
    /// </summary>
#if NET
    [UnsupportedOSPlatform("windows")]
#endif
    public static class NativePosixUtil
    {
        /// <summary>No advice.</summary>
        public const int NORMAL = 0;

        /// <summary>Read front to back: read ahead.</summary>
        public const int SEQUENTIAL = 1;

        /// <summary>Read at random: no read-ahead.</summary>
        public const int RANDOM = 2;

        /// <summary>Read soon: start bringing it in.</summary>
        public const int WILLNEED = 3;

        /// <summary>Not needed soon: clean cached pages may go.</summary>
        public const int DONTNEED = 4;

        /// <summary>Read once (files only).</summary>
        public const int NOREUSE = 5;

        /// <summary>
        /// Opens <paramref name="filename"/> for direct I/O (reads and writes that bypass the page
        /// cache): read-only, or (<paramref name="read"/> false) for reading and writing, created
        /// when missing. Linux: <c>O_DIRECT</c>, after which every transfer's offset, length and
        /// buffer address must be multiples of the file system's block; macOS: <c>F_NOCACHE</c>.
        /// The handle is an ordinary <see cref="SafeFileHandle"/> (the file opened by the runtime,
        /// direct I/O switched on by nativedir): dispose it to close the file.
        /// </summary>
        /// <exception cref="IOException">The file cannot be opened, or its file system has no
        /// direct I/O (<see cref="FileNotFoundException"/> for a missing file opened to read).</exception>
        /// <exception cref="PlatformNotSupportedException">Not Linux or macOS.</exception>
        public static SafeFileHandle OpenDirect(string filename, bool read)
        {
            EnsureSupported();
            if (filename == null)
                throw new ArgumentNullException(nameof(filename));
            SafeFileHandle handle = OpenHandle(filename, read);
            try
            {
                OsFile.SetDirect(handle, true);
            }
            catch (Exception e) when (e is NotSupportedException || e is UnauthorizedAccessException)
            {
                handle.Dispose();
                throw new IOException($"cannot open '{filename}' for direct I/O: {e.Message}", e);
            }
            catch
            {
                handle.Dispose();
                throw;
            }
            return handle;
        }

        private static SafeFileHandle OpenHandle(string filename, bool read)
        {
            FileMode mode = read ? FileMode.Open : FileMode.OpenOrCreate;
            FileAccess access = read ? FileAccess.Read : FileAccess.ReadWrite;
            const FileShare share = FileShare.ReadWrite | FileShare.Delete;
#if NET
            return File.OpenHandle(filename, mode, access, share);
#else
            // no File.OpenHandle here: the stream's handle is kept and the stream dropped without
            // its finalizer, which would close the handle under its new owner
            var stream = new FileStream(filename, mode, access, share, bufferSize: 1);
            SafeFileHandle handle = stream.SafeFileHandle;
            GC.SuppressFinalize(stream);
            return handle;
#endif
        }

        /// <summary>Reads up to <paramref name="length"/> bytes at <paramref name="pos"/> of the file
        /// into the memory at <paramref name="buffer"/>, without moving the file's position:
        /// returns how many, fewer only where the file ends, 0 at or past its end (on a direct
        /// handle the buffer, the position and the length must be block-aligned).</summary>
        /// <exception cref="IOException">The read failed (an unaligned direct read, a handle not
        /// open for reading).</exception>
        /// <exception cref="PlatformNotSupportedException">Not Linux or macOS.</exception>
        public static unsafe long Pread(SafeFileHandle fd, long pos, IntPtr buffer, int length)
        {
            EnsureSupported();
            if (length < 0)
                throw new ArgumentOutOfRangeException(nameof(length), length, "Non-negative number required.");
            if (buffer == IntPtr.Zero && length > 0)
                throw new ArgumentNullException(nameof(buffer));
            try
            {
                return OsFile.Read(fd, new Span<byte>((void*)buffer, length), pos);
            }
            catch (Exception e) when (e is NotSupportedException || e is UnauthorizedAccessException)
            {
                throw new IOException($"pread at {pos}: {e.Message}", e);
            }
        }

        /// <summary>Advises the OS how <c>[offset, offset + len)</c> of the file will be read (len 0:
        /// to the end of the file): posix_fadvise on Linux; on macOS, which has none,
        /// <see cref="WILLNEED"/> reads ahead and the rest change nothing.</summary>
        /// <exception cref="IOException">The OS refused, or <paramref name="advise"/> is none of
        /// the constants.</exception>
        /// <exception cref="PlatformNotSupportedException">Not Linux or macOS.</exception>
        public static void Advise(SafeFileHandle fd, long offset, long len, int advise)
        {
            EnsureSupported();
            CheckAdvice(advise, NOREUSE);
            try
            {
                OsFile.Advise(fd, offset, len, (OsAdvice)advise);
            }
            catch (Exception e) when (e is NotSupportedException || e is UnauthorizedAccessException || e is ArgumentOutOfRangeException)
            {
                throw new IOException($"posix_fadvise: {e.Message}", e);
            }
        }

        /// <summary>madvise of the memory <c>[buffer, buffer + length)</c> (page-aligned, mapped);
        /// returns 0.</summary>
        /// <exception cref="IOException">The OS refused (an address off a page boundary, memory not
        /// mapped), or <paramref name="advise"/> is not a memory advice (<see cref="NOREUSE"/> is
        /// for files).</exception>
        /// <exception cref="PlatformNotSupportedException">Not Linux or macOS.</exception>
        public static int MAdvise(IntPtr buffer, int length, int advise) => AdviseMemory(buffer, length, advise, posix: false);

        /// <summary>posix_madvise of the memory <c>[buffer, buffer + length)</c>; returns 0. On Linux
        /// its <see cref="DONTNEED"/> does nothing (madvise's drops the pages).</summary>
        /// <exception cref="IOException">As <see cref="MAdvise"/>.</exception>
        /// <exception cref="PlatformNotSupportedException">Not Linux or macOS.</exception>
        public static int PosixMAdvise(IntPtr buffer, int length, int advise) => AdviseMemory(buffer, length, advise, posix: true);

        private static int AdviseMemory(IntPtr buffer, int length, int advise, bool posix)
        {
            EnsureSupported();
            CheckAdvice(advise, DONTNEED);
            if (buffer == IntPtr.Zero)
                throw new ArgumentNullException(nameof(buffer));
            if (length < 0)
                throw new ArgumentOutOfRangeException(nameof(length), length, "Non-negative number required.");
            try
            {
                OsFile.AdviseMemory(buffer, length, (OsAdvice)advise, posix);
            }
            catch (NotSupportedException e)
            {
                throw new IOException($"{(posix ? "posix_madvise" : "madvise")}: {e.Message}", e);
            }
            return 0;
        }

        private static void CheckAdvice(int advise, int last)
        {
            if (advise < NORMAL || advise > last)
                throw new IOException($"unknown advice {advise}");
        }

        private static void EnsureSupported()
        {
            if (!Constants.LINUX && !Constants.MAC_OS_X)
                throw new PlatformNotSupportedException(
                    $"{nameof(NativePosixUtil)} uses the direct I/O of Linux and macOS and is not supported on {Constants.OS_NAME}.");
        }
    }
}
