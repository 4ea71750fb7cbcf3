using System;
using System.Collections.Generic;
using System.Linq;
using System.Reflection;
using BenchmarkDotNet.Attributes;

namespace NativeDir.Benchmarks
{
    /// <summary>
    /// The per-round measurement of the rows with a ratio target (paired.json). BenchmarkDotNet
    /// measures one benchmark after another, each for a few seconds; the host of the development
    /// VM slows a vCPU by up to ~40% for minutes at a time, so a row and its baseline measured a
    /// minute apart compared two speeds of the machine as much as two pieces of code (one full
    /// run put the byte[] baseline at 1.80 ms where the others measured 2.16-3.26 ms, and the row
    /// missed at 1.60x). Here every round runs the row and its baseline back to back in one
    /// fixture (the C and Python suites' way), the first of a round rotating; the converter
    /// divides them round by round and judges the target on the median of those ratios.
    /// </summary>
    internal static class Paired
    {
        /// <summary>Rounds run and thrown away first: the methods are JIT-compiled and tiered up
        /// here anew (BenchmarkDotNet called them through its own emitted code).</summary>
        private const int WarmupRounds = 3;

        /// <summary>The benchmark methods each class's ratio targets need: every row with a
        /// MaxRatio, and its baseline.</summary>
        public static MethodInfo[] Measured(Type t)
        {
            var rows = Rows.Benchmarks(t)
                .Where(m => m.GetCustomAttribute<RowAttribute>() is { MaxRatio: > 0, Baseline: not null })
                .ToList();
            if (rows.Count == 0)
                return Array.Empty<MethodInfo>();
            var baselines = rows.Select(m => t.GetMethod(m.GetCustomAttribute<RowAttribute>()!.Baseline!)
                ?? throw new InvalidOperationException($"{t.Name}.{m.Name}: no baseline method"));
            return baselines.Concat(rows).Distinct().ToArray();
        }

        /// <summary>Times each measured method once per round, in milliseconds, keyed
        /// "Class.Method" as rows.json is.</summary>
        public static Dictionary<string, List<double>> Run(Type[] suites, int rounds)
        {
            var times = new Dictionary<string, List<double>>();
            foreach (Type t in suites)
            {
                MethodInfo[] measured = Measured(t);
                if (measured.Length == 0)
                    continue;
                object fixture = Activator.CreateInstance(t)!;
                Verifier.Invoke<GlobalSetupAttribute>(t, fixture);
                try
                {
                    Action[] calls = measured.Select(m =>
                    {
                        var run = m.CreateDelegate<Func<long>>(fixture);
                        return (Action)(() => run());
                    }).ToArray();
                    List<double>[] mine = PairedRounds.Time(calls, rounds, WarmupRounds, PairedRounds.Collect);
                    for (int i = 0; i < measured.Length; i++)
                        times[$"{t.Name}.{measured[i].Name}"] = mine[i];
                    Console.WriteLine($"paired {t.Name}: " + string.Join(", ", measured.Select((m, i) =>
                        $"{m.Name} {PairedRounds.Median(mine[i]):F3} ms")));
                }
                finally
                {
                    Verifier.Invoke<GlobalCleanupAttribute>(t, fixture);
                }
            }
            return times;
        }
    }
}
