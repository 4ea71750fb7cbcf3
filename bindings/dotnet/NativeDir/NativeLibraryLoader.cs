using System;
using System.Collections.Generic;
using System.Diagnostics.CodeAnalysis;
using System.IO;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading;
using Native = NativeDir.Interop.nativedir;

namespace NativeDir
{
    /// <summary>
    /// Finds and loads libnativedir_dotnet (the SWIG glue that the generated DllImports name)
    /// before the first call into it, and turns every way that can fail into one
    /// <see cref="NativeDirUnavailableException"/>.
    /// <para>Searched in order: the file named by the NATIVEDIR_DOTNET_LIBRARY environment
    /// variable (then nothing else); else, under the application's base directory and this
    /// assembly's directory, <c>runtimes/{rid}/native/</c> (the NuGet layout, which build outputs
    /// mirror, and which the package's .targets file lays out for .NET Framework applications)
    /// and the directory itself (a RID-specific publish flattens the package); else the runtime's
    /// own probing (deps.json, the system's search path).</para>
    /// <para>On .NET 8 and later the loaded handle is handed to the DllImports through
    /// <c>NativeLibrary.SetDllImportResolver</c>. The netstandard2.0 and .NET Framework builds
    /// have no resolver: they load the file by its full path with dlopen (LoadLibraryEx on
    /// Windows) first, and the runtime's binding of the DllImport name then finds the library
    /// already in the process (by its SONAME, or its module name on Windows).</para>
    /// </summary>
    internal static partial class NativeLibraryLoader
    {
        internal const string LibraryName = "nativedir_dotnet";
        internal const string PathVariable = "NATIVEDIR_DOTNET_LIBRARY";

        private static readonly object s_gate = new object();
        private static volatile LoadResult? s_result;

        private sealed class LoadResult
        {
            internal IntPtr Handle;
            internal string? Loaded;   // the file now in the process, or null (runtime's probing)
            internal string? Failure;  // the whole message when nothing loaded
            internal string Rid = "";
            internal string Platform = "";
            internal string[] Searched = Array.Empty<string>();
            internal string Reason = "";
        }

        /// <summary>Loads the library on first use; throws <see cref="NativeDirUnavailableException"/>
        /// when it cannot, and the same exception (a new instance, the same message) on every
        /// later call.</summary>
        internal static void EnsureLoaded()
        {
            LoadResult r = s_result ?? Load();
            if (r.Failure != null)
                throw Unavailable(r);
        }

        /// <summary>Whether the library loads (without throwing).</summary>
        internal static bool IsAvailable => (s_result ?? Load()).Failure == null;

        /// <summary>The file the process loaded the library from (null: the runtime's own
        /// probing found it), or null when it did not load.</summary>
        internal static string? LoadedPath => (s_result ?? Load()).Loaded;

        private static NativeDirUnavailableException Unavailable(LoadResult r) =>
            new NativeDirUnavailableException(r.Failure!, r.Rid, r.Platform, r.Searched, r.Reason, PackagedRuntimeIdentifiers);

        private static LoadResult Load()
        {
            lock (s_gate)
            {
                if (s_result != null)
                    return s_result;
                LoadResult r;
                BeginProbe();
                try
                {
                    r = Probe();
                }
                finally
                {
                    EndProbe();
                }
                s_result = r;
                return r;
            }
        }

