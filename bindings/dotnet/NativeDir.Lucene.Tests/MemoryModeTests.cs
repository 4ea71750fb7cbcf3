using System;
using Lucene.Net.Store;
using Xunit;

namespace NativeDir.Lucene.Tests
{
    /// <summary>
    /// A mapped file's inputs follow the library's choice of how mapped files are read
    /// (<see cref="IoPolicy.MemoryMode"/>): through the mapping, or with positional reads into
    /// their own buffers while the page cache thrashes (here forced, so it runs anywhere; that the
    /// automatic mode follows the page cache is test_memory's, in C). Every read returns the file's
    /// bytes either way, and a switch reaches a reader within one window (4 MiB).
    /// </summary>
    /// <summary>The mode is process-wide: these tests run alone, with no other test beside them.</summary>
    [CollectionDefinition("memory mode", DisableParallelization = true)]
    public class MemoryModeCollection
    {
    }

    [Collection("memory mode")]
    public class MemoryModeTests : IDisposable
    {
        private readonly MemoryMode _was = IoPolicy.MemoryMode;

        public void Dispose() => IoPolicy.MemoryMode = _was;

        [Fact]
        public void InputsReadTheMappingOrTheirBufferAsTheLibrarySays()
        {
            using var t = new TestDir("memory-mode");
            using var d = new NativeFSDirectory(t.Path);
            byte[] data = InputTests.Data(3 * NativeInput.MappedWindowSize + 12345);
            DirectoryTests.Write(d, "f", data);
            IoPolicy.MemoryMode = MemoryMode.Mapped;
            using var i = (NativeIndexInput)d.OpenInput("f", IOContext.READ);
            Assert.True(i.IsMapped);
            var c = (NativeIndexInput)i.Clone();
            c.Seek(100);
            Assert.Equal(data[100], c.ReadByte());
            Assert.True(c.ReadsFromMapping);

            // switched while the clone reads sequentially: it reads on from the mapping to the end
            // of its window, then from its buffer; every byte is the file's
            IoPolicy.MemoryMode = MemoryMode.Positional;
            Assert.Equal(MemoryMode.Positional, IoPolicy.MemoryMode);
            long pos = 101;
            var buf = new byte[3000];
            while (pos + buf.Length <= NativeInput.MappedWindowSize + 200_000)
            {
                c.ReadBytes(buf, 0, buf.Length);
                Assert.True(buf.AsSpan().SequenceEqual(data.AsSpan((int)pos, buf.Length)), $"bytes at {pos}");
                pos += buf.Length;
            }
            Assert.False(c.ReadsFromMapping);
            i.Seek(2 * NativeInput.MappedWindowSize + 7);
            Assert.Equal(data[2 * NativeInput.MappedWindowSize + 7], i.ReadByte());
            Assert.False(i.ReadsFromMapping);
            Assert.Equal(ReadInt(data, 2 * NativeInput.MappedWindowSize + 8), i.ReadInt32());
            var slice = (NativeIndexInput)d.CreateSlicer("f", IOContext.READ).OpenSlice("s", 5000, data.Length - 5000);
            slice.Seek(NativeInput.MappedWindowSize);
            Assert.Equal(data[5000 + NativeInput.MappedWindowSize], slice.ReadByte());
            Assert.False(slice.ReadsFromMapping);

            // and back: the next window is the mapping's again
            IoPolicy.MemoryMode = MemoryMode.Mapped;
            c.Seek(3 * NativeInput.MappedWindowSize + 1);
            Assert.Equal(data[3 * NativeInput.MappedWindowSize + 1], c.ReadByte());
            Assert.True(c.ReadsFromMapping);
            var big = new byte[2 * NativeInput.MappedWindowSize + 999]; // across windows, one call
            i.Seek(17);
            i.ReadBytes(big, 0, big.Length);
            Assert.True(big.AsSpan().SequenceEqual(data.AsSpan(17, big.Length)));
            slice.Dispose();
        }

        [Fact]
        public void AnUnknownModeIsRefused()
        {
            Assert.Throws<ArgumentException>(() => IoPolicy.MemoryMode = (MemoryMode)7);
            Assert.Equal(_was, IoPolicy.MemoryMode);
        }

        private static int ReadInt(byte[] b, int at) => (b[at] << 24) | (b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3];
    }
}
