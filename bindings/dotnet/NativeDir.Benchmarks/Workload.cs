using System;
using System.IO;

namespace NativeDir.Benchmarks
{
    /// <summary>The shared workload: one file of random bytes on a real disk, its bytes in memory
    /// (the byte[] baseline), and the random offsets. Set once by Program before any benchmark
    /// runs (benchmarks run in this process).</summary>
    public static class Workload
    {
        public const int RandomReadSize = 64;
        public const int ChunkSize = 64 << 10; // the C suite's sequential chunk

        public static string Dir { get; private set; } = "";
        public static string FileName => "data.bin";
        public static string FilePath => Path.Combine(Dir, FileName);
        public static byte[] Bytes { get; private set; } = Array.Empty<byte>();
        public static long[] Offsets { get; private set; } = Array.Empty<long>();
        public static int FileMiB { get; private set; }

        public static void Create(string dir, int fileMiB, int randomReads)
        {
            Directory.CreateDirectory(dir);
            Dir = dir;
            FileMiB = fileMiB;
            Bytes = new byte[fileMiB << 20];
            new Random(42).NextBytes(Bytes);
            File.WriteAllBytes(FilePath, Bytes);
            var rnd = new Random(7);
            Offsets = new long[randomReads];
            for (int i = 0; i < randomReads; i++)
                Offsets[i] = rnd.NextInt64(Bytes.Length - RandomReadSize);
        }

        /// <summary>What every benchmark returns, so the JIT cannot drop the reads and the verify
        /// mode can compare them: a cheap fold of the bytes read.</summary>
        public static long Fold(long acc, ReadOnlySpan<byte> bytes) =>
            acc * 31 + bytes[0] + bytes[bytes.Length - 1] + bytes[bytes.Length / 2];
    }

    /// <summary>The in-memory baseline for byte reads: a cursor over a byte[] with the same shape
    /// as NativeInput.ReadByte (a bounds check, a load, an increment).</summary>
    public sealed class ByteArrayReader
    {
        private readonly byte[] _bytes;
        private int _pos;

        public ByteArrayReader(byte[] bytes) => _bytes = bytes;

        public void Seek(int pos) => _pos = pos;

        public byte ReadByte()
        {
            int p = _pos;
            byte[] b = _bytes;
            if ((uint)p < (uint)b.Length)
            {
                _pos = p + 1;
                return b[p];
            }
            throw new EndOfStreamException();
        }
    }
}
