using System;
using System.Collections.Generic;
using System.IO;
using System.IO.Pipes;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.Win32.SafeHandles;
using Xunit;

namespace NativeDir.Tests
{
    /// <summary>
    /// One contract, two implementations: each assertion runs against .NET's own
    /// <c>System.IO.RandomAccess</c> where NativeDir is its .NET 8+ build (linux-x64, Wine, qemu
    /// runs), and against NativeDir.IO.RandomAccess on nativedir where it is the netstandard2.0 or
    /// the .NET Framework build (the "netstandard2.0" run on .NET 10, the Mono run). So a result or
    /// an exception of ours that differs from the runtime's fails where ours runs. Files are opened
    /// with FileStream, as a caller of RandomAccess does.
    /// </summary>
    public sealed class RandomAccessContractTests : IDisposable
    {
        private const int Size = 100_000;
        private readonly TempDir _tmp = new();
        private readonly string _path;
        private readonly byte[] _data = Data.Make(Size, 47);

        public RandomAccessContractTests()
        {
            _path = _tmp.File("data");
            File.WriteAllBytes(_path, _data);
        }

        public void Dispose() => _tmp.Dispose();

        /// <summary>Ours where NativeDir is not its .NET 8+ build.</summary>
        internal static bool Ours { get; } = !Platform.NativeDirAsset.StartsWith(".NETCoreApp", StringComparison.Ordinal);

        private static string Which => Ours ? "NativeDir.IO.RandomAccess on nativedir" : "System.IO.RandomAccess";

        // ---- the implementation under test ----
#if NET
        private static long GetLength(SafeFileHandle h) => Ours ? NativeDir.IO.RandomAccess.GetLength(h) : System.IO.RandomAccess.GetLength(h);
        private static int Read(SafeFileHandle h, Span<byte> b, long o) => Ours ? NativeDir.IO.RandomAccess.Read(h, b, o) : System.IO.RandomAccess.Read(h, b, o);
        private static long Read(SafeFileHandle h, IReadOnlyList<Memory<byte>> b, long o) => Ours ? NativeDir.IO.RandomAccess.Read(h, b, o) : System.IO.RandomAccess.Read(h, b, o);
        private static void Write(SafeFileHandle h, ReadOnlySpan<byte> b, long o)
        {
            if (Ours)
                NativeDir.IO.RandomAccess.Write(h, b, o);
            else
                System.IO.RandomAccess.Write(h, b, o);
        }
        private static void Write(SafeFileHandle h, IReadOnlyList<ReadOnlyMemory<byte>> b, long o)
        {
            if (Ours)
                NativeDir.IO.RandomAccess.Write(h, b, o);
            else
                System.IO.RandomAccess.Write(h, b, o);
        }
        private static ValueTask<int> ReadAsync(SafeFileHandle h, Memory<byte> b, long o, CancellationToken c = default) =>
            Ours ? NativeDir.IO.RandomAccess.ReadAsync(h, b, o, c) : System.IO.RandomAccess.ReadAsync(h, b, o, c);
        private static ValueTask<long> ReadAsync(SafeFileHandle h, IReadOnlyList<Memory<byte>> b, long o, CancellationToken c = default) =>
            Ours ? NativeDir.IO.RandomAccess.ReadAsync(h, b, o, c) : System.IO.RandomAccess.ReadAsync(h, b, o, c);
        private static ValueTask WriteAsync(SafeFileHandle h, ReadOnlyMemory<byte> b, long o, CancellationToken c = default) =>
            Ours ? NativeDir.IO.RandomAccess.WriteAsync(h, b, o, c) : System.IO.RandomAccess.WriteAsync(h, b, o, c);
        private static ValueTask WriteAsync(SafeFileHandle h, IReadOnlyList<ReadOnlyMemory<byte>> b, long o, CancellationToken c = default) =>
            Ours ? NativeDir.IO.RandomAccess.WriteAsync(h, b, o, c) : System.IO.RandomAccess.WriteAsync(h, b, o, c);
#else
        private static long GetLength(SafeFileHandle h) => NativeDir.IO.RandomAccess.GetLength(h);
        private static int Read(SafeFileHandle h, Span<byte> b, long o) => NativeDir.IO.RandomAccess.Read(h, b, o);
        private static long Read(SafeFileHandle h, IReadOnlyList<Memory<byte>> b, long o) => NativeDir.IO.RandomAccess.Read(h, b, o);
        private static void Write(SafeFileHandle h, ReadOnlySpan<byte> b, long o) => NativeDir.IO.RandomAccess.Write(h, b, o);
        private static void Write(SafeFileHandle h, IReadOnlyList<ReadOnlyMemory<byte>> b, long o) => NativeDir.IO.RandomAccess.Write(h, b, o);
        private static ValueTask<int> ReadAsync(SafeFileHandle h, Memory<byte> b, long o, CancellationToken c = default) => NativeDir.IO.RandomAccess.ReadAsync(h, b, o, c);
        private static ValueTask<long> ReadAsync(SafeFileHandle h, IReadOnlyList<Memory<byte>> b, long o, CancellationToken c = default) => NativeDir.IO.RandomAccess.ReadAsync(h, b, o, c);
        private static ValueTask WriteAsync(SafeFileHandle h, ReadOnlyMemory<byte> b, long o, CancellationToken c = default) => NativeDir.IO.RandomAccess.WriteAsync(h, b, o, c);
        private static ValueTask WriteAsync(SafeFileHandle h, IReadOnlyList<ReadOnlyMemory<byte>> b, long o, CancellationToken c = default) => NativeDir.IO.RandomAccess.WriteAsync(h, b, o, c);
#endif

