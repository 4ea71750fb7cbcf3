using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text.RegularExpressions;
using Xunit;

namespace NativeDir.Tests
{
    /// <summary>Runs alone: one case lowers the process's descriptor limit for a moment.</summary>
    [CollectionDefinition(Name, DisableParallelization = true)]
    public sealed class ProcessLimitCollection
    {
        public const string Name = "process limits";
    }

    /// <summary>Every status a .NET caller can see, from every kind of real failure: each ND_E_*
    /// status of the library is produced through the public API (a missing file, a held lock, a
    /// full file system...) and the exception must be the type the README's table names, carrying
    /// the status and the OS error of the failure. The table is parsed from the README, so the two
    /// cannot drift apart; the statuses come from the generated constants, so a new one without a
    /// row fails here. Statuses no real failure can produce through .NET are in
    /// <see cref="Unreachable"/> with the reason; the mapping itself is checked for every status
    /// (and an unknown one) directly.</summary>
    [Collection(ProcessLimitCollection.Name)]
    public class StatusTableTests
    {
        private static readonly Dictionary<string, string> Unreachable = new()
        {
            ["ND_E_BUSY"] = "a full ring: NativeRing queues a read that finds the ring full "
                          + "(see README), so ND_E_BUSY never reaches a caller",
        };

        // the OS errors the failures below carry: Linux's errno, or Windows' error code where
        // the win-x64 suite runs (under Wine: scripts/platform-tests.sh)
        private static readonly bool Win = OperatingSystem.IsWindows();
        private static readonly int ENOENT = 2, /* ERROR_FILE_NOT_FOUND is 2 too */
                                    ENOMEM = Win ? 8 /* ERROR_NOT_ENOUGH_MEMORY */ : 12,
                                    EEXIST = Win ? 80 /* ERROR_FILE_EXISTS */ : 17,
                                    EISDIR = Win ? 5 /* ERROR_ACCESS_DENIED */ : 21,
                                    EMFILE = 24, ENOSPC = 28,
                                    ELOOP = Win ? 1920 /* ERROR_CANT_ACCESS_FILE */ : 40;

        private sealed record Case(string Status, string What, int OsError,
                                   Func<NativeDirectory, TempDir, Exception?> Produce)
        {
            public override string ToString() => $"{Status}: {What}";
        }

        private static Exception Caught(Action a)
        {
            try
            {
                a();
            }
            catch (Exception e)
            {
                return e;
            }
            throw new Xunit.Sdk.XunitException("the call did not fail");
        }

