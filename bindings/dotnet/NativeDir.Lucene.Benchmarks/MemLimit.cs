using System;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Text.Json;

namespace NativeDir.Lucene.Benchmarks
{
    /// <summary>
    /// The memory cgroup this process runs in, through nd_memlimit (bench/nd_memlimit.c: the one
    /// program every suite's memory-limited rows use; lucene_ltm.sh starts this benchmark under
    /// <c>nd_memlimit run</c>, which sets ND_MEMLIMIT_CGROUP). The tool is found beside the
    /// benchmark's build (ND_MEMLIMIT) or on PATH.
    /// </summary>
    internal static class MemLimit
    {
        internal static string Tool =>
            Environment.GetEnvironmentVariable("ND_MEMLIMIT") is { Length: > 0 } t ? t : "nd_memlimit";

        /// <summary>Why the rows cannot run here, or null: they need the cgroup nd_memlimit made.</summary>
        internal static string Unavailable =>
            Environment.GetEnvironmentVariable("ND_MEMLIMIT_CGROUP") is { Length: > 0 } ? null
                : "not started under nd_memlimit run (ND_MEMLIMIT_CGROUP is unset)";

        /// <summary>The cgroup's figures (nd_memlimit's JSON).</summary>
        internal readonly record struct Stat(long Limit, long Usage, long Peak, long File, long Anon, long LimitHits, long OomKills);

        /// <summary>Limits the cgroup to <paramref name="cacheBytes"/> of page cache on top of what
        /// it holds besides page cache now (this process's own memory).</summary>
        internal static Stat LimitCache(long cacheBytes) =>
            ParseStat(Run("limit", "--cache", cacheBytes.ToString(CultureInfo.InvariantCulture)));

        internal static Stat Unlimit() => ParseStat(Run("limit", "max"));

        internal static Stat Read() => ParseStat(Run("stat"));

        /// <summary>Drops the page-cache pages of every file in <paramref name="dir"/>; the bytes
        /// still cached after (pages a live mapping holds).</summary>
        internal static long Evict(string dir) =>
            JsonDocument.Parse(Run("evict", dir)).RootElement.GetProperty("cached_after").GetInt64();

        /// <summary>How many bytes of <paramref name="paths"/> are in the page cache.</summary>
        internal static long Cached(params string[] paths)
        {
            if (paths.Length == 0)
                return 0;
            var args = new string[paths.Length + 1];
            args[0] = "cached";
            paths.CopyTo(args, 1);
            return JsonDocument.Parse(Run(args)).RootElement.GetProperty("cached").GetInt64();
        }

        private static Stat ParseStat(string json)
        {
            JsonElement e = JsonDocument.Parse(json).RootElement;
            return new Stat(e.GetProperty("limit").GetInt64(), e.GetProperty("usage").GetInt64(),
                e.GetProperty("peak").GetInt64(), e.GetProperty("file").GetInt64(), e.GetProperty("anon").GetInt64(),
                e.GetProperty("limit_hits").GetInt64(), e.GetProperty("oom_kills").GetInt64());
        }

        private static string Run(params string[] args)
        {
            var psi = new ProcessStartInfo(Tool)
            {
                RedirectStandardOutput = true,
                RedirectStandardError = true,
                UseShellExecute = false,
            };
            foreach (string a in args)
                psi.ArgumentList.Add(a);
            using Process p = Process.Start(psi) ?? throw new InvalidOperationException($"{Tool} did not start");
            string o = p.StandardOutput.ReadToEnd();
            string err = p.StandardError.ReadToEnd();
            p.WaitForExit();
            if (p.ExitCode != 0)
                throw new InvalidOperationException($"{Tool} {string.Join(' ', args)}: exit {p.ExitCode}: {err.Trim()}");
            return o.Trim();
        }
    }
}
