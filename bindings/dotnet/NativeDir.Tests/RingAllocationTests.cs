using System;
using System.Runtime.InteropServices;
using System.Threading.Tasks;
using Xunit;

namespace NativeDir.Tests
{
    /// <summary>Tests that count every thread's allocations (GC.GetTotalAllocatedBytes), as
    /// BenchmarkDotNet's MemoryDiagnoser does: nothing else may run meanwhile.</summary>
    [CollectionDefinition(Name, DisableParallelization = true)]
    public sealed class WholeProcessAllocationCollection
    {
        public const string Name = "whole-process allocations";
    }

    /// <summary>
    /// What a ReadAsync that goes to the kernel allocates, on every thread: the caller's, the
    /// ring's completion thread and the thread pool that runs the continuation. A read that
    /// completes during the call allocates nothing (RingTests.CachedReadsAllocateNothing, the
    /// caller's thread); this is the other path, where the benchmark's MemoryDiagnoser (which
    /// counts all threads) would see any per-read object.
    /// </summary>
    [Collection(WholeProcessAllocationCollection.Name)]
    public class RingAllocationTests : DataFileTests
    {
        private const int Size = 1 << 20;
        private const int Block = 4096;
        private const int Reads = 2000;

        public RingAllocationTests() : base(Size, seed: 29) { }

        /// <summary>What a read through the kernel may allocate. On .NET 8+ nothing: a bound that
        /// leaves room for a thread-pool queue segment or a timer, never one object per read. The
        /// netstandard2.0 and net462 builds have no IThreadPoolWorkItem: their completion goes
        /// through ThreadPool.UnsafeQueueUserWorkItem(WaitCallback), whose own work item (32 B on
        /// 64-bit .NET) is allocated per read (README.md, "Target frameworks"): at most that one.</summary>
        private static long Bound => Platform.NativeDirAsset.StartsWith(".NETCoreApp", StringComparison.Ordinal)
            ? Reads * 4 : Reads * (32 + 4);

        [Theory]
        [InlineData(false)]
        [InlineData(true)]
        public async Task KernelReadsAllocateNothingPerRead(bool forceThreads)
        {
            if (OperatingSystem.IsWindows())
                Assert.Skip("the direct input's alignment and the ring's worker threads differ on Windows; the allocation bound is checked on Linux");
            using var ring = new NativeRing(4, forceThreads);
            using NativeInput input = _dir.OpenInput("data", IoOptions.Merge);
            if (input.Strategy != IoStrategy.Direct)
                Assert.Skip($"the temp folder's file system refuses direct I/O ({input.Strategy}): reads would be cached and never reach the kernel path measured here");
            IntPtr mem = Aligned.Alloc(Block);
            try
            {
                // Off xunit's synchronization context: continuations run on the thread pool, as
                // in the benchmark. Each round: N reads, each awaited, all through the kernel.
                long best = await Task.Run(async () =>
                {
                    long min = long.MaxValue;
                    await Round(ring, input, mem, 200); // warm up: the JIT, the pool, the box
                    for (int round = 0; round < 3; round++)
                    {
                        long before = GC.GetTotalAllocatedBytes(precise: true);
                        long submittedBefore = ring.SubmittedForTest;
                        await Round(ring, input, mem, Reads);
                        long allocated = GC.GetTotalAllocatedBytes(precise: true) - before;
                        Assert.Equal(Reads, ring.SubmittedForTest - submittedBefore); // all went to the kernel
                        min = Math.Min(min, allocated);
                    }
                    return min;
                });
                // One object per read (the smallest is 24 bytes) would be 48,000 bytes; the bound
                // leaves room for a thread-pool queue segment or a timer, never for one per read.
                Assert.True(best < Bound,
                    $"{Reads} reads through the kernel allocated {best} bytes on all threads ({(double)best / Reads:F1} per read)");
            }
            finally
            {
                Aligned.Free(mem);
            }
        }