        private static readonly Case[] Cases =
        {
            new("ND_E_INVALID_ARGUMENT", "Mapped and RequireDirect together", -1, (d, t) =>
            {
                File.WriteAllBytes(t.File("f"), new byte[] { 1 });
                return Caught(() => d.OpenInput("f", IoOptions.Mapped | IoOptions.RequireDirect).Dispose());
            }),
            // the SafeHandle keeps a handle alive through every call, and a disposed object is
            // refused before the call: the README's ObjectDisposedException, from .NET's own check
            new("ND_E_BAD_HANDLE", "a read after Dispose", -1, (d, t) =>
            {
                File.WriteAllBytes(t.File("f"), new byte[] { 1 });
                NativeInput input = d.OpenInput("f");
                input.Dispose();
                return Caught(() => input.ReadBytes(0, new byte[1]));
            }),
            new("ND_E_NOT_FOUND", "a missing file", ENOENT, (d, t) => Caught(() => d.OpenInput("missing"))),
            new("ND_E_EXISTS", "create an existing file", EEXIST, (d, t) =>
            {
                d.CreateOutput("made").Dispose();
                return Caught(() => d.CreateOutput("made"));
            }),
            new("ND_E_ACCESS", "a directory where a file is expected", EISDIR, (d, t) =>
            {
                Directory.CreateDirectory(t.File("sub"));
                return Caught(() => d.OpenInput("sub"));
            }),
            new("ND_E_ACCESS", "a symbolic link", ELOOP, (d, t) =>
            {
                File.WriteAllBytes(t.File("target"), new byte[] { 1 });
                NativeDir.Testing.Emulator.SymbolicLink(t.File("link"), "target");
                return Caught(() => d.OpenInput("link"));
            }),
            new("ND_E_INVALID_NAME", "a name with a slash", -1, (d, t) => Caught(() => d.OpenInput("a/b"))),
            new("ND_E_EOF", "a read past the end", -1, (d, t) =>
            {
                File.WriteAllBytes(t.File("f"), new byte[10]);
                using NativeInput input = d.OpenInput("f");
                return Caught(() => input.ReadBytes(5, new byte[6]));
            }),
            new("ND_E_LOCKED", "a lock held by another handle", -1, (d, t) =>
            {
                using NativeLock held = d.Lock("write.lock");
                return Caught(() => d.Lock("write.lock"));
            }),
            // POSIX lets another process truncate an open file: the read finds its bytes gone
            new("ND_E_IO", "a read of a file truncated after open", -1, (d, t) =>
            {
                File.WriteAllBytes(t.File("f"), new byte[100_000]);
                using NativeInput input = d.OpenInput("f");
                using (var fs = new FileStream(t.File("f"), FileMode.Open, FileAccess.Write))
                    fs.SetLength(1000);
                return Caught(() => input.ReadBytes(50_000, new byte[100]));
            }),
            new("ND_E_NO_SPACE", "writes filling a 256 KiB tmpfs", ENOSPC, (d, t) =>
                OnPrivateMount(t, "tmpfs", "size=256k", dir =>
                {
                    // the write's own exception: a later Dispose reports the failure again, but
                    // without the OS error (the library keeps the status of a failure, not its errno).
                    // 4 MiB: a buffered output collects up to 2 MiB before its first write (large
                    // page-cache folios, docs/design.md), so a smaller write would fail at Dispose
                    NativeOutput o = dir.CreateOutput("fill");
                    Exception e = Caught(() => o.Write(new byte[4 << 20]));
                    Caught(o.Dispose);
                    return e;
                })),
            new("ND_E_NOT_SUPPORTED", "RequireDirect on ramfs", -1, (d, t) =>
                OnPrivateMount(t, "ramfs", null, dir =>
                {
                    File.WriteAllBytes(Path.Combine(dir.Path, "f"), new byte[] { 1 });
                    return Caught(() => dir.OpenInput("f", IoOptions.RequireDirect).Dispose());
                })),
            new("ND_E_NO_MEMORY", "a mapping bigger than the address space", ENOMEM, (d, t) => NoMemory()),
            new("ND_E_TOO_MANY_OPEN", "inputs past RLIMIT_NOFILE", EMFILE, (d, t) => TooManyOpen(d, t)),
        };

        public static IEnumerable<object[]> CaseNames() => Cases.Select(c => new object[] { c.ToString() });

        [Theory]
        [MemberData(nameof(CaseNames))]
        public void EveryStatusFromARealFailureMatchesTheReadme(string name)
        {
            Case c = Cases.Single(x => x.ToString() == name);
            Dictionary<string, string> table = ReadmeTable();
            using var tmp = new TempDir();
            Exception? e;
            using (NativeDirectory dir = NativeDirectory.Open(tmp.Path))
                e = c.Produce(dir, tmp);
            if (e == null)
                return; // skipped, loudly, by the case
            Assert.True(table[c.Status] == e.GetType().Name,
                $"{c}: {e.GetType().Name} ({e.Message}), README says {table[c.Status]}");
            Match m = Regex.Match(e.Message, @"\[(ND_E_\w+)(?:, os error (-?\d+))?\]");
            if (c.Status != "ND_E_BAD_HANDLE" || m.Success)
                Assert.True(m.Success && m.Groups[1].Value == c.Status, $"{c}: message {e.Message}");
            int os = m.Success && m.Groups[2].Success ? int.Parse(m.Groups[2].Value) : 0;
            if (c.OsError >= 0)
                Assert.True(os == c.OsError, $"{c}: os error {os}, not {c.OsError} ({e.Message})");
            if (e is NativeDirException nd)
            {
                Assert.Equal(c.Status, nd.StatusName);
                Assert.Equal(os, nd.OsError);
                if (nd.OsError != 0)
                    Assert.Equal(nd.OsError, nd.HResult); // as the README says
            }
        }

