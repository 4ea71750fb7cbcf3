using System;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Engines;
using BenchmarkDotNet.Exporters.Json;
using BenchmarkDotNet.Jobs;
using BenchmarkDotNet.Running;
using BenchmarkDotNet.Toolchains.InProcess.Emit;
using Lucene.Net.Index;
using Lucene.Net.Search;
using Lucene.Net.Store;
using Perfolizer.Horology;

namespace NativeDir.Lucene.Benchmarks
{
    /// <summary>
    /// Modes: (default) the BenchmarkDotNet run of record, exported as JSON for lucene.sh;
    /// --verify: every workload once on small sizes, results checked, nothing timed;
    /// --only Type,Type: only those benchmark classes (FileReads, FileWrite, DeviceLimit,
    /// ParallelSearch, Indexing);
    /// --cache-check: how much of a just-written merge file each directory leaves in the page cache;
    /// --time-index Dir [--runs N]: the indexing workload alone, timed per run;
    /// --paired-index N [--out F] [--quick]: N rounds of the indexing workload, each round indexing
    /// once with every on-disk directory in turn (the order rotating), times written as JSON for
    /// lucene.sh's per-round ratio;
    /// --paired-reads N [--out F] [--quick]: N rounds of the single-threaded file rows, each round
    /// reading once with NativeFSDirectory and once with the row's baseline directory, on one CPU
    /// (PairedReads.cs);
    /// --paired-write N [--out F] [--quick]: N rounds of the durable write, each round writing once
    /// with raw O_DIRECT (no library), NativeDir.Lucene and SimpleFS in turn (PairedWrite.cs);
    /// --misc-dirs N [--out F] [--quick] [--verify-misc]: N rounds of the NativeUnixDirectory /
    /// WindowsDirectory file table (MiscDirs.cs); --verify-misc one small round, checked, not timed;
    /// --profile-index Dir,Dir [--runs N]: the indexing workload with every Directory and
    /// IndexOutput call counted and timed, per directory (CallProfile.cs).
    /// </summary>
    public static class Program
    {
        public static int Main(string[] args)
        {
            string dir = Arg(args, "--dir") ?? Dirs.Scratch;
            Environment.SetEnvironmentVariable("ND_LUCENE_BENCH_DIR", Path.GetFullPath(dir));
            if (Arg(args, "--ltm-cache") is string ltmCache)
                return Ltm(args, ltmCache, dir);
            if (args.Contains("--verify"))
                return Verify();
            if (Arg(args, "--time-index") is string k)
                return TimeIndex(Enum.Parse<Dir>(k), int.Parse(Arg(args, "--runs") ?? "5"));
            if (Arg(args, "--paired-index") is string rounds)
                return PairedIndex(int.Parse(rounds), Arg(args, "--out") ?? Path.Combine(dir, "paired-index.json"),
                    args.Contains("--quick"));
            if (Arg(args, "--paired-reads") is string rrounds)
                return PairedReads.Run(int.Parse(rrounds), Arg(args, "--out") ?? Path.Combine(dir, "paired-reads.json"),
                    args.Contains("--quick"));
            if (Arg(args, "--paired-write") is string wrounds)
                return PairedWrite.Run(int.Parse(wrounds), Arg(args, "--out") ?? Path.Combine(dir, "paired-write.json"),
                    args.Contains("--quick"));
            if (Arg(args, "--misc-dirs") is string mrounds)
                return MiscDirs.Run(int.Parse(mrounds), Arg(args, "--out") ?? Path.Combine(dir, "misc-dirs.json"),
                    args.Contains("--quick"), args.Contains("--verify-misc"));
            if (Arg(args, "--profile-index") is string pk)
                return CallProfile.Run(pk.Split(',').Select(Enum.Parse<Dir>).ToArray(), int.Parse(Arg(args, "--runs") ?? "3"));
            if (Arg(args, "--write-search-index") is string indexPath)
            {
                // the Mono row's index (bench/suites.d/lucene-mono.sh): written here, on .NET,
                // because Lucene.NET 4.8 on Mono writes term dictionaries it cannot read back
                int docs = args.Contains("--quick") ? 2000 : Sizes.SearchDocs;
                Dirs.Clear(indexPath);
                using (var d = new SimpleFSDirectory(new DirectoryInfo(indexPath)))
                    SearchWorkload.Index(d, SearchWorkload.Corpus(docs));
                Console.WriteLine($"wrote the search index of {docs} documents to {indexPath}");
                return 0;
            }
            if (args.Contains("--cache-check"))
                return CacheCheck(Arg(args, "--out") ?? Path.Combine(dir, "cache.json"));
            return Run(Arg(args, "--artifacts") ?? Path.Combine(dir, "artifacts"), args.Contains("--quick"), Arg(args, "--only"));
        }

