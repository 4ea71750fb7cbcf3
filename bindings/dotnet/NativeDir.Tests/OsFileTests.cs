using System;
using System.IO;
using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
using Xunit;

namespace NativeDir.Tests
{
    /// <summary>
    /// <see cref="OsFile"/>'s own calls, nativedir on every platform and framework: direct I/O
    /// switched on and off on a FileStream's handle (Linux: the kernel then refuses an unaligned
    /// transfer, which proves O_DIRECT is really set, with the value of the running
    /// architecture), file and memory advice (Linux: madvise's DontNeed empties private pages,
    /// posix_madvise's does not), and Windows' refusals. RandomAccess's contract is
    /// <see cref="RandomAccessContractTests"/>.
    /// </summary>
    public sealed unsafe class OsFileTests : IDisposable
    {
        private const int Size = 64 * 1024;
        private readonly TempDir _tmp = new();
        private readonly string _path;
        private readonly byte[] _data = Data.Make(Size, 5);

        public OsFileTests()
        {
            _path = _tmp.File("data");
            File.WriteAllBytes(_path, _data);
        }

        public void Dispose() => _tmp.Dispose();

        private FileStream Open(FileAccess access) => new(_path, FileMode.Open, access, FileShare.ReadWrite);

        [Fact]
        public void DirectIoGoesOnAndOff()
        {
            using FileStream fs = Open(FileAccess.Read);
            SafeFileHandle h = fs.SafeFileHandle;
            if (OperatingSystem.IsWindows())
            {
                Assert.Throws<NotSupportedException>(() => OsFile.SetDirect(h, true));
                return;
            }
            try
            {
                OsFile.SetDirect(h, true);
            }
            catch (NotSupportedException e)
            {
                Assert.Skip($"the temporary folder's file system has no direct I/O: {e.Message}");
            }
            byte* block = (byte*)NativeMemory.AlignedAlloc(8192, 4096);
            try
            {
                var aligned = new Span<byte>(block, 4096);
                if (OperatingSystem.IsLinux())
                {
                    // O_DIRECT is on: a buffer off the block boundary is refused by the kernel
                    var e = Assert.Throws<NativeDirException>(() => OsFile.Read(h, new Span<byte>(block + 1, 4096), 0));
                    Assert.Equal("ND_E_INVALID_ARGUMENT", e.StatusName);
                }
                Assert.Equal(4096, OsFile.Read(h, aligned, 4096));
                Assert.True(aligned.SequenceEqual(_data.AsSpan(4096, 4096)));
                OsFile.SetDirect(h, false);
                Assert.Equal(100, OsFile.Read(h, new Span<byte>(block + 1, 100), 3));
                Assert.True(new Span<byte>(block + 1, 100).SequenceEqual(_data.AsSpan(3, 100)));
            }
            finally
            {
                NativeMemory.AlignedFree(block);
            }
        }

        [Fact]
        public void FileAdvice()
        {
            using FileStream fs = Open(FileAccess.Read);
            Assert.Throws<ArgumentOutOfRangeException>(() => OsFile.Advise(fs.SafeFileHandle, 0, 0, (OsAdvice)6));
            Assert.Throws<ArgumentOutOfRangeException>(() => OsFile.Advise(fs.SafeFileHandle, -1, 0, OsAdvice.Normal));
            Assert.Throws<ArgumentNullException>(() => OsFile.Advise(null!, 0, 0, OsAdvice.Normal));
            if (OperatingSystem.IsWindows())
            {
                Assert.Throws<NotSupportedException>(() => OsFile.Advise(fs.SafeFileHandle, 0, 0, OsAdvice.Random));
                return;
            }
            foreach (OsAdvice a in new[] { OsAdvice.Normal, OsAdvice.Sequential, OsAdvice.Random, OsAdvice.WillNeed, OsAdvice.DontNeed, OsAdvice.NoReuse })
                OsFile.Advise(fs.SafeFileHandle, 0, 0, a);
            // advice changes no byte
            var back = new byte[Size];
            Assert.Equal(Size, OsFile.Read(fs.SafeFileHandle, back, 0));
            Assert.Equal(_data, back);
        }

        [Fact]
        public void MemoryAdvice()
        {
            byte* m = (byte*)NativeMemory.AlignedAlloc(8192, 4096); // two whole pages of our own
            try
            {
                Assert.Throws<ArgumentNullException>(() => OsFile.AdviseMemory(IntPtr.Zero, 4096, OsAdvice.Normal));
                Assert.Throws<ArgumentOutOfRangeException>(() => OsFile.AdviseMemory((IntPtr)m, 4096, OsAdvice.NoReuse));
                Assert.Throws<ArgumentOutOfRangeException>(() => OsFile.AdviseMemory((IntPtr)m, -1, OsAdvice.Normal));
                if (OperatingSystem.IsWindows())
                {
                    Assert.Throws<NotSupportedException>(() => OsFile.AdviseMemory((IntPtr)m, 4096, OsAdvice.Random));
                    return;
                }
                foreach (OsAdvice a in new[] { OsAdvice.Normal, OsAdvice.Sequential, OsAdvice.Random, OsAdvice.WillNeed })
                {
                    OsFile.AdviseMemory((IntPtr)m, 8192, a);
                    OsFile.AdviseMemory((IntPtr)m, 8192, a, posix: true);
                }
                // the OS wants a page boundary
                Assert.Throws<NativeDirException>(() => OsFile.AdviseMemory((IntPtr)(m + 1), 4096, OsAdvice.Normal));
                new Span<byte>(m, 8192).Fill(0xab);
                OsFile.AdviseMemory((IntPtr)m, 4096, OsAdvice.DontNeed, posix: true);
                Assert.Equal(0xab, m[0]);
                if (!OperatingSystem.IsLinux())
                    return;
                Emulator.SkipUnderQemu("qemu-user takes madvise without handing it to the kernel, so DontNeed empties nothing");
                OsFile.AdviseMemory((IntPtr)m, 4096, OsAdvice.DontNeed);
                Assert.Equal(0, m[0]);      // the page advised went
                Assert.Equal(0xab, m[4096]); // the next one stayed
            }
            finally
            {
                NativeMemory.AlignedFree(m);
            }
        }

        [Fact]
        public void ClosedAndInvalidHandles()
        {
            var buf = new byte[4];
            SafeFileHandle closed;
            using (FileStream fs = Open(FileAccess.Read))
                closed = fs.SafeFileHandle;
            Assert.Throws<ObjectDisposedException>(() => OsFile.Read(closed, buf, 0));
            Assert.Throws<ObjectDisposedException>(() => OsFile.SetDirect(closed, true));
            Assert.Throws<ObjectDisposedException>(() => OsFile.Advise(closed, 0, 0, OsAdvice.Normal));
            using var invalid = new SafeFileHandle((IntPtr)(-1), ownsHandle: false);
            Assert.Throws<ArgumentException>(() => OsFile.GetLength(invalid));
            // a handle value that is no open file: the OS's refusal, as an IOException
            using (var stale = new SafeFileHandle((IntPtr)1_000_000, ownsHandle: false))
                Assert.IsAssignableFrom<IOException>(Assert.ThrowsAny<Exception>(() => OsFile.Read(stale, buf, 0)));
        }
    }
}