        [Fact]
        public void TheCasesAndTheReadmeCoverEveryStatusAndTheMappingAgrees()
        {
            Dictionary<string, string> table = ReadmeTable();
            Dictionary<string, int> statuses = LibraryStatuses();
            Assert.Equal(statuses.Keys.OrderBy(k => k), table.Keys.Where(k => k != "other").OrderBy(k => k));
            Assert.True(table.ContainsKey("other"), "README has no row for any other code");
            Assert.Equal(statuses.Keys.OrderBy(k => k),
                Cases.Select(c => c.Status).Concat(Unreachable.Keys).Distinct().OrderBy(k => k));
            // the mapping itself, for every status (the unreachable ones too) and an unknown one
            foreach ((string name, int code) in statuses.Append(new("other", -999)))
            {
                Exception e = Errors.For(code, "f");
                Assert.True(table[name] == e.GetType().Name, $"mapping of {name}: {e.GetType().Name}, README says {table[name]}");
                if (e is NativeDirException nd)
                    Assert.Equal(code, nd.Status);
            }
        }

        /// <summary>The README's table: status name to exception type name ("other" for any
        /// other code).</summary>
        private static Dictionary<string, string> ReadmeTable([CallerFilePath] string here = "")
        {
            string readme = Path.Combine(Path.GetDirectoryName(here)!, "..", "README.md");
            var table = new Dictionary<string, string>();
            bool inTable = false;
            foreach (string line in File.ReadLines(readme))
            {
                if (line.StartsWith("| status | exception |", StringComparison.Ordinal))
                {
                    inTable = true;
                    continue;
                }
                if (!inTable)
                    continue;
                if (!line.StartsWith('|'))
                    break;
                string[] cells = line.Trim().Trim('|').Split('|');
                Match type = Regex.Match(cells[cells.Length - 1].Trim(), @"^`(\w+)`");
                if (!type.Success)
                    continue;
                foreach (Match s in Regex.Matches(string.Join("|", cells, 0, cells.Length - 1), @"`(ND_E_\w+)`"))
                    Assert.True(table.TryAdd(s.Groups[1].Value, type.Groups[1].Value), $"{s.Value} has two rows");
                if (cells[0].Contains("any other code"))
                    table["other"] = type.Groups[1].Value;
            }
            Assert.True(table.Count > 0, $"no status table in {readme}");
            return table;
        }

        private static Dictionary<string, int> LibraryStatuses() =>
            typeof(NativeDir.Interop.nativedir).GetFields(BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Static)
                .Where(f => f.IsLiteral && f.Name.StartsWith("ND_E_", StringComparison.Ordinal))
                .ToDictionary(f => f.Name, f => (int)f.GetRawConstantValue()!);

        /// <summary>A skip that shows: xunit v3's Assert.Skip where it exists; on xunit v2
        /// (no dynamic skip) the reason goes to stderr and the case returns null.</summary>
        private static Exception? Skip(string reason)
        {
            string text = $"*** SKIPPED: {reason}";
            Console.Error.WriteLine(text);
            MethodInfo? skip = typeof(Assert).GetMethod("Skip", new[] { typeof(string) });
            if (skip != null)
            {
                try
                {
                    skip.Invoke(null, new object[] { text });
                }
                catch (TargetInvocationException e) when (e.InnerException != null)
                {
                    System.Runtime.ExceptionServices.ExceptionDispatchInfo.Capture(e.InnerException).Throw();
                }
            }
            return null;
        }

        private static int Run(string file, params string[] args)
        {
            var psi = new ProcessStartInfo(file) { UseShellExecute = false, RedirectStandardError = true, RedirectStandardOutput = true };
            foreach (string a in args)
                psi.AddArgument(a);
            using Process p = Process.Start(psi)!;
            p.StandardOutput.ReadToEnd();
            p.StandardError.ReadToEnd();
            p.WaitForExit();
            return p.ExitCode;
        }

