using System;
using System.Diagnostics.CodeAnalysis;
using System.IO;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace NativeDir
{
    /// <summary>
    /// Finds libnativedir_dotnet for the generated P/Invoke declarations. Searched in order:
    /// the file named by the NATIVEDIR_DOTNET_LIBRARY environment variable; then, under the
    /// application's base directory and this assembly's directory, <c>runtimes/{rid}/native/</c>
    /// (the NuGet layout, which the build tree mirrors) and the directory itself (a RID-specific
    /// publish flattens the package). If none loads, the runtime's default probing (deps.json,
    /// the system's search path) decides.
    /// </summary>
    /// <remarks>.NET allows one resolver per assembly: an application must not install its own
    /// for the NativeDir assembly.</remarks>
    internal static class NativeLibraryLoader
    {
        internal const string LibraryName = "nativedir_dotnet";

#pragma warning disable CA2255 // the resolver must be installed before the first P/Invoke runs
        [ModuleInitializer]
#pragma warning restore CA2255
        internal static void Install() =>
            NativeLibrary.SetDllImportResolver(typeof(NativeLibraryLoader).Assembly, Resolve);

        private static IntPtr Resolve(string name, Assembly assembly, DllImportSearchPath? searchPath)
        {
            if (name != LibraryName)
                return IntPtr.Zero;
            string? explicitPath = Environment.GetEnvironmentVariable("NATIVEDIR_DOTNET_LIBRARY");
            if (!string.IsNullOrEmpty(explicitPath))
                return NativeLibrary.Load(explicitPath); // asked for by name: fail loudly if wrong
            string file = FileName;
            string rid = RuntimeId;
            foreach (string? dir in new[] { AppContext.BaseDirectory, AssemblyDirectory(assembly) })
            {
                if (string.IsNullOrEmpty(dir))
                    continue;
                if (NativeLibrary.TryLoad(Path.Combine(dir, "runtimes", rid, "native", file), out IntPtr h) ||
                    NativeLibrary.TryLoad(Path.Combine(dir, file), out h))
                    return h;
            }
            return IntPtr.Zero;
        }

        // Empty under NativeAOT and single-file, where AppContext.BaseDirectory is the answer.
        [UnconditionalSuppressMessage("SingleFile", "IL3000", Justification = "empty Location is handled")]
        private static string? AssemblyDirectory(Assembly assembly) =>
            string.IsNullOrEmpty(assembly.Location) ? null : Path.GetDirectoryName(assembly.Location);

        internal static string FileName =>
            OperatingSystem.IsWindows() ? LibraryName + ".dll"
            : OperatingSystem.IsMacOS() ? "lib" + LibraryName + ".dylib"
            : "lib" + LibraryName + ".so";

        /// <summary>The portable RID that NuGet packs native assets under.</summary>
        internal static string RuntimeId
        {
            get
            {
                string os = OperatingSystem.IsWindows() ? "win" : OperatingSystem.IsMacOS() ? "osx" : "linux";
                string arch = RuntimeInformation.ProcessArchitecture switch
                {
                    Architecture.X64 => "x64",
                    Architecture.Arm64 => "arm64",
                    Architecture.X86 => "x86",
                    Architecture.Arm => "arm",
                    var other => other.ToString().ToLowerInvariant(),
                };
                return os + "-" + arch;
            }
        }
    }
}
