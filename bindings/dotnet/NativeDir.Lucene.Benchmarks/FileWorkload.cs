using System;
using System.IO;
using System.Threading.Tasks;
using Lucene.Net.Store;
using LuceneDirectory = Lucene.Net.Store.Directory;

namespace NativeDir.Lucene.Benchmarks
{
    /// <summary>
    /// The file table of Lucene.NET's NativeUnixDirectory port, on one file of record: Write
    /// (made durable), ReadSequential, ReadByte, ReadRandom and ConcurrentCloneReads. The input
    /// is opened once and kept open, as a searcher keeps its segment files.
    /// </summary>
    internal sealed class FileWorkload : IDisposable
    {
        internal const int Chunk = 8192;          // ReadSequential / clone reads: 8 KiB reads
        internal const int WriteChunk = 64 << 10; // Write: 64 KiB WriteBytes calls
        internal const int RandomReads = 10_000;  // ReadRandom: 64-byte reads at random offsets
        internal const int RandomLen = 64;
        internal const int Threads = 4;           // ConcurrentCloneReads: one clone per thread

        private readonly LuceneDirectory _dir;
        private readonly IndexInput _in;
        private readonly byte[] _chunk = new byte[Chunk];
        private readonly long[] _offsets;
        internal readonly byte[] Data;
        internal readonly long Length;

        internal FileWorkload(Dir kind, long length, string tag = "file")
        {
            Length = length;
            string path = Dirs.PathOf(kind, tag);
            Dirs.Clear(path);
            _dir = Dirs.Open(kind, path);
            Data = new byte[WriteChunk];
            new Random(42).NextBytes(Data);
            WriteFile(_dir, "data", Data, length, IOContext.DEFAULT);
            _in = _dir.OpenInput("data", IOContext.READ);
            var rnd = new Random(7);
            _offsets = new long[RandomReads];
            for (int i = 0; i < _offsets.Length; i++)
                _offsets[i] = rnd.NextInt64(0, length - RandomLen);
        }

        internal LuceneDirectory Directory => _dir;

        /// <summary>The file of record: <paramref name="src"/> repeated, then synced.</summary>
        internal static void WriteFile(LuceneDirectory dir, string name, byte[] src, long length, IOContext ctx)
        {
            using (IndexOutput o = dir.CreateOutput(name, ctx))
            {
                for (long n = 0; n < length; n += src.Length)
                    o.WriteBytes(src, 0, (int)Math.Min(src.Length, length - n));
            }
            dir.Sync(new[] { name });
        }

        /// <summary>Write: a merge-sized output, closed and made durable.</summary>
        internal void Write(string name) => WriteFile(_dir, name, Data, Length, Dirs.MergeContext(Length));

        internal long ReadSequential()
        {
            _in.Seek(0);
            long sum = 0;
            for (long n = 0; n < Length; n += Chunk)
            {
                _in.ReadBytes(_chunk, 0, Chunk);
                sum += _chunk[0];
            }
            return sum;
        }

        internal long ReadByte(long count)
        {
            _in.Seek(0);
            long sum = 0;
            for (long n = 0; n < count; n++)
                sum += _in.ReadByte();
            return sum;
        }

        internal long ReadRandom()
        {
            long sum = 0;
            byte[] buf = _chunk;
            foreach (long off in _offsets)
            {
                _in.Seek(off);
                _in.ReadBytes(buf, 0, RandomLen);
                sum += buf[RandomLen - 1];
            }
            return sum;
        }

        internal long ConcurrentCloneReads()
        {
            var sums = new long[Threads];
            Parallel.For(0, Threads, new ParallelOptions { MaxDegreeOfParallelism = Threads }, t =>
            {
                var c = (IndexInput)_in.Clone();
                var buf = new byte[Chunk];
                c.Seek(0);
                long s = 0;
                for (long n = 0; n < Length; n += Chunk)
                {
                    c.ReadBytes(buf, 0, Chunk);
                    s += buf[Chunk - 1];
                }
                sums[t] = s;
            });
            long total = 0;
            foreach (long s in sums)
                total += s;
            return total;
        }

        /// <summary>What each read workload must return (computed from the bytes written).</summary>
        internal long ExpectedSequential()
        {
            long sum = 0;
            for (long n = 0; n < Length; n += Chunk)
                sum += Data[n % Data.Length];
            return sum;
        }

        internal long ExpectedByteSum(long count)
        {
            long sum = 0;
            for (long n = 0; n < count; n++)
                sum += Data[n % Data.Length];
            return sum;
        }

        internal long ExpectedRandom()
        {
            long sum = 0;
            foreach (long off in _offsets)
                sum += Data[(off + RandomLen - 1) % Data.Length];
            return sum;
        }

        internal long ExpectedConcurrent()
        {
            long s = 0;
            for (long n = 0; n < Length; n += Chunk)
                s += Data[(n + Chunk - 1) % Data.Length];
            return s * Threads;
        }

        public void Dispose()
        {
            _in.Dispose();
            _dir.Dispose();
        }
    }
}
