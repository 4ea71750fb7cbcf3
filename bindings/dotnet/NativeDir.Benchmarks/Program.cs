using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Text.Json;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Diagnosers;
using BenchmarkDotNet.Exporters.Json;
using BenchmarkDotNet.Jobs;
using BenchmarkDotNet.Loggers;
using BenchmarkDotNet.Running;
using BenchmarkDotNet.Toolchains.InProcess.Emit;
using NativeDir.Benchmarks;

// NativeDir.Benchmarks --dir <scratch on a real disk> --out <results dir> [--mib 64]
//     [--random-reads 100000] [--iterations 5] [--paired-rounds 15]
//     [--filter <Group or Group.Method>] [--verify]
// Runs the suite with BenchmarkDotNet in this process (no per-benchmark project builds) and
// writes BenchmarkDotNet's JSON plus rows.json (each row's name, baseline and target) to --out,
// then times every row with a ratio target against its baseline round by round (Paired) and
// writes paired.json. --verify instead runs every benchmark twice on a small file and checks
// they all read the same bytes, and runs one paired round.
var opts = Args.Parse(args);
Type[] suites = { typeof(Write), typeof(ReadSequential), typeof(ReadByteSequential), typeof(ReadRandom),
                  typeof(ConcurrentCloneReads), typeof(ReadAsync4K) };
if (opts.Verify)
{
    Workload.Create(opts.Dir, fileMiB: 4, randomReads: 5000);
    int failures = Verifier.Run(suites);
    failures += Verifier.CheckPaired(suites);
    File.Delete(Workload.FilePath);
    return failures == 0 ? 0 : 1;
}

Workload.Create(opts.Dir, opts.MiB, opts.RandomReads);
Directory.CreateDirectory(opts.Out);
File.WriteAllText(Path.Combine(opts.Out, "rows.json"),
    Rows.Describe(suites, opts.MiB, opts.RandomReads, AllocationProbe.Measure(suites)));
Job job = Job.Default
    .WithToolchain(InProcessEmitToolchain.Instance)
    .WithLaunchCount(1)
    .WithWarmupCount(2)
    .WithIterationCount(opts.Iterations)
    .WithInvocationCount(1)
    .WithUnrollFactor(1)
    .WithId("nativedir");
IConfig config = ManualConfig.CreateEmpty()
    .AddJob(job)
    .AddDiagnoser(MemoryDiagnoser.Default)
    .AddColumnProvider(DefaultColumnProviders.Instance)
    .AddLogger(ConsoleLogger.Default)
    .AddExporter(JsonExporter.Full)
    .WithArtifactsPath(opts.Out)
    .WithOptions(ConfigOptions.DisableOptimizationsValidator | ConfigOptions.JoinSummary);
if (opts.Filter != null)
    config = ((ManualConfig)config).AddFilter(new BenchmarkDotNet.Filters.SimpleFilter(b =>
        $"{b.Descriptor.Type.Name}.{b.Descriptor.WorkloadMethod.Name}".StartsWith(opts.Filter, StringComparison.Ordinal)));
var summary = BenchmarkRunner.Run(suites, config);
bool failed = summary.Any(s => s.HasCriticalValidationErrors || s.Reports.Any(r => !r.Success));
if (opts.PairedRounds > 0)
{
    // with --filter, the paired rounds of the filtered groups
    Type[] paired = suites.Where(t => opts.Filter == null || t.Name == opts.Filter.Split('.')[0]).ToArray();
    File.WriteAllText(Path.Combine(opts.Out, "paired.json"), JsonSerializer.Serialize(
        Paired.Run(paired, opts.PairedRounds), new JsonSerializerOptions { WriteIndented = true }));
}
File.Delete(Workload.FilePath);
return failed ? 1 : 0;

internal sealed record Args(string Dir, string Out, int MiB, int RandomReads, int Iterations, int PairedRounds,
                            bool Verify, string? Filter)
{
    public static Args Parse(string[] args)
    {
        string dir = Path.Combine(Path.GetTempPath(), "nd-dotnet-bench"), output = "results";
        int mib = 64, reads = 100_000, iterations = 5, pairedRounds = 15;
        bool verify = false;
        string? filter = null;
        for (int i = 0; i < args.Length; i++)
        {
            string Next() => i + 1 < args.Length ? args[++i] : throw new ArgumentException($"{args[i]} needs a value");
            switch (args[i])
            {
                case "--dir": dir = Next(); break;
                case "--out": output = Next(); break;
                case "--mib": mib = int.Parse(Next()); break;
                case "--random-reads": reads = int.Parse(Next()); break;
                case "--iterations": iterations = int.Parse(Next()); break;
                case "--paired-rounds": pairedRounds = int.Parse(Next()); break;
                case "--verify": verify = true; break;
                case "--filter": filter = Next(); break;
                default: throw new ArgumentException($"unknown argument {args[i]}");
            }
        }
        return new Args(Path.GetFullPath(dir), Path.GetFullPath(output), mib, reads, iterations, pairedRounds,
            verify, filter);
    }
}

