#nullable enable
using System;
using System.Runtime.InteropServices;

namespace NativeDir.Benchmarks
{
    /// <summary>
    /// Pins the calling thread to one CPU (the lowest it may run on) and lets it go again.
    /// The two vCPUs of the benchmark machine differ by ~30% in what a system call costs
    /// (10240 cached 4 KiB <c>pread</c>s: 16-17 ms on one, 21-22 ms on the other, measured
    /// with <c>taskset</c>); rows whose ratio sets one loop of system calls against another
    /// measured minutes apart in this process compared where the scheduler had put the thread
    /// as much as the code, so such a suite pins every row to the same CPU. Linux only (where
    /// the benchmark runs); elsewhere a no-op.
    /// </summary>
    internal static unsafe class SameCpu
    {
        private const int MaskBytes = 128; // glibc's cpu_set_t: 1024 CPUs

        [DllImport("libc", SetLastError = true, EntryPoint = "sched_getaffinity")]
        private static extern int GetAffinity(int tid, nint size, byte* mask);

        [DllImport("libc", SetLastError = true, EntryPoint = "sched_setaffinity")]
        private static extern int SetAffinity(int tid, nint size, byte* mask);

        [ThreadStatic] private static byte[]? s_saved;

        internal static void Pin()
        {
            if (!OperatingSystem.IsLinux())
                return;
            byte* mask = stackalloc byte[MaskBytes];
            if (GetAffinity(0, MaskBytes, mask) != 0)
                throw new InvalidOperationException($"sched_getaffinity: errno {Marshal.GetLastPInvokeError()}");
            s_saved = new ReadOnlySpan<byte>(mask, MaskBytes).ToArray();
            byte* one = stackalloc byte[MaskBytes];
            new Span<byte>(one, MaskBytes).Clear();
            for (int i = 0; i < MaskBytes * 8; i++)
            {
                if ((mask[i / 8] & (1 << (i % 8))) != 0)
                {
                    one[i / 8] = (byte)(1 << (i % 8));
                    break;
                }
            }
            if (SetAffinity(0, MaskBytes, one) != 0)
                throw new InvalidOperationException($"sched_setaffinity: errno {Marshal.GetLastPInvokeError()}");
        }

        internal static void Unpin()
        {
            if (s_saved is not byte[] saved)
                return;
            fixed (byte* mask = saved)
                SetAffinity(0, MaskBytes, mask);
            s_saved = null;
        }
    }
}
