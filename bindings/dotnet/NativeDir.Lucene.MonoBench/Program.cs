using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using Lucene.Net.Index;
using Lucene.Net.Search;
using Lucene.Net.Store;
using NativeDir.Benchmarks;

namespace NativeDir.Lucene.Benchmarks
{
    /// <summary>
    /// On Mono: ParallelSearch (the search workload of NativeDir.Lucene.Benchmarks: queries in
    /// Parallel.For over one IndexSearcher), ReadSequential (8 KiB ReadBytes over the file) and
    /// ReadRandom (64-byte reads at random offsets) on NativeFSDirectory, SimpleFSDirectory,
    /// NIOFSDirectory and MMapDirectory, every directory once per round, back to back, the first
    /// of a round rotating (PairedRounds). Writes {"Group": {"Dir": [ms per round...]}, ...}.
    /// RandomAccessThreads: 4 threads reading one file at random offsets through
    /// NativeDir.IO.RandomAccess against a FileStream behind a lock (RandomAccessRow).
    /// Usage: --rounds N [--search-rounds N] --out F [--quick]; --verify runs one small round and
    /// checks that every directory found the same hits and read the same bytes.
    /// </summary>
    internal static class Program
    {
        private static readonly Dir[] Dirs4 = { Dir.NativeDir, Dir.SimpleFS, Dir.NIOFS, Dir.MMap };

        public static int Main(string[] args)
        {
            bool verify = args.Contains("--verify"), quick = verify || args.Contains("--quick");
            int rounds = verify ? 1 : int.Parse(Arg(args, "--rounds") ?? "11", CultureInfo.InvariantCulture);
            int searchRounds = verify ? 1 : int.Parse(Arg(args, "--search-rounds") ?? rounds.ToString(CultureInfo.InvariantCulture), CultureInfo.InvariantCulture);
            string outFile = Arg(args, "--out") ?? Path.Combine(NativeDir.Lucene.Benchmarks.Dirs.Scratch, "mono.json");
            if (Arg(args, "--dir") is string d)
                Environment.SetEnvironmentVariable("ND_LUCENE_BENCH_DIR", d);
            // 1000 queries: a round of the slowest directory (MMapDirectory on Mono) still takes seconds
            int docs = quick ? 2000 : 25_000, queries = quick ? 200 : 1000;
            long fileBytes = quick ? 4L << 20 : 64L << 20;
            Console.WriteLine($"Mono {MonoVersion()}; {Environment.ProcessorCount} CPUs; {docs} documents, {queries} queries, {fileBytes >> 20} MiB file, {rounds} rounds");
            var times = new Dictionary<string, Dictionary<Dir, List<double>>>();
            var results = new Dictionary<string, Dictionary<Dir, long>>();

            // ParallelSearch: the index NativeDir.Lucene.Benchmarks wrote on .NET (--index; Lucene.NET
            // 4.8 on Mono writes term dictionaries it cannot read back: README), opened by each
            // directory and searched in parallel, every query's top 10 with stored ids
            string index = Arg(args, "--index") ?? throw new ArgumentException("--index <folder written by NativeDir.Lucene.Benchmarks --write-search-index>");
            var corpus = SearchWorkload.Corpus(docs);
            Query[] qs = SearchWorkload.Queries(corpus, queries);
            var searchers = new Dictionary<Dir, (global::Lucene.Net.Store.Directory Dir, DirectoryReader Reader, IndexSearcher Searcher)>();
            foreach (Dir k in Dirs4)
            {
                var dir = NativeDir.Lucene.Benchmarks.Dirs.Open(k, index);
                DirectoryReader r = DirectoryReader.Open(dir);
                searchers[k] = (dir, r, new IndexSearcher(r));
            }
            // MMapDirectory searches at a third of the others' rate on Mono: it runs one round, apart,
            // and the time its rounds took goes to more rounds of the others, whose per-round ratio
            // is judged (a slowed CPU then takes one round of many)
            Func<Dir, long> search = k => SearchWorkload.ParallelSearch(searchers[k].Searcher, qs, 1);
            Run("ParallelSearch", times, results, searchRounds, search, Dirs4.Where(k => k != Dir.MMap).ToArray());
            Run("ParallelSearch", times, results, 1, search, new[] { Dir.MMap }, warmup: 1);
            foreach (var s in searchers.Values)
            {
                s.Reader.Dispose();
                s.Dir.Dispose();
            }

            var files = Dirs4.ToDictionary(k => k, k => new FileWorkload(k, fileBytes, "mono-file"));
            Run("ReadSequential", times, results, rounds, k => files[k].ReadSequential());
            Run("ReadRandom", times, results, rounds, k => files[k].ReadRandom());
            foreach (FileWorkload w in files.Values)
                w.Dispose();

            // positional reads on 4 threads: NativeDir.IO.RandomAccess against a locked FileStream
            Dictionary<string, List<double>> positional = RandomAccessRow.Run(
                Path.Combine(NativeDir.Lucene.Benchmarks.Dirs.Scratch, "random-access"), fileBytes, quick ? 2000 : 20_000, rounds);
            Console.WriteLine("RandomAccessThreads: " + string.Join(", ", positional.Select(kv => $"{kv.Key} {PairedRounds.Median(kv.Value):F1} ms")));

            foreach (var (group, byDir) in results.Select(kv => (kv.Key, kv.Value)))
                if (byDir.Values.Distinct().Count() != 1)
                {
                    Console.Error.WriteLine($"mono bench: the directories disagree in {group}: " +
                        string.Join(", ", byDir.Select(kv => $"{kv.Key}={kv.Value}")));
                    return 1;
                }
            string List(List<double> v) => "[" + string.Join(", ", v.Select(t => t.ToString("F4", CultureInfo.InvariantCulture))) + "]";
            File.WriteAllText(outFile, "{\"queries\": " + queries + ", \"docs\": " + docs + ", \"file_mib\": " + (fileBytes >> 20)
                + ", \"runtime\": \"Mono " + MonoVersion().Replace("\"", "'") + "\", " + string.Join(", ", times.Select(kv => $"\"{kv.Key}\": {{" +
                string.Join(", ", kv.Value.Select(dv => $"\"{dv.Key}\": {List(dv.Value)}")) + "}"))
                + ", \"RandomAccessThreads\": {" + string.Join(", ", positional.Select(kv => $"\"{kv.Key}\": {List(kv.Value)}"))
                + "}, \"random_access\": {\"threads\": " + RandomAccessRow.Threads + ", \"read_bytes\": " + RandomAccessRow.ReadSize
                + ", \"reads_per_thread\": " + (quick ? 2000 : 20_000) + "}}\n");
            Console.WriteLine($"mono bench: {(verify ? "verified: every directory found the same hits and read the same bytes" : "wrote " + outFile)}");
            return 0;
        }

