using System;
using System.IO;
using BenchmarkDotNet.Attributes;

namespace NativeDir.Benchmarks
{
    /// <summary>The whole file written in 64 KiB appends to a new file, then closed (no fsync).</summary>
    public class Write
    {
        private NativeDirectory _dir = null!;

        [GlobalSetup]
        public void Open() => _dir = NativeDirectory.Open(Workload.Dir);

        [GlobalCleanup]
        public void Close()
        {
            _dir.Dispose();
            File.Delete(Path.Combine(Workload.Dir, "write.bin"));
        }

        [Benchmark(Baseline = true)]
        [Row("FileStream.Write")]
        public long FileStreamWrite()
        {
            using var s = new FileStream(Path.Combine(Workload.Dir, "write.bin"), FileMode.Create,
                FileAccess.Write, FileShare.None, 4096);
            byte[] src = Workload.Bytes;
            for (int off = 0; off < src.Length; off += Workload.ChunkSize)
                s.Write(src, off, Workload.ChunkSize);
            return s.Position;
        }

        [Benchmark]
        [Row("nativedir Write (buffered)", Baseline = nameof(FileStreamWrite))]
        public long NativeBuffered() => Native(IoOptions.None);

        [Benchmark]
        [Row("nativedir Write (merge: direct)", Baseline = nameof(FileStreamWrite),
             Note = "O_DIRECT: the page cache keeps what searches need")]
        public long NativeDirect() => Native(IoOptions.Merge);

        private long Native(IoOptions options)
        {
            using NativeOutput o = _dir.CreateOutput("write.bin", options | IoOptions.Overwrite);
            byte[] src = Workload.Bytes;
            for (int off = 0; off < src.Length; off += Workload.ChunkSize)
                o.Write(src.AsSpan(off, Workload.ChunkSize));
            return o.Position;
        }
    }
}
