using System;
using System.IO;
using System.Linq;
using Lucene.Net.Analysis.Standard;
using Lucene.Net.Documents;
using Lucene.Net.Index;
using Lucene.Net.Store;
using Lucene.Net.Util;
using Xunit;
using LuceneDirectory = Lucene.Net.Store.Directory;

namespace NativeDir.Lucene.Tests
{
    /// <summary>
    /// The contracts Lucene.NET's own tests hold a directory to, each
    /// checked on NativeFSDirectory side by side with Lucene.NET's own FSDirectory kinds, so a
    /// test states what Lucene's directories do rather than what ours happens to do.
    /// </summary>
    public class LuceneContractTests
    {
        public static TheoryData<string> Kinds => new() { "NativeFS", "NativeFS-merge", "MMap", "NIOFS", "SimpleFS" };

        private static FSDirectory Make(string kind, string path) => kind switch
        {
            "NativeFS" or "NativeFS-merge" => new NativeFSDirectory(new DirectoryInfo(path)),
            "MMap" => new MMapDirectory(new DirectoryInfo(path)),
            "NIOFS" => new NIOFSDirectory(new DirectoryInfo(path)),
            "SimpleFS" => new SimpleFSDirectory(new DirectoryInfo(path)),
            _ => throw new ArgumentException(kind),
        };

        // "-merge": the context a merge writes with, which NativeFSDirectory serves with direct I/O
        private static IOContext Context(string kind) =>
            kind.EndsWith("-merge", StringComparison.Ordinal)
                ? new IOContext(new MergeInfo(1000, 1L << 30, true, 1))
                : IOContext.DEFAULT;

        private static byte[] Bytes(int n, int seed)
        {
            var b = new byte[n];
            new Random(seed).NextBytes(b);
            return b;
        }

        // zlib's CRC-32, written out here so the expected checksum owes nothing to either side
        private static uint Crc32(params byte[][] parts)
        {
            uint c = 0xFFFFFFFFu;
            foreach (byte[] p in parts)
                foreach (byte b in p)
                {
                    c ^= b;
                    for (int k = 0; k < 8; k++)
                        c = (c & 1) != 0 ? (c >> 1) ^ 0xEDB88320u : c >> 1;
                }
            return ~c;
        }

        // ---- IndexOutput.Flush "forces any buffered output to be written" ----

        [Theory]
        [MemberData(nameof(Kinds))]
        public void FlushMakesEveryByteVisibleToFileLength(string kind)
        {
            using var t = new TestDir("flush");
            using FSDirectory d = Make(kind, t.Path);
            byte[] data = Bytes(3 << 20, 8);
            using IndexOutput o = d.CreateOutput("f", Context(kind));
            int at = 0;
            foreach (int cut in new[] { 2, 3, 4097, 70_000, (1 << 20) + 5, 3 << 20 })
            {
                o.WriteBytes(data, at, cut - at);
                at = cut;
                o.Flush();
                Assert.Equal(at, o.Position);
                Assert.Equal(at, d.FileLength("f"));
                // and a reader opened now sees every byte
                using IndexInput i = d.OpenInput("f", IOContext.READ_ONCE);
                Assert.Equal(at, i.Length);
                var back = new byte[at];
                i.ReadBytes(back, 0, at);
                Assert.True(data.AsSpan(0, at).SequenceEqual(back), $"{kind}: bytes after Flush at {at}");
            }
        }

        [Theory]
        [MemberData(nameof(Kinds))]
        public void DiskFullAccountingSumsFlushedFileLengths(string kind)
        {
            // MockDirectoryWrapper's disk-full check (TestMockDirectoryWrapper.TestDiskFull): the
            // space in use is the sum of the files' lengths, read while outputs are open and flushed
            using var t = new TestDir("diskfull");
            using FSDirectory d = Make(kind, t.Path);
            var outputs = Enumerable.Range(0, 4).Select(n => d.CreateOutput($"_{n}.dat", Context(kind))).ToArray();
            try
            {
                long written = 0;
                for (int round = 0; round < 3; round++)
                {
                    foreach (IndexOutput o in outputs)
                    {
                        o.WriteByte(1);
                        o.WriteBytes(Bytes(100 * round + 1, round), 100 * round + 1);
                        written += 100 * round + 2;
                        o.Flush();
                    }
                    long used = d.ListAll().Sum(d.FileLength);
                    Assert.Equal(written, used);
                }
            }
            finally
            {
                foreach (IndexOutput o in outputs)
                    o.Dispose();
            }
        }

