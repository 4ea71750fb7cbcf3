using System;
using System.IO;
using NativeDir.Testing;
using Xunit;

namespace NativeDir.Tests
{
    public class InputTests : DataFileTests
    {
        private const int Size = 200_000; // several buffers and windows of every strategy

        public InputTests() : base(Size, seed: 1)
        {
            File.WriteAllBytes(_tmp.File("empty"), Array.Empty<byte>());
        }

        public static TheoryData<IoOptions, IoStrategy> Strategies => new()
        {
            { IoOptions.None, IoStrategy.Buffered },
            { IoOptions.Random, IoStrategy.Buffered },
            { IoOptions.Sequential, IoStrategy.Buffered },
            { IoOptions.Mapped, IoStrategy.Mapped },
            { IoOptions.Mapped | IoOptions.Preload, IoStrategy.Mapped },
            { IoOptions.Mapped | IoOptions.Warm, IoStrategy.Mapped },
            { IoOptions.Warm, IoStrategy.Buffered },
            { IoOptions.Merge, IoStrategy.Direct }, // /tmp must allow O_DIRECT (ext4, xfs, btrfs)
        };

        [Theory]
        [MemberData(nameof(Strategies))]
        public void ByteAtATimeReadsEveryByte(IoOptions options, IoStrategy expected)
        {
            using NativeInput input = _dir.OpenInput("data", options);
            Assert.Equal(expected, input.Strategy);
            Assert.Equal(Size, input.Length);
            for (int i = 0; i < Size; i++)
            {
                byte b = input.ReadByte();
                if (b != _data[i])
                    Assert.Fail($"byte {i}: {b} != {_data[i]}");
            }
            Assert.Equal(Size, input.Position);
            Assert.Throws<EndOfStreamException>(() => input.ReadByte());
            Assert.Equal(Size, input.Position);
        }

        [Theory]
        [MemberData(nameof(Strategies))]
        public void CursorReadsOfMixedSizesCrossWindows(IoOptions options, IoStrategy _)
        {
            using NativeInput input = _dir.OpenInput("data", options);
            var rnd = new Random(7);
            int pos = 0;
            var buf = new byte[70_000];
            while (pos < Size)
            {
                int n = Math.Min(Size - pos, rnd.Next(3) switch { 0 => rnd.Next(1, 16), 1 => rnd.Next(1, 5000), _ => rnd.Next(8192, 70_000) });
                input.ReadBytes(buf.AsSpan(0, n));
                Assert.True(buf.AsSpan(0, n).SequenceEqual(_data.AsSpan(pos, n)), $"at {pos} len {n}");
                pos += n;
                Assert.Equal(pos, input.Position);
                if (pos < Size && rnd.Next(4) == 0)
                {
                    Assert.Equal(_data[pos], input.ReadByte());
                    pos++;
                }
            }
            Assert.Throws<EndOfStreamException>(() => input.ReadBytes(new byte[1]));
        }

        [Theory]
        [MemberData(nameof(Strategies))]
        public void PositionalReadsLeaveTheCursorAlone(IoOptions options, IoStrategy _)
        {
            using NativeInput input = _dir.OpenInput("data", options);
            input.Seek(1000);
            var buf = new byte[4096];
            foreach (long off in new long[] { 0, 1, 4095, 4096, 65_535, Size - 4096 })
            {
                input.ReadBytes(off, buf);
                Assert.True(buf.AsSpan().SequenceEqual(_data.AsSpan((int)off, 4096)), $"at {off}");
            }
            input.ReadBytes(Size - 3, buf.AsMemory(0, 3));
            Assert.Equal(_data[Size - 1], buf[2]);
            Assert.Equal(1000, input.Position);
            Assert.Equal(_data[1000], input.ReadByte());
        }

        [Fact]
        public void ReadsPastTheEndAreEndOfStreamAndConsumeNothing()
        {
            using NativeInput input = _dir.OpenInput("data");
            var buf = new byte[10];
            Assert.Throws<EndOfStreamException>(() => input.ReadBytes(Size - 5, buf));
            Assert.Throws<ArgumentOutOfRangeException>(() => input.ReadBytes(-1, buf));
            input.Seek(Size - 5);
            Assert.Throws<EndOfStreamException>(() => input.ReadBytes(buf));
            Assert.Equal(Size - 5, input.Position);
            input.ReadBytes(buf.AsSpan(0, 5));
            Assert.Throws<EndOfStreamException>(() => input.GetWindow(Size));
            Assert.Throws<ArgumentOutOfRangeException>(() => input.Seek(Size + 1));
            Assert.Throws<ArgumentOutOfRangeException>(() => input.Seek(-1));
        }

        [Fact]
        public void EmptyFile()
        {
            using NativeInput input = _dir.OpenInput("empty", IoOptions.Mapped);
            Assert.Equal(0, input.Length);
            Assert.Throws<EndOfStreamException>(() => input.ReadByte());
            input.ReadBytes(Span<byte>.Empty);
            input.ReadBytes(0, Span<byte>.Empty);
        }

