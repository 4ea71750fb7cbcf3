#if NET
using System;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace NativeDir
{
    // .NET 8 and later: the DllImports get the loaded handle from a resolver (one per assembly:
    // an application must not install its own for the NativeDir assembly).
    internal static partial class NativeLibraryLoader
    {
        // set while this thread probes: the resolver then answers with the file just loaded (or
        // nothing, so the runtime's own probing runs) instead of probing again
        [ThreadStatic]
        private static bool t_probing;
        private static IntPtr s_probeHandle;

#pragma warning disable CA2255 // the resolver must be installed before the first P/Invoke runs
        [ModuleInitializer]
#pragma warning restore CA2255
        internal static void Install() =>
            NativeLibrary.SetDllImportResolver(typeof(NativeLibraryLoader).Assembly, Resolve);

        private static IntPtr Resolve(string name, Assembly assembly, DllImportSearchPath? searchPath)
        {
            if (name != LibraryName)
                return IntPtr.Zero;
            if (t_probing)
                return s_probeHandle;
            return (s_result ?? Load()).Handle;
        }

        private static void BeginProbe() => t_probing = true;

        private static void EndProbe()
        {
            t_probing = false;
            s_probeHandle = IntPtr.Zero;
        }

        private static bool TryLoadFile(string path, out IntPtr handle, out string why)
        {
            why = "";
            try
            {
                handle = NativeLibrary.Load(path);
                s_probeHandle = handle;
                return true;
            }
            catch (Exception e) when (e is DllNotFoundException || e is BadImageFormatException)
            {
                handle = IntPtr.Zero;
                why = OneLine(e.Message);
                return false;
            }
        }

        private static bool TryDefaultProbing(out IntPtr handle, out string why)
        {
            why = "";
            try
            {
                handle = NativeLibrary.Load(LibraryName, typeof(NativeLibraryLoader).Assembly, null);
                s_probeHandle = handle;
                return true;
            }
            catch (Exception e) when (e is DllNotFoundException || e is BadImageFormatException)
            {
                handle = IntPtr.Zero;
                why = OneLine(e.Message);
                return false;
            }
        }
    }
}
#endif
