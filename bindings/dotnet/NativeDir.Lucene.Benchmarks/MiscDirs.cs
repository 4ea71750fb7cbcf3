using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using Lucene.Net.Store;
using NativeDir.Benchmarks;
using NativeDir.Lucene.Misc;
using LuceneDirectory = Lucene.Net.Store.Directory;

namespace NativeDir.Lucene.Benchmarks
{
    /// <summary>
    /// The table Lucene.NET's port of NativeUnixDirectory and WindowsDirectory published, on ours:
    /// Write (a merge-context output of the file of record, closed, then Sync: durable),
    /// ReadSequential (all of it in 8 KiB ReadBytes) and ReadRandom (10,000 Seek + 64-byte
    /// ReadBytes) of a 64 MiB file, for the misc directory of this OS beside Lucene.NET's
    /// SimpleFS, NIOFS, MMap and RAM directories. Linux and macOS: NativeUnixDirectory twice, over
    /// the delegate FSDirectory.Open gives (MMapDirectory on 64-bit) and over NativeFSDirectory;
    /// Windows (Wine): WindowsDirectory. Reads open the file for searching (IOContext.READ), as a
    /// searcher does: NativeUnixDirectory sends them to its delegate. Every directory runs once per
    /// round, back to back, the first of a round rotating (PairedRounds); the read rows on one
    /// CPU. Writes {"os", "file_mib", "Group": {"Kind": [ms per round...]}}: lucene.sh judges the
    /// targets on the per-round ratios to SimpleFS (Write) and to the fastest of SimpleFS, NIOFS
    /// and MMap in that round (reads).
    /// </summary>
    internal static class MiscDirs
    {
        internal const string NativeUnixOverDefault = "NativeUnix(FSDirectory.Open)";
        internal const string NativeUnixOverNative = "NativeUnix(NativeFS)";
        internal const string Windows = "Windows";

        internal static string[] Kinds() => OperatingSystem.IsWindows()
            ? new[] { Windows, "SimpleFS", "NIOFS", "MMap", "RAM" }
            : new[] { NativeUnixOverDefault, NativeUnixOverNative, "SimpleFS", "NIOFS", "MMap", "RAM" };

