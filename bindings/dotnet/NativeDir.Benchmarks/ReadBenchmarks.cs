using System;
using System.IO;
using System.IO.MemoryMappedFiles;
using BenchmarkDotNet.Attributes;
using Microsoft.Win32.SafeHandles;

namespace NativeDir.Benchmarks
{
    /// <summary>Everything a read benchmark opens once: NativeDir per strategy, and what a .NET
    /// user would pick instead.</summary>
    public abstract class ReadFixture
    {
        protected NativeDirectory Dir = null!;
        protected NativeInput Mapped = null!, Buffered = null!, Direct = null!, RandomBuffered = null!;
        protected FileStream Stream = null!;
        protected SafeFileHandle Handle = null!;
        protected MemoryMappedFile Mmf = null!;
        protected MemoryMappedViewAccessor Accessor = null!;
        protected ByteArrayReader Array = null!;
        protected readonly byte[] Chunk = new byte[Workload.ChunkSize];
        protected long Length;

        [GlobalSetup]
        public void Setup()
        {
            // one loop on one thread against another: every row on the same CPU (SameCpu); the
            // development VM's two CPUs ran a spin loop up to 2x apart, so a row and its
            // baseline on different CPUs measured 0.58x to 1.6x for the same code
            if (SingleThreaded)
                SameCpu.Pin();
            OpenAll();
            OnOpened();
        }

        [GlobalCleanup]
        public void Cleanup()
        {
            OnClosing();
            CloseAll();
            SameCpu.Unpin();
        }

        /// <summary>Whether every row of the suite runs on the benchmark thread alone (then it is
        /// pinned to one CPU); suites that start threads of their own leave the scheduler free.</summary>
        protected virtual bool SingleThreaded => true;

        protected virtual void OnOpened() { }

        protected virtual void OnClosing() { }

        private void OpenAll()
        {
            Dir = NativeDirectory.Open(Workload.Dir);
            Mapped = Dir.OpenInput(Workload.FileName, IoOptions.Mapped);
            Buffered = Dir.OpenInput(Workload.FileName, IoOptions.Sequential);
            Direct = Dir.OpenInput(Workload.FileName, IoOptions.Merge);
            RandomBuffered = Dir.OpenInput(Workload.FileName, IoOptions.Random);
            Stream = new FileStream(Workload.FilePath, FileMode.Open, FileAccess.Read, FileShare.Read, 4096);
            Handle = File.OpenHandle(Workload.FilePath, FileMode.Open, FileAccess.Read, FileShare.Read,
                FileOptions.RandomAccess);
            Mmf = MemoryMappedFile.CreateFromFile(Workload.FilePath, FileMode.Open, null, 0, MemoryMappedFileAccess.Read);
            Accessor = Mmf.CreateViewAccessor(0, 0, MemoryMappedFileAccess.Read);
            Array = new ByteArrayReader(Workload.Bytes);
            Length = Workload.Bytes.Length;
        }

        private void CloseAll()
        {
            Accessor.Dispose();
            Mmf.Dispose();
            Handle.Dispose();
            Stream.Dispose();
            RandomBuffered.Dispose();
            Direct.Dispose();
            Buffered.Dispose();
            Mapped.Dispose();
            Dir.Dispose();
        }

        /// <summary>Order-independent, so threads and chunkings that read the same bytes agree.</summary>
        protected static long Mix(ReadOnlySpan<byte> b) => b[0] + 3L * b[b.Length - 1] + 7L * b[b.Length / 2];
    }

    /// <summary>Every byte of the file, one call per byte.</summary>
    public class ReadByteSequential : ReadFixture
    {
        [Benchmark(Baseline = true)]
        [Row("byte[] reader ReadByte", Note = "in-memory copy of the file; the limit")]
        public long ByteArray()
        {
            ByteArrayReader r = Array;
            r.Seek(0);
            long sum = 0;
            for (long i = 0; i < Length; i++)
                sum += r.ReadByte();
            return sum;
        }