        /// <summary>Runs <paramref name="body"/> on a fresh file system mounted over a directory
        /// of <paramref name="t"/> (root only: a managed test cannot enter a private mount
        /// namespace of its own), unmounted afterwards.</summary>
        private static Exception? OnPrivateMount(TempDir t, string fstype, string? opts,
                                                 Func<NativeDirectory, Exception> body)
        {
            if (!OperatingSystem.IsLinux())
                return Skip($"mounting {fstype} is Linux's");
            if (Environment.UserName != "root" && geteuid() != 0)
                return Skip($"mounting {fstype} needs root here");
            string mnt = t.File(fstype);
            Directory.CreateDirectory(mnt);
            var args = new List<string> { "-t", fstype };
            if (opts != null)
                args.AddRange(new[] { "-o", opts });
            args.AddRange(new[] { fstype, mnt });
            if (Run("mount", args.ToArray()) != 0)
                return Skip($"cannot mount {fstype} here");
            try
            {
                using NativeDirectory dir = NativeDirectory.Open(mnt);
                return body(dir);
            }
            finally
            {
                Run("umount", "-l", mnt);
            }
        }

        /// <summary>A mapping larger than the whole user address space (128 TiB on x86-64 and
        /// arm64) fails with ENOMEM; only a file system taking a sparse file that big will do:
        /// tmpfs does, ext4 does not.</summary>
        private static Exception? NoMemory()
        {
            // Wine shows the host's /proc and /dev/shm on its drive Z:, so the case holds there
            bool tmpfs = File.Exists("/proc/mounts") && File.ReadLines("/proc/mounts").Select(l => l.Split(' '))
                .Any(f => f.Length > 2 && f[1] == "/dev/shm" && f[2] == "tmpfs");
            if (!tmpfs)
                return Skip("no tmpfs at /dev/shm for a 200 TiB sparse file");
            using var shm = new TempDir("/dev/shm");
            using (var fs = new FileStream(shm.File("huge"), FileMode.CreateNew))
                fs.SetLength(200L << 40);
            using NativeDirectory dir = NativeDirectory.Open(shm.Path);
            return Caught(() => dir.OpenInput("huge", IoOptions.Mapped).Dispose());
        }

        [StructLayout(LayoutKind.Sequential)]
        private struct RLimit
        {
            public ulong Cur, Max;
        }

        [DllImport("libc", SetLastError = true)]
        private static extern int getrlimit(int resource, ref RLimit limit);

        [DllImport("libc", SetLastError = true)]
        private static extern int setrlimit(int resource, ref RLimit limit);

        [DllImport("libc")]
        private static extern uint geteuid();

        private const int RLIMIT_NOFILE = 7; // Linux

        /// <summary>The soft descriptor limit lowered to a little above what is open, for as
        /// long as it takes to open inputs until one fails (this test class runs alone, and
        /// every path it takes here has run once before the limit drops).</summary>
        private static Exception? TooManyOpen(NativeDirectory d, TempDir t)
        {
            if (!OperatingSystem.IsLinux())
                return Skip("RLIMIT_NOFILE's number is Linux's");
            File.WriteAllBytes(t.File("f"), new byte[] { 1 });
            d.OpenInput("f").Dispose();
            Caught(() => d.OpenInput("missing")); // the failure path, once, before the limit
            var saved = new RLimit();
            Assert.Equal(0, getrlimit(RLIMIT_NOFILE, ref saved));
            var kept = new List<NativeInput>();
            Exception? e = null;
            var low = new RLimit { Cur = (ulong)Directory.GetFiles("/proc/self/fd").Length + 32, Max = saved.Max };
            Assert.Equal(0, setrlimit(RLIMIT_NOFILE, ref low));
            try
            {
                for (int i = 0; i < 10_000 && e == null; i++)
                {
                    try
                    {
                        kept.Add(d.OpenInput("f"));
                    }
                    catch (Exception x)
                    {
                        e = x;
                    }
                }
            }
            finally
            {
                foreach (NativeInput i in kept)
                    i.Dispose();
                Assert.Equal(0, setrlimit(RLIMIT_NOFILE, ref saved));
            }
            return e ?? throw new Xunit.Sdk.XunitException("10000 inputs opened under a low limit");
        }
    }
}
