using System;
using System.Buffers;
using System.IO;
using System.Linq;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using NativeDir.Testing;
using Xunit;

namespace NativeDir.Tests
{
    /// <summary>NativeInput.ReadAsync and NativeRing: bytes, lengths at the end, the queue of a
    /// full ring, cancellation, disposal with reads in flight, and no allocation per cached read.
    /// Reads of a direct (Merge) input into block-aligned memory always go through the kernel, so
    /// those tests exercise the asynchronous path; a test can hold completions back
    /// (PauseReapingForTest) to keep a read in flight on purpose.</summary>
    public class RingTests : DataFileTests
    {
        private const int Size = 1 << 20;
        private const int Block = 4096;
        private static readonly TimeSpan Patience = TimeSpan.FromSeconds(20);

        public RingTests() : base(Size, seed: 23) { }

        public static TheoryData<IoOptions, bool> Strategies => new()
        {
            { IoOptions.None, false }, { IoOptions.Mapped, false }, { IoOptions.Merge, false },
            { IoOptions.None, true }, { IoOptions.Mapped, true }, { IoOptions.Merge, true },
        };

        [Theory]
        [MemberData(nameof(Strategies))]
        public async Task ReadsTheFileInAnyChunks(IoOptions options, bool forceThreads)
        {
            using var ring = new NativeRing(8, forceThreads);
            using NativeInput input = _dir.OpenInput("data", options);
            var copy = new byte[Size];
            int pos = 0, chunk = 1;
            while (pos < Size)
            {
                int n = await ring.ReadAsync(input, pos, copy.AsMemory(pos, Math.Min(chunk, Size - pos)));
                Assert.Equal(Math.Min(chunk, Size - pos), n);
                pos += n;
                chunk = chunk * 3 + 1; // 1, 4, 13, ... odd sizes at odd offsets
            }
            Assert.Equal(_data, copy);
            // the end: short, then nothing
            var tail = new byte[100];
            Assert.Equal(10, await ring.ReadAsync(input, Size - 10, tail));
            Assert.Equal(_data.AsSpan(Size - 10).ToArray(), tail.AsSpan(0, 10).ToArray());
            Assert.Equal(0, await ring.ReadAsync(input, Size, tail));
            Assert.Equal(0, await ring.ReadAsync(input, Size + 12345, tail));
            Assert.Equal(0, await ring.ReadAsync(input, 0, Memory<byte>.Empty));
            Assert.Throws<ArgumentOutOfRangeException>(() => ring.ReadAsync(input, -1, tail));
        }

        [Fact]
        public async Task SharedRingServesNativeInputReadAsync()
        {
            using NativeInput input = _dir.OpenInput("data");
            var buf = new byte[5000];
            Assert.Equal(5000, await input.ReadAsync(12345, buf));
            Assert.Equal(_data.AsSpan(12345, 5000).ToArray(), buf);
            Assert.Same(NativeRing.Shared, NativeRing.Shared);
            Assert.True(NativeRing.Shared.Backend is RingBackend.IoUring or RingBackend.Threads,
                $"unexpected backend {NativeRing.Shared.Backend} on Linux");
            using var threads = new NativeRing(4, forceThreads: true);
            Assert.Equal(RingBackend.Threads, threads.Backend);
            Assert.Equal(4, threads.Depth);
        }

        [Theory]
        [InlineData(false)]
        [InlineData(true)]
        public async Task ManyReadsThroughTheKernelOnASmallRingQueueAndComplete(bool forceThreads)
        {
            using var ring = new NativeRing(4, forceThreads);
            using NativeInput input = _dir.OpenInput("data", IoOptions.Merge);
            const int reads = 96; // 24x the depth: most wait in the ring's queue
            using var mem = new AlignedMemory(reads * Block);
            var offsets = Enumerable.Range(0, reads).Select(i => (long)((i * 37) % (Size / Block)) * Block).ToArray();
            var tasks = new Task<int>[reads];
            for (int i = 0; i < reads; i++)
                tasks[i] = ring.ReadAsync(input, offsets[i], mem.Memory.Slice(i * Block, Block)).AsTask();
            int[] results = await Task.WhenAll(tasks).WaitAsync(Patience);
            Assert.All(results, r => Assert.Equal(Block, r));
            for (int i = 0; i < reads; i++)
                Assert.True(mem.Memory.Span.Slice(i * Block, Block).SequenceEqual(_data.AsSpan((int)offsets[i], Block)),
                    $"read {i} at {offsets[i]} has the wrong bytes");
            Assert.Equal(0, ring.InFlightForTest);
        }

