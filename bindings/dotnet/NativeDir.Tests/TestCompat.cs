global using NativeDir.Testing;
#if NETFRAMEWORK
#nullable enable
// The suites also run on Mono as a .NET Framework 4.7.2 application (NativeDirTestFramework=net472,
// against the packages' net462 assets). These stand in for the .NET members the tests call, with
// the same meaning. What cannot exist there (a per-thread allocation counter) skips the test that
// asks for it, with the reason printed (Platform.SkipOnFramework).
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading.Tasks;

namespace System.Runtime.CompilerServices
{
    internal static class IsExternalInit
    {
    }

    /// <summary>The compiler's module initializer (a call from the module's .cctor, which Mono
    /// runs when the assembly loads, as .NET does).</summary>
    [AttributeUsage(AttributeTargets.Method, Inherited = false)]
    internal sealed class ModuleInitializerAttribute : Attribute
    {
    }
}

namespace System
{
    /// <summary>The compiler's index type (for <c>a[^1]</c>), as .NET defines it.</summary>
    internal readonly struct Index
    {
        private readonly int _value;

        public Index(int value, bool fromEnd = false) => _value = fromEnd ? ~value : value;

        public bool IsFromEnd => _value < 0;

        public int Value => _value < 0 ? ~_value : _value;

        public int GetOffset(int length) => IsFromEnd ? length - Value : Value;

        public static implicit operator Index(int value) => new Index(value);
    }
}

namespace System.Runtime.InteropServices
{
    /// <summary>NativeMemory's aligned allocation (the tests' direct-I/O buffers).</summary>
    internal static unsafe class NativeMemory
    {
        public static void* AlignedAlloc(nuint size, nuint alignment)
        {
            // the block, its alignment slack, and the pointer to free stored just before it
            IntPtr raw = Marshal.AllocHGlobal((IntPtr)(long)(size + alignment + (nuint)sizeof(IntPtr)));
            nuint start = (nuint)(long)raw + (nuint)sizeof(IntPtr);
            nuint aligned = (start + alignment - 1) / alignment * alignment;
            ((IntPtr*)aligned)[-1] = raw;
            return (void*)aligned;
        }

        public static void AlignedFree(void* p)
        {
            if (p != null)
                Marshal.FreeHGlobal(((IntPtr*)p)[-1]);
        }
    }
}

namespace NativeDir.Testing
{
    internal static class FrameworkCompat
    {
        extension(OperatingSystem)
        {
            public static bool IsWindows() => Environment.OSVersion.Platform == PlatformID.Win32NT;

            public static bool IsLinux() => !OperatingSystem.IsWindows() && File.Exists("/proc/self/maps");

            public static bool IsMacOS() => !OperatingSystem.IsWindows() && Directory.Exists("/System/Library/CoreServices");
        }

        extension(GC)
        {
            public static long GetTotalAllocatedBytes(bool precise = false) =>
                Platform.SkipOnFramework("no allocation counter on .NET Framework (GC.GetTotalAllocatedBytes is .NET Core 3.0+); the allocation bounds are checked on .NET");

            public static long GetAllocatedBytesForCurrentThread() =>
                Platform.SkipOnFramework("no per-thread allocation counter on .NET Framework (GC.GetAllocatedBytesForCurrentThread is .NET Core 3.0+); the allocation bounds are checked on .NET");

            public static T[] AllocateArray<T>(int length, bool pinned = false)
            {
                var a = new T[length];
                if (pinned)
                    GCHandle.Alloc(a, GCHandleType.Pinned); // a test's buffer: pinned for the process
                return a;
            }
        }

        extension(Array)
        {
            public static void Clear(Array a) => Array.Clear(a, 0, a.Length);
        }

        extension(BitConverter)
        {
            public static unsafe int SingleToInt32Bits(float f) => *(int*)&f;
        }

        extension(Random r)
        {
            public long NextInt64() => ((long)r.Next() << 33) ^ ((long)r.Next() << 11) ^ r.Next();
        }

        extension(Environment)
        {
            public static int ProcessId => Process.GetCurrentProcess().Id;
        }

