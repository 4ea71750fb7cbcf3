using System;
using System.IO;
using Lucene.Net.Store;
using Xunit;

namespace NativeDir.Lucene.Tests
{
    /// <summary>NativeIndexInput.Prefetch and UpdateReadAdvice: a slice's offsets are its own, the
    /// range is checked against the input (not the file), clones and slices share the file, and
    /// nothing read changes.</summary>
    public class PrefetchTests
    {
        private static IOContext Ctx(string name) => name switch
        {
            "read" => IOContext.READ,
            "readonce" => IOContext.READ_ONCE,
            _ => new IOContext(new MergeInfo(1, 64L << 20, false, 1)),
        };

        [Theory]
        [InlineData("read")]
        [InlineData("readonce")]
        [InlineData("merge")]
        public void PrefetchAndAdviceOnInputsClonesAndSlices(string ctx)
        {
            using var t = new TestDir("prefetch");
            using var d = new NativeFSDirectory(t.Path);
            var data = new byte[200_000];
            new Random(18).NextBytes(data);
            DirectoryTests.Write(d, "f", data);
            using var i = (NativeIndexInput)d.OpenInput("f", Ctx(ctx));
            i.Prefetch(0, data.Length);
            i.Prefetch(data.Length, 0);
            Assert.Throws<EndOfStreamException>(() => i.Prefetch(1, data.Length));
            Assert.Throws<ArgumentOutOfRangeException>(() => i.Prefetch(-1, 1));
            Assert.Throws<ArgumentOutOfRangeException>(() => i.Prefetch(0, -1));

            using var slicer = d.CreateSlicer("f", Ctx(ctx));
            using var s = (NativeIndexInput)slicer.OpenSlice("s", 50_000, 1000);
            s.Prefetch(0, 1000);
            s.Prefetch(999, 1);
            // the slice's end is checked, not the file's
            Assert.Throws<EndOfStreamException>(() => s.Prefetch(0, 1001));
            Assert.Throws<EndOfStreamException>(() => s.Prefetch(1000, 1));
            var c = (NativeIndexInput)s.Clone();
            c.Prefetch(500, 500);

            foreach (IoOptions a in new[] { IoOptions.Sequential, IoOptions.Random, IoOptions.None })
            {
                i.UpdateReadAdvice(a);
                c.UpdateReadAdvice(a);
            }
            var e = Assert.Throws<ArgumentException>(() => s.UpdateReadAdvice(IoOptions.Random | IoOptions.Sequential));
            Assert.Contains("nd_input_advise", e.Message);
            Assert.Throws<ArgumentException>(() => i.UpdateReadAdvice(IoOptions.Mapped));

            c.Seek(0);
            var buf = new byte[1000];
            c.ReadBytes(buf, 0, 1000);
            Assert.True(buf.AsSpan().SequenceEqual(data.AsSpan(50_000, 1000)));
        }

        [Fact]
        public void ClosedInputRefuses()
        {
            using var t = new TestDir("prefetch-closed");
            using var d = new NativeFSDirectory(t.Path);
            DirectoryTests.Write(d, "f", new byte[100]);
            var i = (NativeIndexInput)d.OpenInput("f", IOContext.READ);
            var c = (NativeIndexInput)i.Clone();
            i.Dispose();
            Assert.Throws<ObjectDisposedException>(() => c.Prefetch(0, 1));
            Assert.Throws<ObjectDisposedException>(() => c.UpdateReadAdvice(IoOptions.Random));
        }
    }
}