        /// <summary>A NativeUnixDirectory that disposes its delegate with itself.</summary>
        [System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
        private sealed class OwningNativeUnix : NativeUnixDirectory
        {
            private readonly LuceneDirectory _delegate;

            internal OwningNativeUnix(string path, LuceneDirectory d) : base(path, d) => _delegate = d;

            protected override void Dispose(bool disposing)
            {
                base.Dispose(disposing);
                if (disposing)
                    _delegate.Dispose();
            }
        }

#pragma warning disable CA1416 // each misc directory is made only on its own OS (Kinds)
        private static LuceneDirectory Open(string kind, string path) => kind switch
        {
            NativeUnixOverDefault => new OwningNativeUnix(path, FSDirectory.Open(path)),
            NativeUnixOverNative => new OwningNativeUnix(path, new NativeFSDirectory(path)),
            Windows => new WindowsDirectory(path),
            _ => Dirs.Open(Enum.Parse<Dir>(kind), path),
        };
#pragma warning restore CA1416

        /// <summary>One directory's file of record, written once (default context) and kept open
        /// for searching.</summary>
        private sealed class Workload : IDisposable
        {
            private readonly IndexInput _in;
            private readonly byte[] _chunk = new byte[FileWorkload.Chunk];
            private readonly long[] _offsets;
            internal readonly LuceneDirectory Dir;
            internal readonly long Length;

            internal Workload(string kind, long length, byte[] data, string tag)
            {
                Length = length;
                string path = Path.Combine(Dirs.Scratch, tag, kind.Replace('(', '-').Replace(")", "").Replace('.', '-'));
                Dirs.Clear(path);
                Dir = Open(kind, path);
                FileWorkload.WriteFile(Dir, "data", data, length, IOContext.DEFAULT);
                _in = Dir.OpenInput("data", IOContext.READ);
                Console.WriteLine($"{kind}: reads through {_in.GetType().Name}"
                    + (_in is NativeIndexInput n ? $" ({n.Strategy}{(n.IsMapped ? ", byte reads from the mapping" : ", positional reads per refill")})" : ""));
                var rnd = new Random(7);
                _offsets = new long[FileWorkload.RandomReads];
                for (int i = 0; i < _offsets.Length; i++)
                    _offsets[i] = rnd.NextInt64(0, length - FileWorkload.RandomLen);
            }

            internal long ReadSequential()
            {
                _in.Seek(0);
                long sum = 0;
                for (long n = 0; n < Length; n += _chunk.Length)
                {
                    _in.ReadBytes(_chunk, 0, _chunk.Length);
                    sum += _chunk[0];
                }
                return sum;
            }

            internal long ReadRandom()
            {
                long sum = 0;
                foreach (long off in _offsets)
                {
                    _in.Seek(off);
                    _in.ReadBytes(_chunk, 0, FileWorkload.RandomLen);
                    sum += _chunk[FileWorkload.RandomLen - 1];
                }
                return sum;
            }

            public void Dispose()
            {
                _in.Dispose();
                Dir.Dispose();
            }
        }

        /// <summary>Runs the table; with <paramref name="verify"/> one small round whose results
        /// must agree across directories (nothing is judged).</summary>
        internal static int Run(int rounds, string outFile, bool quick, bool verify = false)
        {
            long length = quick || verify ? 4L << 20 : Sizes.FileBytes;
            var data = new byte[FileWorkload.WriteChunk];
            new Random(42).NextBytes(data);
            string[] kinds = Kinds();
            var times = new Dictionary<string, Dictionary<string, List<double>>>();
            var work = kinds.ToDictionary(k => k, k => new Workload(k, length, data, "misc"));
            try
            {
                // Write: a merge of the file's size, closed, then synced; the old file goes
                // untimed before each write
                IOContext merge = Dirs.MergeContext(length);
                times["Write"] = Paired(kinds, rounds, verify, k => FileWorkload.WriteFile(work[k].Dir, "w", data, length, merge),
                    k => { if (work[k].Dir.ListAll().Contains("w")) work[k].Dir.DeleteFile("w"); }, pin: false);
                foreach (string k in kinds)
                    if (work[k].Dir.FileLength("w") != length)
                        throw new InvalidOperationException($"{k}: the written file is {work[k].Dir.FileLength("w")} bytes, not {length}");
                var sums = new Dictionary<string, (long Seq, long Rnd)>();
                foreach (string k in kinds)
                    sums[k] = (work[k].ReadSequential(), work[k].ReadRandom());
                if (sums.Values.Distinct().Count() != 1)
                    throw new InvalidOperationException("the directories read different bytes: " + string.Join(", ", sums.Select(kv => $"{kv.Key}={kv.Value}")));
                times["ReadSequential"] = Paired(kinds, rounds, verify, k => work[k].ReadSequential(), null, pin: true);
                times["ReadRandom"] = Paired(kinds, rounds, verify, k => work[k].ReadRandom(), null, pin: true);
            }
            finally
            {
                foreach (Workload w in work.Values)
                    w.Dispose();
            }
            if (verify)
            {
                Console.WriteLine($"ok   misc directories ({string.Join(", ", kinds)}): every one wrote and read the same bytes");
                return 0;
            }
            string List(List<double> v) => "[" + string.Join(", ", v.Select(t => t.ToString("F4", CultureInfo.InvariantCulture))) + "]";
            File.WriteAllText(outFile, "{\"os\": \"" + (OperatingSystem.IsWindows() ? "windows" : OperatingSystem.IsMacOS() ? "macos" : "linux")
                + "\", \"file_mib\": " + (length >> 20) + ", " + string.Join(", ", times.Select(g => $"\"{g.Key}\": {{"
                + string.Join(", ", g.Value.Select(kv => $"\"{kv.Key}\": {List(kv.Value)}")) + "}")) + "}\n");
            foreach (var g in times)
                Console.WriteLine($"{g.Key}: " + string.Join(", ", g.Value.Select(kv => $"{kv.Key} {PairedRounds.Median(kv.Value):F1} ms")));
            return 0;
        }

        private static Dictionary<string, List<double>> Paired(string[] kinds, int rounds, bool verify, Action<string> body,
            Action<string> untimed, bool pin)
        {
            if (pin)
                SameCpu.Pin();
            try
            {
                List<double>[] t = PairedRounds.Time(kinds.Select(k => (Action)(() => body(k))).ToArray(),
                    verify ? 1 : rounds, warmup: verify ? 0 : 2, i =>
                    {
                        untimed?.Invoke(kinds[i]);
                        PairedRounds.Collect(i);
                    });
                return kinds.Select((k, i) => (k, t[i])).ToDictionary(x => x.k, x => x.Item2);
            }
            finally
            {
                if (pin)
                    SameCpu.Unpin();
            }
        }
    }
}
