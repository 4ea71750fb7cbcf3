using System;
using System.IO;
using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;
using Native = NativeDir.Interop.nativedir;

namespace NativeDir
{
    /// <summary>Access advice for <see cref="OsFile.Advise"/> and <see cref="OsFile.AdviseMemory"/>
    /// (the numbering of Lucene's NativePosixUtil; the library turns it into each OS's own
    /// codes).</summary>
    public enum OsAdvice
    {
        /// <summary>No advice.</summary>
        Normal = 0,

        /// <summary>Read front to back: read ahead.</summary>
        Sequential = 1,

        /// <summary>Read at random: no read-ahead.</summary>
        Random = 2,

        /// <summary>Read soon: start bringing it in.</summary>
        WillNeed = 3,

        /// <summary>Not needed soon: its clean cached pages may go (madvise: the pages are
        /// dropped).</summary>
        DontNeed = 4,

        /// <summary>Read once (files only).</summary>
        NoReuse = 5,
    }

    /// <summary>
    /// Calls on a file the caller opened itself (a <see cref="SafeFileHandle"/> from
    /// <see cref="FileStream.SafeFileHandle"/> or <c>File.OpenHandle</c>) and on memory it mapped:
    /// positional reads and writes that leave the file pointer where it was, the length, direct
    /// I/O, and access advice, each one call into nativedir (nd_os_*), on every target framework.
    /// The handle stays the caller's: nothing here closes it, and it cannot be closed under a
    /// call (the call holds a reference on it). Reads and writes on one handle are thread-safe.
    /// <see cref="IO.RandomAccess"/> is .NET's <c>System.IO.RandomAccess</c> on these calls.
    /// </summary>
    public static unsafe class OsFile
    {
        /// <summary>Reads up to <c>buffer.Length</c> bytes at <paramref name="fileOffset"/>: returns
        /// how many, fewer only where the file ends, 0 at or past its end.</summary>
        /// <exception cref="ArgumentNullException"><paramref name="handle"/> is null.</exception>
        /// <exception cref="ArgumentException"><paramref name="handle"/> is invalid.</exception>
        /// <exception cref="ObjectDisposedException"><paramref name="handle"/> is closed.</exception>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="fileOffset"/> is negative.</exception>
        /// <exception cref="UnauthorizedAccessException">The file was not opened for reading, or
        /// is a directory.</exception>
        /// <exception cref="NotSupportedException">The file cannot seek (a pipe, a socket).</exception>
        /// <exception cref="NativeDirException">Any other failure (an <see cref="IOException"/>
        /// with the OS's error), e.g. a direct-I/O transfer the OS cannot align.</exception>
        public static int Read(SafeFileHandle handle, Span<byte> buffer, long fileOffset)
        {
            Check(handle);
            CheckOffset(fileOffset, nameof(fileOffset));
            NativeLibraryLoader.EnsureLoaded();
            fixed (byte* p = buffer)
                return (int)Transfer(handle, fileOffset, p, buffer.Length, write: false);
        }

        /// <summary>Writes all of <paramref name="buffer"/> at <paramref name="fileOffset"/>; past the
        /// end the file grows (zeros in between).</summary>
        /// <exception cref="UnauthorizedAccessException">The file was not opened for writing.</exception>
        /// <exception cref="NativeDirException">Any other failure, e.g. the device is full
        /// (some bytes may be written).</exception>
        /// <remarks>The other exceptions are <see cref="Read"/>'s.</remarks>
        public static void Write(SafeFileHandle handle, ReadOnlySpan<byte> buffer, long fileOffset)
        {
            Check(handle);
            CheckOffset(fileOffset, nameof(fileOffset));
            NativeLibraryLoader.EnsureLoaded();
            fixed (byte* p = buffer)
                Transfer(handle, fileOffset, p, buffer.Length, write: true);
        }

        /// <summary>The file's length in bytes.</summary>
        /// <exception cref="NotSupportedException">The file cannot seek (a pipe, a socket).</exception>
        /// <exception cref="UnauthorizedAccessException">A directory.</exception>
        public static long GetLength(SafeFileHandle handle)
        {
            Check(handle);
            NativeLibraryLoader.EnsureLoaded();
            long len;
            int rc = Length(handle, &len);
            if (rc < 0)
                throw For(rc);
            return len;
        }

        /// <summary>Whether the file can seek (not a pipe, a socket or a terminal); false also for
        /// a directory. Only the first three arguments' checks of <see cref="Read"/> throw.</summary>
        public static bool CanSeek(SafeFileHandle handle)
        {
            Check(handle);
            NativeLibraryLoader.EnsureLoaded();
            long len;
            return Length(handle, &len) >= 0;
        }

        /// <summary>Turns direct I/O on or off for the file: its reads and writes then bypass the
        /// page cache. Linux: O_DIRECT (afterwards every offset, length and buffer address must
        /// be a multiple of the file system's block, or the OS refuses the transfer); macOS:
        /// F_NOCACHE.</summary>
        /// <exception cref="NotSupportedException">The file system has no direct I/O, or this is
        /// Windows (which chooses unbuffered I/O only when a file is opened).</exception>
        public static void SetDirect(SafeFileHandle handle, bool direct)
        {
            Check(handle);
            NativeLibraryLoader.EnsureLoaded();
            int rc = SetDirectCall(handle, direct ? 1 : 0);
            if (rc < 0)
                throw For(rc);
        }