        private static LoadResult Probe()
        {
            var r = new LoadResult { Rid = RuntimeId, Platform = PlatformDescription };
            var searched = new List<string>();
            var reasons = new List<string>();
            string? explicitPath = Environment.GetEnvironmentVariable(PathVariable);
            bool loaded;
            if (!string.IsNullOrEmpty(explicitPath))
            {
                // asked for by name: that file or nothing
                searched.Add(explicitPath!);
                loaded = TryLoadFile(explicitPath!, out r.Handle, out string why);
                if (loaded)
                    r.Loaded = explicitPath;
                else
                    reasons.Add($"{explicitPath} (named by {PathVariable}): {why}");
            }
            else
            {
                loaded = TryPackageLayout(searched, reasons, r);
                if (!loaded)
                {
                    // The runtime's own probing: deps.json's paths (a framework-dependent .NET app
                    // may load native assets from the package cache), the system's search path.
                    searched.Add($"'{LibraryName}' through the runtime's own probing");
                    loaded = TryDefaultProbing(out r.Handle, out string probed);
                    if (!loaded)
                        reasons.Add($"the runtime's own probing: {probed}");
                }
            }
            if (!loaded)
                return Fail(r, searched, reasons);
            // The library is in the process: every DllImport binds to it now. Check that it is the
            // one this assembly was built against (not a stale copy elsewhere on a search path).
            string? mismatch = CheckBinding();
            if (mismatch != null)
            {
                reasons.Add($"{r.Loaded ?? "the library the runtime's probing found"}: {mismatch}");
                return Fail(r, searched, reasons);
            }
            r.Searched = searched.ToArray();
            return r;
        }

        private static bool TryPackageLayout(List<string> searched, List<string> reasons, LoadResult r)
        {
            string file = FileName;
            foreach (string dir in SearchDirectories())
            {
                foreach (string rid in CandidateRids)
                    if (TryCandidate(Path.Combine(dir, "runtimes", rid, "native", file), searched, reasons, r))
                        return true;
                if (TryCandidate(Path.Combine(dir, file), searched, reasons, r))
                    return true;
            }
            return false;
        }

        private static bool TryCandidate(string path, List<string> searched, List<string> reasons, LoadResult r)
        {
            searched.Add(path);
            if (!File.Exists(path))
                return false; // listed as searched; a missing file is no reason worth repeating
            if (TryLoadFile(path, out r.Handle, out string why))
            {
                r.Loaded = path;
                return true;
            }
            reasons.Add($"{path}: {why}");
            return false;
        }

        private static LoadResult Fail(LoadResult r, List<string> searched, List<string> reasons)
        {
            r.Handle = IntPtr.Zero;
            r.Loaded = null;
            r.Searched = searched.ToArray();
            r.Reason = reasons.Count == 0 ? "no file found" : string.Join("; ", reasons);
            var m = new StringBuilder();
            m.Append("nativedir's native library ").Append(FileName).Append(" could not be loaded for ")
             .Append(r.Rid).Append(" (").Append(r.Platform).Append("). Looked for: ")
             .Append(string.Join(", ", r.Searched)).Append(". Why: ").Append(r.Reason)
             .Append(". The NativeDir package carries native libraries for: ")
             .Append(string.Join(", ", PackagedRuntimeIdentifiers))
             .Append(". Run on one of those, or set ").Append(PathVariable)
             .Append(" to a ").Append(FileName).Append(" built for this platform");
            r.Failure = m.ToString();
            return r;
        }

        /// <summary>After the library is in the process: the first call through the DllImports
        /// (which binds them) and the ABI this assembly expects. Null when both are right.</summary>
        [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
        private static string? CheckBinding()
        {
            int abi;
            try
            {
                abi = Native.nd_abi_version();
            }
            catch (Exception e) when (e is DllNotFoundException || e is EntryPointNotFoundException || e is BadImageFormatException)
            {
                return $"{e.GetType().Name}: {e.Message}";
            }
            return abi == Native.ND_ABI_VERSION ? null
                : $"it implements ABI version {abi}, this NativeDir assembly needs {Native.ND_ABI_VERSION}";
        }

        private static IEnumerable<string> SearchDirectories()
        {
            var seen = new HashSet<string>(StringComparer.Ordinal);
            foreach (string? dir in new[] { BaseDirectory, AssemblyDirectory })
                if (!string.IsNullOrEmpty(dir) &&
                    seen.Add(Path.GetFullPath(dir!).TrimEnd(Path.DirectorySeparatorChar, Path.AltDirectorySeparatorChar)))
                    yield return dir!;
        }

        private static string? BaseDirectory =>
#if NET
            AppContext.BaseDirectory;
#else
            AppDomain.CurrentDomain.BaseDirectory;
#endif

        // Empty under NativeAOT and single-file, where AppContext.BaseDirectory is the answer.
        [UnconditionalSuppressMessage("SingleFile", "IL3000", Justification = "empty Location is handled")]
        private static string? AssemblyDirectory
        {
            get
            {
                string location = typeof(NativeLibraryLoader).Assembly.Location;
                return string.IsNullOrEmpty(location) ? null : Path.GetDirectoryName(location);
            }
        }

        internal static string FileName =>
            IsWindows ? LibraryName + ".dll"
            : IsMacOS ? "lib" + LibraryName + ".dylib"
            : "lib" + LibraryName + ".so";

        /// <summary>The portable RID that NuGet packs native assets under, for this process:
        /// <c>linux-musl-*</c> where the process runs on musl libc.</summary>
        internal static string RuntimeId => CandidateRids[0];

        private static string[]? s_candidates;

        /// <summary>The RIDs whose library could serve this process, best first: on musl
        /// <c>linux-musl-{arch}</c>, then <c>linux-{arch}</c> (a glibc library loads only where
        /// a glibc compatibility layer is installed; its loader error says why otherwise).</summary>
        private static string[] CandidateRids => s_candidates ??= ComputeCandidates();

        private static string[] ComputeCandidates()
        {
            string arch = ProcessArchitecture;
            if (IsWindows)
                return new[] { "win-" + arch };
            if (IsMacOS)
                return new[] { "osx-" + arch };
            if (IsLinux)
                return IsMusl() ? new[] { "linux-musl-" + arch, "linux-" + arch } : new[] { "linux-" + arch };
            return new[] { OtherOs + "-" + arch };
        }

        /// <summary>Whether this process runs on musl libc: its loader is mapped into the
        /// process under musl's name.</summary>
        private static bool IsMusl()
        {
            try
            {
                foreach (string line in File.ReadLines("/proc/self/maps"))
                    if (line.Contains("/ld-musl-") || line.Contains("/libc.musl-"))
                        return true;
            }
            catch (Exception e) when (e is IOException || e is UnauthorizedAccessException)
            {
                // no /proc: musl is then told by its loader's presence alone
                return Directory.Exists("/lib") && Directory.GetFiles("/lib", "ld-musl-*.so.1").Length > 0 &&
                       !File.Exists("/lib/libc.so.6") && !File.Exists("/lib64/ld-linux-x86-64.so.2");
            }
            return false;
        }

        private static string OneLine(string s) =>
            string.Join(" ", s.Split(new[] { ' ', '\n', '\r', '\t' }, StringSplitOptions.RemoveEmptyEntries));

        /// <summary>The RIDs whose native library the NativeDir package carries (generated from
        /// the package's own file list when it is built: NativeDir.csproj).</summary>
        internal static IReadOnlyList<string> PackagedRuntimeIdentifiers => PackagedRids;
    }
}