        [Fact]
        public async Task ManyThreadsReadAtOnce()
        {
            using var ring = new NativeRing(16);
            using NativeInput direct = _dir.OpenInput("data", IoOptions.Merge);
            using NativeInput buffered = _dir.OpenInput("data");
            await Task.WhenAll(Enumerable.Range(0, 8).Select(t => Task.Run(async () =>
            {
                using var mem = new AlignedMemory(Block);
                var rnd = new Random(t);
                for (int k = 0; k < 200; k++)
                {
                    long off = rnd.Next(Size / Block) * (long)Block;
                    NativeInput input = (k & 1) == 0 ? direct : buffered;
                    Assert.Equal(Block, await ring.ReadAsync(input, off, mem.Memory));
                    Assert.True(mem.Memory.Span.SequenceEqual(_data.AsSpan((int)off, Block)));
                }
            }))).WaitAsync(Patience);
        }

        [DllImport("libc", EntryPoint = "posix_fadvise")]
        private static extern int PosixFadvise(int fd, long offset, long len, int advice);

        [Fact]
        public async Task UncachedBytesComeThroughTheKernelAfterTheCachedPrefix()
        {
            using var ring = new NativeRing(4);
            var buf = new byte[1 << 18];
            const int rounds = 8;
            for (int round = 0; round < rounds; round++)
            {
                if (!OperatingSystem.IsWindows())
                    DropCache(_tmp.File("data"));
                using NativeInput input = _dir.OpenInput("data", IoOptions.Random);
                long off = round * 100_000L + 7;
                Assert.Equal(buf.Length, await ring.ReadAsync(input, off, buf).AsTask().WaitAsync(Patience));
                Assert.True(buf.AsSpan().SequenceEqual(_data.AsSpan((int)off, buf.Length)), $"round {round}");
            }
            if (OperatingSystem.IsWindows())
            {
                // Windows has no read that refuses to wait for the device (nd__os_pread_cached
                // takes nothing there): every ring read goes to the worker threads, cached or not
                Assert.Equal(rounds, ring.SubmittedForTest);
                return;
            }
            Assert.True(ring.SubmittedForTest > 0, "dropping the cache never made a read wait for the device");
        }

        /// <summary>Flushes a file and asks Linux to drop it from the page cache (POSIX only:
        /// on Windows no ring read is served from the cache during the call).</summary>
        private static void DropCache(string path)
        {
            using var f = new FileStream(path, FileMode.Open, FileAccess.ReadWrite);
            f.Flush(flushToDisk: true); // dirty pages are never dropped
            Assert.Equal(0, PosixFadvise((int)f.SafeFileHandle.DangerousGetHandle(), 0, 0, 4 /* POSIX_FADV_DONTNEED */));
        }

        [Fact]
        public async Task AlreadyCancelledTokenReadsNothing()
        {
            using var ring = new NativeRing(4);
            using NativeInput input = _dir.OpenInput("data");
            var buf = new byte[16];
            ValueTask<int> t = ring.ReadAsync(input, 0, buf, new CancellationToken(true));
            Assert.True(t.IsCanceled);
            await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await t);
            Assert.All(buf, b => Assert.Equal(0, b));
        }

