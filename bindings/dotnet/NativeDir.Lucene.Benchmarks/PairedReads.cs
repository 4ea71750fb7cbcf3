using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;

using NativeDir.Benchmarks;

namespace NativeDir.Lucene.Benchmarks
{
    /// <summary>
    /// The single-threaded file rows' paired measurement (ReadSequential, ReadByteSequential,
    /// ReadRandom: NativeFSDirectory against the directory lucene.sh compares it with). In
    /// BenchmarkDotNet a directory's row and its baseline's run minutes apart, and the host of
    /// the development VM slows a vCPU for minutes at a time: pinned, ReadByte still measured
    /// 0.69x-1.27x RAMDirectory over three full runs of the same code. Here each round runs
    /// NativeFSDirectory and the baseline back to back on one CPU, the first of a round
    /// rotating; lucene.sh judges the target on the median of the per-round ratios.
    /// </summary>
    internal static class PairedReads
    {
        /// <summary>Each row and its baseline directory, as lucene.sh's file table has them.</summary>
        internal static readonly (string Row, Dir Baseline)[] Rows =
        {
            ("ReadSequential", Dir.RAM), ("ReadByteSequential", Dir.RAM), ("ReadRandom", Dir.NIOFS),
        };

        private static long Invoke(FileWorkload w, string row) => row switch
        {
            "ReadSequential" => w.ReadSequential(),
            "ReadByteSequential" => w.ReadByte(Sizes.ByteReads),
            "ReadRandom" => w.ReadRandom(),
            _ => throw new ArgumentException(row),
        };

        /// <summary>Writes {"Row": {"NativeDir": [ms...], "Baseline": [ms...]}} to outFile.</summary>
        internal static int Run(int rounds, string outFile, bool quick)
        {
            if (quick)
            {
                Sizes.FileBytes = 4L << 20;
                Sizes.ByteReads = 1L << 20;
            }
            var workloads = new Dictionary<Dir, FileWorkload>();
            var times = new Dictionary<string, Dictionary<Dir, List<double>>>();
            SameCpu.Pin(); // as the BenchmarkDotNet rows are (FileReads)
            try
            {
                foreach (Dir d in Rows.Select(r => r.Baseline).Append(Dir.NativeDir).Distinct())
                    workloads[d] = new FileWorkload(d, Sizes.FileBytes, "paired-reads");
                foreach ((string row, Dir baseline) in Rows)
                {
                    Dir[] pair = { Dir.NativeDir, baseline };
                    // three rounds warm up (JIT, tiering), untimed
                    List<double>[] t = PairedRounds.Time(pair.Select(d => (Action)(() => Invoke(workloads[d], row))).ToArray(),
                        rounds, warmup: 3, PairedRounds.Collect);
                    times[row] = new Dictionary<Dir, List<double>> { [pair[0]] = t[0], [pair[1]] = t[1] };
                    Console.WriteLine($"{row}: " + string.Join(", ", pair.Select((d, i) =>
                        $"{d} median {PairedRounds.Median(t[i]):F2} ms")) + $" over {rounds} rounds");
                }
            }
            finally
            {
                foreach (FileWorkload w in workloads.Values)
                    w.Dispose();
                SameCpu.Unpin();
            }
            string List(List<double> v) => "[" + string.Join(", ", v.Select(t => t.ToString("F4", CultureInfo.InvariantCulture))) + "]";
            File.WriteAllText(outFile, "{" + string.Join(", ", times.Select(kv => $"\"{kv.Key}\": {{" +
                string.Join(", ", kv.Value.Select(dv => $"\"{dv.Key}\": {List(dv.Value)}")) + "}")) + "}\n");
            return 0;
        }
    }
}
