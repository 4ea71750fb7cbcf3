using System;
using System.IO;
using System.Runtime.InteropServices;
using NativeDir.Lucene.Misc;
using NativeDir.Testing;
using Xunit;

namespace NativeDir.Lucene.Tests
{
    /// <summary>
    /// NativePosixUtil on nativedir (Linux and macOS; its refusal on Windows is in
    /// MiscDirectoryTests.WrongOsIsRefused): OpenDirect really opens for direct I/O (on Linux the
    /// kernel then refuses an unaligned read, which it would not with a wrong O_DIRECT value, e.g.
    /// x86-64's on arm64), Pread reads positionally, and the advice calls reach the OS or fail
    /// with an IOException, as in Lucene.
    /// </summary>
#pragma warning disable CA1416 // Linux and macOS only, as checked
    public sealed unsafe class NativePosixUtilTests : IDisposable
    {
        private readonly TestDir _t = new("posixutil");
        private readonly string _path;
        private readonly byte[] _data = new byte[64 * 1024];

        public NativePosixUtilTests()
        {
            new Random(42).NextBytes(_data);
            _path = Path.Combine(_t.Path, "data");
            File.WriteAllBytes(_path, _data);
        }

        public void Dispose() => _t.Dispose();

        private static void RequireUnix()
        {
            if (!OperatingSystem.IsLinux() && !OperatingSystem.IsMacOS())
                Assert.Skip("NativePosixUtil runs on Linux and macOS (its refusal elsewhere is MiscDirectoryTests.WrongOsIsRefused)");
        }

        [Fact]
        public void OpenDirectAndPread()
        {
            RequireUnix();
            Microsoft.Win32.SafeHandles.SafeFileHandle fd;
            try
            {
                fd = NativePosixUtil.OpenDirect(_path, read: true);
            }
            catch (IOException e) when (e.InnerException is NotSupportedException)
            {
                Assert.Skip($"the temporary folder's file system has no direct I/O: {e.Message}");
                return;
            }
            byte* block = (byte*)NativeMemory.AlignedAlloc(16384, 4096);
            try
            {
                using (fd)
                {
                    Assert.Equal(8192L, NativePosixUtil.Pread(fd, 4096, (IntPtr)block, 8192));
                    Assert.True(new ReadOnlySpan<byte>(block, 8192).SequenceEqual(_data.AsSpan(4096, 8192)));
                    // the end: what is left, then nothing
                    Assert.Equal(4096L, NativePosixUtil.Pread(fd, _data.Length - 4096, (IntPtr)block, 16384));
                    Assert.Equal(0L, NativePosixUtil.Pread(fd, _data.Length, (IntPtr)block, 4096));
                    if (OperatingSystem.IsLinux())
                        // O_DIRECT is really on: the kernel refuses a buffer off the block boundary
                        Assert.Throws<NativeDirException>(() => NativePosixUtil.Pread(fd, 0, (IntPtr)(block + 1), 4096));
                }
                Assert.True(fd.IsClosed);
            }
            finally
            {
                NativeMemory.AlignedFree(block);
            }
        }

        [Fact]
        public void OpenDirectToWriteCreatesTheFile()
        {
            RequireUnix();
            string fresh = Path.Combine(_t.Path, "fresh");
            try
            {
                using var fd = NativePosixUtil.OpenDirect(fresh, read: false);
                Assert.False(fd.IsInvalid);
            }
            catch (IOException e) when (e.InnerException is NotSupportedException)
            {
                Assert.Skip($"the temporary folder's file system has no direct I/O: {e.Message}");
            }
            Assert.True(File.Exists(fresh));
            Assert.Equal(0, new FileInfo(fresh).Length);
            // a missing file opened to read
            Assert.Throws<FileNotFoundException>(() => NativePosixUtil.OpenDirect(Path.Combine(_t.Path, "missing"), read: true));
        }

        [Fact]
        public void AdviceReachesTheOsOrFailsAsIOException()
        {
            RequireUnix();
            using (var fs = new FileStream(_path, FileMode.Open, FileAccess.Read))
            {
                foreach (int a in new[] { NativePosixUtil.NORMAL, NativePosixUtil.SEQUENTIAL, NativePosixUtil.RANDOM,
                                          NativePosixUtil.WILLNEED, NativePosixUtil.DONTNEED, NativePosixUtil.NOREUSE })
                    NativePosixUtil.Advise(fs.SafeFileHandle, 0, 0, a);
                Assert.ThrowsAny<IOException>(() => NativePosixUtil.Advise(fs.SafeFileHandle, 0, 0, 6));
            }
            byte* m = (byte*)NativeMemory.AlignedAlloc(8192, 4096);
            try
            {
                foreach (int a in new[] { NativePosixUtil.NORMAL, NativePosixUtil.SEQUENTIAL, NativePosixUtil.RANDOM, NativePosixUtil.WILLNEED })
                {
                    Assert.Equal(0, NativePosixUtil.MAdvise((IntPtr)m, 8192, a));
                    Assert.Equal(0, NativePosixUtil.PosixMAdvise((IntPtr)m, 8192, a));
                }
                Assert.ThrowsAny<IOException>(() => NativePosixUtil.MAdvise((IntPtr)m, 8192, NativePosixUtil.NOREUSE));
                Assert.ThrowsAny<IOException>(() => NativePosixUtil.MAdvise((IntPtr)(m + 1), 4096, NativePosixUtil.NORMAL));
                new Span<byte>(m, 8192).Fill(7);
                Assert.Equal(0, NativePosixUtil.PosixMAdvise((IntPtr)m, 4096, NativePosixUtil.DONTNEED));
                if (OperatingSystem.IsLinux())
                    Assert.Equal(7, m[0]); // posix_madvise's DONTNEED keeps the bytes (Linux: a no-op)
            }
            finally
            {
                NativeMemory.AlignedFree(m);
            }
        }
    }
#pragma warning restore CA1416
}
