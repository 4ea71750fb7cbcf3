using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Threading;
using NativeDir.Benchmarks;

namespace NativeDir.Lucene.Benchmarks
{
    /// <summary>
    /// The Mono row of positional reads: 4 threads reading one file at random offsets (4 KiB each,
    /// the file in the page cache), through NativeDir.IO.RandomAccess on the FileStream's handle
    /// (nativedir's pread: no lock, no file position) against what Lucene.NET does on the .NET
    /// Framework and Mono, which have no RandomAccess: one FileStream, and a lock around setting
    /// its position and reading. Both read the same offsets from the same stream; each round runs
    /// both, back to back, the first rotating (PairedRounds). Returns {"RandomAccess": [ms...],
    /// "FileStreamLock": [ms...]} and checks both read the same bytes.
    /// </summary>
    internal static class RandomAccessRow
    {
        internal const int Threads = 4;
        internal const int ReadSize = 4096;

        internal static Dictionary<string, List<double>> Run(string dir, long fileBytes, int readsPerThread, int rounds)
        {
            string path = Path.Combine(dir, "random-access.bin");
            Directory.CreateDirectory(dir);
            var data = new byte[1 << 20];
            new Random(3).NextBytes(data);
            using (var w = new FileStream(path, FileMode.Create, FileAccess.Write))
                for (long n = 0; n < fileBytes; n += data.Length)
                    w.Write(data, 0, (int)Math.Min(data.Length, fileBytes - n));
            var offsets = new long[Threads][];
            var rnd = new Random(11);
            for (int t = 0; t < Threads; t++)
            {
                offsets[t] = new long[readsPerThread];
                for (int i = 0; i < readsPerThread; i++)
                    offsets[t][i] = (long)(rnd.NextDouble() * (fileBytes - ReadSize));
            }
            using var fs = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite, bufferSize: 4096);
            var handle = fs.SafeFileHandle; // handed out: the stream goes by the OS's file position from here on
            object gate = new object();
            long Checksum(Func<long, byte[], int> read)
            {
                var sums = new long[Threads];
                var threads = Enumerable.Range(0, Threads).Select(t => new Thread(() =>
                {
                    var buf = new byte[ReadSize];
                    long s = 0;
                    foreach (long off in offsets[t])
                    {
                        if (read(off, buf) != ReadSize)
                            throw new InvalidOperationException($"a short read at {off}");
                        s += buf[0] + buf[ReadSize - 1];
                    }
                    sums[t] = s;
                })).ToList();
                threads.ForEach(x => x.Start());
                threads.ForEach(x => x.Join());
                return sums.Sum();
            }
            long ours = 0, locked = 0;
            Action[] calls =
            {
                () => ours = Checksum((off, buf) => NativeDir.IO.RandomAccess.Read(handle, buf, off)),
                () => locked = Checksum((off, buf) =>
                {
                    lock (gate)
                    {
                        fs.Position = off;
                        int n = 0;
                        while (n < buf.Length)
                        {
                            int r = fs.Read(buf, n, buf.Length - n);
                            if (r == 0)
                                break;
                            n += r;
                        }
                        return n;
                    }
                }),
            };
            List<double>[] times = PairedRounds.Time(calls, rounds, warmup: 2, PairedRounds.Collect);
            if (ours != locked)
                throw new InvalidOperationException($"RandomAccess read {ours}, the locked FileStream {locked}: not the same bytes");
            File.Delete(path);
            return new Dictionary<string, List<double>> { ["RandomAccess"] = times[0], ["FileStreamLock"] = times[1] };
        }
    }
}
