using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Text;
using System.Text.Json;
using System.Threading;
using Lucene.Net.Analysis.Standard;
using Lucene.Net.Documents;
using Lucene.Net.Index;
using Lucene.Net.Search;
using Lucene.Net.Store;
using Lucene.Net.Util;
using NativeDir.Lucene.Tests;
using LuceneDirectory = Lucene.Net.Store.Directory;

namespace NativeDir.Lucene.Benchmarks
{
    /// <summary>
    /// Search on an index larger than the memory the process is given, and search while merges
    /// run (bench/suites.d/lucene_ltm.sh). The process runs under <c>nd_memlimit run</c>; before
    /// each cell it drops the index's pages from the page cache and limits its memory cgroup to a
    /// share of the index's size as page cache on top of its own memory (<see cref="MemLimit"/>),
    /// so an index of N bytes under a 25% limit is searched as on a machine with N/4 of memory for
    /// the page cache. Each cell opens the directory afresh, runs the query set once (untimed: the
    /// cache reaches what this limit holds), then searches with several threads for a fixed
    /// window: queries per second and the latency percentiles. The merge cells add documents on
    /// one more thread with merges of the index's segments running, and roll the writer back at
    /// the end, so the cached index is never changed.
    /// </summary>
    internal static class LargerThanMemory
    {
        /// <summary>What the index is made of; its key names the cached copy.</summary>
        internal sealed record Shape(int Docs, int Segments, int BodyMembers, int StoredMembers, int Seed)
        {
            // bump when the generator or the index settings change: a cached index of the old
            // kind must not be taken for the new
            internal const int Generation = 1;

            internal string Key(int corpusCount) =>
                $"ltm-g{Generation}-d{Docs}-s{Segments}-b{BodyMembers}-m{StoredMembers}-r{Seed}-c{corpusCount}";
        }

        /// <summary>The directories compared; the NativeDir variants differ in their policy.</summary>
        internal enum Kind
        {
            NativeDir,
            MMap,
            NIOFS,
            SimpleFS,
            // A/B variants, only run when named (--ltm-kinds)
            NativeDirHybrid,
            NativeDirAllRandom,
            NativeDirBuffered,
            NativeDirMergeReadMapped,
            NativeDirBufferedSearch,
            NativeDirBufferedNormal,
            NativeDirMapped,
            NativeDirPositional,
            NativeDirPositionalRandom,
            NativeDirPositionalNormal,
            NativeDirPositional4K,
            NativeDirPositional1K,
            NativeDirPositional16K,
            NativeDirPositional64K,
        }

        /// <summary>The memory mode a variant forces while its cell runs (null: the default's).</summary>
        internal static MemoryMode? ModeOf(Kind k) => k switch
        {
            Kind.NativeDirMapped => MemoryMode.Mapped,
            Kind.NativeDirPositional or Kind.NativeDirPositionalRandom or Kind.NativeDirPositionalNormal
                or Kind.NativeDirPositional4K or Kind.NativeDirPositional1K
                or Kind.NativeDirPositional16K or Kind.NativeDirPositional64K => MemoryMode.Positional,
            _ => null,
        };

        internal static readonly Kind[] Builtins = { Kind.MMap, Kind.NIOFS, Kind.SimpleFS };

        internal static string Label(Kind k) => k switch
        {
            Kind.NativeDir => "NativeDir.Lucene NativeFSDirectory",
            Kind.NativeDirHybrid => "NativeDir.Lucene NativeFSDirectory (stored fields buffered)",
            Kind.MMap => "Lucene.NET MMapDirectory",
            Kind.NIOFS => "Lucene.NET NIOFSDirectory",
            Kind.SimpleFS => "Lucene.NET SimpleFSDirectory",
            Kind.NativeDirAllRandom => "NativeDir.Lucene NativeFSDirectory (every search file random)",
            Kind.NativeDirBuffered => "NativeDir.Lucene NativeFSDirectory (merges buffered)",
            Kind.NativeDirMergeReadMapped => "NativeDir.Lucene NativeFSDirectory (merge inputs mapped)",
            Kind.NativeDirBufferedSearch => "NativeDir.Lucene NativeFSDirectory (searches buffered, advice per file)",
            Kind.NativeDirBufferedNormal => "NativeDir.Lucene NativeFSDirectory (searches buffered, no advice)",
            _ => k.ToString(),
        };

        internal static LuceneDirectory Open(Kind k, string path) => k switch
        {
            Kind.NativeDir => new NativeFSDirectory(path),
            Kind.NativeDirHybrid => new NativeFSDirectory(path, null, new StoredFieldsBuffered()),
            Kind.MMap => new MMapDirectory(new DirectoryInfo(path)),
            Kind.NIOFS => new NIOFSDirectory(new DirectoryInfo(path)),
            Kind.SimpleFS => new SimpleFSDirectory(new DirectoryInfo(path)),
            Kind.NativeDirAllRandom => new NativeFSDirectory(path, null, new AllRandom()),
            Kind.NativeDirBuffered => new NativeFSDirectory(path, null, new IoStrategyPolicy(long.MaxValue)),
            Kind.NativeDirMergeReadMapped => new NativeFSDirectory(path, null, new MergeReads(IoOptions.Mapped | IoOptions.Sequential)),
            Kind.NativeDirBufferedSearch => new NativeFSDirectory(path, null, new SearchesBuffered(keepAdvice: true)),
            Kind.NativeDirBufferedNormal => new NativeFSDirectory(path, null, new SearchesBuffered(keepAdvice: false)),
            Kind.NativeDirMapped or Kind.NativeDirPositional => new NativeFSDirectory(path),
            Kind.NativeDirPositionalRandom => new NativeFSDirectory(path, null, new AllRandom()),
            Kind.NativeDirPositionalNormal => new NativeFSDirectory(path, null, new NoAdvice()),
            Kind.NativeDirPositional4K => new NativeFSDirectory(path, null, new Buffers(4096)),
            Kind.NativeDirPositional1K => new NativeFSDirectory(path, null, new Buffers(1024)),
            Kind.NativeDirPositional16K => new NativeFSDirectory(path, null, new Buffers(16384)),
            Kind.NativeDirPositional64K => new NativeFSDirectory(path, null, new Buffers(65536)),
            _ => throw new ArgumentOutOfRangeException(nameof(k)),
        };

        /// <summary>Stored fields and term vectors read through a buffer with the OS's normal
        /// read-ahead instead of mapped with random advice: a chunk is then one read (a mapping
        /// faults it in page by page, one device read each, once it is not cached).</summary>
        internal sealed class StoredFieldsBuffered : IoStrategyPolicy
        {
            public override IoOptions ForInput(string name, IOContext context)
            {
                string ext = IndexFileNames.GetExtension(name ?? "");
                if ((ext == "fdt" || ext == "tvd") && (context == null || context.Context != IOContext.UsageContext.MERGE)
                    && (context == null || !context.ReadOnce))
                    return IoOptions.None;
                return base.ForInput(name, context);
            }
        }

        /// <summary>Merge inputs opened with the given flags instead of the policy's (direct I/O for
        /// a large merge).</summary>
        internal sealed class MergeReads : IoStrategyPolicy
        {
            private readonly IoOptions _flags;

            internal MergeReads(IoOptions flags) => _flags = flags;

            public override IoOptions ForInput(IOContext context) =>
                context != null && context.Context == IOContext.UsageContext.MERGE && !context.ReadOnce
                    ? _flags : base.ForInput(context);
        }

        /// <summary>Search inputs read through buffers (positional reads) instead of mapped, with the
        /// default's advice per file or none.</summary>
        internal sealed class SearchesBuffered : IoStrategyPolicy
        {
            private readonly bool _keepAdvice;

            internal SearchesBuffered(bool keepAdvice) => _keepAdvice = keepAdvice;

            public override IoOptions ForInput(string name, IOContext context)
            {
                IoOptions flags = base.ForInput(name, context) & ~IoOptions.Mapped;
                return _keepAdvice ? flags : flags & ~IoOptions.Random;
            }
        }

        /// <summary>No access advice on any search input.</summary>
        internal sealed class NoAdvice : IoStrategyPolicy
        {
            public override IoOptions AdviceFor(string name) => IoOptions.None;
        }

        /// <summary>Every input's managed buffer of one size.</summary>
        internal sealed class Buffers : IoStrategyPolicy
        {
            private readonly int _size;

            internal Buffers(int size) => _size = size;

            public override int InputBufferSize(IOContext context) => _size;
        }

        /// <summary>Every search input mapped with random advice (no read-around).</summary>
        internal sealed class AllRandom : IoStrategyPolicy
        {
            public override IoOptions AdviceFor(string name) => IoOptions.Random;
        }

        // ---- the documents ----