        [Benchmark]
        [Row("nativedir ReadByte (mapped)", Baseline = nameof(ByteArray), MaxRatio = 1.5,
             FasterThan = nameof(ViewAccessor), MinSpeedup = 10, ZeroAlloc = true)]
        public long NativeMapped() => Scan(Mapped);

        [Benchmark]
        [Row("nativedir ReadByte (buffered)", Baseline = nameof(ByteArray), MaxRatio = 1.5,
             FasterThan = nameof(ViewAccessor), MinSpeedup = 10, ZeroAlloc = true)]
        public long NativeBuffered() => Scan(Buffered);

        [Benchmark]
        [Row("nativedir ReadByte (merge: direct)", Baseline = nameof(ByteArray), ZeroAlloc = true,
             Note = "O_DIRECT: every window is read from the device")]
        public long NativeDirect() => Scan(Direct);

        private long Scan(NativeInput input)
        {
            input.Seek(0);
            long sum = 0;
            for (long i = 0; i < Length; i++)
                sum += input.ReadByte();
            return sum;
        }

        [Benchmark]
        [Row("FileStream.ReadByte", Baseline = nameof(ByteArray), Note = "4 KiB FileStream buffer")]
        public long FileStreamReadByte()
        {
            FileStream s = Stream;
            s.Position = 0;
            long sum = 0;
            int b;
            while ((b = s.ReadByte()) >= 0)
                sum += b;
            return sum;
        }

        [Benchmark]
        [Row("MemoryMappedViewAccessor.ReadByte", Baseline = nameof(ByteArray),
             Note = "what Lucene.NET's MMapDirectory did per byte")]
        public long ViewAccessor()
        {
            MemoryMappedViewAccessor a = Accessor;
            long sum = 0;
            for (long i = 0; i < Length; i++)
                sum += a.ReadByte(i);
            return sum;
        }
    }

    /// <summary>The whole file in 64 KiB reads into one buffer.</summary>
    public class ReadSequential : ReadFixture
    {
        [Benchmark(Baseline = true)]
        [Row("byte[] copy", Note = "in-memory copy of the file; the limit")]
        public long ByteArray()
        {
            long sum = 0;
            byte[] src = Workload.Bytes;
            for (int off = 0; off < src.Length; off += Chunk.Length)
            {
                src.AsSpan(off, Chunk.Length).CopyTo(Chunk);
                sum += Mix(Chunk);
            }
            return sum;
        }

        [Benchmark]
        [Row("nativedir ReadBytes (mapped)", Baseline = nameof(ByteArray), MaxRatio = 1.5, ZeroAlloc = true)]
        public long NativeMapped() => Scan(Mapped);

        [Benchmark]
        [Row("nativedir ReadBytes (buffered)", Baseline = nameof(ByteArray), ZeroAlloc = true)]
        public long NativeBuffered() => Scan(Buffered);

        [Benchmark]
        [Row("nativedir ReadBytes (merge: direct)", Baseline = nameof(ByteArray), ZeroAlloc = true,
             Note = "O_DIRECT: from the device, the page cache untouched")]
        public long NativeDirect() => Scan(Direct);

        private long Scan(NativeInput input)
        {
            input.Seek(0);
            long sum = 0;
            for (long off = 0; off < Length; off += Chunk.Length)
            {
                input.ReadBytes(Chunk);
                sum += Mix(Chunk);
            }
            return sum;
        }

        [Benchmark]
        [Row("RandomAccess.Read", Baseline = nameof(ByteArray))]
        public long RandomAccessRead()
        {
            long sum = 0;
            for (long off = 0; off < Length; off += Chunk.Length)
            {
                RandomAccess.Read(Handle, Chunk, off);
                sum += Mix(Chunk);
            }
            return sum;
        }

        [Benchmark]
        [Row("FileStream.Read", Baseline = nameof(ByteArray))]
        public long FileStreamRead()
        {
            FileStream s = Stream;
            s.Position = 0;
            long sum = 0;
            for (long off = 0; off < Length; off += Chunk.Length)
            {
                s.ReadExactly(Chunk);
                sum += Mix(Chunk);
            }
            return sum;
        }

