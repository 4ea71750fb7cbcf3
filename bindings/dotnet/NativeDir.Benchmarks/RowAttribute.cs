using System;

namespace NativeDir.Benchmarks
{
    /// <summary>How a benchmark appears in the shared results table: its row name, the row it is
    /// compared to, and its target. Program writes these beside BenchmarkDotNet's JSON;
    /// bench/suites.d/dotnet.sh merges the two into dotnet.json.</summary>
    [AttributeUsage(AttributeTargets.Method)]
    public sealed class RowAttribute : Attribute
    {
        public RowAttribute(string name) => Name = name;

        public string Name { get; }

        /// <summary>The method (same class) whose median this row is divided by; none for a baseline.</summary>
        public string? Baseline { get; set; }

        /// <summary>Target: ratio to the baseline at most this (0: none).</summary>
        public double MaxRatio { get; set; }

        /// <summary>Target: at least <see cref="MinSpeedup"/> times faster than this method.</summary>
        public string? FasterThan { get; set; }

        public double MinSpeedup { get; set; }

        /// <summary>Target: nothing allocated per operation.</summary>
        public bool ZeroAlloc { get; set; }

        public string? Note { get; set; }
    }

    /// <summary>A benchmark class whose invocation is many operations (reads): the allocation
    /// probe reports its all-thread allocations per operation, so that a few KiB from the host's
    /// background threads are not mistaken for an allocation per read.</summary>
    public interface IOperationCount
    {
        /// <summary>Operations in one invocation of each benchmark method of the class.</summary>
        long OperationsPerInvocation { get; }
    }
}
