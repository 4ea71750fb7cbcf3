#if !NET
using System;
using System.ComponentModel;
using System.Runtime.InteropServices;
using System.Text;
using Native = NativeDir.Interop.nativedir;

namespace NativeDir
{
    // netstandard2.0 and .NET Framework: no resolver exists. The library is loaded by its full
    // path (dlopen, LoadLibraryEx); the runtime's binding of the DllImport name then finds it in
    // the process: the dynamic loader matches "libnativedir_dotnet.so" against the SONAME of the
    // loaded file, Windows matches "nativedir_dotnet.dll" against the loaded module's name.
    internal static unsafe partial class NativeLibraryLoader
    {
        private static void BeginProbe() { }

        private static void EndProbe() { }

        private static bool TryLoadFile(string path, out IntPtr handle, out string why)
        {
            why = "";
            if (IsWindows)
            {
                handle = Kernel32.LoadLibraryExW(path, IntPtr.Zero, Kernel32.LoadWithAlteredSearchPath);
                if (handle != IntPtr.Zero)
                    return true;
                int error = Marshal.GetLastWin32Error();
                why = $"{new Win32Exception(error).Message} (Windows error {error})";
                return false;
            }
            byte[] utf8 = Encoding.UTF8.GetBytes(path + "\0");
            fixed (byte* p = utf8)
                handle = Dl.Open(p, out why);
            return handle != IntPtr.Zero;
        }

        /// <summary>The first call through the generated DllImports, which makes the runtime
        /// bind them with its own probing (Mono's, or .NET's deps.json).</summary>
        [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
        private static bool TryDefaultProbing(out IntPtr handle, out string why)
        {
            handle = IntPtr.Zero;
            why = "";
            try
            {
                Native.nd_abi_version();
                return true;
            }
            catch (Exception e) when (e is DllNotFoundException || e is EntryPointNotFoundException || e is BadImageFormatException)
            {
                why = $"{e.GetType().Name}: {OneLine(e.Message)}";
                return false;
            }
        }

        private static class Kernel32
        {
            internal const uint LoadWithAlteredSearchPath = 0x8;

            [DllImport("kernel32.dll", CharSet = CharSet.Unicode, SetLastError = true)]
            internal static extern IntPtr LoadLibraryExW(string path, IntPtr file, uint flags);
        }

        /// <summary>dlopen and dlerror from wherever this libc keeps them: glibc's libdl.so.2
        /// (libc.so.6 itself since glibc 2.34), macOS's libSystem, musl's libc.</summary>
        private static class Dl
        {
            private const int RtldNow = 2; // every symbol resolved at load: a missing one fails here

            internal static IntPtr Open(byte* path, out string why)
            {
                why = "";
                for (int i = 0; i < 5; i++)
                {
                    IntPtr h;
                    byte* err;
                    try
                    {
                        switch (i)
                        {
                            case 0: h = LibDl.dlopen(path, RtldNow); err = h == IntPtr.Zero ? LibDl.dlerror() : null; break;
                            case 1: h = LibC6.dlopen(path, RtldNow); err = h == IntPtr.Zero ? LibC6.dlerror() : null; break;
                            case 2: h = LibSystem.dlopen(path, RtldNow); err = h == IntPtr.Zero ? LibSystem.dlerror() : null; break;
                            case 3: h = MuslX64.dlopen(path, RtldNow); err = h == IntPtr.Zero ? MuslX64.dlerror() : null; break;
                            default: h = MuslArm64.dlopen(path, RtldNow); err = h == IntPtr.Zero ? MuslArm64.dlerror() : null; break;
                        }
                    }
                    catch (Exception e) when (e is DllNotFoundException || e is EntryPointNotFoundException)
                    {
                        continue; // not this libc
                    }
                    if (h == IntPtr.Zero)
                        why = err == null ? "dlopen failed (no dlerror message)" : Decode(err);
                    return h;
                }
                why = "no dlopen found in libdl.so.2, libc.so.6, libSystem or musl's libc";
                return IntPtr.Zero;
            }

            private static string Decode(byte* s)
            {
                int n = 0;
                while (s[n] != 0)
                    n++;
                return Encoding.UTF8.GetString(s, n);
            }
        }

        private static class LibDl
        {
            [DllImport("libdl.so.2")] internal static extern IntPtr dlopen(byte* path, int flags);
            [DllImport("libdl.so.2")] internal static extern byte* dlerror();
        }

        private static class LibC6
        {
            [DllImport("libc.so.6")] internal static extern IntPtr dlopen(byte* path, int flags);
            [DllImport("libc.so.6")] internal static extern byte* dlerror();
        }

        private static class LibSystem
        {
            [DllImport("/usr/lib/libSystem.B.dylib")] internal static extern IntPtr dlopen(byte* path, int flags);
            [DllImport("/usr/lib/libSystem.B.dylib")] internal static extern byte* dlerror();
        }

        private static class MuslX64
        {
            [DllImport("libc.musl-x86_64.so.1")] internal static extern IntPtr dlopen(byte* path, int flags);
            [DllImport("libc.musl-x86_64.so.1")] internal static extern byte* dlerror();
        }

        private static class MuslArm64
        {
            [DllImport("libc.musl-aarch64.so.1")] internal static extern IntPtr dlopen(byte* path, int flags);
            [DllImport("libc.musl-aarch64.so.1")] internal static extern byte* dlerror();
        }
    }
}
#endif