        /// <summary>Document i, the same on every machine with the same SDK: its body is
        /// <see cref="Shape.BodyMembers"/> documented members of the corpus (indexed and stored),
        /// and a stored-only "source" field holds <see cref="Shape.StoredMembers"/> more (the
        /// original record a results page shows, as an application stores it beside the text it
        /// searches).</summary>
        internal sealed class Source
        {
            private readonly List<(string Id, string Body)> _corpus;
            private readonly Shape _shape;

            internal Source(List<(string Id, string Body)> corpus, Shape shape)
            {
                _corpus = corpus;
                _shape = shape;
            }

            internal static ulong Mix(ulong z)
            {
                z += 0x9E3779B97F4A7C15ul;
                z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ul;
                z = (z ^ (z >> 27)) * 0x94D049BB133111EBul;
                return z ^ (z >> 31);
            }

            internal sealed class Fields
            {
                internal readonly Field Id = new StringField("id", "", Field.Store.YES);
                internal readonly Field Body = new TextField("body", "", Field.Store.YES);
                internal readonly Field Stored = new StoredField("source", "");
                internal readonly Document Doc = new();
                internal readonly StringBuilder Text = new();

                internal Fields()
                {
                    Doc.Add(Id);
                    Doc.Add(Body);
                    Doc.Add(Stored);
                }
            }

            internal Document Fill(Fields f, long i)
            {
                ulong s = Mix((ulong)i * 0x100000001B3ul + (ulong)_shape.Seed);
                int n = _corpus.Count;
                f.Id.SetStringValue("d" + i.ToString(CultureInfo.InvariantCulture));
                f.Text.Clear();
                for (int k = 0; k < _shape.BodyMembers; k++)
                {
                    s = Mix(s);
                    f.Text.Append(k > 0 ? " " : "").Append(_corpus[(int)(s % (ulong)n)].Body);
                }
                f.Body.SetStringValue(f.Text.ToString());
                f.Text.Clear();
                for (int k = 0; k < _shape.StoredMembers; k++)
                {
                    s = Mix(s);
                    var (id, body) = _corpus[(int)(s % (ulong)n)];
                    f.Text.Append("<member name=\"").Append(id).Append("\">").Append(body).Append("</member>\n");
                }
                f.Stored.SetStringValue(f.Text.ToString());
                return f.Doc;
            }
        }

        // ---- the index, built once and kept ----

        internal sealed record Built(string Path, long Bytes, int Docs, int Segments, double BuildSeconds, bool Reused);

        /// <summary>The index of <paramref name="shape"/> under <paramref name="cacheRoot"/>, built
        /// first if no complete copy is there (a copy is complete once renamed into place).</summary>
        internal static Built Ensure(string cacheRoot, Shape shape, List<(string Id, string Body)> corpus)
        {
            string key = shape.Key(corpus.Count);
            string path = Path.Combine(cacheRoot, key);
            if (System.IO.Directory.Exists(path) && File.Exists(Path.Combine(path, "ltm-index.json")))
            {
                var info = JsonDocument.Parse(File.ReadAllText(Path.Combine(path, "ltm-index.json"))).RootElement;
                return new Built(path, IndexBytes(path), info.GetProperty("docs").GetInt32(),
                    info.GetProperty("segments").GetInt32(), info.GetProperty("build_seconds").GetDouble(), true);
            }
            System.IO.Directory.CreateDirectory(cacheRoot);
            // other shapes' copies are stale: one index of this size is enough to keep
            foreach (string old in System.IO.Directory.GetDirectories(cacheRoot, "ltm-*"))
                System.IO.Directory.Delete(old, recursive: true);
            string partial = path + ".partial";
            Dirs.Clear(partial);
            var sw = Stopwatch.StartNew();
            var source = new Source(corpus, shape);
            using (var dir = new NativeFSDirectory(partial))
            {
                var cfg = new IndexWriterConfig(LuceneVersion.LUCENE_48, new StandardAnalyzer(LuceneVersion.LUCENE_48))
                {
                    OpenMode = OpenMode.CREATE,
                    // segments of one size, none merged while building: the merge cells merge them
                    MergePolicy = NoMergePolicy.NO_COMPOUND_FILES,
                    UseCompoundFile = false,
                    MaxBufferedDocs = Math.Max(2, shape.Docs / shape.Segments),
                    RAMBufferSizeMB = IndexWriterConfig.DISABLE_AUTO_FLUSH,
                };
                using var w = new IndexWriter(dir, cfg);
                long next = -1;
                const int Unit = 1000;
                var threads = Enumerable.Range(0, Math.Max(1, Environment.ProcessorCount)).Select(_ => new Thread(() =>
                {
                    var f = new Source.Fields();
                    for (long u; (u = Interlocked.Increment(ref next)) * Unit < shape.Docs;)
                        for (long i = u * Unit; i < Math.Min(shape.Docs, (u + 1) * Unit); i++)
                            w.AddDocument(source.Fill(f, i));
                })).ToList();
                threads.ForEach(t => t.Start());
                threads.ForEach(t => t.Join());
                w.Commit();
            }
            double secs = sw.Elapsed.TotalSeconds;
            int segments;
            using (var d = new NIOFSDirectory(new DirectoryInfo(partial)))
            using (var r = DirectoryReader.Open(d))
            {
                if (r.NumDocs != shape.Docs)
                    throw new InvalidOperationException($"the built index holds {r.NumDocs} documents, not {shape.Docs}");
                segments = r.Leaves.Count;
            }
            File.WriteAllText(Path.Combine(partial, "ltm-index.json"), JsonSerializer.Serialize(new Dictionary<string, object>
            {
                ["key"] = key, ["docs"] = shape.Docs, ["segments"] = segments, ["build_seconds"] = Math.Round(secs, 1),
            }) + "\n");
            System.IO.Directory.Move(partial, path);
            return new Built(path, IndexBytes(path), shape.Docs, segments, secs, false);
        }

        internal static long IndexBytes(string path) =>
            new DirectoryInfo(path).GetFiles().Where(f => f.Name != "ltm-index.json").Sum(f => f.Length);

        // ---- searching ----

        internal sealed class Drive
        {
            internal long Queries;
            internal long Hits;
            internal double Seconds;
            internal long CpuTicks; // the search threads' CPU time (ThreadCpu)
            internal long SysTicks; // its system part
            internal double[] LatenciesMs = Array.Empty<double>();
            // those of the window's first queries (Search's `common`), the same queries for every
            // directory
            internal double[] CommonLatenciesMs = Array.Empty<double>();

            internal double Qps => Seconds > 0 ? Queries / Seconds : 0;

            internal double Percentile(double p) => Percentile(LatenciesMs, p);

            internal static double Percentile(double[] latencies, double p)
            {
                if (latencies.Length == 0)
                    return 0;
                var s = (double[])latencies.Clone();
                Array.Sort(s);
                return s[Math.Min(s.Length - 1, (int)Math.Ceiling(p * s.Length) - 1)];
            }
        }

        /// <summary>Runs the queries on <paramref name="threads"/> threads from
        /// <paramref name="start"/> on, each taking the next from a shared counter (as a server's
        /// threads take requests), each a results page: the top 10 and their stored documents.
        /// Stops after <paramref name="max"/> queries or at <paramref name="seconds"/>, whichever
        /// comes first. With a <paramref name="rate"/> (queries a second, all threads together)
        /// query n of the window is due n / rate seconds after its start and is not started
        /// before; its latency counts from when it was due, so a directory that falls behind
        /// shows it in its latency rather than by asking for less (an open-loop load). Without
        /// one every thread runs its next query as soon as the last is done (a closed loop: the
        /// faster the directory, the more of the CPU its searches take). The latencies of the
        /// queries numbered below <paramref name="start"/> + <paramref name="common"/> are also
        /// kept apart (<see cref="Drive.CommonLatenciesMs"/>).</summary>
        internal static Drive Search(IndexSearcher searcher, Query[] queries, int threads, long start, long max, double seconds,
            double rate = 0, long common = 0, CacheFull full = null)
        {
            long next = start - 1, end = max >= 0 ? start + max : long.MaxValue;
            var sw = Stopwatch.StartNew();
            long begin = Stopwatch.GetTimestamp();
            double deadline = seconds * 1000;
            var lat = new ConcurrentBag<double[]>();
            var first = new ConcurrentBag<double[]>();
            long hits = 0, cpu = 0, sys = 0;
            var ts = Enumerable.Range(0, threads).Select(_ => new Thread(() =>
            {
                var mine = new List<double>(1024);
                var myFirst = new List<double>();
                long h = 0, c0 = ThreadCpu.Ticks(out long s0);
                for (long i; sw.Elapsed.TotalMilliseconds < deadline && full?.Reached != true
                     && (i = Interlocked.Increment(ref next)) < end;)
                {
                    long t0 = Stopwatch.GetTimestamp();
                    if (rate > 0)
                    {
                        t0 = begin + (long)((i - start) / rate * Stopwatch.Frequency);
                        long early = t0 - Stopwatch.GetTimestamp();
                        if (early > 0)
                            Thread.Sleep(TimeSpan.FromTicks(early * TimeSpan.TicksPerSecond / Stopwatch.Frequency));
                        if (sw.Elapsed.TotalMilliseconds >= deadline)
                            break; // due after the window
                    }
                    TopDocs top = searcher.Search(queries[i % queries.Length], 10);
                    h += top.TotalHits;
                    foreach (ScoreDoc sd in top.ScoreDocs)
                        h += searcher.Doc(sd.Doc).Get("id").Length > 0 ? 0 : 1_000_000;
                    double ms = Stopwatch.GetElapsedTime(t0).TotalMilliseconds;
                    mine.Add(ms);
                    if (i - start < common)
                        myFirst.Add(ms);
                }
                lat.Add(mine.ToArray());
                first.Add(myFirst.ToArray());
                Interlocked.Add(ref hits, h);
                Interlocked.Add(ref cpu, ThreadCpu.Ticks(out long s1) - c0);
                Interlocked.Add(ref sys, s1 - s0);
            })).ToList();
            ts.ForEach(t => t.Start());
            ts.ForEach(t => t.Join());
            full?.Dispose();
            var all = lat.SelectMany(a => a).ToArray();
            return new Drive { Queries = all.Length, Hits = hits, Seconds = sw.Elapsed.TotalSeconds, CpuTicks = cpu, SysTicks = sys, LatenciesMs = all,
                CommonLatenciesMs = first.SelectMany(a => a).ToArray() };
        }

