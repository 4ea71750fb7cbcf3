using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.Win32.SafeHandles;

namespace NativeDir.IO
{
    /// <summary>
    /// .NET's <c>System.IO.RandomAccess</c> for every target framework: positional reads and writes
    /// on a <see cref="SafeFileHandle"/> (from <see cref="System.IO.FileStream.SafeFileHandle"/>)
    /// that leave the file pointer, and so the stream's position, where they were, with the same
    /// members, results and exceptions. On .NET 8 and later each member is the runtime's own
    /// (a call straight through); on netstandard2.0 and the .NET Framework, which have none, each
    /// is one call into nativedir (pread/pwrite on POSIX, ReadFile/WriteFile at an offset on
    /// Windows: <see cref="OsFile"/>), so threads reading one file need no lock around a seek and
    /// a read. A library that targets both writes <c>RandomAccess.Read(handle, buffer, offset)</c>
    /// once, against this class.
    /// <para>Exceptions, checked in this order as .NET does: a null handle
    /// <see cref="ArgumentNullException"/>; an invalid one <see cref="ArgumentException"/>; a
    /// closed one <see cref="ObjectDisposedException"/>; one that cannot seek (a pipe, a socket)
    /// <see cref="NotSupportedException"/>; a negative offset
    /// <see cref="ArgumentOutOfRangeException"/>; a null list of buffers
    /// <see cref="ArgumentNullException"/>; a read on a handle opened without read access, or a
    /// write without write access, <see cref="UnauthorizedAccessException"/>; any other failure an
    /// <see cref="System.IO.IOException"/>. The asynchronous members throw the argument checks
    /// before they return, and run the transfer on the thread pool (these frameworks have no
    /// asynchronous positional I/O on a handle); a token cancelled before the call gives a
    /// cancelled task.</para>
    /// </summary>
    public static class RandomAccess
    {
#if NET
        /// <summary>The file's length in bytes.</summary>
        public static long GetLength(SafeFileHandle handle) => System.IO.RandomAccess.GetLength(handle);

        /// <summary>Reads up to <c>buffer.Length</c> bytes at <paramref name="fileOffset"/>: the
        /// count, fewer only where the file ends, 0 at or past its end.</summary>
        public static int Read(SafeFileHandle handle, Span<byte> buffer, long fileOffset) =>
            System.IO.RandomAccess.Read(handle, buffer, fileOffset);

        /// <summary>Reads into each buffer in turn from <paramref name="fileOffset"/> on: the
        /// total, which stops short only where the file ends.</summary>
        public static long Read(SafeFileHandle handle, IReadOnlyList<Memory<byte>> buffers, long fileOffset) =>
            System.IO.RandomAccess.Read(handle, buffers, fileOffset);

        /// <summary>Writes all of <paramref name="buffer"/> at <paramref name="fileOffset"/>.</summary>
        public static void Write(SafeFileHandle handle, ReadOnlySpan<byte> buffer, long fileOffset) =>
            System.IO.RandomAccess.Write(handle, buffer, fileOffset);

        /// <summary>Writes each buffer in turn from <paramref name="fileOffset"/> on.</summary>
        public static void Write(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset) =>
            System.IO.RandomAccess.Write(handle, buffers, fileOffset);

        /// <summary><see cref="Read(SafeFileHandle, Span{byte}, long)"/>, asynchronously.</summary>
        public static ValueTask<int> ReadAsync(SafeFileHandle handle, Memory<byte> buffer, long fileOffset,
            CancellationToken cancellationToken = default) =>
            System.IO.RandomAccess.ReadAsync(handle, buffer, fileOffset, cancellationToken);

        /// <summary><see cref="Read(SafeFileHandle, IReadOnlyList{Memory{byte}}, long)"/>, asynchronously.</summary>
        public static ValueTask<long> ReadAsync(SafeFileHandle handle, IReadOnlyList<Memory<byte>> buffers, long fileOffset,
            CancellationToken cancellationToken = default) =>
            System.IO.RandomAccess.ReadAsync(handle, buffers, fileOffset, cancellationToken);

        /// <summary><see cref="Write(SafeFileHandle, ReadOnlySpan{byte}, long)"/>, asynchronously.</summary>
        public static ValueTask WriteAsync(SafeFileHandle handle, ReadOnlyMemory<byte> buffer, long fileOffset,
            CancellationToken cancellationToken = default) =>
            System.IO.RandomAccess.WriteAsync(handle, buffer, fileOffset, cancellationToken);

        /// <summary><see cref="Write(SafeFileHandle, IReadOnlyList{ReadOnlyMemory{byte}}, long)"/>, asynchronously.</summary>
        public static ValueTask WriteAsync(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset,
            CancellationToken cancellationToken = default) =>
            System.IO.RandomAccess.WriteAsync(handle, buffers, fileOffset, cancellationToken);
#else
        /// <summary>The file's length in bytes.</summary>
        public static long GetLength(SafeFileHandle handle)
        {
            ValidateInput(handle, 0);
            return OsFile.GetLength(handle);
        }

        /// <summary>Reads up to <c>buffer.Length</c> bytes at <paramref name="fileOffset"/>: the
        /// count, fewer only where the file ends, 0 at or past its end.</summary>
        public static int Read(SafeFileHandle handle, Span<byte> buffer, long fileOffset)
        {
            ValidateInput(handle, fileOffset);
            return OsFile.Read(handle, buffer, fileOffset);
        }