        // ---- a directory on a missing folder creates it on the first write ----

        [Theory]
        [MemberData(nameof(Kinds))]
        public void NoDirReaderThrowsAndLeavesNothingBehind(string kind)
        {
            // TestDirectoryReader.TestNoDir / TestNRTCachingDirectory.TestNoDir
            using var t = new TestDir("nodir");
            string path = Path.Combine(t.Path, "doesnotexist");
            using (FSDirectory d = Make(kind, path))
            {
                Assert.False(System.IO.Directory.Exists(path));
                Assert.Throws<DirectoryNotFoundException>(() => DirectoryReader.Open(d));
                Assert.Throws<DirectoryNotFoundException>(() => d.ListAll());
                Assert.False(d.FileExists("segments.gen"));
                Assert.Throws<FileNotFoundException>(() => d.FileLength("segments.gen"));
                // (Lucene's NativeFSLock.IsLocked probes by obtaining, which creates the folder;
                // ours answers without making anything)
                if (d is NativeFSDirectory)
                {
                    Assert.False(d.MakeLock("write.lock").IsLocked());
                    Assert.False(System.IO.Directory.Exists(path));
                }
                // (disposing the caching wrapper disposes d too)
                using (var nrt = new NRTCachingDirectory(d, 2.0, 25.0))
                    Assert.Throws<DirectoryNotFoundException>(() => DirectoryReader.Open(nrt));
                Assert.False(System.IO.Directory.Exists(path), $"{kind} created the folder of a reader");
            }
            Assert.False(System.IO.Directory.Exists(path));
        }

        [Theory]
        [MemberData(nameof(Kinds))]
        public void FirstWriteOrLockCreatesTheFolder(string kind)
        {
            using var t = new TestDir("lazydir");
            string byOutput = Path.Combine(t.Path, "a", "b");
            using (FSDirectory d = Make(kind, byOutput))
            {
                Assert.False(System.IO.Directory.Exists(byOutput));
                using (IndexOutput o = d.CreateOutput("x", Context(kind)))
                    o.WriteByte(7);
                Assert.True(System.IO.Directory.Exists(byOutput));
                Assert.Equal(new[] { "x" }, d.ListAll());
                Assert.Equal(1, d.FileLength("x"));
            }
            string byLock = Path.Combine(t.Path, "locked");
            using (FSDirectory d = Make(kind, byLock))
            {
                using Lock l = d.MakeLock("write.lock");
                Assert.True(l.Obtain());
                Assert.True(System.IO.Directory.Exists(byLock));
                Assert.True(l.IsLocked());
            }
            string byWriter = Path.Combine(t.Path, "index");
            using (FSDirectory d = Make(kind, byWriter))
            {
                var config = new IndexWriterConfig(LuceneVersion.LUCENE_48, new StandardAnalyzer(LuceneVersion.LUCENE_48));
                using (var w = new IndexWriter(d, config))
                {
                    var doc = new Document { new TextField("body", "hello world", Field.Store.YES) };
                    w.AddDocument(doc);
                    w.Commit();
                }
                using DirectoryReader r = DirectoryReader.Open(d);
                Assert.Equal(1, r.NumDocs);
            }
        }

        // ---- the deprecated IndexOutput.Seek, as FSDirectory's outputs do it ----