        /// <summary>The untimed warm-up before a cell's window: the query set once, or
        /// <see cref="Options.WarmSeconds"/>, or until the cgroup has been at its limit for
        /// <see cref="Options.FullSeconds"/>. A cache of a tenth of the index is full within half a
        /// second, and the rest of a fixed warm-up searched a cache in its steady state. Two
        /// seconds, not one: a directory that adapts to the memory it has (NativeFSDirectory's
        /// reads turn positional once the full cache thrashes, three samples of 250 ms) then
        /// fills the cache with what its new reads keep before the window; with one, its cache
        /// could still hold what the mapping had read when the window began. A cache that never
        /// fills (an index that fits) warms for the query set or the whole time.</summary>
        internal static Drive Warm(IndexSearcher searcher, Query[] queries, Options o) =>
            Search(searcher, queries, o.Threads, 0, queries.Length, o.WarmSeconds,
                full: o.FullSeconds > 0 ? new CacheFull(o.FullSeconds) : null);

        /// <summary>Whether the cgroup's memory has stayed within a few MiB of its limit for a
        /// while: sampled every 50 ms from the cgroup's own files (v1 or v2).</summary>
        internal sealed class CacheFull : IDisposable
        {
            private readonly string usage, limit;
            private readonly Timer timer;
            private readonly double seconds;
            private readonly Stopwatch since = new();
            private volatile bool reached;

            internal CacheFull(double seconds)
            {
                this.seconds = seconds;
                string cg = Environment.GetEnvironmentVariable("ND_MEMLIMIT_CGROUP") ?? "/nonexistent";
                bool v2 = File.Exists(Path.Combine(cg, "memory.max"));
                usage = Path.Combine(cg, v2 ? "memory.current" : "memory.usage_in_bytes");
                limit = Path.Combine(cg, v2 ? "memory.max" : "memory.limit_in_bytes");
                timer = new Timer(_ => Sample(), null, 0, 50);
            }

            internal bool Reached => reached;

            private void Sample()
            {
                try
                {
                    long u = long.Parse(File.ReadAllText(usage).Trim(), CultureInfo.InvariantCulture);
                    string l = File.ReadAllText(limit).Trim();
                    // within 3% of the limit, or 8 MiB: the kernel reclaims a little below it
                    bool atLimit = l != "max" && long.TryParse(l, NumberStyles.Integer, CultureInfo.InvariantCulture, out long lim)
                        && u >= lim - Math.Max(8L << 20, lim / 33);
                    if (!atLimit)
                        since.Reset();
                    else if (!since.IsRunning)
                        since.Start();
                    if (since.Elapsed.TotalSeconds >= seconds)
                        reached = true;
                }
                catch (Exception e) when (e is IOException or UnauthorizedAccessException or FormatException)
                {
                    // no cgroup to read: the warm-up runs its full course
                }
            }

            public void Dispose() => timer.Dispose();
        }

        internal sealed class Options
        {
            internal double[] Limits = { 1.0, 0.5, 0.25, 0.10, 0.05 };
            // the A/B variants (NativeDirHybrid and the others) run when named: --ltm-kinds
            internal Kind[] Kinds = { Kind.NativeDir, Kind.MMap, Kind.NIOFS, Kind.SimpleFS };
            // policy variants measured beside the default at the limits at or below TightLimit
            // (none by default: --ltm-tight-kinds)
            internal Kind[] TightKinds = Array.Empty<Kind>();
            internal double TightLimit = 0.10;
            // Built-ins that earn their rounds at each limit: the first round runs them in full, the
            // rounds after it only if they came to FarBehind of the best built-in of that round
            // there (the rows of the others say so). MMapDirectory falls to a few dozen queries a
            // second below half of the index on the 8 MiB read-ahead disk (each fault reads around
            // the page by the device's read-ahead, evicting what the next queries need), and
            // NIOFSDirectory to 0.4-0.8x SimpleFSDirectory at the tight limits (a lock per read);
            // where the index fits, NIOFSDirectory has served 0.8-1.3x SimpleFSDirectory's queries
            // in a round, so there it runs every round and may be the baseline
            internal Kind[] ScreenedKinds = { Kind.MMap, Kind.NIOFS };
            internal double FarBehind = 0.8;
            internal int Threads = 4;
            internal double WarmSeconds = 3; // the query set once, or this long: a cold cache fills
            internal double FullSeconds = 2; // or until the cache has been full this long (Warm)
            internal double WindowSeconds = 1.5;
            // A search cell's window starts at the first query for every directory, and its p99 is
            // that of its first CommonQueries queries: the same queries for all (the slowest
            // built-in judged, SimpleFS at 5% on the 128 KiB read-ahead device, finishes about 600
            // in the window). The p99 of the whole window, whose later queries differ with the
            // directory's rate, is kept as p99_all_ms.
            internal int CommonQueries = 500;
            // After the unpaced window, the same first queries at a fixed offered rate, the same
            // for every directory at every limit (PacedRate, all threads together): the latency
            // judged. In the unpaced window every directory's four threads share two cores, so a
            // directory that never waits for the device runs its slowest queries at half a core
            // while one that waits on refaults lends them its share: that p99 ranks how busy the
            // CPU is, not how long a query takes. At one offered rate it ranks the directories'
            // latency at equal load. The rate is below what the slowest built-in judged serves
            // unpaced (SimpleFS at 5% on the 128 KiB read-ahead device, about 400 q/s), so every
            // directory judged keeps up; one far behind (ScreenedKinds) cannot, and its paced
            // window ends after PacedQueries / PacedRate + 1 s (0: no paced window).
            internal double PacedRate = 250;
            internal int PacedQueries = 400; // 1.6 s: its p99 is the fifth slowest
            internal double[] MergeLimits = { 0.25, 0.10 };
            internal double MergeSeconds = 3; // each of the merge cell's two windows
            // the offered search rate of the merge cell's second window: about half of what the
            // slowest built-in serves unpaced at its limit, so that every directory keeps up
            internal double MergeRate = 150;
            // the merge cell's rounds in each round of the run
            internal int MergeRounds = 1;
            internal int Rounds = 3;
            // --ltm-interleave N: the run's directories at each limit also search one shared
            // cache in N alternating windows each (InterleavedCell); 0: not run
            internal int Interleave = 0;
            // the device the index is on, for the report (lucene_ltm.sh: its name and read-ahead)
            internal string Device = "";
            // the settle cells: how long NativeDir takes to reach the rate of a limit after the
            // limit changes under its searches (from SettleHigh to SettleLow and back)
            internal bool Settle = true;
            internal double SettleHigh = 1.0, SettleLow = 0.10, SettlePhaseSeconds = 8;
            internal bool Merges = true;
            internal int QueryCount = 2000;
            internal int Vocabulary = 4000;
            // On top of the page-cache budget and the process's own memory at the start of a
            // cell, room for what the process allocates during it (heap growth between
            // collections, thread stacks, the kernel's own objects) and for the runtime's code
            // pages, which are page cache too: without it the kernel's OOM killer ends a process
            // whose heap grows a little under a small limit. On the recorded index the budget
            // itself is 100 MiB or more and takes up what the slack does not; the small index
            // of --verify has a budget of a few MiB, so there the slack alone must hold it all
            // (Program.Ltm sets it larger). The cache a cell actually held is in its results
            // (cgroup_file_bytes).
            internal long Slack = 16L << 20;
            // the same for a merge cell, whose writer also fills its indexing buffer
            // (IndexWriterConfig's default 16 MB) and whose merges hold their own buffers
            internal long MergeSlack = 64L << 20;
        }