        /// <summary>The directories of <paramref name="dirs"/> (default all four), each once per
        /// round after <paramref name="warmup"/> untimed ones; a group run again adds its
        /// directories to what it has.</summary>
        private static void Run(string group, Dictionary<string, Dictionary<Dir, List<double>>> times,
            Dictionary<string, Dictionary<Dir, long>> results, int rounds, Func<Dir, long> body, Dir[] dirs = null,
            int warmup = 2)
        {
            dirs ??= Dirs4;
            var got = results.TryGetValue(group, out var had) ? had : results[group] = new Dictionary<Dir, long>();
            List<double>[] t = PairedRounds.Time(dirs.Select(k => (Action)(() => got[k] = body(k))).ToArray(),
                rounds, warmup, PairedRounds.Collect);
            var byDir = times.TryGetValue(group, out var sofar) ? sofar : times[group] = new Dictionary<Dir, List<double>>();
            for (int i = 0; i < dirs.Length; i++)
                byDir[dirs[i]] = t[i];
            Console.WriteLine($"{group}: " + string.Join(", ", dirs.Select((k, i) => $"{k} {PairedRounds.Median(t[i]):F1} ms")));
        }

        private static string Arg(string[] args, string name)
        {
            int i = Array.IndexOf(args, name);
            return i >= 0 && i + 1 < args.Length ? args[i + 1] : null;
        }

        private static string MonoVersion()
        {
            var m = Type.GetType("Mono.Runtime")?.GetMethod("GetDisplayName",
                System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Static);
            return m?.Invoke(null, null) as string ?? "(not Mono)";
        }
    }
}

namespace NativeDir
{
    internal static class MonoCompat
    {
        extension(Random r)
        {
            /// <summary>Random.NextInt64 (.NET 6+): a value in [min, max).</summary>
            public long NextInt64(long min, long max) =>
                min + (long)(((ulong)r.Next() << 31 ^ (ulong)r.Next()) % (ulong)(max - min));
        }

        extension(Stopwatch)
        {
            public static TimeSpan GetElapsedTime(long start) =>
                TimeSpan.FromTicks((long)((Stopwatch.GetTimestamp() - start) * (10_000_000.0 / Stopwatch.Frequency)));
        }
    }
}