/// <summary>rows.json: what the converter needs beside BenchmarkDotNet's numbers.</summary>
internal static class Rows
{
    public static string Describe(Type[] suites, int mib, int randomReads, Dictionary<string, Allocations> probed)
    {
        var rows = new Dictionary<string, object?>();
        foreach (Type t in suites)
        {
            foreach (MethodInfo m in Benchmarks(t))
            {
                RowAttribute row = m.GetCustomAttribute<RowAttribute>()
                    ?? throw new InvalidOperationException($"{t.Name}.{m.Name} has no [Row]");
                string? RowName(string? method) => method == null ? null
                    : t.GetMethod(method)?.GetCustomAttribute<RowAttribute>()?.Name
                      ?? throw new InvalidOperationException($"{t.Name}.{m.Name}: no row {method}");
                rows[$"{t.Name}.{m.Name}"] = new Dictionary<string, object?>
                {
                    ["group"] = t.Name,
                    ["name"] = row.Name,
                    ["baseline"] = RowName(row.Baseline),
                    ["max_ratio"] = row.MaxRatio > 0 ? row.MaxRatio : null,
                    ["faster_than"] = RowName(row.FasterThan),
                    ["min_speedup"] = row.MinSpeedup > 0 ? row.MinSpeedup : null,
                    ["zero_alloc"] = row.ZeroAlloc,
                    ["thread_alloc_bytes"] = probed.TryGetValue($"{t.Name}.{m.Name}", out Allocations? a) ? a.Thread : null,
                    ["all_thread_alloc_bytes"] = a?.AllThreads,
                    ["ops_per_invocation"] = a?.Operations,
                    ["note"] = row.Note,
                };
            }
        }
        return JsonSerializer.Serialize(new Dictionary<string, object?>
        {
            ["file_mib"] = mib,
            ["random_reads"] = randomReads,
            ["rows"] = rows,
        }, new JsonSerializerOptions { WriteIndented = true });
    }

    public static IEnumerable<MethodInfo> Benchmarks(Type t) =>
        t.GetMethods().Where(m => m.GetCustomAttribute<BenchmarkAttribute>() != null);
}

/// <summary>
/// The zero-allocation targets, measured on the benchmark's own thread: MemoryDiagnoser counts
/// allocations process-wide in-process, and a few KiB from the host's background threads land on
/// random rows (baselines included). Each zero-alloc benchmark runs twice to warm up (the first
/// call pays for one-time initialisation), then once between two reads of
/// GC.GetAllocatedBytesForCurrentThread. Where a class says how many operations an invocation
/// is (IOperationCount), every thread's allocations are also counted, as MemoryDiagnoser counts
/// them (GC.GetTotalAllocatedBytes), the least of three invocations, so that work handed to
/// other threads (a ring's completions, the thread pool) is seen too and the row can say how
/// much that is per operation.
/// </summary>
internal sealed record Allocations(long Thread, long? AllThreads, long? Operations);