        /// <summary>The directories of the search cells at a limit: the run's, and at the tight
        /// limits the policy variants measured there.</summary>
        internal static Kind[] SearchKinds(Options o, double limit)
            => limit <= o.TightLimit ? o.Kinds.Concat(o.TightKinds.Except(o.Kinds)).ToArray() : o.Kinds;

        /// <summary>Whether directory <paramref name="k"/> runs the merge cells of round
        /// <paramref name="round"/>: every round, but those of <see cref="Options.ScreenedKinds"/>
        /// (named only when no other built-in is, <see cref="MergeKinds"/>) only the first.</summary>
        internal static bool MergesInRound(Kind k, int round, Options o)
            => round == 0 || !o.ScreenedKinds.Contains(k);

        /// <summary>The search cells' directories at limit <paramref name="li"/> in round
        /// <paramref name="round"/>: all of them in the first, then all but those found far behind
        /// there (<see cref="Screen"/>).</summary>
        internal static Kind[] SearchKindsInRound(Options o, int li, int round, Dictionary<(Kind, int), double> far)
            => SearchKinds(o, o.Limits[li]).Where(k => round == 0 || !far.ContainsKey((k, li))).ToArray();

        /// <summary>After the first round at limit <paramref name="li"/>: each directory of
        /// <see cref="Options.ScreenedKinds"/> that served less than <see cref="Options.FarBehind"/>
        /// of the queries of the best built-in of that round is far behind there and runs no more
        /// rounds at that limit (its cell records its share).</summary>
        internal static void Screen(Options o, int li, Dictionary<Kind, Dictionary<string, object>> first,
            Dictionary<(Kind, int), double> far)
        {
            double best = first.Where(e => Builtins.Contains(e.Key)).Select(e => (double)e.Value["qps"]).DefaultIfEmpty(0).Max();
            foreach (Kind k in o.ScreenedKinds)
            {
                if (best <= 0 || !first.TryGetValue(k, out var cell))
                    continue;
                double share = (double)cell["qps"] / best;
                if (share < o.FarBehind)
                {
                    far[(k, li)] = share;
                    cell["far_behind"] = Math.Round(share, 3);
                }
            }
        }

        /// <summary>The directories of the merge cells: the run's, but those of
        /// <see cref="Options.ScreenedKinds"/> only when no other built-in is named, and
        /// MMapDirectory only when it is the only built-in named. Beside a merge NIOFSDirectory
        /// searched 0.6-0.9x SimpleFSDirectory's queries at both limits on both devices and
        /// MMapDirectory about 20 a second (its read-around evicts the cache, see the search
        /// cells), too few to keep the paced window's offered rate.</summary>
        internal static Kind[] MergeKinds(Options o)
        {
            Kind[] every = o.Kinds.Where(k => !o.ScreenedKinds.Contains(k)).ToArray();
            if (every.Any(Builtins.Contains))
                return every;
            Kind[] others = o.Kinds.Where(k => k != Kind.MMap).ToArray();
            return others.Any(Builtins.Contains) ? others : o.Kinds;
        }

        private static void Release()
        {
            // a mapping (MMapDirectory's) goes when its inputs are collected
            for (int i = 0; i < 2; i++)
            {
                GC.Collect();
                GC.WaitForPendingFinalizers();
            }
        }

        /// <summary>Limits the cgroup to <paramref name="cacheBytes"/> of page cache on top of the
        /// process's own memory now, right after <see cref="Release"/> (what a directory allocates
        /// during its own cell is taken from its own cache).</summary>
        private static MemLimit.Stat LimitCache(long cacheBytes) => MemLimit.LimitCache(cacheBytes);

        private static Dictionary<string, object> Common(Kind k, double pct, Built idx, MemLimit.Stat limit, long leftCached, long slack)
            => new()
            {
                ["directory"] = k.ToString(), ["label"] = Label(k), ["limit_pct"] = Math.Round(pct * 100),
                ["cache_budget_bytes"] = (long)(pct * idx.Bytes), ["cgroup_limit_bytes"] = limit.Limit,
                ["own_bytes"] = limit.Limit - (long)(pct * idx.Bytes) - slack, ["slack_bytes"] = slack,
                ["cached_before_bytes"] = leftCached,
            };

        private static void AddDrive(Dictionary<string, object> cell, Drive d, string prefix = "")
        {
            cell[prefix + "qps"] = Math.Round(d.Qps, 2);
            cell[prefix + "p50_ms"] = Math.Round(d.Percentile(0.50), 3);
            cell[prefix + "p99_ms"] = Math.Round(d.Percentile(0.99), 3);
            cell[prefix + "queries"] = d.Queries;
            cell[prefix + "seconds"] = Math.Round(d.Seconds, 3);
            cell[prefix + "search_cpu_s"] = Math.Round(d.CpuTicks / ThreadCpu.TicksPerSecond, 2);
            cell[prefix + "search_sys_s"] = Math.Round(d.SysTicks / ThreadCpu.TicksPerSecond, 2);
        }

        /// <summary>The process's garbage collections so far: their pauses (every thread stopped,
        /// so a query in flight waits them out: the latency's tail), how many, and the bytes
        /// allocated. A window's are the difference of two.</summary>
        internal readonly record struct GcTally(TimeSpan Pause, int Count, long Allocated)
        {
            internal static GcTally Now() => new(GC.GetTotalPauseDuration(), GC.CollectionCount(0), GC.GetTotalAllocatedBytes());

            internal GcTally Since(GcTally start) => new(Pause - start.Pause, Count - start.Count, Allocated - start.Allocated);

            internal void AddTo(Dictionary<string, object> cell, string prefix)
            {
                cell[prefix + "gc_pause_s"] = Math.Round(Pause.TotalSeconds, 3);
                cell[prefix + "gc_count"] = Count;
                cell[prefix + "allocated_bytes"] = Allocated;
            }
        }

        /// <summary>One search cell: the index evicted, the limit set, the directory opened, the
        /// queries once untimed, then the window.</summary>
        internal static Dictionary<string, object> SearchCell(Kind k, double pct, Built idx, Query[] queries, Options o, out long warmHits,
            bool paced = true)
        {
            long hits = 0;
            var cell = InMode(k, () => SearchCellIn(k, pct, idx, queries, o, paced, out hits));
            warmHits = hits;
            return cell;
        }

        /// <summary>Runs a cell in the memory mode its kind forces (<see cref="ModeOf"/>), if any.</summary>
        private static T InMode<T>(Kind k, Func<T> cell)
        {
            MemoryMode was = IoPolicy.MemoryMode;
            if (ModeOf(k) is MemoryMode m)
                IoPolicy.MemoryMode = m;
            try
            {
                return cell();
            }
            finally
            {
                IoPolicy.MemoryMode = was;
            }
        }

        private static Dictionary<string, object> SearchCellIn(Kind k, double pct, Built idx, Query[] queries, Options o, bool paced,
            out long warmHits)
        {
            Release();
            long left = MemLimit.Evict(idx.Path);
            MemLimit.Stat limit = LimitCache((long)(pct * idx.Bytes) + o.Slack);
            var cell = Common(k, pct, idx, limit, left, o.Slack);
            using (LuceneDirectory dir = Open(k, idx.Path))
            using (DirectoryReader reader = DirectoryReader.Open(dir))
            {
                var searcher = new IndexSearcher(reader);
                Drive warm = Warm(searcher, queries, o);
                warmHits = warm.Queries == queries.Length ? warm.Hits : -1;
                cell["warm_queries"] = warm.Queries;
                cell["warm_seconds"] = Math.Round(warm.Seconds, 3);
                var c0 = Counters.Read();
                var gc0 = GcTally.Now();
                Drive d = Search(searcher, queries, o.Threads, 0, -1, o.WindowSeconds, common: o.CommonQueries);
                var c1 = Counters.Read();
                var gc1 = GcTally.Now();
                AddDrive(cell, d);
                gc1.Since(gc0).AddTo(cell, "");
                cell["p99_all_ms"] = cell["p99_ms"];
                cell["p99_ms"] = Math.Round(Drive.Percentile(d.CommonLatenciesMs, 0.99), 3);
                cell["p99_queries"] = d.CommonLatenciesMs.Length;
                if (paced && o.PacedRate > 0)
                {
                    var gp0 = GcTally.Now();
                    Drive pd = Search(searcher, queries, o.Threads, 0, o.PacedQueries, o.PacedQueries / o.PacedRate + 1, o.PacedRate);
                    GcTally.Now().Since(gp0).AddTo(cell, "paced_");
                    cell["paced_rate"] = o.PacedRate;
                    cell["paced_qps"] = Math.Round(pd.Qps, 2);
                    cell["paced_p50_ms"] = Math.Round(pd.Percentile(0.50), 3);
                    cell["paced_p99_ms"] = Math.Round(pd.Percentile(0.99), 3);
                    cell["paced_queries"] = pd.Queries;
                    cell["paced_search_cpu_s"] = Math.Round(pd.CpuTicks / ThreadCpu.TicksPerSecond, 2);
                }
                cell["refaults_per_s"] = Math.Round((c1.Refaults - c0.Refaults) / d.Seconds, 1);
                cell["majfaults_per_s"] = Math.Round((c1.MajFaults - c0.MajFaults) / d.Seconds, 1);
                cell["pages_in_per_s"] = Math.Round((c1.PagesIn - c0.PagesIn) / d.Seconds, 1);
                cell["device_mib_per_s"] = Math.Round((c1.ReadBytes - c0.ReadBytes) / d.Seconds / (1 << 20), 2);
                // read system calls per query (the process's: positional reads of the index, and
                // the runtime's own few)
                cell["read_calls_per_query"] = d.Queries > 0 ? Math.Round((double)(c1.ReadCalls - c0.ReadCalls) / d.Queries, 1) : 0;
                MemLimit.Stat after = MemLimit.Read();
                cell["cgroup_file_bytes"] = after.File;
                cell["cgroup_anon_bytes"] = after.Anon;
                cell["index_cached_bytes"] = MemLimit.Cached(idx.Path);
            }
            return cell;
        }

