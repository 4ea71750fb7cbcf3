using System;
using System.IO;
using System.Linq;
using Lucene.Net.Store;
using Xunit;

namespace NativeDir.Lucene.Tests
{
    public class DirectoryTests
    {
        private static byte[] Bytes(int n, int seed = 1)
        {
            var b = new byte[n];
            new Random(seed).NextBytes(b);
            return b;
        }

        internal static void Write(global::Lucene.Net.Store.Directory d, string name, byte[] data, IOContext ctx = null)
        {
            using IndexOutput o = d.CreateOutput(name, ctx ?? IOContext.DEFAULT);
            o.WriteBytes(data, 0, data.Length);
        }

        [Fact]
        public void CreateListLengthDelete()
        {
            using var t = new TestDir("basic");
            using var d = new NativeFSDirectory(t.Path);
            Assert.Empty(d.ListAll());
            Write(d, "b.dat", Bytes(10));
            Write(d, "a.dat", Bytes(70000));
            Assert.Equal(new[] { "a.dat", "b.dat" }, d.ListAll());
            Assert.True(d.FileExists("a.dat"));
            Assert.False(d.FileExists("zzz"));
            Assert.Equal(70000, d.FileLength("a.dat"));
            Assert.Equal(10, d.FileLength("b.dat"));
            Assert.Equal(70000, new FileInfo(Path.Combine(t.Path, "a.dat")).Length);
            d.DeleteFile("a.dat");
            Assert.Equal(new[] { "b.dat" }, d.ListAll());
            Assert.ThrowsAny<IOException>(() => d.DeleteFile("a.dat"));
            Assert.Throws<FileNotFoundException>(() => d.FileLength("a.dat"));
            Assert.Throws<FileNotFoundException>(() => d.OpenInput("a.dat", IOContext.DEFAULT));
        }

        public static TheoryData<string> Contexts => new() { "default", "readonce", "read", "flush", "merge" };

        private static IOContext ContextNamed(string name) => name switch
        {
            "readonce" => IOContext.READ_ONCE,
            "read" => IOContext.READ,
            "flush" => new IOContext(new FlushInfo(10, 1 << 20)),
            "merge" => new IOContext(new MergeInfo(1000, 64L << 20, false, 1)),
            _ => IOContext.DEFAULT,
        };

        [Theory]
        [MemberData(nameof(Contexts))]
        public void DefaultBuffersAreTheLibrarysSizeInEveryContext(string ctxName)
        {
            // one number in one place: the default policy takes every buffer size from the
            // library, for the flags it picks in each context
            IOContext ctx = ContextNamed(ctxName);
            var policy = new IoStrategyPolicy();
            using var t = new TestDir("sizes");
            using var d = new NativeFSDirectory(t.Path);
            using var native = NativeDirectory.Open(t.Path);
            byte[] data = Bytes(3 << 20, seed: 7);
            using (var o = (NativeIndexOutput)d.CreateOutput("f.dat", ctx))
            {
                using NativeOutput same = native.CreateOutput("g.dat", policy.ForOutput(ctx));
                // the library's size as ArrayPool<byte>.Shared hands it out: .NET's pool gives
                // exactly that power of two; the one the suite gets on Mono may give the next one
                // up, when it holds none of that size but one of the next
                Assert.True(o.BufferSize == same.BufferSize || o.BufferSize == 2 * same.BufferSize,
                    $"the output collects {o.BufferSize} bytes; the library's buffer is {same.BufferSize}");
                o.WriteBytes(data, 0, data.Length);
            }
            using var i = (NativeIndexInput)d.OpenInput("f.dat", ctx);
            using NativeInput sameIn = native.OpenInput("f.dat", policy.ForInput("f.dat", ctx));
            Assert.Equal(sameIn.BufferSize, i.BufferSize);
            var back = new byte[data.Length];
            i.ReadBytes(back, 0, back.Length);
            Assert.Equal(data, back);
        }

