using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text;
using System.Text.RegularExpressions;
using Lucene.Net.Store;
using NativeDir.Lucene.Misc;
using NativeDir.Testing;
using Xunit;

namespace NativeDir.Lucene.Tests
{
    /// <summary>
    /// The Directory contract of <see cref="ContractSweepTests"/> (every operation of Directory,
    /// IndexInput, IndexOutput, the slicer, the checksum input and the locks, crossed with the
    /// states that matter) on the misc directories, where each runs: WindowsDirectory on Windows
    /// (Wine), NativeUnixDirectory on Linux and macOS, the latter twice: with the default context
    /// (everything goes to its SimpleFSDirectory delegate) and with a merge context and
    /// minBytesDirect 0 (every input and output is a direct-I/O one). Each outcome must be one of
    /// Lucene.NET's built-in directories' for the step, or the accepted difference NativeFSDirectory
    /// has there (whose files these are on the native path); the table goes to the test output.
    /// </summary>
    public class MiscContractSweepTests
    {
        /// <summary>A NativeUnixDirectory that disposes its delegate with itself (the sweep
        /// disposes one directory per step).</summary>
#if NET
        [System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
#endif
        private sealed class OwningNativeUnix : NativeUnixDirectory
        {
            private readonly SimpleFSDirectory _delegate;

            private OwningNativeUnix(DirectoryInfo path, SimpleFSDirectory d)
                : base(path, 4096, 0, d) => _delegate = d;

            internal static OwningNativeUnix Make(string path)
            {
                var d = new SimpleFSDirectory(new DirectoryInfo(path));
                return new OwningNativeUnix(new DirectoryInfo(path), d);
            }

            protected override void Dispose(bool disposing)
            {
                base.Dispose(disposing);
                if (disposing)
                    _delegate.Dispose();
            }
        }

        private static readonly string[] Subjects = Register();

        private static string[] Register()
        {
            if (OperatingSystem.IsWindows())
            {
#pragma warning disable CA1416 // Windows only, as checked above
                ContractSweepTests.MoreKinds["Windows"] = p => new WindowsDirectory(p);
#pragma warning restore CA1416
                return new[] { "Windows" };
            }
#pragma warning disable CA1416 // not Windows, as checked above
            ContractSweepTests.MoreKinds["NativeUnix"] = p => OwningNativeUnix.Make(p);
            ContractSweepTests.MoreKinds["NativeUnix-merge"] = p => OwningNativeUnix.Make(p);
#pragma warning restore CA1416
            return new[] { "NativeUnix", "NativeUnix-merge" };
        }

        private readonly ITestOutputHelper _out;

        public MiscContractSweepTests(ITestOutputHelper output) => _out = output;

        [Fact]
        public void MiscDirectoriesMatchTheBuiltInKinds()
        {
            IReadOnlyList<string> builtIns = ContractSweepTests.BuiltInKinds;
            string[] kinds = Subjects.Concat(builtIns).ToArray();
            var table = new StringBuilder();
            table.AppendLine($"Directory contract sweep of the misc directories: kinds {string.Join(", ", kinds)}");
            var failures = new List<string>();
            int steps = 0;
            foreach (ContractSweepTests.Step step in ContractSweepTests.Script())
            {
                steps++;
                var outcomes = kinds.ToDictionary(k => k, k => ContractSweepTests.RunStep(step, k));
                var verdicts = new List<string>();
                foreach (string s in Subjects)
                {
                    string got = outcomes[s];
                    if (builtIns.Any(k => outcomes[k] == got))
                        verdicts.Add("=");
                    else if (step.Accepted != null && Regex.IsMatch(got, step.Accepted.Ours))
                        verdicts.Add($"{s}: ACCEPTED DIFFERENCE ({step.Accepted.Reason})");
                    else if (step.PosixDelete && OperatingSystem.IsWindows())
                    {
                        verdicts.Add($"{s}: DIFFERS, NOT ASSERTED ON WINDOWS (delete semantics)");
                        Console.Error.WriteLine($"*** NOT ASSERTED on Windows{(Emulator.Wine != null ? $" (Wine {Emulator.Wine})" : "")}: "
                                                + $"sweep step '{step.Name}' on {s} ({got}): it deletes what another handle holds open");
                    }
                    else
                    {
                        verdicts.Add($"{s}: DIFFERS");
                        failures.Add($"{step.Name} on {s}: {got}");
                    }
                }
                table.AppendLine($"{(verdicts.Any(v => v.EndsWith("DIFFERS", StringComparison.Ordinal)) ? "FAIL" : "ok  ")} {step.Name}  [{string.Join(", ", verdicts.Distinct())}]");
                foreach (var group in kinds.GroupBy(k => outcomes[k]))
                    table.AppendLine($"       {string.Join("/", group),-30} {group.Key}");
            }
            string text = table.ToString();
            _out.WriteLine(text);
            Assert.True(steps > 100, $"the script has {steps} steps");
            Assert.True(failures.Count == 0, $"{failures.Count} steps differ from every built-in kind:\n" + string.Join("\n", failures));
        }
    }
}