        /// <summary>
        /// The directories of <paramref name="kinds"/> open together on the index under one limit,
        /// each warmed with the query set once, then searching in <see cref="Options.Interleave"/>
        /// windows of <see cref="Options.WindowSeconds"/> each, taking turns (the first rotating):
        /// a steady state in which a slowed CPU or a busy disk hits every directory alike, so the
        /// per-window ratios tell a difference of a few percent. They share the page cache, so this
        /// says something only where what they read fits it (100% and 50% of the index).
        /// </summary>
        internal static Dictionary<string, object> InterleavedCell(Kind[] kinds, double pct, Built idx, Query[] queries, Options o)
        {
            Release();
            long left = MemLimit.Evict(idx.Path);
            MemLimit.Stat limit = LimitCache((long)(pct * idx.Bytes) + o.Slack);
            var cell = Common(kinds[0], pct, idx, limit, left, o.Slack);
            cell.Remove("directory");
            cell.Remove("label");
            cell["kind"] = "interleaved";
            cell["directories"] = kinds.Select(k => k.ToString()).ToArray();
            var dirs = kinds.Select(k => Open(k, idx.Path)).ToArray();
            var readers = dirs.Select(d => DirectoryReader.Open(d)).ToArray();
            try
            {
                var searchers = readers.Select(r => new IndexSearcher(r)).ToArray();
                foreach (IndexSearcher s in searchers)
                    Search(s, queries, o.Threads, 0, queries.Length, 60);
                var qps = kinds.Select(_ => new List<double>()).ToArray();
                var cpuMs = kinds.Select(_ => new List<double>()).ToArray();
                for (int w = 0; w < o.Interleave; w++)
                    for (int j = 0; j < kinds.Length; j++)
                    {
                        int i = (w + j) % kinds.Length;
                        Drive d = Search(searchers[i], queries, o.Threads, 0, -1, o.WindowSeconds);
                        qps[i].Add(Math.Round(d.Qps, 1));
                        cpuMs[i].Add(Math.Round(d.CpuTicks / ThreadCpu.TicksPerSecond * 1000 / Math.Max(1, d.Queries), 3));
                    }
                cell["window_qps"] = qps.Select(l => l.ToArray()).ToArray();
                cell["window_cpu_ms_per_query"] = cpuMs.Select(l => l.ToArray()).ToArray();
                cell["index_cached_bytes"] = MemLimit.Cached(idx.Path);
            }
            finally
            {
                foreach (DirectoryReader r in readers)
                    r.Dispose();
                foreach (LuceneDirectory d in dirs)
                    d.Dispose();
            }
            return cell;
        }

        /// <summary>The cgroup's page-cache refaults, major faults and pages charged in, and the bytes
        /// this process read from the device and its read system calls (/proc/self/io), for a
        /// cell's window.</summary>
        internal readonly record struct Counters(long Refaults, long MajFaults, long PagesIn, long ReadBytes, long ReadCalls)
        {
            internal static Counters Read()
            {
                long refaults = 0, maj = 0, pgin = 0, rb = 0, rc = 0;
                string cg = Environment.GetEnvironmentVariable("ND_MEMLIMIT_CGROUP");
                try
                {
                    foreach (string line in File.ReadLines(Path.Combine(cg ?? "/nonexistent", "memory.stat")))
                    {
                        string[] f = line.Split(' ');
                        if (f.Length != 2)
                            continue;
                        long v = long.Parse(f[1], CultureInfo.InvariantCulture);
                        switch (f[0])
                        {
                            case "workingset_refault_file": refaults = v; break;
                            case "pgmajfault": maj = v; break;
                            case "pgpgin": pgin = v; break;
                        }
                    }
                    foreach (string line in File.ReadLines("/proc/self/io"))
                        if (line.StartsWith("read_bytes:", StringComparison.Ordinal))
                            rb = long.Parse(line.Substring(11).Trim(), CultureInfo.InvariantCulture);
                        else if (line.StartsWith("syscr:", StringComparison.Ordinal))
                            rc = long.Parse(line.Substring(6).Trim(), CultureInfo.InvariantCulture);
                }
                catch (IOException)
                {
                }
                return new Counters(refaults, maj, pgin, rb, rc);
            }
        }

        /// <summary>The settle cell's buckets, in seconds.</summary>
        internal const double SettleBucket = 0.5;

        /// <summary>
        /// How long NativeFSDirectory's default takes to follow the memory it has when it changes
        /// under running searches: opened and warmed at <see cref="Options.SettleHigh"/>, its
        /// searches run on for two seconds, then the cgroup's limit drops to
        /// <see cref="Options.SettleLow"/> for <see cref="Options.SettlePhaseSeconds"/>, then rises
        /// back to the high one for as long. The queries finished in each bucket of
        /// <see cref="SettleBucket"/> seconds are the result; the report compares each phase with
        /// the rate of a directory opened at that limit, measured next to the cell (Run).
        /// </summary>
        internal static Dictionary<string, object> SettleCell(Built idx, Query[] queries, Options o)
        {
            Release();
            long left = MemLimit.Evict(idx.Path);
            MemLimit.Stat limit = LimitCache((long)(o.SettleHigh * idx.Bytes) + o.Slack);
            var cell = Common(Kind.NativeDir, o.SettleHigh, idx, limit, left, o.Slack);
            cell["kind"] = "settle";
            cell["round"] = 0;
            const double before = 2;
            double total = before + 2 * o.SettlePhaseSeconds;
            int buckets = (int)Math.Ceiling(total / SettleBucket);
            var done = new long[buckets];
            using (LuceneDirectory dir = Open(Kind.NativeDir, idx.Path))
            using (DirectoryReader reader = DirectoryReader.Open(dir))
            {
                var searcher = new IndexSearcher(reader);
                Drive warm = Warm(searcher, queries, o);
                cell["warm_queries"] = warm.Queries;
                long next = warm.Queries - 1;
                var sw = Stopwatch.StartNew();
                var ts = Enumerable.Range(0, o.Threads).Select(_ => new Thread(() =>
                {
                    for (long i; sw.Elapsed.TotalSeconds < total;)
                    {
                        i = Interlocked.Increment(ref next);
                        TopDocs top = searcher.Search(queries[i % queries.Length], 10);
                        foreach (ScoreDoc sd in top.ScoreDocs)
                            searcher.Doc(sd.Doc).Get("id");
                        int b = (int)(sw.Elapsed.TotalSeconds / SettleBucket);
                        if (b < buckets)
                            Interlocked.Increment(ref done[b]);
                    }
                })).ToList();
                ts.ForEach(t => t.Start());
                SleepUntil(sw, before);
                double dropAt = sw.Elapsed.TotalSeconds;
                LimitCache((long)(o.SettleLow * idx.Bytes) + o.Slack);
                SleepUntil(sw, before + o.SettlePhaseSeconds);
                double raiseAt = sw.Elapsed.TotalSeconds;
                LimitCache((long)(o.SettleHigh * idx.Bytes) + o.Slack);
                ts.ForEach(t => t.Join());
                cell["drop_at_s"] = Math.Round(dropAt, 3);
                cell["raise_at_s"] = Math.Round(raiseAt, 3);
            }
            cell["settle_low_pct"] = Math.Round(o.SettleLow * 100);
            cell["settle_high_pct"] = Math.Round(o.SettleHigh * 100);
            cell["bucket_s"] = SettleBucket;
            cell["bucket_qps"] = done.Select(n => n / SettleBucket).ToArray();
            // the fields every cell has (the verify pass reads them)
            cell["qps"] = done.Sum() / total;
            cell["queries"] = done.Sum();
            cell["cgroup_file_bytes"] = MemLimit.Read().File;
            return cell;
        }