        [Fact]
        public void CreatesItsFolderOnFirstWriteAndRefusesBadNames()
        {
            using var t = new TestDir("mk");
            string p = Path.Combine(t.Path, "x", "y");
            using var d = new NativeFSDirectory(p);
            Assert.False(System.IO.Directory.Exists(p)); // as FSDirectory: not until the first write
            using (IndexOutput o = d.CreateOutput("first", IOContext.DEFAULT))
                Assert.True(System.IO.Directory.Exists(p));
            Assert.Throws<ArgumentException>(() => d.CreateOutput("../escape", IOContext.DEFAULT));
            Assert.Throws<ArgumentException>(() => d.OpenInput("a/b", IOContext.DEFAULT));
        }

        [Fact]
        public void WrittenBytesReadBackInEveryContext()
        {
            using var t = new TestDir("rw");
            using var d = new NativeFSDirectory(t.Path);
            byte[] data = Bytes(300_000, 7);
            Write(d, "f", data);
            foreach (IOContext ctx in new[] { IOContext.DEFAULT, IOContext.READ, IOContext.READ_ONCE,
                                              new IOContext(new MergeInfo(1000, 50L << 20, false, 1)) })
            {
                using IndexInput i = d.OpenInput("f", ctx);
                Assert.Equal(data.Length, i.Length);
                var got = new byte[data.Length];
                // a mix of byte reads, small and large block reads
                got[0] = i.ReadByte();
                i.ReadBytes(got, 1, 10);
                i.ReadBytes(got, 11, 100_000);
                for (int k = 100_011; k < 100_500; k++)
                    got[k] = i.ReadByte();
                i.ReadBytes(got, 100_500, data.Length - 100_500);
                Assert.Equal(data, got);
                Assert.Equal(data.Length, i.Position);
            }
        }

        [Fact]
        public void ContextsPickTheirStrategies()
        {
            using var t = new TestDir("ctx");
            using var d = new NativeFSDirectory(t.Path);
            Write(d, "f", Bytes(10_000));
            using (var i = (NativeIndexInput)d.OpenInput("f", IOContext.READ))
            {
                Assert.True(i.IsMapped);
                Assert.Equal(IoStrategy.Mapped, i.Strategy);
            }
            using (var i = (NativeIndexInput)d.OpenInput("f", IOContext.READ_ONCE))
                Assert.False(i.IsMapped);
            var bigMerge = new IOContext(new MergeInfo(1000, 64L << 20, false, 1));
            var smallMerge = new IOContext(new MergeInfo(10, 1L << 20, false, 1));
            using (var o = (NativeIndexOutput)d.CreateOutput("big", bigMerge))
                Assert.True(o.Strategy is IoStrategy.Direct or IoStrategy.DropBehind, o.Strategy.ToString());
            using (var o = (NativeIndexOutput)d.CreateOutput("small", smallMerge))
                Assert.Equal(IoStrategy.Buffered, o.Strategy);
            // a large merge reads past the page cache as it writes past it; a small one maps
            using (var i = (NativeIndexInput)d.OpenInput("f", bigMerge))
            {
                Assert.False(i.IsMapped);
                Assert.True(i.Strategy is IoStrategy.Direct or IoStrategy.DropBehind, i.Strategy.ToString());
            }
            using (var i = (NativeIndexInput)d.OpenInput("f", smallMerge))
                Assert.True(i.IsMapped);
            using (var o = (NativeIndexOutput)d.CreateOutput("flush", new IOContext(new FlushInfo(10, 1L << 30))))
                Assert.Equal(IoStrategy.Buffered, o.Strategy);
        }

        [Fact]
        public void DirectMergeOutputHasItsExactLengthAndBytes()
        {
            using var t = new TestDir("direct");
            using var d = new NativeFSDirectory(t.Path);
            byte[] data = Bytes((3 << 20) + 123, 3); // not a multiple of any block size
            var ctx = new IOContext(new MergeInfo(1000, 64L << 20, false, 1));
            using (IndexOutput o = d.CreateOutput("m", ctx))
            {
                o.WriteBytes(data, 0, 1000);
                for (int k = 1000; k < 5000; k++)
                    o.WriteByte(data[k]);
                o.WriteBytes(data, 5000, data.Length - 5000);
                Assert.Equal(data.Length, o.Position);
            }
            Assert.Equal(data.Length, d.FileLength("m"));
            Assert.Equal(data, File.ReadAllBytes(Path.Combine(t.Path, "m")));
        }