        [Benchmark]
        [Row("MemoryMappedViewAccessor.ReadArray", Baseline = nameof(ByteArray))]
        public long ViewAccessor()
        {
            long sum = 0;
            for (long off = 0; off < Length; off += Chunk.Length)
            {
                Accessor.ReadArray(off, Chunk, 0, Chunk.Length);
                sum += Mix(Chunk);
            }
            return sum;
        }
    }

    /// <summary>64-byte reads at the same random offsets.</summary>
    public class ReadRandom : ReadFixture
    {
        [Benchmark(Baseline = true)]
        [Row("RandomAccess.Read", Note = "pread through SafeFileHandle")]
        public long RandomAccessRead()
        {
            Span<byte> buf = Chunk.AsSpan(0, Workload.RandomReadSize);
            long sum = 0;
            foreach (long off in Workload.Offsets)
            {
                RandomAccess.Read(Handle, buf, off);
                sum += Mix(buf);
            }
            return sum;
        }

        [Benchmark]
        [Row("nativedir ReadBytes(offset) (buffered)", Baseline = nameof(RandomAccessRead), MaxRatio = 1.2,
             ZeroAlloc = true, Note = "positional, thread-safe")]
        public long NativeBuffered() => Positional(Buffered);

        [Benchmark]
        [Row("nativedir ReadBytes(offset) (mapped)", Baseline = nameof(RandomAccessRead), ZeroAlloc = true)]
        public long NativeMapped() => Positional(Mapped);

        private long Positional(NativeInput input)
        {
            Span<byte> buf = Chunk.AsSpan(0, Workload.RandomReadSize);
            long sum = 0;
            foreach (long off in Workload.Offsets)
            {
                input.ReadBytes(off, buf);
                sum += Mix(buf);
            }
            return sum;
        }

        [Benchmark]
        [Row("nativedir Seek+ReadBytes (random advice)", Baseline = nameof(RandomAccessRead), ZeroAlloc = true,
             Note = "through the cursor: a 4 KiB window per read")]
        public long NativeCursor() => Cursor(RandomBuffered);

        [Benchmark]
        [Row("nativedir Seek+ReadBytes (mapped)", Baseline = nameof(RandomAccessRead), ZeroAlloc = true,
             Note = "through the cursor: no native call at all")]
        public long NativeCursorMapped() => Cursor(Mapped);

        private long Cursor(NativeInput input)
        {
            Span<byte> buf = Chunk.AsSpan(0, Workload.RandomReadSize);
            long sum = 0;
            foreach (long off in Workload.Offsets)
            {
                input.Seek(off);
                input.ReadBytes(buf);
                sum += Mix(buf);
            }
            return sum;
        }

        [Benchmark]
        [Row("FileStream Seek+Read", Baseline = nameof(RandomAccessRead))]
        public long FileStreamRead()
        {
            Span<byte> buf = Chunk.AsSpan(0, Workload.RandomReadSize);
            long sum = 0;
            foreach (long off in Workload.Offsets)
            {
                Stream.Position = off;
                Stream.ReadExactly(buf);
                sum += Mix(buf);
            }
            return sum;
        }

        [Benchmark]
        [Row("MemoryMappedViewAccessor.ReadArray", Baseline = nameof(RandomAccessRead))]
        public long ViewAccessor()
        {
            byte[] buf = Chunk;
            long sum = 0;
            foreach (long off in Workload.Offsets)
            {
                Accessor.ReadArray(off, buf, 0, Workload.RandomReadSize);
                sum += Mix(buf.AsSpan(0, Workload.RandomReadSize));
            }
            return sum;
        }

        [Benchmark]
        [Row("byte[] copy", Baseline = nameof(RandomAccessRead), Note = "in-memory copy of the file; the limit")]
        public long ByteArray()
        {
            Span<byte> buf = Chunk.AsSpan(0, Workload.RandomReadSize);
            long sum = 0;
            foreach (long off in Workload.Offsets)
            {
                Workload.Bytes.AsSpan((int)off, buf.Length).CopyTo(buf);
                sum += Mix(buf);
            }
            return sum;
        }
    }
}