internal static class AllocationProbe
{
    public static Dictionary<string, Allocations> Measure(Type[] suites)
    {
        var result = new Dictionary<string, Allocations>();
        foreach (Type t in suites)
        {
            MethodInfo[] probed = Rows.Benchmarks(t)
                .Where(m => m.GetCustomAttribute<RowAttribute>()?.ZeroAlloc == true).ToArray();
            if (probed.Length == 0)
                continue;
            object fixture = Activator.CreateInstance(t)!;
            Verifier.Invoke<GlobalSetupAttribute>(t, fixture);
            foreach (MethodInfo m in probed)
            {
                var run = m.CreateDelegate<Func<long>>(fixture);
                run();
                run();
                long before = GC.GetAllocatedBytesForCurrentThread();
                run();
                long after = GC.GetAllocatedBytesForCurrentThread();
                long thread = after - before;
                long? all = null, ops = null;
                if (fixture is IOperationCount counted)
                {
                    // An invocation is thousands of reads: one of them that has to wait for the
                    // device (the page cache is not ours alone) makes the awaiting loop allocate
                    // its state machine once. That is per invocation, not per read; the least of
                    // three invocations is the steady state the row is about.
                    ops = counted.OperationsPerInvocation;
                    for (int i = 0; i < 3; i++)
                    {
                        long t0 = GC.GetAllocatedBytesForCurrentThread();
                        long b = GC.GetTotalAllocatedBytes(precise: true);
                        run();
                        long a = GC.GetTotalAllocatedBytes(precise: true) - b;
                        thread = Math.Min(thread, GC.GetAllocatedBytesForCurrentThread() - t0);
                        all = all == null ? a : Math.Min(all.Value, a);
                    }
                }
                result[$"{t.Name}.{m.Name}"] = new Allocations(thread, all, ops);
            }
            Verifier.Invoke<GlobalCleanupAttribute>(t, fixture);
        }
        return result;
    }
}

/// <summary>Runs every benchmark twice on the small workload: within a group every read must
/// return the same fold of the same bytes, and the writes must produce the file.</summary>
internal static class Verifier
{

    /// <summary>Returns how many benchmarks failed; the caller deletes the workload.</summary>
    public static int Run(Type[] suites)
    {
        int passed = 0, failed = 0;
        foreach (Type t in suites)
        {
            object fixture = Activator.CreateInstance(t)!;
            Invoke<GlobalSetupAttribute>(t, fixture);
            long? expected = null;
            foreach (MethodInfo m in Rows.Benchmarks(t))
            {
                long first = (long)m.Invoke(fixture, null)!, second = (long)m.Invoke(fixture, null)!;
                if (t == typeof(Write))
                {
                    expected = Workload.Bytes.Length;
                    byte[] written = File.ReadAllBytes(Path.Combine(Workload.Dir, "write.bin"));
                    if (!written.AsSpan().SequenceEqual(Workload.Bytes))
                        first = -1;
                }
                expected ??= first;
                bool ok = first == expected && second == expected;
                string allocNote = "";
                if (m.GetCustomAttribute<RowAttribute>()?.ZeroAlloc == true)
                {
                    // steady state: a call after the warm-up ones must allocate nothing on this thread
                    var run = m.CreateDelegate<Func<long>>(fixture);
                    run();
                    long before = GC.GetAllocatedBytesForCurrentThread();
                    run();
                    long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
                    ok &= allocated == 0;
                    allocNote = $", {allocated} B allocated";
                }
                Console.WriteLine($"{(ok ? "ok  " : "FAIL")} {t.Name}.{m.Name}: {first} {second} (expected {expected}){allocNote}");
                if (ok) passed++; else failed++;
            }
            Invoke<GlobalCleanupAttribute>(t, fixture);
        }
        Console.WriteLine($"{passed} passed, {failed} failed");
        return failed;
    }

    /// <summary>One paired round (Paired): every row with a ratio target and its baseline timed,
    /// and nothing else. Returns how many of those checks failed.</summary>
    public static int CheckPaired(Type[] suites)
    {
        Dictionary<string, List<double>> times = Paired.Run(suites, rounds: 1);
        var expected = suites.SelectMany(t => Paired.Measured(t).Select(m => $"{t.Name}.{m.Name}")).ToHashSet();
        int failed = 0;
        void Check(bool ok, string what)
        {
            Console.WriteLine($"{(ok ? "ok  " : "FAIL")} paired: {what}");
            if (!ok) failed++;
        }
        Check(expected.Count > 0 && expected.SetEquals(times.Keys),
            $"timed [{string.Join(", ", times.Keys.Order())}], expected [{string.Join(", ", expected.Order())}]");
        foreach ((string key, List<double> t) in times)
            Check(t.Count == 1 && t[0] > 0, $"{key}: one positive time ({string.Join(", ", t)})");
        // the row of record of the async suite and its baseline are among them
        Check(times.ContainsKey("ReadAsync4K.NativeDirAsync") && times.ContainsKey("ReadAsync4K.FileStreamRead"),
            "ReadAsync4K's target row and its baseline");
        return failed;
    }

    internal static void Invoke<TAttr>(Type t, object fixture) where TAttr : Attribute
    {
        foreach (MethodInfo m in t.GetMethods().Where(m => m.GetCustomAttribute<TAttr>() != null))
            m.Invoke(fixture, null);
    }
}