        [Theory]
        [MemberData(nameof(Strategies))]
        public void SeekAndWindows(IoOptions options, IoStrategy strategy)
        {
            using NativeInput input = _dir.OpenInput("data", options);
            input.Seek(150_000);
            Assert.Equal(_data[150_000], input.ReadByte());
            input.Position = 10;
            Assert.Equal(_data[10], input.ReadByte());

            ReadOnlySpan<byte> w = input.GetWindow(123_456);
            Assert.True(w.Length >= 1);
            Assert.True(w.SequenceEqual(_data.AsSpan(123_456, w.Length)));
            if (strategy == IoStrategy.Mapped)
                Assert.Equal(Size - 123_456, w.Length); // a mapping's window reaches the end
            Assert.Equal(11, input.Position); // a window does not move the cursor
            Assert.Equal(_data[11], input.ReadByte());
            Assert.Equal(_data[Size - 1], input.GetWindow(Size - 1)[0]);
        }

        [Fact]
        public void CloneHasItsOwnCursorAndOutlivesTheOriginal()
        {
            NativeInput input = _dir.OpenInput("data", IoOptions.Mapped);
            input.Seek(500);
            using NativeInput clone = input.Clone();
            Assert.Equal(0, clone.Position);
            Assert.Equal(Size, clone.Length);
            Assert.Equal(_data[0], clone.ReadByte());
            Assert.Equal(_data[500], input.ReadByte());
            input.Dispose(); // the mapping lives on for the clone
            for (int i = 1; i < Size; i++)
                if (clone.ReadByte() != _data[i])
                    Assert.Fail($"clone byte {i}");
        }

        [Fact]
        public void SliceSeesOnlyItsRange()
        {
            using NativeInput input = _dir.OpenInput("data");
            using NativeInput slice = input.Slice(1000, 5000);
            Assert.Equal(5000, slice.Length);
            Assert.Equal(_data[1000], slice.ReadByte());
            var buf = new byte[4999];
            slice.ReadBytes(buf);
            Assert.True(buf.AsSpan().SequenceEqual(_data.AsSpan(1001, 4999)));
            Assert.Throws<EndOfStreamException>(() => slice.ReadByte());
            Assert.Throws<EndOfStreamException>(() => slice.ReadBytes(4999, new byte[2]));
            using NativeInput inner = slice.Slice(10, 10);
            Assert.Equal(_data[1010], inner.ReadByte());
            Assert.Throws<ArgumentOutOfRangeException>(() => input.Slice(Size - 1, 2));
            Assert.Throws<ArgumentOutOfRangeException>(() => input.Slice(-1, 2));
        }

        [Fact]
        public void MissingFileIsFileNotFoundWithItsName()
        {
            var e = Assert.Throws<FileNotFoundException>(() => _dir.OpenInput("missing.bin"));
            Assert.Equal("missing.bin", e.FileName);
            Assert.Contains("missing.bin", e.Message);
            Assert.Contains("ND_E_NOT_FOUND", e.Message);
            Assert.Throws<FileNotFoundException>(() => _dir.FileLength("missing.bin"));
            Assert.Throws<FileNotFoundException>(() => _dir.DeleteFile("missing.bin"));
            Assert.Throws<FileNotFoundException>(() => _dir.Rename("missing.bin", "x"));
        }

        [Fact]
        public void SymlinksAndDirectoriesAreUnauthorizedAccess()
        {
            Emulator.SymbolicLink(_tmp.File("link"), _tmp.File("data"));
            Directory.CreateDirectory(_tmp.File("sub"));
            Assert.Throws<UnauthorizedAccessException>(() => _dir.OpenInput("link"));
            Assert.Throws<UnauthorizedAccessException>(() => _dir.OpenInput("sub"));
        }

        [Fact]
        public void InvalidOptionsAreArgumentExceptions()
        {
            Assert.Throws<ArgumentException>("options", () => _dir.OpenInput("data", IoOptions.Overwrite));
            Assert.Throws<ArgumentException>("options", () => _dir.OpenInput("data", (IoOptions)(1u << 20)));
        }

        [Fact]
        public void RequireDirectGetsDirectOrNotSupportedNeverAFallback()
        {
            // tmpfs refused O_DIRECT before Linux 6.6 and accepts it since: either answer is
            // right, a silent fallback is not (the mapping of ND_E_NOT_SUPPORTED itself is
            // checked in ErrorMappingTests)
            Assert.True(Directory.Exists("/dev/shm"), "this test needs tmpfs at /dev/shm");
            using var shm = new TempDir("/dev/shm");
            File.WriteAllBytes(shm.File("f"), Data.Make(10_000));
            using var dir = NativeDirectory.Open(shm.Path);
            try
            {
                using NativeInput input = dir.OpenInput("f", IoOptions.Merge | IoOptions.RequireDirect);
                Assert.Equal(IoStrategy.Direct, input.Strategy);
                Assert.Equal(Data.Make(10_000)[9999], input.GetWindow(9999)[0]);
            }
            catch (NotSupportedException e)
            {
                Assert.Contains("ND_E_NOT_SUPPORTED", e.Message);
                using NativeInput fallback = dir.OpenInput("f", IoOptions.Merge);
                Assert.Equal(IoStrategy.DropBehind, fallback.Strategy);
            }
            using NativeInput onDisk = _dir.OpenInput("data", IoOptions.Merge | IoOptions.RequireDirect);
            Assert.Equal(IoStrategy.Direct, onDisk.Strategy);
        }
    }
}