        /// <summary>--ltm-cache DIR [--ltm-build] [--verify | --quick] [--out F] [--ltm-kinds K,K]
        /// [--ltm-tight-kinds K,K|none] [--ltm-limits P,P|none] [--ltm-rounds N] [--ltm-warm S] [--ltm-full S] [--ltm-window S] [--ltm-merge-window S] [--ltm-merge-rate Q] [--ltm-paced-rate Q] [--ltm-paced-queries N] [--ltm-merge-rounds N] [--ltm-merge-limits P,P|none] [--ltm-device LABEL] [--ltm-docs N] [--ltm-interleave N] [--no-merges] [--no-settle]: the
        /// larger-than-memory search and search-while-merging cells (LargerThanMemory.cs), the
        /// index cached in DIR; --ltm-build builds it and nothing else.</summary>
        private static int Ltm(string[] args, string cache, string dir)
        {
            bool verify = args.Contains("--verify"), quick = args.Contains("--quick");
            var shape = verify || quick ? LargerThanMemory.VerifyShape : LargerThanMemory.RecordShape;
            if (Arg(args, "--ltm-docs") is string docs)
                shape = shape with { Docs = int.Parse(docs, CultureInfo.InvariantCulture) };
            if (args.Contains("--ltm-build"))
                return LargerThanMemory.BuildOnly(cache, shape);
            var o = new LargerThanMemory.Options();
            if (verify || quick)
            {
                o.Rounds = 2;
                o.SettlePhaseSeconds = 1;
                o.WarmSeconds = 0.5;
                o.WindowSeconds = 0.4;
                o.MergeSeconds = 1.0;
                o.QueryCount = 200;
                o.PacedQueries = 100;
                o.Interleave = verify ? 1 : 0;
                // the small index's budgets are 2-5 MiB: the slack holds the heap's growth
                o.Slack = 64L << 20;
                o.MergeSlack = 96L << 20;
            }
            static LargerThanMemory.Kind[] KindList(string list)
                => list.Split(',').Select(Enum.Parse<LargerThanMemory.Kind>).ToArray();
            if (Arg(args, "--ltm-kinds") is string kinds)
                o.Kinds = KindList(kinds);
            if (Arg(args, "--ltm-tight-kinds") is string tight)
                o.TightKinds = tight == "none" ? Array.Empty<LargerThanMemory.Kind>() : KindList(tight);
            if (Arg(args, "--ltm-limits") is string limits)
                o.Limits = limits == "none" ? Array.Empty<double>()
                    : limits.Split(',').Select(p => double.Parse(p, CultureInfo.InvariantCulture) / 100).ToArray();
            if (Arg(args, "--ltm-rounds") is string rounds)
                o.Rounds = int.Parse(rounds, CultureInfo.InvariantCulture);
            if (Arg(args, "--ltm-window") is string window)
                o.WindowSeconds = double.Parse(window, CultureInfo.InvariantCulture);
            if (Arg(args, "--ltm-warm") is string warm)
                o.WarmSeconds = double.Parse(warm, CultureInfo.InvariantCulture);
            if (Arg(args, "--ltm-full") is string full)
                o.FullSeconds = double.Parse(full, CultureInfo.InvariantCulture);
            if (Arg(args, "--ltm-merge-window") is string mwin)
                o.MergeSeconds = double.Parse(mwin, CultureInfo.InvariantCulture);
            if (Arg(args, "--ltm-merge-rounds") is string mrounds)
                o.MergeRounds = int.Parse(mrounds, CultureInfo.InvariantCulture);
            if (Arg(args, "--ltm-merge-rate") is string mrate)
                o.MergeRate = double.Parse(mrate, CultureInfo.InvariantCulture);
            if (Arg(args, "--ltm-paced-rate") is string prate)
                o.PacedRate = double.Parse(prate, CultureInfo.InvariantCulture);
            if (Arg(args, "--ltm-paced-queries") is string pq)
                o.PacedQueries = int.Parse(pq, CultureInfo.InvariantCulture);
            if (Arg(args, "--ltm-vocabulary") is string voc)
                o.Vocabulary = int.Parse(voc, CultureInfo.InvariantCulture);
            if (Arg(args, "--ltm-queries") is string qc)
                o.QueryCount = int.Parse(qc, CultureInfo.InvariantCulture);
            if (Arg(args, "--ltm-merge-limits") is string ml)
                o.MergeLimits = ml == "none" ? Array.Empty<double>()
                    : ml.Split(',').Select(p => double.Parse(p, CultureInfo.InvariantCulture) / 100).ToArray();
            if (Arg(args, "--ltm-device") is string device)
                o.Device = device;
            if (Arg(args, "--ltm-interleave") is string il)
                o.Interleave = int.Parse(il, CultureInfo.InvariantCulture);
            o.Merges = !args.Contains("--no-merges") && o.MergeLimits.Length > 0;
            o.Settle = !args.Contains("--no-settle");
            return LargerThanMemory.Run(cache, shape, Arg(args, "--out") ?? Path.Combine(dir, "ltm.json"), o, verify);
        }