        extension(File)
        {
            /// <summary>File.Move with overwrite (.NET Core 3.0+): rename(2) replaces the target.</summary>
            public static void Move(string from, string to, bool overwrite)
            {
                if (!overwrite)
                {
                    File.Move(from, to);
                    return;
                }
                if (Posix.rename(Encoding.UTF8.GetBytes(from + "\0"), Encoding.UTF8.GetBytes(to + "\0")) != 0)
                    throw new IOException($"rename {from} -> {to}: errno {Marshal.GetLastWin32Error()}");
            }

            public static FileSystemInfo CreateSymbolicLink(string path, string pathToTarget)
            {
                if (Posix.symlink(Encoding.UTF8.GetBytes(pathToTarget + "\0"), Encoding.UTF8.GetBytes(path + "\0")) != 0)
                    throw new IOException($"symlink {path} -> {pathToTarget}: errno {Marshal.GetLastWin32Error()}");
                return new FileInfo(path);
            }
        }

        extension(FileSystemInfo info)
        {
            public string? LinkTarget
            {
                get
                {
                    var buf = new byte[4096];
                    long n = (long)Posix.readlink(Encoding.UTF8.GetBytes(info.FullName + "\0"), buf, (IntPtr)buf.Length);
                    return n < 0 ? null : Encoding.UTF8.GetString(buf, 0, (int)n);
                }
            }
        }

        extension(Stream s)
        {
            public void ReadExactly(byte[] buffer)
            {
                int got = 0;
                while (got < buffer.Length)
                {
                    int n = s.Read(buffer, got, buffer.Length - got);
                    if (n == 0)
                        throw new EndOfStreamException();
                    got += n;
                }
            }

            public void Write(ReadOnlySpan<byte> bytes) => s.Write(bytes.ToArray(), 0, bytes.Length);
        }

        extension(string s)
        {
            public bool StartsWith(char c) => s.Length > 0 && s[0] == c;

            public bool EndsWith(char c) => s.Length > 0 && s[s.Length - 1] == c;

            public bool Contains(char c) => s.IndexOf(c) >= 0;

            public string[] Split(char c, StringSplitOptions options) => s.Split(new[] { c }, options);

            public string[] Split(char c, int count, StringSplitOptions options) => s.Split(new[] { c }, count, options);
        }

        extension(string)
        {
            public static string Join<T>(char separator, IEnumerable<T> values) => string.Join(separator.ToString(), values);
        }

        extension<TKey, TValue>(Dictionary<TKey, TValue> d) where TKey : notnull
        {
            public bool TryAdd(TKey key, TValue value)
            {
                if (d.ContainsKey(key))
                    return false;
                d.Add(key, value);
                return true;
            }
        }

        extension(Task t)
        {
            public async Task WaitAsync(TimeSpan timeout)
            {
                if (await Task.WhenAny(t, Task.Delay(timeout)).ConfigureAwait(false) != t)
                    throw new TimeoutException($"the task did not complete within {timeout}");
                await t.ConfigureAwait(false);
            }
        }

        extension<T>(Task<T> t)
        {
            public async Task<T> WaitAsync(TimeSpan timeout)
            {
                if (await Task.WhenAny(t, Task.Delay(timeout)).ConfigureAwait(false) != t)
                    throw new TimeoutException($"the task did not complete within {timeout}");
                return await t.ConfigureAwait(false);
            }
        }

        /// <summary>ProcessStartInfo.ArgumentList (.NET Core 2.1+): each argument quoted as the
        /// .NET Framework's (and Mono's) command-line parser reads it back.</summary>
        public static void AddArgument(this ProcessStartInfo psi, string a) =>
            psi.Arguments = (psi.Arguments.Length == 0 ? "" : psi.Arguments + " ") + "\"" + a.Replace("\\", "\\\\").Replace("\"", "\\\"") + "\"";

        private static class Posix
        {
            [DllImport("libc", SetLastError = true)]
            internal static extern int symlink(byte[] target, byte[] linkpath);

            [DllImport("libc", SetLastError = true)]
            internal static extern int rename(byte[] from, byte[] to);

            [DllImport("libc", SetLastError = true)]
            internal static extern IntPtr readlink(byte[] path, byte[] buf, IntPtr size);
        }
    }
}
#else
using System.Diagnostics;

namespace NativeDir.Testing
{
    internal static class FrameworkCompat
    {
        public static void AddArgument(this ProcessStartInfo psi, string a) => psi.ArgumentList.Add(a);
    }
}
#endif