        /// <summary>Reads into each buffer in turn from <paramref name="fileOffset"/> on: the
        /// total, which stops short only where the file ends.</summary>
        public static long Read(SafeFileHandle handle, IReadOnlyList<Memory<byte>> buffers, long fileOffset)
        {
            ValidateInput(handle, fileOffset);
            ValidateBuffers(buffers);
            return ReadAll(handle, buffers, fileOffset);
        }

        /// <summary>Writes all of <paramref name="buffer"/> at <paramref name="fileOffset"/>.</summary>
        public static void Write(SafeFileHandle handle, ReadOnlySpan<byte> buffer, long fileOffset)
        {
            ValidateInput(handle, fileOffset);
            WriteOne(handle, buffer, fileOffset);
        }

        /// <summary>Writes each buffer in turn from <paramref name="fileOffset"/> on.</summary>
        public static void Write(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset)
        {
            ValidateInput(handle, fileOffset);
            ValidateBuffers(buffers);
            WriteAll(handle, buffers, fileOffset);
        }

        /// <summary><see cref="Read(SafeFileHandle, Span{byte}, long)"/>, asynchronously.</summary>
        public static ValueTask<int> ReadAsync(SafeFileHandle handle, Memory<byte> buffer, long fileOffset,
            CancellationToken cancellationToken = default)
        {
            ValidateInput(handle, fileOffset);
            if (cancellationToken.IsCancellationRequested)
                return ValueTask.FromCanceled<int>(cancellationToken);
            return new ValueTask<int>(Run(() => OsFile.Read(handle, buffer.Span, fileOffset), cancellationToken));
        }

        /// <summary><see cref="Read(SafeFileHandle, IReadOnlyList{Memory{byte}}, long)"/>, asynchronously.</summary>
        public static ValueTask<long> ReadAsync(SafeFileHandle handle, IReadOnlyList<Memory<byte>> buffers, long fileOffset,
            CancellationToken cancellationToken = default)
        {
            ValidateInput(handle, fileOffset);
            ValidateBuffers(buffers);
            if (cancellationToken.IsCancellationRequested)
                return ValueTask.FromCanceled<long>(cancellationToken);
            return new ValueTask<long>(Run(() => ReadAll(handle, buffers, fileOffset), cancellationToken));
        }

        /// <summary><see cref="Write(SafeFileHandle, ReadOnlySpan{byte}, long)"/>, asynchronously.</summary>
        public static ValueTask WriteAsync(SafeFileHandle handle, ReadOnlyMemory<byte> buffer, long fileOffset,
            CancellationToken cancellationToken = default)
        {
            ValidateInput(handle, fileOffset);
            if (cancellationToken.IsCancellationRequested)
                return new ValueTask(Task.FromCanceled(cancellationToken));
            return new ValueTask(Run(() => { WriteOne(handle, buffer.Span, fileOffset); return 0; }, cancellationToken));
        }

        /// <summary><see cref="Write(SafeFileHandle, IReadOnlyList{ReadOnlyMemory{byte}}, long)"/>, asynchronously.</summary>
        public static ValueTask WriteAsync(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset,
            CancellationToken cancellationToken = default)
        {
            ValidateInput(handle, fileOffset);
            ValidateBuffers(buffers);
            if (cancellationToken.IsCancellationRequested)
                return new ValueTask(Task.FromCanceled(cancellationToken));
            return new ValueTask(Run(() => { WriteAll(handle, buffers, fileOffset); return 0; }, cancellationToken));
        }

        private static Task<T> Run<T>(Func<T> transfer, CancellationToken cancellationToken) =>
            Task.Factory.StartNew(transfer, cancellationToken, TaskCreationOptions.DenyChildAttach, TaskScheduler.Default);

        private static long ReadAll(SafeFileHandle handle, IReadOnlyList<Memory<byte>> buffers, long fileOffset)
        {
            long total = 0;
            for (int i = 0; i < buffers.Count; i++)
            {
                Span<byte> b = buffers[i].Span;
                int n = OsFile.Read(handle, b, fileOffset + total);
                total += n;
                if (n < b.Length)
                    break; // the end of the file
            }
            return total;
        }

        private static void WriteOne(SafeFileHandle handle, ReadOnlySpan<byte> buffer, long fileOffset)
        {
            // the library writes nothing for nothing; the runtime still refuses a pipe
            if (buffer.IsEmpty && !OsFile.CanSeek(handle))
                throw Unseekable();
            OsFile.Write(handle, buffer, fileOffset);
        }

        private static void WriteAll(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset)
        {
            long at = fileOffset;
            for (int i = 0; i < buffers.Count; i++)
            {
                ReadOnlySpan<byte> b = buffers[i].Span;
                WriteOne(handle, b, at);
                at += b.Length;
            }
        }

        /// <summary>.NET's checks, in its order. Whether the file can seek is asked of the OS only
        /// when it decides between two exceptions: otherwise the transfer itself says so.</summary>
        private static void ValidateInput(SafeFileHandle handle, long fileOffset)
        {
            if (handle is null)
                throw new ArgumentNullException(nameof(handle));
            if (handle.IsInvalid)
                throw new ArgumentException("Invalid handle.", nameof(handle));
            if (handle.IsClosed)
                throw new ObjectDisposedException(null, "Cannot access a closed file.");
            if (fileOffset < 0)
            {
                if (!OsFile.CanSeek(handle))
                    throw Unseekable();
                throw new ArgumentOutOfRangeException(nameof(fileOffset), fileOffset, "Non-negative number required.");
            }
        }

        private static void ValidateBuffers<T>(IReadOnlyList<T> buffers)
        {
            if (buffers is null)
                throw new ArgumentNullException(nameof(buffers));
        }

        private static NotSupportedException Unseekable() => new("Stream does not support seeking.");
#endif
    }
}
