using System;
using System.IO;
using System.Runtime.InteropServices;
using System.Text;

namespace NativeDir
{
    // Which OS and architecture this process runs on, for the RID. .NET (Core) and netstandard2.0
    // ask RuntimeInformation; .NET Framework 4.6.2 has none built in (the package that adds it
    // conflicts with 4.7.1+'s own copy), so that build asks Windows' environment or uname(2).
    internal static partial class NativeLibraryLoader
    {
#if NETFRAMEWORK
        private static bool IsWindows => Environment.OSVersion.Platform == PlatformID.Win32NT;
        private static bool IsMacOS => !IsWindows && UnameSysname == "Darwin";
        private static bool IsLinux => !IsWindows && UnameSysname == "Linux";
        private static string OtherOs => IsWindows ? "win" : (UnameSysname ?? "unknown").ToLowerInvariant();

        private static string? s_sysname, s_machine;

        private static string? UnameSysname
        {
            get
            {
                ReadUname();
                return s_sysname;
            }
        }

        /// <summary>The process's architecture as RIDs name it.</summary>
        private static string ProcessArchitecture
        {
            get
            {
                if (IsWindows)
                {
                    // the process's own view: "x86" for a 32-bit process on 64-bit Windows
                    string? a = Environment.GetEnvironmentVariable("PROCESSOR_ARCHITECTURE");
                    switch ((a ?? "").ToUpperInvariant())
                    {
                        case "AMD64": return "x64";
                        case "X86": return "x86";
                        case "ARM64": return "arm64";
                        case "ARM": return "arm";
                        default: return IntPtr.Size == 8 ? "x64" : "x86";
                    }
                }
                ReadUname();
                bool wide = IntPtr.Size == 8;
                switch (s_machine)
                {
                    case "x86_64": case "amd64": case "i386": case "i686": return wide ? "x64" : "x86";
                    case "aarch64": case "arm64": return wide ? "arm64" : "arm";
                    case string m when m.StartsWith("arm", StringComparison.Ordinal): return "arm";
                    default: return (s_machine ?? "unknown").ToLowerInvariant();
                }
            }
        }

        private static string PlatformDescription
        {
            get
            {
                string runtime = Type.GetType("Mono.Runtime") != null
                    ? "Mono " + MonoVersion()
                    : ".NET Framework (CLR " + Environment.Version + ")";
                string os = IsWindows ? Environment.OSVersion.VersionString : $"{UnameSysname} {Environment.OSVersion.Version}";
                return $"{os}, {ProcessArchitecture} process, {runtime}";
            }
        }

        private static string MonoVersion()
        {
            try
            {
                var m = Type.GetType("Mono.Runtime")!.GetMethod("GetDisplayName",
                    System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Static);
                return m?.Invoke(null, null) as string ?? "";
            }
            catch (Exception)
            {
                return "";
            }
        }

        private static unsafe void ReadUname()
        {
            if (s_sysname != null || IsWindows)
                return;
            // struct utsname: fields of 65 bytes on Linux, 256 on the BSDs and macOS; sysname comes
            // first, machine fifth
            byte* buf = stackalloc byte[5 * 256 + 64];
            try
            {
                if (Uname.uname(buf) != 0)
                    return;
            }
            catch (Exception e) when (e is DllNotFoundException || e is EntryPointNotFoundException)
            {
                s_sysname = "unknown";
                return;
            }
            string sys = Field(buf);
            int width = sys == "Linux" ? 65 : 256;
            s_machine = Field(buf + 4 * width);
            s_sysname = sys;
        }

        private static unsafe string Field(byte* p)
        {
            int n = 0;
            while (n < 256 && p[n] != 0)
                n++;
            return Encoding.ASCII.GetString(p, n);
        }

        private static unsafe class Uname
        {
            [DllImport("libc")]
            internal static extern int uname(byte* buf);
        }
#else
        private static bool IsWindows => RuntimeInformation.IsOSPlatform(OSPlatform.Windows);
        private static bool IsMacOS => RuntimeInformation.IsOSPlatform(OSPlatform.OSX);
        private static bool IsLinux => RuntimeInformation.IsOSPlatform(OSPlatform.Linux);

        private static string OtherOs =>
            RuntimeInformation.IsOSPlatform(OSPlatform.Create("FREEBSD")) ? "freebsd" : "unknown";

        /// <summary>The process's architecture as RIDs name it.</summary>
        private static string ProcessArchitecture => RuntimeInformation.ProcessArchitecture switch
        {
            Architecture.X64 => "x64",
            Architecture.X86 => "x86",
            Architecture.Arm64 => "arm64",
            Architecture.Arm => "arm",
            var other => other.ToString().ToLowerInvariant(),
        };

        private static string PlatformDescription
        {
            get
            {
                string os;
                try
                {
                    os = RuntimeInformation.OSDescription.Trim();
                }
                catch (Exception)
                {
                    os = Environment.OSVersion.ToString();
                }
                return $"{os}, {ProcessArchitecture} process, {RuntimeInformation.FrameworkDescription.Trim()}";
            }
        }
#endif
    }
}