        private FileStream Open(FileAccess access) =>
            new(_path, FileMode.Open, access, FileShare.ReadWrite | FileShare.Delete);

        private static void Same(byte[] expected, int offset, byte[] actual, int count, string what)
        {
            for (int i = 0; i < count; i++)
                if (expected[offset + i] != actual[i])
                    Assert.Fail($"{Which}: {what}: byte {offset + i} is {actual[i]}, expected {expected[offset + i]}");
        }

        [Fact]
        public void ReadsAtOffsetsLeaveTheStreamWhereItWas()
        {
            using FileStream fs = Open(FileAccess.Read);
            fs.Seek(7, SeekOrigin.Begin);
            Assert.Equal(_data[7], fs.ReadByte()); // the stream has read ahead into its buffer
            SafeFileHandle h = fs.SafeFileHandle;
            // where the stream is now: its own count on .NET; on the .NET Framework and Mono a
            // stream whose handle was handed out goes by the OS's file pointer
            long here = fs.Position;
            var buf = new byte[4096];
            foreach (int at in new[] { 0, 1, 4095, 4096, 65_537, Size - 4096 })
            {
                Assert.Equal(buf.Length, Read(h, buf, at));
                Same(_data, at, buf, buf.Length, $"read at {at}");
                Assert.Equal(here, fs.Position);
            }
            // the stream goes on from where it was, as if nothing had read the file
            Assert.Equal(_data[here], fs.ReadByte());
            var next = new byte[10_000];
            Assert.Equal(next.Length, fs.Read(next, 0, next.Length));
            Same(_data, (int)here + 1, next, next.Length, "the stream's own read after");
        }

        [Fact]
        public void TheEndOfTheFile()
        {
            using FileStream fs = Open(FileAccess.Read);
            var buf = new byte[4096];
            Assert.Equal(100, Read(fs.SafeFileHandle, buf, Size - 100));
            Same(_data, Size - 100, buf, 100, "the last 100 bytes");
            Assert.Equal(0, Read(fs.SafeFileHandle, buf, Size));
            Assert.Equal(0, Read(fs.SafeFileHandle, buf, 1L << 40));
            Assert.Equal(0, Read(fs.SafeFileHandle, Span<byte>.Empty, 5));
            Assert.Equal(Size, GetLength(fs.SafeFileHandle));
        }

        [Fact]
        public void WritesInPlaceAndPastTheEnd()
        {
            var patch = new byte[] { 1, 2, 3, 4, 5 };
            using (FileStream fs = Open(FileAccess.ReadWrite))
            {
                fs.Seek(11, SeekOrigin.Begin);
                Write(fs.SafeFileHandle, patch, 1000);
                Write(fs.SafeFileHandle, patch, Size + 10);
                Write(fs.SafeFileHandle, ReadOnlySpan<byte>.Empty, 3);
                Assert.Equal(11, fs.Position);
                Assert.Equal(Size + 15, GetLength(fs.SafeFileHandle));
                Assert.Equal(Size + 15, fs.Length);
                var back = new byte[15];
                Assert.Equal(15, Read(fs.SafeFileHandle, back, Size));
                Assert.Equal(new byte[10].Concat(patch), back);
                // the stream's own next byte is the file's, at its own position
                Assert.Equal(_data[11], fs.ReadByte());
            }
            byte[] all = File.ReadAllBytes(_path);
            Assert.Equal(Size + 15, all.Length);
            Assert.Equal(patch, all.Skip(1000).Take(5));
            Same(_data, 0, all, 1000, "the bytes before the patch");
        }