        /// <summary>Advises the OS how <c>[offset, offset + length)</c> of the file will be read
        /// (length 0: to the end). Linux: posix_fadvise; macOS: <see cref="OsAdvice.WillNeed"/>
        /// reads ahead (F_RDADVISE), the others change nothing.</summary>
        /// <exception cref="ArgumentOutOfRangeException">A negative offset or length, or an advice
        /// that is not an <see cref="OsAdvice"/>.</exception>
        /// <exception cref="NotSupportedException">Windows (advice is given when a file is
        /// opened).</exception>
        public static void Advise(SafeFileHandle handle, long offset, long length, OsAdvice advice)
        {
            Check(handle);
            CheckOffset(offset, nameof(offset));
            CheckOffset(length, nameof(length));
            CheckAdvice(advice, files: true);
            NativeLibraryLoader.EnsureLoaded();
            int rc = AdviseCall(handle, offset, length, (int)advice);
            if (rc < 0)
                throw For(rc);
        }

        /// <summary>Advises the OS how the memory <c>[address, address + length)</c> (mapped, and
        /// starting at a page boundary) will be used: madvise, or with <paramref name="posix"/>
        /// posix_madvise (on Linux posix_madvise's <see cref="OsAdvice.DontNeed"/> does nothing,
        /// madvise's drops the pages: private memory then reads as zeros).</summary>
        /// <exception cref="ArgumentNullException"><paramref name="address"/> is zero.</exception>
        /// <exception cref="ArgumentOutOfRangeException">A negative length, or
        /// <see cref="OsAdvice.NoReuse"/> (advice for files only) or a value that is no
        /// <see cref="OsAdvice"/>.</exception>
        /// <exception cref="NativeDirException">The OS refused: an address that is not at a
        /// page boundary, a range that is not mapped.</exception>
        /// <exception cref="NotSupportedException">Windows (no madvise).</exception>
        public static void AdviseMemory(IntPtr address, long length, OsAdvice advice, bool posix = false)
        {
            if (address == IntPtr.Zero)
                throw new ArgumentNullException(nameof(address));
            CheckOffset(length, nameof(length));
            CheckAdvice(advice, files: false);
            NativeLibraryLoader.EnsureLoaded();
            int rc = Madvise((byte*)address, length, (int)advice, posix ? Native.ND_OS_MADVISE_POSIX : 0);
            if (rc < 0)
                throw For(rc);
        }

        // Each call into the library sits in a method of its own, reached only once it is loaded:
        // Mono binds a DllImport when it compiles the method that calls it (and keeps a failure).
        [MethodImpl(MethodImplOptions.NoInlining)]
        private static int Madvise(byte* address, long length, int advice, int flags) =>
            Native.nd_os_madvise(address, length, advice, (uint)flags);

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static long Transfer(SafeFileHandle handle, long offset, byte* p, int length, bool write)
        {
            bool added = false;
            try
            {
                long h = Enter(handle, ref added);
                long n = write ? Native.nd_os_write(h, offset, p, length) : Native.nd_os_read(h, offset, p, length);
                if (n < 0)
                    throw For(n);
                return n;
            }
            finally
            {
                if (added)
                    handle.DangerousRelease();
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static int Length(SafeFileHandle handle, long* len)
        {
            bool added = false;
            try
            {
                return Native.nd_os_length(Enter(handle, ref added), len);
            }
            finally
            {
                if (added)
                    handle.DangerousRelease();
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static int SetDirectCall(SafeFileHandle handle, int direct)
        {
            bool added = false;
            try
            {
                return Native.nd_os_set_direct(Enter(handle, ref added), direct);
            }
            finally
            {
                if (added)
                    handle.DangerousRelease();
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static int AdviseCall(SafeFileHandle handle, long offset, long length, int advice)
        {
            bool added = false;
            try
            {
                return Native.nd_os_advise(Enter(handle, ref added), offset, length, advice);
            }
            finally
            {
                if (added)
                    handle.DangerousRelease();
            }
        }

        /// <summary>The OS's handle (a descriptor, a HANDLE) with a reference taken on it for one
        /// call: it cannot be closed under the call.</summary>
        private static long Enter(SafeFileHandle handle, ref bool added)
        {
            handle.DangerousAddRef(ref added);
            return handle.DangerousGetHandle().ToInt64();
        }

        private static void Check(SafeFileHandle handle)
        {
            if (handle is null)
                throw new ArgumentNullException(nameof(handle));
            if (handle.IsInvalid)
                throw new ArgumentException("Invalid handle.", nameof(handle));
            if (handle.IsClosed)
                throw new ObjectDisposedException(null, "Cannot access a closed file.");
        }

        private static void CheckOffset(long value, string name)
        {
            if (value < 0)
                throw new ArgumentOutOfRangeException(name, value, "Non-negative number required.");
        }

        private static void CheckAdvice(OsAdvice advice, bool files)
        {
            if (advice < OsAdvice.Normal || advice > (files ? OsAdvice.NoReuse : OsAdvice.DontNeed))
                throw new ArgumentOutOfRangeException(nameof(advice), advice,
                    files ? "not an OsAdvice value" : "not an OsAdvice value for memory (NoReuse is for files)");
        }

        /// <summary>The exception for a failed nd_os_* call, on the failing thread: what .NET's own
        /// file calls throw for the same failure.</summary>
        private static Exception For(long status)
        {
            Exception e = Errors.For(status);
            switch ((int)status)
            {
                case Native.ND_E_ACCESS:
                case Native.ND_E_NOT_SUPPORTED:
                    return e; // UnauthorizedAccessException, NotSupportedException
                default:
                    // a value that is no open file, an unaligned direct transfer, an unmapped range:
                    // the OS refused an I/O, as it does for any other file call
                    return e as NativeDirException
                        ?? new NativeDirException(e.Message, (int)status, Native.nd_last_os_error());
            }
        }
    }
}
