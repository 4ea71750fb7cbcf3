using System;
using System.IO;
using Xunit;

namespace NativeDir.Tests
{
    public class OutputAndLockTests : IDisposable
    {
        private readonly TempDir _tmp = new();
        private readonly NativeDirectory _dir;

        public OutputAndLockTests() => _dir = NativeDirectory.Open(_tmp.Path);

        public void Dispose()
        {
            _dir.Dispose();
            _tmp.Dispose();
        }

        [Theory]
        [InlineData(IoOptions.None)]
        [InlineData(IoOptions.Merge)]
        [InlineData(IoOptions.Sequential)]
        public void SmallWritesCollectInABufferOfTheLibrarysSize(IoOptions options)
        {
            // one number in one place: the binding's buffer is whatever the library says
            using NativeOutput o = _dir.CreateOutput("sized", options);
            Assert.Equal(o.LibraryBufferSize(), o.BufferSize);
            Assert.Equal(0, o.ManagedBufferLength); // nothing allocated before a small write
            o.WriteByte(1);
            Assert.Equal(o.BufferSize, o.ManagedBufferLength);
            byte[] data = Data.Make(3 * o.BufferSize + 5, seed: 20);
            o.Write(data.AsSpan(1, o.BufferSize)); // a whole buffer's worth: straight through
            o.Write(data.AsSpan(1 + o.BufferSize));
            Assert.Equal(data.Length, o.Position);
            o.Dispose();
            using NativeInput back = _dir.OpenInput("sized");
            byte[] got = new byte[data.Length];
            back.ReadBytes(0, got);
            data[0] = 1;
            Assert.True(data.AsSpan().SequenceEqual(got));
        }

        [Theory]
        [InlineData(IoOptions.None)]
        [InlineData(IoOptions.Merge)]
        public void FlushPutsEveryByteInTheFile(IoOptions options)
        {
            // Stream.Flush's promise: buffered bytes reach the file, so its length is the position
            byte[] data = Data.Make(3 << 20, seed: 21);
            string path = Path.Combine(_tmp.Path, "flushed");
            using NativeOutput o = _dir.CreateOutput("flushed", options);
            int at = 0;
            foreach (int cut in new[] { 2, 3, 4097, 70_000, (1 << 20) + 5, 2 << 20, 3 << 20 })
            {
                o.Write(data.AsSpan(at, cut - at));
                at = cut;
                o.Flush();
                Assert.Equal(at, o.Position);
                Assert.Equal(at, _dir.FileLength("flushed"));
                using var f = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
                var back = new byte[at];
                f.ReadExactly(back);
                Assert.True(data.AsSpan(0, at).SequenceEqual(back));
            }
        }

        [Theory]
        [InlineData(IoOptions.None)]
        [InlineData(IoOptions.Merge)]
        public void SeekRewritesAndTheChecksumCoversEveryWrite(IoOptions options)
        {
            byte[] data = Data.Make((1 << 20) + 777, seed: 22);
            byte[] patch = { 1, 2, 3, 4, 5, 6, 7, 8 };
            using (NativeOutput o = _dir.CreateOutput("sought", options))
            {
                o.Write(data);
                Assert.Throws<ArgumentOutOfRangeException>(() => o.Seek(-1));
                o.Seek(4);
                Assert.Equal(4, o.Position);
                o.Write(patch);
                Assert.Equal(12, o.Position);
                Assert.Equal(Data.Crc32([.. data, .. patch]), o.Checksum);
                if (options == IoOptions.Merge) // rewrites are small and unaligned: no longer direct
                    Assert.Equal(IoStrategy.DropBehind, o.Strategy);
            }
            patch.CopyTo(data, 4);
            Assert.True(data.AsSpan().SequenceEqual(File.ReadAllBytes(Path.Combine(_tmp.Path, "sought"))));
        }

        [Theory]
        [InlineData(IoOptions.None, IoStrategy.Buffered)]
        [InlineData(IoOptions.Merge, IoStrategy.Direct)]
        public void WritesBytesSpansAndChecksums(IoOptions options, IoStrategy strategy)
        {
            byte[] big = Data.Make(100_000, seed: 3);
            var expected = new MemoryStream();
            using (NativeOutput o = _dir.CreateOutput("out", options))
            {
                Assert.Equal(strategy, o.Strategy);
                for (int i = 0; i < 10_000; i++)
                {
                    o.WriteByte((byte)i);
                    expected.WriteByte((byte)i);
                }
                o.Write(big); // bigger than the managed buffer: goes straight through
                expected.Write(big);
                o.Write(big.AsMemory(5, 3000));
                expected.Write(big, 5, 3000);
                Assert.Equal(expected.Length, o.Position);
                Assert.Equal(Data.Crc32(expected.ToArray()), o.Checksum);
                o.WriteByte(42);
                expected.WriteByte(42);
                o.Sync();
                Assert.Equal(Data.Crc32(expected.ToArray()), o.Checksum);
            }
            Assert.Equal(expected.ToArray(), File.ReadAllBytes(_tmp.File("out")));
            Assert.Equal(expected.Length, _dir.FileLength("out"));
        }

        [Fact]
        public void CreateOverExistingFileNeedsOverwrite()
        {
            File.WriteAllBytes(_tmp.File("f"), new byte[] { 9, 9, 9 });
            var e = Assert.Throws<NativeDirException>(() => _dir.CreateOutput("f"));
            Assert.Equal(-4, e.Status); // ND_E_EXISTS
            Assert.Equal("ND_E_EXISTS", e.StatusName);
            // the OS's own code for "exists": EEXIST from open(O_EXCL), ERROR_FILE_EXISTS from
            // CreateFileW(CREATE_NEW)
            int exists = OperatingSystem.IsWindows() ? 80 : 17;
            Assert.Equal(exists, e.OsError);
            Assert.Equal(exists, e.HResult);
            Assert.IsAssignableFrom<IOException>(e);
            using (NativeOutput o = _dir.CreateOutput("f", IoOptions.Overwrite))
                o.WriteByte(1);
            Assert.Equal(new byte[] { 1 }, File.ReadAllBytes(_tmp.File("f")));
        }

        [Fact]
        public void OutputUseAfterDisposeAndDoubleDispose()
        {
            NativeOutput o = _dir.CreateOutput("f");
            o.WriteByte(5);
            o.Dispose();
            o.Dispose();
            Assert.Throws<ObjectDisposedException>(() => o.Write(new byte[20_000]));
            Assert.Throws<ObjectDisposedException>(() => o.Flush());
            Assert.Throws<ObjectDisposedException>(() => o.Sync());
            Assert.Throws<ObjectDisposedException>(() => _ = o.Checksum);
            Assert.Throws<ObjectDisposedException>(() => _ = o.Strategy);
            Assert.Equal(new byte[] { 5 }, File.ReadAllBytes(_tmp.File("f")));
        }

        [Fact]
        public void LockExcludesUntilDisposed()
        {
            NativeLock l = _dir.Lock("write.lock");
            Assert.True(l.IsHeld);
            Assert.Equal("write.lock", l.Name);
            var e = Assert.Throws<NativeDirLockedException>(() => _dir.Lock("write.lock"));
            Assert.Equal(-11, e.Status);
            Assert.IsAssignableFrom<IOException>(e);
            using (var other = NativeDirectory.Open(_tmp.Path))
                Assert.Throws<NativeDirLockedException>(() => other.Lock("write.lock"));
            l.Dispose();
            l.Dispose();
            Assert.False(l.IsHeld);
            using NativeLock again = _dir.Lock("write.lock");
            Assert.True(File.Exists(_tmp.File("write.lock")));
        }
    }
}