        private static string Arg(string[] args, string name)
        {
            int i = Array.IndexOf(args, name);
            return i >= 0 && i + 1 < args.Length ? args[i + 1] : null;
        }

        private static int Run(string artifacts, bool quick, string only)
        {
            if (quick)
            {
                Sizes.FileBytes = 4L << 20;
                Sizes.ByteReads = 1L << 20;
                Sizes.IndexDocs = 1000;
                Sizes.SearchDocs = 3000;
                Sizes.Queries = 100;
            }
            // In-process: no generated project to build per benchmark, which keeps the whole run
            // within minutes. Fast reads: a short throughput job; heavy operations (seconds each):
            // one invocation per iteration.
            Job fast = Job.Default.WithToolchain(InProcessEmitToolchain.Instance)
                .WithLaunchCount(1).WithWarmupCount(1).WithIterationCount(quick ? 3 : 7)
                .WithIterationTime(TimeInterval.FromMilliseconds(quick ? 50 : 150)).WithId("Short");
            Job heavy = Job.Default.WithToolchain(InProcessEmitToolchain.Instance)
                .WithStrategy(RunStrategy.Monitoring).WithLaunchCount(1).WithWarmupCount(2)
                .WithIterationCount(quick ? 2 : 7).WithId("Monitoring");
            IConfig Config(Job job) => DefaultConfig.Instance.AddJob(job)
                .AddExporter(JsonExporter.Full)
                .WithArtifactsPath(artifacts)
                .WithOptions(ConfigOptions.DisableLogFile | ConfigOptions.JoinSummary);
            bool Wanted(Type t) => only == null || only.Split(',').Contains(t.Name);
            if (Wanted(typeof(FileReads)))
                BenchmarkRunner.Run(typeof(FileReads), Config(fast));
            Type[] heavyTypes = new[] { typeof(FileWrite), typeof(DeviceLimit), typeof(ParallelSearch), typeof(Indexing) }
                .Where(Wanted).ToArray();
            if (heavyTypes.Length > 0)
                BenchmarkRunner.Run(heavyTypes, Config(heavy));
            return 0;
        }

        private static void Check(bool ok, string what)
        {
            if (!ok)
                throw new InvalidOperationException("verify failed: " + what);
            Console.WriteLine("ok   " + what);
        }

