#nullable enable
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;

namespace NativeDir.Benchmarks
{
    /// <summary>
    /// The round loop of every paired measurement (this suite's Paired, and the Lucene.NET
    /// suite's --paired-reads, --paired-index and --paired-write, which link this file): each
    /// call runs once per round, back to back, the first of a round rotating, so that a minute in
    /// which the host slows a vCPU or the disk hits every call of that round alike and the
    /// per-round ratio cancels it.
    /// </summary>
    internal static class PairedRounds
    {
        /// <summary>Runs <paramref name="warmup"/> untimed rounds, then <paramref name="rounds"/>
        /// timed ones; <paramref name="untimed"/>, when given, runs before each call outside its
        /// timing (its argument is the call's index). Returns each call's times in milliseconds,
        /// one per timed round, in the order of <paramref name="calls"/>.</summary>
        internal static List<double>[] Time(IReadOnlyList<Action> calls, int rounds, int warmup,
            Action<int>? untimed = null)
        {
            var times = calls.Select(_ => new List<double>(rounds)).ToArray();
            for (int r = -warmup; r < rounds; r++)
            {
                for (int k = 0; k < calls.Count; k++)
                {
                    int i = (k + Math.Max(r, 0)) % calls.Count;
                    untimed?.Invoke(i);
                    long t0 = Stopwatch.GetTimestamp();
                    calls[i]();
                    double ms = Stopwatch.GetElapsedTime(t0).TotalMilliseconds;
                    if (r >= 0)
                        times[i].Add(ms);
                }
            }
            return times;
        }

        /// <summary>As BenchmarkDotNet does between iterations: a full collection before a call,
        /// outside its timing, so that no call pays for another's garbage.</summary>
        internal static void Collect(int _)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }

        internal static double Median(IReadOnlyList<double> v)
        {
            double[] s = v.OrderBy(x => x).ToArray();
            return s.Length % 2 == 1 ? s[s.Length / 2] : (s[s.Length / 2 - 1] + s[s.Length / 2]) / 2;
        }
    }
}