        [Fact]
        public async Task CancellingAQueuedReadCompletesItAtOnceAndAKernelReadWhenItIsDone()
        {
            using var ring = new NativeRing(1);
            using NativeInput input = _dir.OpenInput("data", IoOptions.Merge);
            using var mem = new AlignedMemory(2 * Block);
            using var ctsA = new CancellationTokenSource();
            using var ctsB = new CancellationTokenSource();
            ring.PauseReapingForTest(true, input);
            ValueTask<int> a = ring.ReadAsync(input, 5 * Block, mem.Memory.Slice(0, Block), ctsA.Token);
            ValueTask<int> b = ring.ReadAsync(input, 9 * Block, mem.Memory.Slice(Block, Block), ctsB.Token);
            Assert.Equal(2, ring.InFlightForTest); // a in the kernel, b in the queue
            ctsB.Cancel();
            await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await b.AsTask().WaitAsync(Patience));
            Assert.Equal(1, ring.InFlightForTest);
            ctsA.Cancel();
            Task<int> aTask = a.AsTask();
            await Task.Delay(100);
            Assert.False(aTask.IsCompleted, "a read in the kernel completed while its completion was held back");
            ring.PauseReapingForTest(false);
            await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await aTask.WaitAsync(Patience));
            // the kernel finished a's read before it reported the cancellation; b never ran
            Assert.True(mem.Memory.Span.Slice(0, Block).SequenceEqual(_data.AsSpan(5 * Block, Block)));
            Assert.True(mem.Memory.Span.Slice(Block, Block).ToArray().All(x => x == 0));
            // the ring still works
            Assert.Equal(Block, await ring.ReadAsync(input, 0, mem.Memory.Slice(0, Block)));
        }

        [Fact]
        public async Task DisposingTheRingFinishesKernelReadsAndFailsQueuedOnes()
        {
            var ring = new NativeRing(1);
            using NativeInput input = _dir.OpenInput("data", IoOptions.Merge);
            using var mem = new AlignedMemory(2 * Block);
            ring.PauseReapingForTest(true, input);
            Task<int> a = ring.ReadAsync(input, 3 * Block, mem.Memory.Slice(0, Block)).AsTask();
            Task<int> b = ring.ReadAsync(input, 7 * Block, mem.Memory.Slice(Block, Block)).AsTask();
            ring.Dispose();
            ring.Dispose();
            // a was in the kernel: the close waited for it, then either the completion thread
            // delivered it or the close dropped its completion and Dispose failed it
            try
            {
                Assert.Equal(Block, await a.WaitAsync(Patience));
            }
            catch (ObjectDisposedException)
            {
            }
            Assert.True(mem.Memory.Span.Slice(0, Block).SequenceEqual(_data.AsSpan(3 * Block, Block)));
            // b was queued: never submitted
            await Assert.ThrowsAsync<ObjectDisposedException>(async () => await b.WaitAsync(Patience));
            Assert.True(mem.Memory.Span.Slice(Block, Block).ToArray().All(x => x == 0));
            Assert.Throws<ObjectDisposedException>(() => ring.ReadAsync(input, 0, mem.Memory.Slice(0, Block)));
        }

        [Fact]
        public async Task DisposingTheRingWithReadsInTheKernelNeverLosesABuffer()
        {
            // unpaused: the reads race the close; each either completes with the right bytes or
            // fails with ObjectDisposedException, and no buffer is written after its task ends
            for (int round = 0; round < 20; round++)
            {
                var ring = new NativeRing(8);
                using NativeInput input = _dir.OpenInput("data", IoOptions.Merge);
                var mem = new AlignedMemory(16 * Block);
                var tasks = Enumerable.Range(0, 16)
                    .Select(i => ring.ReadAsync(input, i * 2L * Block, mem.Memory.Slice(i * Block, Block)).AsTask())
                    .ToArray();
                ring.Dispose();
                for (int i = 0; i < tasks.Length; i++)
                {
                    try
                    {
                        Assert.Equal(Block, await tasks[i].WaitAsync(Patience));
                        Assert.True(mem.Memory.Span.Slice(i * Block, Block).SequenceEqual(_data.AsSpan(i * 2 * Block, Block)));
                    }
                    catch (ObjectDisposedException)
                    {
                    }
                }
                mem.Dispose(); // freed at once: a late write would be a use after free
            }
        }

        [Fact]
        public async Task DisposingTheInputWithReadsInFlightLetsThemComplete()
        {
            using var ring = new NativeRing(1);
            NativeInput input = _dir.OpenInput("data", IoOptions.Merge);
            using var mem = new AlignedMemory(2 * Block);
            ring.PauseReapingForTest(true, input);
            Task<int> a = ring.ReadAsync(input, 2 * Block, mem.Memory.Slice(0, Block)).AsTask();
            Task<int> b = ring.ReadAsync(input, 6 * Block, mem.Memory.Slice(Block, Block)).AsTask(); // queued
            input.Dispose();
            Assert.Throws<ObjectDisposedException>(() => ring.ReadAsync(input, 0, mem.Memory.Slice(0, Block)));
            ring.PauseReapingForTest(false);
            Assert.Equal(Block, await a.WaitAsync(Patience));
            Assert.Equal(Block, await b.WaitAsync(Patience));
            Assert.True(mem.Memory.Span.Slice(0, Block).SequenceEqual(_data.AsSpan(2 * Block, Block)));
            Assert.True(mem.Memory.Span.Slice(Block, Block).SequenceEqual(_data.AsSpan(6 * Block, Block)));
            Assert.True(input.NativeReleased);
        }

        [Theory]
        [InlineData(IoOptions.None)]
        [InlineData(IoOptions.Mapped)]
        public async Task DisposingTheInputDuringCachedReadsGivesBytesOrObjectDisposed(IoOptions options)
        {
            // The cached path takes no SafeHandle reference (as ReadBytes does not): a Dispose on
            // another thread between the checks and the native call must end in the library
            // refusing the closed handle, never in a crash or in bytes that are not the file's.
            using var ring = new NativeRing(8);
            for (int round = 0; round < 40; round++)
            {
                NativeInput input = _dir.OpenInput("data", options);
                var buf = new byte[Block];
                int reads = 0, refused = 0;
                using var started = new ManualResetEventSlim();
                Task reader = Task.Run(async () =>
                {
                    for (long i = 0; ; i++)
                    {
                        long off = i * 7 * Block % (Size - Block);
                        int n;
                        try
                        {
                            n = await ring.ReadAsync(input, off, buf);
                        }
                        catch (ObjectDisposedException)
                        {
                            refused++;
                            return;
                        }
                        Assert.Equal(Block, n);
                        Assert.True(buf.AsSpan().SequenceEqual(_data.AsSpan((int)off, Block)), $"bytes at {off}");
                        reads++;
                        if (reads == 8)
                            started.Set();
                    }
                });
                Assert.True(started.Wait(Patience));
                Thread.SpinWait(round * 500); // a different moment of the reads each round
                input.Dispose();
                await reader.WaitAsync(Patience);
                Assert.Equal(1, refused);
                Assert.True(reads >= 8);
            }
        }

        [Fact]
        public async Task MisusedValueTasksNeverFreeAReadInFlight()
        {
            using var ring = new NativeRing(2);
            using NativeInput input = _dir.OpenInput("data", IoOptions.Merge);
            using var mem = new AlignedMemory(2 * Block);
            ring.PauseReapingForTest(true, input);
            ValueTask<int> early = ring.ReadAsync(input, 4 * Block, mem.Memory.Slice(0, Block));
            // Result before completion: refused, and the read stays in flight
            Assert.Throws<InvalidOperationException>(() => ReadResult(early));
            Assert.Equal(1, ring.InFlightForTest);
            ring.PauseReapingForTest(false);
            Assert.Equal(Block, await early);
            Assert.True(mem.Memory.Span.Slice(0, Block).SequenceEqual(_data.AsSpan(4 * Block, Block)));
            // a second await of the same ValueTask is refused: the op went back to the pool once
            await Assert.ThrowsAsync<InvalidOperationException>(async () => await early);
            // and the pool hands out working ops: two reads in flight at once get two of them
            ValueTask<int> a = ring.ReadAsync(input, 8 * Block, mem.Memory.Slice(0, Block));
            ValueTask<int> b = ring.ReadAsync(input, 9 * Block, mem.Memory.Slice(Block, Block));
            Assert.Equal(Block, await a);
            Assert.Equal(Block, await b);
            Assert.True(mem.Memory.Span.SequenceEqual(_data.AsSpan(8 * Block, 2 * Block)));
        }

        /// <summary>What `.Result` does on a ValueTask: outside an async method, so no analyzer
        /// takes it for a blocking wait in a test.</summary>
        private static int ReadResult(ValueTask<int> t) => t.GetAwaiter().GetResult();

        [Fact]
        public void ArgumentsAreChecked()
        {
            Assert.Throws<ArgumentOutOfRangeException>(() => new NativeRing(0));
            Assert.Throws<ArgumentOutOfRangeException>(() => new NativeRing(4097));
            using var ring = new NativeRing(2);
            Assert.Throws<ArgumentNullException>(() => ring.ReadAsync(null!, 0, new byte[1]));
        }

        [Fact]
        public async Task CachedReadsAllocateNothing()
        {
            if (OperatingSystem.IsWindows())
                Assert.Skip("Windows has no read that refuses to wait for the device: no ring read completes during the call, so there is no cached path to measure (every read goes to the worker threads)");
            using NativeInput input = _dir.OpenInput("data");
            var buf = new byte[Block];
            for (int i = 0; i < 256; i++) // warm up: the shared ring, the JIT, every block read below
                await input.ReadAsync(i * (long)Block, buf);
            // whether the cached path reads anything here: a ring of its own counts the reads it
            // had to send to the kernel (whether such a read is done by the time the caller
            // looks is a race, so IsCompleted cannot tell)
            using (var probe = new NativeRing(2))
            {
                Assert.Equal(Block, await probe.ReadAsync(input, 0, buf));
                if (probe.SubmittedForTest != 0)
                    Emulator.SkipUnderQemu("qemu-user refuses preadv2's RWF_NOWAIT (EOPNOTSUPP in qemu 7.2), so no ring read completes during the call and there is no cached path to measure (the C suite's test_read_cached skips for the same reason)");
            }
            // A pass counts only if every read in it was served from the page cache: a machine
            // may evict the file's pages at any time (the development VM pages out memory on its
            // own), and a read that then goes to the kernel rents its state from the ring's pool
            // (a new one while the pool is empty) and may complete on another thread, which is
            // not what this test measures. The shared ring's counter also moves with other test
            // classes' reads, which only costs a retry.
            // The verdict is the least of three clean passes, as the benchmark's allocation probe
            // takes the least of three invocations: an allocation per read is in every pass (2000
            // reads, >= 24 B each), while a one-off on this thread lands in one pass only. CI saw
            // such a one-off twice, 7256 B in a clean pass both times (the second after the
            // eviction above was ruled out); its source was not found, and it is not per read.
            NativeRing shared = NativeRing.Shared;
            var clean = new System.Collections.Generic.List<long>();
            long sent = 0;
            for (int pass = 0; pass < 20 && clean.Count < 3; pass++)
            {
                long submitted = shared.SubmittedForTest;
                long before = GC.GetAllocatedBytesForCurrentThread();
                int total = 0;
                for (int i = 0; i < 2000; i++)
                {
                    ValueTask<int> t = input.ReadAsync((i % 256) * (long)Block, buf);
                    // only a read sent to the kernel may still be pending (the pass then does not
                    // count, and may go on on another thread)
                    if (!t.IsCompletedSuccessfully)
                        Assert.NotEqual(submitted, shared.SubmittedForTest);
                    total += await t; // a cached read is complete: no suspension, nothing allocated
                }
                long bytes = GC.GetAllocatedBytesForCurrentThread() - before;
                Assert.Equal(2000 * Block, total);
                sent = shared.SubmittedForTest - submitted;
                if (sent == 0)
                    clean.Add(bytes);
            }
            Assert.True(clean.Count > 0, $"no pass of 2000 reads was served wholly from the page cache ({sent} reads went to the kernel in the last)");
            Assert.True(clean.Min() == 0, $"every clean pass of 2000 cached reads allocated: {string.Join(", ", clean)} B");
        }

        /// <summary>Page-aligned native memory as Memory&lt;byte&gt; (direct I/O needs the
        /// alignment); freed at Dispose.</summary>
        private sealed unsafe class AlignedMemory : MemoryManager<byte>
        {
            private byte* _p;
            private readonly int _length;

            public AlignedMemory(int length)
            {
                _length = length;
                _p = (byte*)NativeMemory.AlignedAlloc((nuint)length, Block);
                new Span<byte>(_p, length).Clear();
            }

            public override Span<byte> GetSpan() => new(_p, _length);

            public override MemoryHandle Pin(int elementIndex = 0) => new(_p + elementIndex);

            public override void Unpin() { }

            protected override void Dispose(bool disposing)
            {
                if (_p != null)
                {
                    NativeMemory.AlignedFree(_p);
                    _p = null;
                }
            }

            public void Dispose() => ((IDisposable)this).Dispose();
        }
    }
}
