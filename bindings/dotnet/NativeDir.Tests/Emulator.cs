#nullable enable
using System;
using System.IO;
using System.Runtime.InteropServices;
using Xunit;

namespace NativeDir.Testing
{
    /// <summary>
    /// Where a suite runs under an emulator (scripts/platform-tests.sh runs the win-x64 publish
    /// under Wine and the linux-arm64 one under qemu-user) and a test meets a limit of the
    /// EMULATOR, not of nativedir or of the OS it stands in for: the test is skipped there, loudly,
    /// with the reason (xunit reports it skipped and prints the reason; stderr says it too).
    /// Shared by both .NET test projects (NativeDir.Lucene.Tests links this file).
    /// </summary>
    internal static class Emulator
    {
        /// <summary>Wine's version when this Windows process runs under Wine, else null: Wine's
        /// ntdll exports wine_get_version, Windows' does not (so this holds however the suite
        /// was started).</summary>
        public static string? Wine { get; } = DetectWine();

        /// <summary>The qemu-user binary running this process, else null. A process cannot tell
        /// qemu-user from hardware reliably (/proc is emulated), so the runner names it:
        /// platform-tests.sh sets ND_TEST_EMULATOR.</summary>
        public static string? Qemu { get; } = DetectQemu();

        /// <summary>Skips the calling test under Wine, with the reason.</summary>
        public static void SkipUnderWine(string reason)
        {
            if (Wine != null)
                Skip($"under Wine {Wine}: {reason}");
        }

        /// <summary>Skips the calling test under qemu-user, with the reason.</summary>
        public static void SkipUnderQemu(string reason)
        {
            if (Qemu != null)
                Skip($"under {Qemu}: {reason}");
        }

        /// <summary>Makes a symbolic link to a file. Wine 8's CreateSymbolicLinkW is a stub that
        /// reports success and makes nothing: there the calling test is skipped.</summary>
        public static void SymbolicLink(string link, string target)
        {
            File.CreateSymbolicLink(link, target);
            if (Wine != null && !File.Exists(link))
                Skip($"under Wine {Wine}: CreateSymbolicLinkW made no link (a stub in this Wine), so there is no symbolic link to refuse");
        }

        private static void Skip(string reason)
        {
            Console.Error.WriteLine($"*** SKIPPED (emulator): {reason}");
            Assert.Skip(reason);
        }

        private static string? DetectWine()
        {
#if NETFRAMEWORK
            return null; // the .NET Framework build runs on Mono, never under Wine
#else
            if (!OperatingSystem.IsWindows())
                return null;
            if (!NativeLibrary.TryLoad("ntdll.dll", out IntPtr ntdll) ||
                !NativeLibrary.TryGetExport(ntdll, "wine_get_version", out IntPtr fn))
                return null;
            IntPtr v = Marshal.GetDelegateForFunctionPointer<WineGetVersion>(fn)();
            return Marshal.PtrToStringAnsi(v) ?? "(unknown version)";
#endif
        }

        [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
        private delegate IntPtr WineGetVersion();

        private static string? DetectQemu()
        {
            string? e = Environment.GetEnvironmentVariable("ND_TEST_EMULATOR");
            return e != null && e.StartsWith("qemu", StringComparison.Ordinal) ? e : null;
        }
    }
}