        [Theory]
        [MemberData(nameof(Kinds))]
        public void SeekRewritesLikeFSIndexOutput(string kind)
        {
            // what Lucene 3.x's TermInfosWriter does at close: seek(4), rewrite the count
            using var t = new TestDir("seek");
            using FSDirectory d = Make(kind, t.Path);
            byte[] body = Bytes((1 << 20) + 4099, 10);
            byte[] patch = { 0, 0, 0, 0, 0, 0, 0, 42 };
            using (IndexOutput o = d.CreateOutput("_0.tis", Context(kind)))
            {
                o.WriteBytes(body, body.Length);
                o.Seek(4);
                Assert.Equal(4, o.Position);
                Assert.Equal(body.Length, o.Length);
                o.WriteInt64(42);
                Assert.Equal(12, o.Position);
                Assert.Equal(body.Length, o.Length);
                // the running checksum covers every byte written, in the order written
                Assert.Equal((long)Crc32(body, patch), o.Checksum);
                o.Flush();
                Assert.Equal(body.Length, d.FileLength("_0.tis"));
            }
            byte[] want = (byte[])body.Clone();
            patch.CopyTo(want, 4);
            Assert.True(want.AsSpan().SequenceEqual(File.ReadAllBytes(Path.Combine(t.Path, "_0.tis"))),
                        $"{kind}: file after seek and rewrite");
            Assert.Equal(body.Length, d.FileLength("_0.tis"));
        }

        [Theory]
        [MemberData(nameof(Kinds))]
        public void SeekBackThenWriteOnPastTheOldEnd(string kind)
        {
            using var t = new TestDir("seek2");
            using FSDirectory d = Make(kind, t.Path);
            byte[] a = Bytes(10_000, 11), b = Bytes(3_000, 12);
            using (IndexOutput o = d.CreateOutput("f", Context(kind)))
            {
                o.WriteBytes(a, a.Length);
                o.Seek(9_000);
                o.WriteBytes(b, b.Length); // 1000 bytes rewritten, 2000 beyond the old end
                Assert.Equal(12_000, o.Position);
                Assert.Equal(12_000, o.Length);
                o.Seek(12_000); // where it is: nothing changes
                o.WriteByte(5);
                Assert.Equal((long)Crc32(a, b, new byte[] { 5 }), o.Checksum);
            }
            byte[] want = a.Take(9_000).Concat(b).Concat(new byte[] { 5 }).ToArray();
            Assert.True(want.AsSpan().SequenceEqual(File.ReadAllBytes(Path.Combine(t.Path, "f"))));
        }

        // ---- created by name, as Lucene.NET's tools create an FSDirectory ----

        [Fact]
        public void CommandLineUtilCreatesItByType()
        {
            using var t = new TestDir("byname");
            using FSDirectory d = CommandLineUtil.NewFSDirectory(typeof(NativeFSDirectory), new DirectoryInfo(t.Path));
            Assert.IsType<NativeFSDirectory>(d);
            using FSDirectory n = CommandLineUtil.NewFSDirectory(typeof(NativeFSDirectory).AssemblyQualifiedName, new DirectoryInfo(t.Path));
            Assert.IsType<NativeFSDirectory>(n);
        }

        [Fact]
        public void HasTheConstructorsOfAnFSDirectory()
        {
            // the four MMapDirectory, NIOFSDirectory and SimpleFSDirectory have
            foreach (Type[] sig in new[]
            {
                new[] { typeof(DirectoryInfo) }, new[] { typeof(DirectoryInfo), typeof(LockFactory) },
                new[] { typeof(string) }, new[] { typeof(string), typeof(LockFactory) },
            })
            {
                Assert.NotNull(typeof(MMapDirectory).GetConstructor(sig));
                Assert.True(typeof(NativeFSDirectory).GetConstructor(sig) != null,
                            $"NativeFSDirectory({string.Join(", ", sig.Select(s => s.Name))})");
            }
            using var t = new TestDir("ctors");
            var lf = new SingleInstanceLockFactory();
            using (var d = new NativeFSDirectory(t.Path, lf))
                Assert.Same(lf, d.LockFactory);
            using (var d = new NativeFSDirectory(new DirectoryInfo(t.Path), lf))
                Assert.Same(lf, d.LockFactory);
            using (var d = new NativeFSDirectory(t.Path))
                Assert.IsType<NativeLockFactory>(d.LockFactory);
            var policy = new IoStrategyPolicy();
            using (var d = new NativeFSDirectory(t.Path, policy: policy))
                Assert.Same(policy, d.Policy);
        }
    }
}
