using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Runtime.InteropServices;

using NativeDir.Benchmarks;

namespace NativeDir.Lucene.Benchmarks
{
    /// <summary>
    /// The WriteSync row's paired measurement: the durable write of the file of record against
    /// the device's own limit, measured back to back in each round. The C suite's raw row runs
    /// minutes before BenchmarkDotNet's, so a busier disk at either time moves the ratio; here
    /// every round writes the same bytes with raw O_DIRECT + fsync (libc, no library: 1 MiB
    /// writes from a page-aligned buffer, as nd_bench's raw row), with NativeFSDirectory's merge
    /// output + Sync and with SimpleFSDirectory + Sync, in an order that rotates round by round.
    /// </summary>
    internal static unsafe class PairedWrite
    {
        private const int Chunk = 1 << 20;

        [DllImport("libc", SetLastError = true, EntryPoint = "open")]
        private static extern int Open([MarshalAs(UnmanagedType.LPUTF8Str)] string path, int flags, int mode);

        [DllImport("libc", SetLastError = true, EntryPoint = "pwrite")]
        private static extern nint PWrite(int fd, byte* buf, nint count, long offset);

        [DllImport("libc", SetLastError = true, EntryPoint = "fsync")]
        private static extern int FSync(int fd);

        [DllImport("libc", EntryPoint = "close")]
        private static extern int Close(int fd);

        private const int O_WRONLY = 1, O_CREAT = 0x40, O_TRUNC = 0x200, O_CLOEXEC = 0x80000;

        /// <summary>O_DIRECT differs between Linux architectures.</summary>
        private static int ODirect => RuntimeInformation.ProcessArchitecture switch
        {
            Architecture.X64 or Architecture.X86 => 0x4000,
            Architecture.Arm64 or Architecture.Arm => 0x10000,
            _ => throw new PlatformNotSupportedException($"O_DIRECT on {RuntimeInformation.ProcessArchitecture}"),
        };

        internal static int Run(int rounds, string outFile, bool quick)
        {
            if (!OperatingSystem.IsLinux())
            {
                Console.WriteLine("--paired-write: Linux only (raw O_DIRECT through libc); nothing measured");
                File.WriteAllText(outFile, "{}\n");
                return 0;
            }
            long length = quick ? 4L << 20 : Sizes.FileBytes;
            string rawDir = Dirs.PathOf(Dir.NativeDir, "paired-write-raw");
            Dirs.Clear(rawDir);
            using var native = new FileWorkload(Dir.NativeDir, 1 << 20, "paired-write");
            using var simple = new FileWorkload(Dir.SimpleFS, 1 << 20, "paired-write");
            byte* buf = (byte*)NativeMemory.AlignedAlloc(Chunk, 4096);
            try
            {
                for (int i = 0; i < Chunk; i += native.Data.Length)
                    native.Data.AsSpan().CopyTo(new Span<byte>(buf + i, Math.Min(native.Data.Length, Chunk - i)));
                var kinds = new (string Name, Action Write)[]
                {
                    ("raw", () => Raw(Path.Combine(rawDir, "w"), buf, length)),
                    ("NativeDir", () => Lucene(native, length)),
                    ("SimpleFS", () => Lucene(simple, length)),
                };
                // one round warms up, untimed
                List<double>[] times = PairedRounds.Time(kinds.Select(k => k.Write).ToArray(), rounds, warmup: 1);
                File.WriteAllText(outFile, "{" + string.Join(", ", kinds.Select((k, i) => $"\"{k.Name}\": [" +
                    string.Join(", ", times[i].Select(t => t.ToString("F3", CultureInfo.InvariantCulture))) + "]")) + "}\n");
                for (int i = 0; i < kinds.Length; i++)
                    Console.WriteLine($"{kinds[i].Name}: median {PairedRounds.Median(times[i]):F1} ms over {rounds} rounds");
                return 0;
            }
            finally
            {
                NativeMemory.AlignedFree(buf);
            }
        }

        /// <summary>nd_bench's raw row: a fresh file, 1 MiB O_DIRECT writes, fsync.</summary>
        private static void Raw(string path, byte* buf, long length)
        {
            File.Delete(path);
            int fd = Open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | ODirect, 0x1a4);
            if (fd < 0)
                throw new IOException($"open {path} O_DIRECT: errno {Marshal.GetLastPInvokeError()}");
            try
            {
                for (long off = 0; off < length; off += Chunk)
                {
                    nint n = (nint)Math.Min(Chunk, length - off);
                    if (PWrite(fd, buf, n, off) != n)
                        throw new IOException($"pwrite {path}: errno {Marshal.GetLastPInvokeError()}");
                }
                if (FSync(fd) != 0)
                    throw new IOException($"fsync {path}: errno {Marshal.GetLastPInvokeError()}");
            }
            finally
            {
                Close(fd);
            }
        }

        /// <summary>The FileWrite benchmark: a merge-sized output, closed and synced.</summary>
        private static void Lucene(FileWorkload w, long length)
        {
            if (w.Directory.FileExists("w"))
                w.Directory.DeleteFile("w");
            FileWorkload.WriteFile(w.Directory, "w", w.Data, length, Dirs.MergeContext(length));
        }
    }
}
