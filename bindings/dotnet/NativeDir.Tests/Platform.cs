#nullable enable
using System;
using Xunit;

namespace NativeDir.Testing
{
    /// <summary>
    /// The runtime a suite runs on, where that matters to a test: Mono (the suites' .NET Framework
    /// build, NativeDirTestFramework=net472) and which build of NativeDir they run against. A test
    /// that meets a limit of the RUNTIME, not of nativedir, is skipped there loudly, with the
    /// reason (xunit prints it; stderr says it too), as the emulator skips are (Emulator).
    /// </summary>
    internal static class Platform
    {
        /// <summary>Mono's version when this process runs on Mono, else null.</summary>
        public static string? Mono { get; } = DetectMono();

        /// <summary>The target framework of the NativeDir assembly the tests run against (from
        /// its TargetFrameworkAttribute): ".NETCoreApp,Version=v10.0", ".NETStandard,Version=v2.0",
        /// ".NETFramework,Version=v4.6.2".</summary>
        public static string NativeDirAsset { get; } =
            ((System.Runtime.Versioning.TargetFrameworkAttribute?)Attribute.GetCustomAttribute(
                typeof(NativeDirectory).Assembly, typeof(System.Runtime.Versioning.TargetFrameworkAttribute)))?.FrameworkName ?? "?";

        /// <summary>Skips the calling test on Mono, with the reason.</summary>
        public static void SkipOnMono(string reason)
        {
            if (Mono != null)
                Skip($"on Mono {Mono}: {reason}");
        }

        /// <summary>Skips the calling test (a member the .NET Framework lacks); returns nothing.</summary>
        public static long SkipOnFramework(string reason)
        {
            Skip($"on {(Mono != null ? "Mono " + Mono : ".NET Framework")}: {reason}");
            return 0;
        }

        private static void Skip(string reason)
        {
            Console.Error.WriteLine($"*** SKIPPED (runtime): {reason}");
            Assert.Skip(reason);
        }

        private static string? DetectMono()
        {
            Type? t = Type.GetType("Mono.Runtime");
            if (t == null)
                return null;
            var m = t.GetMethod("GetDisplayName", System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Static);
            return m?.Invoke(null, null) as string ?? "(unknown version)";
        }
    }
}