        private static int Verify()
        {
            const long len = 4L << 20;
            long searchHits = -1;
            var docs = SearchWorkload.Corpus(1500);
            var queries = SearchWorkload.Queries(docs, 60);
            foreach (Dir kind in Enum.GetValues<Dir>())
            {
                using (var w = new FileWorkload(kind, len, "verify"))
                {
                    Check(w.ReadSequential() == w.ExpectedSequential(), $"{kind} ReadSequential");
                    Check(w.ReadByte(len / 4) == w.ExpectedByteSum(len / 4), $"{kind} ReadByte");
                    Check(w.ReadRandom() == w.ExpectedRandom(), $"{kind} ReadRandom");
                    Check(w.ConcurrentCloneReads() == w.ExpectedConcurrent(), $"{kind} ConcurrentCloneReads");
                    w.Write("w");
                    Check(w.Directory.FileLength("w") == len, $"{kind} Write length");
                    using IndexInput i = w.Directory.OpenInput("w", IOContext.READ_ONCE);
                    var head = new byte[FileWorkload.WriteChunk];
                    i.Seek(len - head.Length);
                    i.ReadBytes(head, 0, head.Length);
                    Check(head.AsSpan().SequenceEqual(w.Data), $"{kind} Write bytes");
                }
                string p = Dirs.PathOf(kind, "verify-search");
                Dirs.Clear(p);
                using (var d = Dirs.Open(kind, p))
                {
                    SearchWorkload.Index(d, docs);
                    using DirectoryReader r = DirectoryReader.Open(d);
                    Check(r.NumDocs == docs.Count, $"{kind} Index ({r.NumDocs} docs)");
                    long hits = SearchWorkload.ParallelSearch(new IndexSearcher(r), queries, 2);
                    Check(hits > 0 && (searchHits < 0 || hits == searchHits), $"{kind} ParallelSearch ({hits} hits)");
                    searchHits = hits;
                }
            }
            var limit = new DeviceLimit();
            limit.Setup();
            long saved = Sizes.FileBytes;
            Sizes.FileBytes = len;
            try
            {
                limit.DirectWriteSync();
            }
            finally
            {
                Sizes.FileBytes = saved;
                limit.Cleanup();
            }
            Check(new FileInfo(Path.Combine(Dirs.PathOf(Dir.NativeDir, "limit"), "raw")).Length == len, "DeviceLimit DirectWriteSync length");
            // lucene.sh's paired rounds: one round each, every directory timed once
            string pairedIndex = Path.Combine(Dirs.Scratch, "verify-paired-index.json");
            PairedIndex(1, pairedIndex, quick: true);
            Check(File.ReadAllText(pairedIndex).Split('[').Length == 5, "paired indexing: 4 directories timed");
            string pairedReads = Path.Combine(Dirs.Scratch, "verify-paired-reads.json");
            PairedReads.Run(1, pairedReads, quick: true);
            string readsJson = File.ReadAllText(pairedReads);
            Check(PairedReads.Rows.All(r => readsJson.Contains($"\"{r.Row}\": {{\"NativeDir\": [")
                                            && readsJson.Contains($"\"{r.Baseline}\": [")),
                "paired reads: every file row timed with NativeDir and its baseline");
            string pairedWrite = Path.Combine(Dirs.Scratch, "verify-paired-write.json");
            PairedWrite.Run(1, pairedWrite, quick: true);
            Check(!OperatingSystem.IsLinux() || File.ReadAllText(pairedWrite).Split('[').Length == 4,
                "paired durable write: raw, NativeDir and SimpleFS timed");
            Check(new FileInfo(Path.Combine(Dirs.PathOf(Dir.NativeDir, "paired-write"), "w")).Length == 4L << 20,
                "paired durable write: NativeDir's file length");
            Check(MiscDirs.Run(1, null, quick: true, verify: true) == 0, "the misc directories' table");
            return 0;
        }