        private static void SleepUntil(Stopwatch sw, double seconds)
        {
            double left = seconds - sw.Elapsed.TotalSeconds;
            if (left > 0)
                Thread.Sleep(TimeSpan.FromSeconds(left));
        }

        /// <summary>Counts the merges the writer ran, the bytes they were estimated to write, those
        /// that finished, and the wall and CPU time of the merge threads.</summary>
        private sealed class CountingMergeScheduler : ConcurrentMergeScheduler
        {
            internal int Merges;
            internal int Finished;
            internal long EstimatedBytes;
            internal long WallTicks;
            internal long CpuTicks;

            protected override void DoMerge(MergePolicy.OneMerge merge)
            {
                Interlocked.Increment(ref Merges);
                Interlocked.Add(ref EstimatedBytes, merge.EstimatedMergeBytes);
                long t0 = Stopwatch.GetTimestamp(), c0 = ThreadCpu.Ticks();
                try
                {
                    base.DoMerge(merge);
                    Interlocked.Increment(ref Finished);
                }
                finally
                {
                    Interlocked.Add(ref WallTicks, Stopwatch.GetTimestamp() - t0);
                    Interlocked.Add(ref CpuTicks, ThreadCpu.Ticks() - c0);
                }
            }
        }

        /// <summary>The calling thread's CPU time (user + system) in clock ticks, from
        /// /proc/thread-self/stat; 0 where there is none.</summary>
        internal static class ThreadCpu
        {
            internal static readonly double TicksPerSecond = 100; // USER_HZ on Linux

            internal static long Ticks() => Ticks(out _);

            /// <summary>As <see cref="Ticks()"/>; <paramref name="sys"/> is the system (kernel)
            /// part: page faults, reads, and the reclaim an allocation does at the cgroup's limit.</summary>
            internal static long Ticks(out long sys)
            {
                sys = 0;
                try
                {
                    string s = File.ReadAllText("/proc/thread-self/stat");
                    string[] f = s.Substring(s.LastIndexOf(')') + 2).Split(' ');
                    // after the name: state is field 3, utime 14 and stime 15 (1-based)
                    sys = long.Parse(f[12], CultureInfo.InvariantCulture);
                    return long.Parse(f[11], CultureInfo.InvariantCulture) + sys;
                }
                catch (IOException)
                {
                    return 0;
                }
            }

            /// <summary>How long the calling thread has waited, runnable, for a CPU, in seconds,
            /// from /proc/thread-self/schedstat; 0 where there is none. A thread's wall time is its
            /// CPU time, this wait, and the time it was blocked (I/O, locks, stalls).</summary>
            internal static double RunQueueSeconds()
            {
                try
                {
                    string[] f = File.ReadAllText("/proc/thread-self/schedstat").Split(' ');
                    return long.Parse(f[1], CultureInfo.InvariantCulture) / 1e9;
                }
                catch (IOException)
                {
                    return 0;
                }
            }

            /// <summary>The machine's idle and I/O-wait time, summed over its CPUs, in clock
            /// ticks, from /proc/stat; 0 where there is none. Over a window, what the CPUs did not
            /// spend running anything: near 0, the cell was CPU-bound.</summary>
            internal static long MachineIdleTicks()
            {
                try
                {
                    foreach (string line in File.ReadLines("/proc/stat"))
                    {
                        if (!line.StartsWith("cpu ", StringComparison.Ordinal))
                            continue;
                        string[] f = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
                        // cpu user nice system idle iowait ...
                        return long.Parse(f[4], CultureInfo.InvariantCulture) + long.Parse(f[5], CultureInfo.InvariantCulture);
                    }
                }
                catch (IOException)
                {
                }
                return 0;
            }
        }

        /// <summary>One merge cell: as a search cell, then one more thread adds documents to the
        /// index through an IndexWriter whose merge policy merges the index's segments four at a
        /// time (run at once, on the merge scheduler's thread), while the searches go on for two
        /// windows: unpaced (the search rate and latency), then at a fixed offered rate, the same
        /// for every directory (the indexing rate: with unpaced searches on 2 cores the indexer's
        /// share of the CPU is what the searches leave, so the faster a directory searches, the
        /// slower it would seem to index). At the end the writer is rolled back (the new files
        /// deleted, the index as it was).</summary>
        internal static Dictionary<string, object> MergeCell(Kind k, double pct, Built idx, Source source, Query[] queries, Options o)
            => InMode(k, () => MergeCellIn(k, pct, idx, source, queries, o));

        private static Dictionary<string, object> MergeCellIn(Kind k, double pct, Built idx, Source source, Query[] queries, Options o)
        {
            Release();
            long left = MemLimit.Evict(idx.Path);
            MemLimit.Stat limit = LimitCache((long)(pct * idx.Bytes) + o.MergeSlack);
            var cell = Common(k, pct, idx, limit, left, o.MergeSlack);
            using LuceneDirectory dir = Open(k, idx.Path);
            using DirectoryReader reader = DirectoryReader.Open(dir);
            var searcher = new IndexSearcher(reader);
            Drive warm = Warm(searcher, queries, o);
            cell["warm_queries"] = warm.Queries;
            // the commit's files (a killed run may have left others, which the writer deletes)
            var original = new HashSet<string>(reader.IndexCommit.FileNames, StringComparer.Ordinal);
            var cms = new CountingMergeScheduler();
            var cfg = new IndexWriterConfig(LuceneVersion.LUCENE_48, new StandardAnalyzer(LuceneVersion.LUCENE_48))
            {
                OpenMode = OpenMode.APPEND,
                // the floor at the size of one built segment: the policy's tiers start at the smallest
                // segment, and one small one (the last flush of the build) would make the index's
                // dozen segments look like a tiered index that needs no merge
                MergePolicy = new TieredMergePolicy
                {
                    SegmentsPerTier = 4, MaxMergeAtOnce = 4, NoCFSRatio = 0,
                    FloorSegmentMB = Math.Max(2.0, idx.Bytes / (double)idx.Segments / (1 << 20)),
                },
                MergeScheduler = cms,
            };
            var writer = new IndexWriter(dir, cfg);
            long added = 0, blockedTicks = 0, indexCpu = 0, indexSys = 0;
            double indexSeconds = 0, indexWait = 0;
            var stop = new ManualResetEventSlim();
            var indexer = new Thread(() =>
            {
                var f = new Source.Fields();
                var sw = Stopwatch.StartNew();
                long c0 = ThreadCpu.Ticks(out long s0);
                double w0 = ThreadCpu.RunQueueSeconds();
                // an AddDocument this long flushed a segment or waited for merges (the merge
                // scheduler stalls the indexing thread while too many merges are pending)
                long slow = Stopwatch.Frequency / 50;
                for (long i = idx.Docs; !stop.IsSet; i++)
                {
                    long t0 = Stopwatch.GetTimestamp();
                    writer.AddDocument(source.Fill(f, i));
                    long dt = Stopwatch.GetTimestamp() - t0;
                    if (dt >= slow)
                        blockedTicks += dt;
                    added++;
                }
                indexSeconds = sw.Elapsed.TotalSeconds;
                indexCpu = ThreadCpu.Ticks(out long s1) - c0;
                indexSys = s1 - s0;
                indexWait = ThreadCpu.RunQueueSeconds() - w0;
            });
            try
            {
                long m0 = Stopwatch.GetTimestamp();
                writer.MaybeMerge(); // the merges of the index's segments start now, not at the first flush
                cell["maybe_merge_s"] = Math.Round(Stopwatch.GetElapsedTime(m0).TotalSeconds, 2);
                TimeSpan p0 = Process.GetCurrentProcess().TotalProcessorTime;
                long idle0 = ThreadCpu.MachineIdleTicks();
                var gc0 = GcTally.Now();
                indexer.Start();
                var isw = Stopwatch.StartNew();
                Drive d = Search(searcher, queries, o.Threads, warm.Queries, -1, o.MergeSeconds);
                long unpacedAdded = Volatile.Read(ref added);
                double unpacedSeconds = isw.Elapsed.TotalSeconds;
                Drive paced = Search(searcher, queries, o.Threads, warm.Queries + d.Queries, -1, o.MergeSeconds, o.MergeRate);
                long pacedAdded = Volatile.Read(ref added) - unpacedAdded;
                double pacedSeconds = isw.Elapsed.TotalSeconds - unpacedSeconds;
                stop.Set();
                indexer.Join();
                cell["process_cpu_s"] = Math.Round((Process.GetCurrentProcess().TotalProcessorTime - p0).TotalSeconds, 2);
                cell["machine_idle_s"] = Math.Round((ThreadCpu.MachineIdleTicks() - idle0) / ThreadCpu.TicksPerSecond, 2);
                // a collection suspends every managed thread, the indexer's too
                GcTally.Now().Since(gc0).AddTo(cell, "");
                AddDrive(cell, d);
                cell["docs_added"] = added;
                cell["docs_per_s_unpaced"] = Math.Round(unpacedAdded / unpacedSeconds, 1);
                cell["docs_per_s"] = Math.Round(pacedAdded / pacedSeconds, 1);
                cell["paced_rate"] = o.MergeRate;
                cell["paced_qps"] = Math.Round(paced.Qps, 2);
                cell["paced_p99_ms"] = Math.Round(paced.Percentile(0.99), 3);
                cell["paced_search_cpu_s"] = Math.Round(paced.CpuTicks / ThreadCpu.TicksPerSecond, 2);
                cell["merges"] = cms.Merges;
                cell["merges_finished"] = cms.Finished;
                cell["merge_wall_s"] = Math.Round(Interlocked.Read(ref cms.WallTicks) / (double)Stopwatch.Frequency, 2);
                cell["merge_cpu_s"] = Math.Round(Interlocked.Read(ref cms.CpuTicks) / ThreadCpu.TicksPerSecond, 2);
                cell["indexer_slow_adds_s"] = Math.Round(blockedTicks / (double)Stopwatch.Frequency, 2);
                cell["indexer_cpu_s"] = Math.Round(indexCpu / ThreadCpu.TicksPerSecond, 2);
                cell["indexer_sys_s"] = Math.Round(indexSys / ThreadCpu.TicksPerSecond, 2);
                cell["indexer_runqueue_s"] = Math.Round(indexWait, 2);
                cell["indexer_blocked_s"] = Math.Round(Math.Max(0, indexSeconds - indexCpu / ThreadCpu.TicksPerSecond - indexWait), 2);
                cell["merge_estimated_bytes"] = cms.EstimatedBytes;
                string[] fresh = dir.ListAll().Where(n => !original.Contains(n) && n != IndexWriter.WRITE_LOCK_NAME && n != "ltm-index.json"
                    && n != IndexFileNames.SEGMENTS_GEN).ToArray();
                long freshBytes = 0;
                foreach (string n in fresh)
                {
                    try { freshBytes += new FileInfo(Path.Combine(idx.Path, n)).Length; }
                    catch (FileNotFoundException) { } // deleted by the writer meanwhile
                }
                cell["new_files_bytes"] = freshBytes;
                cell["new_files_cached_bytes"] = MemLimit.Cached(fresh.Select(n => Path.Combine(idx.Path, n))
                    .Where(File.Exists).ToArray());
                cell["index_cached_bytes"] = MemLimit.Cached(original.Select(n => Path.Combine(idx.Path, n))
                    .Where(File.Exists).ToArray());
                MemLimit.Stat after = MemLimit.Read();
                cell["cgroup_file_bytes"] = after.File;
            }
            finally
            {
                stop.Set();
                if (indexer.IsAlive)
                    indexer.Join();
                writer.Rollback(); // aborts the merges, deletes what they and the flushes wrote
            }
            var now = new HashSet<string>(dir.ListAll(), StringComparer.Ordinal);
            // segments.gen is no commit's file: Lucene 4 rewrites it beside every commit
            now.ExceptWith(new[] { IndexWriter.WRITE_LOCK_NAME, "ltm-index.json", IndexFileNames.SEGMENTS_GEN });
            if (!now.SetEquals(original))
                throw new InvalidOperationException($"{k}: the rollback left the index changed: "
                    + string.Join(", ", now.Except(original).Concat(original.Except(now).Select(n => "-" + n))));
            return cell;
        }