        [Fact]
        public void ChecksumEqualsLuceneCrc32()
        {
            using var t = new TestDir("crc");
            using var d = new NativeFSDirectory(t.Path);
            using var ram = new RAMDirectory();
            var rnd = new Random(11);
            foreach (IOContext ctx in new[] { IOContext.DEFAULT, new IOContext(new MergeInfo(1, 64L << 20, false, 1)) })
            {
                string name = "c" + ctx.Context;
                using IndexOutput a = d.CreateOutput(name, ctx);
                using IndexOutput b = ram.CreateOutput(name, IOContext.DEFAULT);
                Assert.Equal(b.Checksum, a.Checksum); // empty: 0
                for (int round = 0; round < 200; round++)
                {
                    byte[] chunk = Bytes(rnd.Next(0, 20_000), round);
                    if (round % 3 == 0)
                        foreach (byte x in chunk) { a.WriteByte(x); b.WriteByte(x); }
                    else
                    {
                        a.WriteBytes(chunk, 0, chunk.Length);
                        b.WriteBytes(chunk, 0, chunk.Length);
                    }
                    if (round % 17 == 0)
                        Assert.Equal(b.Checksum, a.Checksum);
                }
                Assert.Equal(b.Position, a.Position);
                Assert.Equal(b.Checksum, a.Checksum);
                Assert.NotEqual(0, a.Checksum);
            }
        }

        [Fact]
        public void DisposeTwiceAndUseAfterDispose()
        {
            using var t = new TestDir("dispose");
            var d = new NativeFSDirectory(t.Path);
            IndexOutput o = d.CreateOutput("f", IOContext.DEFAULT);
            o.WriteInt32(42);
            o.Dispose();
            o.Dispose();
            Assert.ThrowsAny<ObjectDisposedException>(() => o.WriteBytes(new byte[10], 0, 10));
            IndexInput i = d.OpenInput("f", IOContext.DEFAULT);
            Assert.Equal(42, i.ReadInt32());
            i.Dispose();
            i.Dispose();
            Assert.ThrowsAny<ObjectDisposedException>(() => i.Seek(0));
            d.Dispose();
            d.Dispose();
            Assert.ThrowsAny<ObjectDisposedException>(() => d.ListAll());
            Assert.ThrowsAny<ObjectDisposedException>(() => d.OpenInput("f", IOContext.DEFAULT));
        }

        [Fact]
        public void SyncCoversOpenAndClosedOutputs()
        {
            using var t = new TestDir("sync");
            using var d = new NativeFSDirectory(t.Path);
            byte[] data = Bytes(100_000);
            Write(d, "closed", data);
            IndexOutput open = d.CreateOutput("open", IOContext.DEFAULT);
            open.WriteBytes(data, 0, 5000); // still in the managed buffer
            d.Sync(new[] { "closed", "open" });
            // synced through its own handle: the buffered bytes reached the file
            Assert.Equal(5000, new FileInfo(Path.Combine(t.Path, "open")).Length);
            open.WriteBytes(data, 0, 10);
            open.Dispose();
            d.Sync(new[] { "open" });
            Assert.Equal(5010, d.FileLength("open"));
            // files not written here (or already synced) are skipped, like FSDirectory does
            File.WriteAllBytes(Path.Combine(t.Path, "foreign"), data);
            d.Sync(new[] { "foreign", "closed" });
            Assert.Throws<ArgumentNullException>(() => d.Sync(null));
        }

        [Fact]
        public void LockFactoryExcludesSecondHolder()
        {
            using var t = new TestDir("lock");
            using var d1 = new NativeFSDirectory(t.Path);
            using var d2 = new NativeFSDirectory(t.Path);
            global::Lucene.Net.Store.Lock l1 = d1.MakeLock("write.lock");
            global::Lucene.Net.Store.Lock l2 = d2.MakeLock("write.lock");
            Assert.False(l1.IsLocked());
            Assert.True(l1.Obtain());
            Assert.True(l2.IsLocked());
            Assert.False(l2.Obtain());
            Assert.Throws<LockObtainFailedException>(() => l2.Obtain(50));
            d2.ClearLock("write.lock"); // never breaks a live holder
            Assert.False(l2.Obtain());
            l1.Dispose();
            Assert.False(l2.IsLocked());
            Assert.True(l2.Obtain());
            l2.Dispose();
            Assert.Contains("write.lock", d1.ListAll());
        }
    }
}