        /// <summary>Indexing alone, timed per run (for strace/perf outside BenchmarkDotNet).</summary>
        private static int TimeIndex(Dir kind, int runs)
        {
            var docs = SearchWorkload.Corpus(Sizes.IndexDocs);
            string p = Dirs.PathOf(kind, "time-index");
            for (int r = 0; r < runs; r++)
            {
                Dirs.Clear(p);
                TimeSpan cpu = Process.GetCurrentProcess().TotalProcessorTime;
                var sw = Stopwatch.StartNew();
                using (var d = Dirs.Open(kind, p))
                    SearchWorkload.Index(d, docs);
                double ms = sw.Elapsed.TotalMilliseconds;
                cpu = Process.GetCurrentProcess().TotalProcessorTime - cpu;
                // CPU time of every thread: under load, steadier than the wall clock
                Console.WriteLine($"{kind} index {docs.Count} docs: {ms:F1} ms (CPU {cpu.TotalMilliseconds:F1} ms)");
            }
            return 0;
        }

        /// <summary>
        /// The Indexing row's paired measurement. BenchmarkDotNet measures one directory after the
        /// other, so a disk that is slower for a minute (writeback, a neighbour) lands on one
        /// directory only, and the best of three built-ins' medians is biased low against the
        /// fourth. Here every round indexes once with each directory, back to back, in an order
        /// that rotates round by round; the per-round ratio to a baseline sees the same disk.
        /// </summary>
        private static int PairedIndex(int rounds, string outFile, bool quick)
        {
            if (quick)
                Sizes.IndexDocs = 1000;
            var docs = SearchWorkload.Corpus(Sizes.IndexDocs);
            Dir[] kinds = { Dir.NativeDir, Dir.SimpleFS, Dir.NIOFS, Dir.MMap };
            string[] paths = kinds.Select(k => Dirs.PathOf(k, "paired-index")).ToArray();
            Action Index(int i) => () =>
            {
                using var d = Dirs.Open(kinds[i], paths[i]);
                SearchWorkload.Index(d, docs);
            };
            // one round warms up (JIT), untimed; each directory starts empty, outside the timing
            var times = NativeDir.Benchmarks.PairedRounds.Time(kinds.Select((_, i) => Index(i)).ToArray(), rounds,
                warmup: 1, untimed: i => Dirs.Clear(paths[i]));
            string Json(int i) => $"\"{kinds[i]}\": [" + string.Join(", ",
                times[i].Select(t => t.ToString("F3", CultureInfo.InvariantCulture))) + "]";
            File.WriteAllText(outFile, "{" + string.Join(", ", kinds.Select((_, i) => Json(i))) + "}\n");
            for (int i = 0; i < kinds.Length; i++)
                Console.WriteLine($"{kinds[i]}: median {NativeDir.Benchmarks.PairedRounds.Median(times[i]):F1} ms over {rounds} rounds");
            return 0;
        }

        /// <summary>Writes the 64 MiB merge file with each on-disk directory and asks fincore
        /// (util-linux) how much of it stays in the page cache.</summary>
        private static int CacheCheck(string outFile)
        {
            var parts = new System.Collections.Generic.List<string>();
            foreach (Dir kind in new[] { Dir.NativeDir, Dir.SimpleFS, Dir.NIOFS, Dir.MMap })
            {
                using var w = new FileWorkload(kind, 1 << 20, "cache");
                long total = Sizes.FileBytes;
                FileWorkload.WriteFile(w.Directory, "big", w.Data, total, Dirs.MergeContext(total));
                double pct = 100.0 * Resident(Path.Combine(Dirs.PathOf(kind, "cache"), "big")) / total;
                Console.WriteLine($"{kind}: {pct:F1}% of the {total >> 20} MiB merge output cached after write+sync");
                parts.Add($"\"{kind}\": {pct.ToString("F1", CultureInfo.InvariantCulture)}");
            }
            File.WriteAllText(outFile, "{" + string.Join(", ", parts) + "}\n");
            return 0;
        }

        private static long Resident(string path)
        {
            var psi = new ProcessStartInfo("fincore", $"--bytes --noheadings --output RES \"{path}\"")
            {
                RedirectStandardOutput = true,
                UseShellExecute = false,
            };
            using Process p = Process.Start(psi) ?? throw new InvalidOperationException("fincore did not start");
            string o = p.StandardOutput.ReadToEnd().Trim();
            p.WaitForExit();
            if (p.ExitCode != 0 || !long.TryParse(o, out long res))
                throw new InvalidOperationException($"fincore {path}: exit {p.ExitCode}, output '{o}'");
            return res;
        }
    }
}