        // ---- the run ----

        internal static Shape RecordShape => new(Docs: 1_800_000, Segments: 12, BodyMembers: 2, StoredMembers: 2, Seed: 35);
        internal static Shape VerifyShape => new(Docs: 30_000, Segments: 6, BodyMembers: 2, StoredMembers: 2, Seed: 35);

        /// <summary>--ltm-build: the index alone (outside any cgroup), printed as JSON.</summary>
        internal static int BuildOnly(string cacheRoot, Shape shape)
        {
            var corpus = SdkDocsCorpus.Load(int.MaxValue);
            Built b = Ensure(cacheRoot, shape, corpus);
            Console.WriteLine($"ltm: index {b.Path}: {b.Bytes / (1 << 20)} MiB, {b.Docs} docs, {b.Segments} segments, "
                + (b.Reused ? "reused" : $"built in {b.BuildSeconds:F1} s"));
            return 0;
        }

        /// <summary>--ltm: every cell; results as JSON in <paramref name="outFile"/>.</summary>
        internal static int Run(string cacheRoot, Shape shape, string outFile, Options o, bool verify)
        {
            if (MemLimit.Unavailable is string why)
            {
                Console.WriteLine($"ltm: SKIPPED, NO RESULTS: {why}");
                return 77;
            }
            var corpus = SdkDocsCorpus.Load(int.MaxValue);
            Built idx = Ensure(cacheRoot, shape, corpus);
            var source = new Source(corpus, shape);
            Query[] queries = SearchWorkload.Queries(corpus, o.QueryCount, o.Vocabulary);
            Console.WriteLine($"ltm: index {idx.Path}: {idx.Bytes / (1 << 20)} MiB, {idx.Docs} docs, {idx.Segments} segments"
                + (idx.Reused ? " (cached)" : $" (built in {idx.BuildSeconds:F1} s)")
                + $"; {queries.Length} queries over {o.Vocabulary} words, {o.Threads} threads, {o.Rounds} round(s)");
            var cells = new List<Dictionary<string, object>>();
            var hitsPerKind = new Dictionary<Kind, long>();
            var total = Stopwatch.StartNew();
            // compiled code for every directory's inputs and Lucene's search paths before the
            // first cell (tiered compilation is off: the first call compiles fully, and the first
            // cell would pay for it), with no limit
            foreach (Kind k in o.Kinds)
            {
                using LuceneDirectory dir = Open(k, idx.Path);
                using DirectoryReader reader = DirectoryReader.Open(dir);
                Search(new IndexSearcher(reader), queries, o.Threads, 0, Math.Min(queries.Length, 64), 5);
            }
            Console.WriteLine($"ltm: compiled ({total.Elapsed.TotalSeconds:F1} s)");
            var far = new Dictionary<(Kind, int), double>();
            for (int round = 0; round < o.Rounds; round++)
            {
                for (int li = 0; li < o.Limits.Length; li++)
                {
                    // the first directory of a limit rotates, so drift hits all alike
                    Kind[] kinds = SearchKindsInRound(o, li, round, far);
                    int shift = (round * o.Limits.Length + li) % Math.Max(1, kinds.Length);
                    var first = new Dictionary<Kind, Dictionary<string, object>>();
                    foreach (Kind k in kinds.Skip(shift).Concat(kinds.Take(shift)))
                    {
                        var cell = SearchCell(k, o.Limits[li], idx, queries, o, out long hits);
                        cell["round"] = round;
                        cell["kind"] = "search";
                        cells.Add(cell);
                        first[k] = cell;
                        if (hits >= 0)
                        {
                            if (hitsPerKind.Values.Any(h => h != hits))
                                throw new InvalidOperationException($"{k}: the query set found {hits} hits, other directories {hitsPerKind.Values.First()}");
                            hitsPerKind[k] = hits;
                        }
                        Console.WriteLine($"  {Label(k),-62} {o.Limits[li] * 100,4:F0}%  {cell["qps"],8} q/s  p99 {cell["p99_ms"],8} ms"
                            + (cell.TryGetValue("paced_p99_ms", out object pp) ? $"  at {o.PacedRate} q/s: p99 {pp} ms" : "")
                            + $"  refaults/s {cell["refaults_per_s"]} majflt/s {cell["majfaults_per_s"]} dev {cell["device_mib_per_s"]} MiB/s"
                            + $"  cached {(long)cell["index_cached_bytes"] >> 20} MiB  (warm {cell["warm_queries"]} in {cell["warm_seconds"]} s;"
                            + $" own {(long)cell["own_bytes"] >> 20} MiB, anon after {(long)cell["cgroup_anon_bytes"] >> 20} MiB)");
                    }
                    if (round == 0)
                    {
                        Screen(o, li, first, far);
                        foreach (var (k, l) in far.Keys.Where(e => e.Item2 == li))
                            Console.WriteLine($"  {Label(k)} at {o.Limits[li] * 100:F0}%: {far[(k, l)]:F2}x the best built-in, below {o.FarBehind}x: no more rounds here");
                    }
                }
                if (!o.Merges)
                    continue;
                Kind[] mkinds = MergeKinds(o).Where(k => MergesInRound(k, round, o)).ToArray();
                for (int mi = 0; mi < o.MergeLimits.Length; mi++)
                    for (int mr = 0; mr < o.MergeRounds; mr++)
                    {
                        int mround = round * o.MergeRounds + mr;
                        int mshift = (mround + mi) % mkinds.Length;
                        foreach (Kind k in mkinds.Skip(mshift).Concat(mkinds.Take(mshift)))
                        {
                            var cell = MergeCell(k, o.MergeLimits[mi], idx, source, queries, o);
                            cell["round"] = mround;
                            cell["kind"] = "merge";
                            cells.Add(cell);
                            Console.WriteLine($"  {Label(k),-62} merging at {o.MergeLimits[mi] * 100:F0}%  {cell["qps"],8} q/s  p99 {cell["p99_ms"],8} ms  {cell["docs_per_s_unpaced"]} docs/s;"
                                + $" searches at {cell["paced_rate"]} q/s: {cell["paced_qps"]} q/s, p99 {cell["paced_p99_ms"]} ms, {cell["docs_per_s"]} docs/s;"
                                + $"  {cell["merges"]} merge(s) ({cell["merges_finished"]} done);"
                                + $" new files {(long)cell["new_files_bytes"] >> 20} MiB, {(long)cell["new_files_cached_bytes"] >> 20} MiB cached");
                        }
                    }
            }
            for (int li = 0; li < (o.Interleave > 0 ? o.Limits.Length : 0); li++)
            {
                var cell = InterleavedCell(o.Kinds, o.Limits[li], idx, queries, o);
                cells.Add(cell);
                var q = (double[][])cell["window_qps"];
                string per = string.Join("  ", o.Kinds.Select((k, i) => $"{k} {NativeDir.Benchmarks.PairedRounds.Median(q[i]):F0}"));
                string ratios = q.Length > 1 ? "; first/second per window: " + string.Join(" ",
                    q[0].Zip(q[1], (a, b) => (a / b).ToString("F2", CultureInfo.InvariantCulture))) : "";
                Console.WriteLine($"  interleaved at {o.Limits[li] * 100:F0}%, {o.Interleave} windows of {o.WindowSeconds} s each: median q/s {per}{ratios}");
            }
            if (o.Settle)
            {
                // what each phase is judged against: the rate of a directory opened at its limit,
                // measured next to it (the low one just before, the high one just after), so that
                // a device or a CPU share that drifts over the run moves both sides alike
                var low = SearchCell(Kind.NativeDir, o.SettleLow, idx, queries, o, out _, paced: false);
                var cell = SettleCell(idx, queries, o);
                var high = SearchCell(Kind.NativeDir, o.SettleHigh, idx, queries, o, out _, paced: false);
                cell["reference_low_qps"] = low["qps"];
                cell["reference_high_qps"] = high["qps"];
                cells.Add(cell);
                Console.WriteLine($"  {Label(Kind.NativeDir),-62} limit {o.SettleHigh * 100:F0}% -> {o.SettleLow * 100:F0}% -> {o.SettleHigh * 100:F0}% under searches:"
                    + $" q/s per {SettleBucket} s: {string.Join(" ", ((double[])cell["bucket_qps"]).Select(q => q.ToString("F0", CultureInfo.InvariantCulture)))};"
                    + $" opened at {o.SettleLow * 100:F0}% just before: {low["qps"]} q/s, at {o.SettleHigh * 100:F0}% just after: {high["qps"]} q/s");
            }
            MemLimit.Unlimit();
            var doc = new Dictionary<string, object>
            {
                ["index_bytes"] = idx.Bytes, ["docs"] = idx.Docs, ["segments"] = idx.Segments,
                ["index_reused"] = idx.Reused, ["build_seconds"] = Math.Round(idx.BuildSeconds, 1), ["key"] = Path.GetFileName(idx.Path),
                ["threads"] = o.Threads, ["queries"] = queries.Length, ["vocabulary"] = o.Vocabulary,
                ["warm_seconds"] = o.WarmSeconds, ["full_seconds"] = o.FullSeconds, ["window_seconds"] = o.WindowSeconds, ["merge_seconds"] = o.MergeSeconds,
                ["merge_rate"] = o.MergeRate, ["merge_rounds"] = o.MergeRounds,
                ["merge_limit_pcts"] = o.MergeLimits.Select(l => Math.Round(l * 100)).ToArray(), ["rounds"] = o.Rounds,
                ["device"] = o.Device, ["screened_kinds"] = o.ScreenedKinds.Select(k => k.ToString()).ToArray(), ["far_behind_below"] = o.FarBehind,
                ["seconds"] = Math.Round(total.Elapsed.TotalSeconds, 1), ["cells"] = cells,
            };
            File.WriteAllText(outFile, JsonSerializer.Serialize(doc, new JsonSerializerOptions { WriteIndented = true }) + "\n");
            Console.WriteLine($"ltm: {cells.Count} cells in {total.Elapsed.TotalSeconds:F0} s -> {outFile}");
            if (verify)
                Check(cells, o, far);
            return 0;
        }