        [Fact]
        public void ScatterAndGather()
        {
            using FileStream fs = Open(FileAccess.ReadWrite);
            var parts = new List<Memory<byte>> { new byte[3], new byte[4], new byte[50] };
            Assert.Equal(57L, Read(fs.SafeFileHandle, parts, 60));
            Same(_data, 60, parts[0].ToArray(), 3, "first part");
            Same(_data, 63, parts[1].ToArray(), 4, "second part");
            Same(_data, 67, parts[2].ToArray(), 50, "third part");
            // at the end: the parts fill up to it, and the total says where it stopped
            Assert.Equal(40L, Read(fs.SafeFileHandle, parts, Size - 40));
            Same(_data, Size - 33, parts[2].ToArray(), 33, "third part at the end");
            Assert.Equal(0L, Read(fs.SafeFileHandle, new List<Memory<byte>>(), 0));

            var gather = new List<ReadOnlyMemory<byte>> { new byte[] { 9, 8 }, Array.Empty<byte>(), new byte[] { 7, 6, 5 } };
            Write(fs.SafeFileHandle, gather, 500);
            var back = new byte[5];
            Assert.Equal(5, Read(fs.SafeFileHandle, back, 500));
            Assert.Equal(new byte[] { 9, 8, 7, 6, 5 }, back);
            Assert.Equal(0, fs.Position);
        }

        [Fact]
        public async Task AsynchronousMembers()
        {
            using FileStream fs = Open(FileAccess.ReadWrite);
            var buf = new byte[1000];
            Assert.Equal(1000, await ReadAsync(fs.SafeFileHandle, buf, 2000));
            Same(_data, 2000, buf, 1000, "ReadAsync");
            var parts = new List<Memory<byte>> { new byte[10], new byte[10] };
            Assert.Equal(15L, await ReadAsync(fs.SafeFileHandle, parts, Size - 15));
            Same(_data, Size - 5, parts[1].ToArray(), 5, "ReadAsync's second part");
            await WriteAsync(fs.SafeFileHandle, new byte[] { 42 }, 3);
            await WriteAsync(fs.SafeFileHandle, new List<ReadOnlyMemory<byte>> { new byte[] { 43 }, new byte[] { 44 } }, 4);
            var back = new byte[3];
            Assert.Equal(3, Read(fs.SafeFileHandle, back, 3));
            Assert.Equal(new byte[] { 42, 43, 44 }, back);
            Assert.Equal(0, fs.Position);

            // a token cancelled before the call: a cancelled task, nothing read
            using var cts = new CancellationTokenSource();
            cts.Cancel();
            var untouched = new byte[4];
            ValueTask<int> read = ReadAsync(fs.SafeFileHandle, untouched, 0, cts.Token);
            Assert.True(read.IsCanceled, $"{Which}: ReadAsync with a cancelled token");
            await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await read);
            Assert.Equal(new byte[4], untouched);
            ValueTask write = WriteAsync(fs.SafeFileHandle, new byte[] { 1 }, 0, cts.Token);
            Assert.True(write.IsCanceled, $"{Which}: WriteAsync with a cancelled token");
            Assert.Equal(_data[0], (byte)fs.ReadByte());

            // the argument checks throw from the call itself, not from the task
            Assert.Throws<ArgumentOutOfRangeException>(() => { _ = ReadAsync(fs.SafeFileHandle, buf, -1); });
            Assert.Throws<ArgumentNullException>(() => { _ = WriteAsync(fs.SafeFileHandle, (IReadOnlyList<ReadOnlyMemory<byte>>)null!, 0); });
        }

        [Fact]
        public void ArgumentsAndClosedHandles()
        {
            var buf = new byte[8];
            Assert.Equal("handle", Assert.Throws<ArgumentNullException>(() => Read(null!, buf, 0)).ParamName);
            Assert.Equal("handle", Assert.Throws<ArgumentNullException>(() => Write(null!, buf, 0)).ParamName);
            Assert.Equal("handle", Assert.Throws<ArgumentNullException>(() => GetLength(null!)).ParamName);
            Assert.Equal("handle", Assert.Throws<ArgumentNullException>(() => { _ = ReadAsync(null!, buf, 0); }).ParamName);

            using (var invalid = new SafeFileHandle((IntPtr)(-1), ownsHandle: false))
            {
                Assert.Equal("handle", Assert.Throws<ArgumentException>(() => Read(invalid, buf, 0)).ParamName);
                Assert.Equal("handle", Assert.Throws<ArgumentException>(() => GetLength(invalid)).ParamName);
            }

            SafeFileHandle closed;
            using (FileStream fs = Open(FileAccess.ReadWrite))
            {
                Assert.Equal("fileOffset", Assert.Throws<ArgumentOutOfRangeException>(() => Read(fs.SafeFileHandle, buf, -1)).ParamName);
                Assert.Equal("fileOffset", Assert.Throws<ArgumentOutOfRangeException>(() => Write(fs.SafeFileHandle, buf, -1)).ParamName);
                Assert.Equal("buffers", Assert.Throws<ArgumentNullException>(() => Read(fs.SafeFileHandle, (IReadOnlyList<Memory<byte>>)null!, 0)).ParamName);
                Assert.Equal("buffers", Assert.Throws<ArgumentNullException>(() => Write(fs.SafeFileHandle, (IReadOnlyList<ReadOnlyMemory<byte>>)null!, 0)).ParamName);
                closed = fs.SafeFileHandle;
            }
            Assert.True(closed.IsClosed);
            Assert.Throws<ObjectDisposedException>(() => Read(closed, buf, 0));
            Assert.Throws<ObjectDisposedException>(() => Read(closed, buf, -1)); // closed before the offset
            Assert.Throws<ObjectDisposedException>(() => Write(closed, buf, 0));
            Assert.Throws<ObjectDisposedException>(() => GetLength(closed));
            Assert.Throws<ObjectDisposedException>(() => { _ = ReadAsync(closed, buf, 0); });
        }