        /// <summary>The benchmark's case: a managed array, which each read pins with
        /// Memory&lt;byte&gt;.Pin (a GC handle, no object). A block-aligned slice of an array on
        /// the pinned object heap keeps the reads direct, so each one waits for the device.</summary>
        [Fact]
        public async Task KernelReadsIntoAnArrayAllocateNothingPerRead()
        {
            if (OperatingSystem.IsWindows())
                Assert.Skip("the direct input's alignment and the ring's worker threads differ on Windows; the allocation bound is checked on Linux");
            using var ring = new NativeRing(4);
            using NativeInput input = _dir.OpenInput("data", IoOptions.Merge);
            if (input.Strategy != IoStrategy.Direct)
                Assert.Skip($"the temp folder's file system refuses direct I/O ({input.Strategy}): reads would be cached and never reach the kernel path measured here");
            byte[] array = GC.AllocateArray<byte>(2 * Block, pinned: true);
            int skew = Aligned.Skew(array, Block);
            Memory<byte> buf = array.AsMemory(skew, Block);
            long best = await Task.Run(async () =>
            {
                long min = long.MaxValue;
                for (int round = 0; round < 4; round++) // the first warms up
                {
                    long before = GC.GetTotalAllocatedBytes(precise: true);
                    long submittedBefore = ring.SubmittedForTest;
                    for (int i = 0; i < Reads; i++)
                    {
                        int n = await ring.ReadAsync(input, (i * 37 % (Size / Block)) * (long)Block, buf);
                        if (n != Block) // not Assert.Equal in the loop: it allocates
                            throw new Xunit.Sdk.XunitException($"read {i} returned {n} bytes, not {Block}");
                    }
                    long allocated = GC.GetTotalAllocatedBytes(precise: true) - before;
                    if (ring.SubmittedForTest - submittedBefore != Reads)
                        throw new Xunit.Sdk.XunitException("a direct read completed during the call");
                    if (round > 0)
                        min = Math.Min(min, allocated);
                }
                return min;
            });
            Assert.True(best < Bound,
                $"{Reads} reads through the kernel into an array allocated {best} bytes on all threads ({(double)best / Reads:F1} per read)");
        }

        private static async Task Round(NativeRing ring, NativeInput input, IntPtr mem, int reads)
        {
            using var buffer = new NativeMemoryManager(mem, Block);
            for (int i = 0; i < reads; i++)
            {
                int n = await ring.ReadAsync(input, (i * 37 % (Size / Block)) * (long)Block, buffer.Memory);
                if (n != Block) // not Assert.Equal in the loop: it allocates
                    throw new Xunit.Sdk.XunitException($"read {i} returned {n} bytes, not {Block}");
            }
        }

        private static unsafe class Aligned
        {
            public static IntPtr Alloc(int length) => (IntPtr)NativeMemory.AlignedAlloc((nuint)length, Block);

            public static void Free(IntPtr p) => NativeMemory.AlignedFree((void*)p);

            /// <summary>Where in a pinned array the first <paramref name="align"/>-aligned byte is.</summary>
            public static int Skew(byte[] pinned, int align)
            {
                fixed (byte* p = pinned)
                    return (int)((align - (long)p % align) % align);
            }
        }

        private sealed unsafe class NativeMemoryManager : System.Buffers.MemoryManager<byte>
        {
            private readonly byte* _p;
            private readonly int _length;

            public NativeMemoryManager(IntPtr p, int length)
            {
                _p = (byte*)p;
                _length = length;
            }

            public override Span<byte> GetSpan() => new(_p, _length);

            public override System.Buffers.MemoryHandle Pin(int elementIndex = 0) => new(_p + elementIndex);

            public override void Unpin() { }

            protected override void Dispose(bool disposing) { }

            public void Dispose() => ((IDisposable)this).Dispose();
        }
    }
}