        /// <summary>--ltm --verify: every cell ran, searched, held to its limit; the merges merged.</summary>
        private static void Check(List<Dictionary<string, object>> cells, Options o, Dictionary<(Kind, int), double> far)
        {
            void Ok(bool ok, string what)
            {
                if (!ok)
                    throw new InvalidOperationException("ltm verify failed: " + what);
                Console.WriteLine("ok   " + what);
            }
            int want = Enumerable.Range(0, o.Rounds).Sum(r => Enumerable.Range(0, o.Limits.Length).Sum(li => SearchKindsInRound(o, li, r, far).Length)
                + (o.Merges ? o.MergeLimits.Length * o.MergeRounds * MergeKinds(o).Count(k => MergesInRound(k, r, o)) : 0))
                + (o.Settle ? 1 : 0) + (o.Interleave > 0 ? o.Limits.Length : 0);
            Ok(cells.Count == want, $"{cells.Count} cells of {want}");
            foreach (var c in cells)
            {
                if ((string)c["kind"] == "interleaved")
                {
                    var q = (double[][])c["window_qps"];
                    Ok(q.Length == o.Kinds.Length && q.All(w => w.Length == o.Interleave && w.All(v => v > 0)),
                        $"interleaved at {c["limit_pct"]}%: {string.Join(" / ", q.Select(w => string.Join(" ", w)))} q/s");
                    continue;
                }
                if ((string)c["kind"] == "settle")
                {
                    Ok(((double[])c["bucket_qps"]).Length > 0, $"settle: {((double[])c["bucket_qps"]).Length} buckets");
                    Ok((double)c["reference_low_qps"] > 0 && (double)c["reference_high_qps"] > 0,
                        $"settle: opened at each limit next to it, {c["reference_low_qps"]} and {c["reference_high_qps"]} q/s");
                    continue;
                }
                string name = $"{c["directory"]} {c["kind"]} at {c["limit_pct"]}%";
                Ok((long)c["queries"] > 0 && (double)c["qps"] > 0, $"{name}: {c["queries"]} queries");
                Ok((long)c["cgroup_limit_bytes"] >= (long)c["cache_budget_bytes"], $"{name}: cgroup limit {c["cgroup_limit_bytes"]} >= budget {c["cache_budget_bytes"]}");
                Ok((long)c["cgroup_file_bytes"] <= (long)c["cgroup_limit_bytes"], $"{name}: page cache {c["cgroup_file_bytes"]} within the limit");
                if ((string)c["kind"] is "search" or "merge")
                    Ok(c.TryGetValue("allocated_bytes", out object allocated) && (long)allocated > 0 && (double)c["gc_pause_s"] >= 0,
                        $"{name}: the window's collections tallied ({allocated} bytes allocated, {c.GetValueOrDefault("gc_count")} collections)");
                if ((string)c["kind"] == "search" && o.PacedRate > 0)
                    Ok((long)c["paced_queries"] > 0 && (double)c["paced_p99_ms"] > 0, $"{name}: {c["paced_queries"]} queries at {c["paced_rate"]} q/s offered");
                if ((string)c["kind"] == "search" && c.TryGetValue("far_behind", out object share))
                    Ok((double)share < o.FarBehind && (int)c["round"] == 0
                        && !cells.Any(x => (string)x["kind"] == "search" && (int)x["round"] > 0 && x["directory"].Equals(c["directory"]) && x["limit_pct"].Equals(c["limit_pct"])),
                        $"{name}: far behind ({share}x the best built-in), no rounds after the first");
                if ((string)c["kind"] == "merge")
                {
                    Ok((long)c["docs_added"] > 0 && (int)c["merges"] > 0, $"{name}: {c["docs_added"]} docs added, {c["merges"]} merge(s)");
                    Ok((double)c["docs_per_s"] > 0 && (double)c["docs_per_s_unpaced"] > 0, $"{name}: indexed in both windows");
                    Ok((double)c["paced_qps"] > 0, $"{name}: {c["paced_qps"]} q/s searched at {c["paced_rate"]} q/s offered");
                }
            }
        }
    }
}