        [Fact]
        public void AccessTheHandleWasNotOpenedWith()
        {
            var buf = new byte[8];
            using (FileStream w = Open(FileAccess.Write))
            {
                Assert.Throws<UnauthorizedAccessException>(() => Read(w.SafeFileHandle, buf, 0));
                Assert.Equal(Size, GetLength(w.SafeFileHandle));
            }
            using (FileStream r = Open(FileAccess.Read))
                Assert.Throws<UnauthorizedAccessException>(() => Write(r.SafeFileHandle, new byte[] { 1 }, 0));
            Assert.Equal(_data, File.ReadAllBytes(_path)); // nothing was written
        }

        [Fact]
        public void APipeCannotSeek()
        {
            using var server = new AnonymousPipeServerStream(PipeDirection.Out);
            using var client = new AnonymousPipeClientStream(PipeDirection.In, server.ClientSafePipeHandle);
            using var writeEnd = new SafeFileHandle(server.SafePipeHandle.DangerousGetHandle(), ownsHandle: false);
            using var readEnd = new SafeFileHandle(client.SafePipeHandle.DangerousGetHandle(), ownsHandle: false);
            var buf = new byte[4];
            Assert.Throws<NotSupportedException>(() => Write(writeEnd, buf, 0));
            Assert.Throws<NotSupportedException>(() => Write(writeEnd, buf, -1)); // before the offset's check
            Assert.Throws<NotSupportedException>(() => Write(writeEnd, ReadOnlySpan<byte>.Empty, 0));
            Assert.Throws<NotSupportedException>(() => Read(readEnd, buf, 0));
            Assert.Throws<NotSupportedException>(() => GetLength(readEnd));
        }

        [Fact]
        public void ThreadsReadOneHandleAtOnce()
        {
            using FileStream fs = Open(FileAccess.Read);
            fs.Seek(77, SeekOrigin.Begin);
            SafeFileHandle h = fs.SafeFileHandle;
            string? bad = null;
            var threads = Enumerable.Range(0, 4).Select(t => new Thread(() =>
            {
                var rnd = new Random(t + 1);
                var b = new byte[512];
                for (int i = 0; i < 2000 && bad == null; i++)
                {
                    int at = rnd.Next(Size);
                    int want = rnd.Next(1, b.Length + 1);
                    int expect = Math.Min(want, Size - at);
                    int n = Read(h, b.AsSpan(0, want), at);
                    if (n != expect)
                        bad = $"thread {t}: {n} bytes at {at}, expected {expect}";
                    for (int j = 0; j < n && bad == null; j++)
                        if (b[j] != _data[at + j])
                            bad = $"thread {t}: byte {at + j} wrong";
                }
            })).ToList();
            threads.ForEach(t => t.Start());
            threads.ForEach(t => t.Join());
            Assert.True(bad == null, $"{Which}: {bad}");
            Assert.Equal(77, fs.Position);
            Assert.Equal(_data[77], fs.ReadByte());
        }

        [Fact]
        public void OffsetsPastFourGibibytes()
        {
            long far = (5L << 30) + 12345;
            var mark = System.Text.Encoding.ASCII.GetBytes("past four gibibytes");
            using FileStream fs = Open(FileAccess.ReadWrite);
            try
            {
                Write(fs.SafeFileHandle, mark, far);
                Assert.Equal(far + mark.Length, GetLength(fs.SafeFileHandle));
                var back = new byte[mark.Length];
                Assert.Equal(mark.Length, Read(fs.SafeFileHandle, back, far));
                Assert.Equal(mark, back);
                // the offset's low 32 bits are a hole in the file: zeros, not the mark
                Assert.Equal(mark.Length, Read(fs.SafeFileHandle, back, far & 0xffffffff));
                Assert.Equal(new byte[mark.Length], back);
            }
            finally
            {
                fs.SetLength(Size); // the space back before the directory goes
            }
        }
    }
}
