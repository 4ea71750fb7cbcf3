using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Threading;
using Lucene.Net.Analysis.Core;
using Lucene.Net.Documents;
using Lucene.Net.Index;
using Lucene.Net.Search;
using Lucene.Net.Store;
using Lucene.Net.Util;
using NativeDir.Lucene.Misc;
using NativeDir.Testing;
using Xunit;
using LuceneDirectory = Lucene.Net.Store.Directory;

namespace NativeDir.Lucene.Tests
{
    /// <summary>
    /// NativeUnixDirectory and WindowsDirectory on nativedir, by the behaviour Lucene.NET's port of
    /// them states (its TestNativeUnixDirectory and TestWindowsDirectory): each refuses the wrong
    /// OS with PlatformNotSupportedException; NativeUnixDirectory's merge files round-trip through
    /// direct I/O, with clones and clones on many threads, and everything else goes to the
    /// delegate; WindowsDirectory reads at random, with clones, on many threads, and throws past
    /// the end. Where the port's behaviour breaks Lucene's own contract (a direct input reading past
    /// the end without throwing, mergeBufferSize checked by one bit, files written through the
    /// delegate never synced), these tests hold Lucene's contract.
    /// </summary>
#pragma warning disable CA1416 // each test runs its directory only on its own OS, as checked
    public class MiscDirectoryTests
    {
        private static readonly bool Unix = OperatingSystem.IsLinux() || OperatingSystem.IsMacOS();

        // a merge estimated at 1 MiB: direct with minBytesDirect 0
        private static readonly IOContext Merge = new(new MergeInfo(1, 1024 * 1024, false, 1));

        private static byte[] RandomBytes(Random rnd, int n)
        {
            var b = new byte[n];
            rnd.NextBytes(b);
            return b;
        }

        private static void RequireUnix()
        {
            if (!Unix)
                Assert.Skip("NativeUnixDirectory runs on Linux and macOS (its refusal elsewhere is WrongOsIsRefused)");
        }

        private static void RequireWindows()
        {
            if (!OperatingSystem.IsWindows())
                Assert.Skip("WindowsDirectory runs on Windows (its refusal elsewhere is WrongOsIsRefused)");
        }

        /// <summary>A NativeUnixDirectory with minBytesDirect 0 (every merge file direct) over a
        /// SimpleFSDirectory of the same folder.</summary>
        private static NativeUnixDirectory Direct(string path, out SimpleFSDirectory d, int mergeBufferSize = 1024)
        {
            d = new SimpleFSDirectory(new DirectoryInfo(path));
            return new NativeUnixDirectory(new DirectoryInfo(path), mergeBufferSize, 0, d);
        }

        [Fact]
        public void WrongOsIsRefused()
        {
            using var t = new TestDir("misc-os");
            using var ram = new RAMDirectory();
            if (OperatingSystem.IsWindows())
            {
                Assert.Throws<PlatformNotSupportedException>(() => new NativeUnixDirectory(new DirectoryInfo(t.Path), ram));
                Assert.Throws<PlatformNotSupportedException>(() => new NativeUnixDirectory(t.Path, 4096, 0, ram));
                Assert.Throws<PlatformNotSupportedException>(() => NativePosixUtil.OpenDirect(Path.Combine(t.Path, "x"), read: true));
                Assert.Throws<PlatformNotSupportedException>(() => NativePosixUtil.Pread(null, 0, IntPtr.Zero, 0));
                Assert.Throws<PlatformNotSupportedException>(() => NativePosixUtil.MAdvise(IntPtr.Zero, 0, NativePosixUtil.NORMAL));
                using var w = new WindowsDirectory(t.Path);
                Assert.NotNull(w);
            }
            else
            {
                Assert.Throws<PlatformNotSupportedException>(() => new WindowsDirectory(new DirectoryInfo(t.Path)));
                Assert.Throws<PlatformNotSupportedException>(() => new WindowsDirectory(t.Path, new SingleInstanceLockFactory()));
                // no file is opened until a merge: constructing it is all there is to check here
                using var u = new NativeUnixDirectory(t.Path, ram);
                Assert.NotNull(u);
            }
            Assert.Empty(System.IO.Directory.GetFileSystemEntries(t.Path)); // neither wrote anything
        }

        [Fact]
        public void MergeBufferSizeIsAMultipleOf512()
        {
            RequireUnix();
            using var t = new TestDir("misc-mbs");
            using var ram = new RAMDirectory();
            foreach (int bad in new[] { 0, -512, 1000, 513, 4095 })
                Assert.Throws<ArgumentException>(() => new NativeUnixDirectory(t.Path, bad, 0, ram));
            // 1536 and 3584 are multiples of 512 that a check of the 512 bit alone would refuse
            foreach (int good in new[] { 512, 1536, 3584, NativeUnixDirectory.DEFAULT_MERGE_BUFFER_SIZE })
                new NativeUnixDirectory(t.Path, good, 0, ram).Dispose();
            Assert.Equal(262144, NativeUnixDirectory.DEFAULT_MERGE_BUFFER_SIZE);
            Assert.Equal(10L * 1024 * 1024, NativeUnixDirectory.DEFAULT_MIN_BYTES_DIRECT);
        }

        [Fact]
        public void NativeUnixRoundTripThroughDirectIo()
        {
            RequireUnix();
            using var t = new TestDir("misc-roundtrip");
            using NativeUnixDirectory dir = Direct(t.Path, out SimpleFSDirectory d);
            using (d)
            {
                var rnd = new Random(1346);
                int len = rnd.Next(2000, 20000);
                byte[] expected = RandomBytes(rnd, len);
                using (IndexOutput output = dir.CreateOutput("test", Merge))
                {
                    var native = Assert.IsType<NativeIndexOutput>(output);
                    ReportIfNotDirect(native.Strategy, "the merge output");
                    output.WriteBytes(expected, expected.Length);
                }
                using IndexInput input = dir.OpenInput("test", Merge);
                var nin = Assert.IsType<NativeIndexInput>(input);
                ReportIfNotDirect(nin.Strategy, "the merge input");
                Assert.Equal(len, input.Length);
                var actual = new byte[len];
                input.ReadBytes(actual, 0, len);
                Assert.Equal(expected, actual);
                for (int i = 0; i < 50; i++)
                {
                    int pos = rnd.Next(len);
                    int count = Math.Min(rnd.Next(1, 501), len - pos);
                    input.Seek(pos);
                    var buf = new byte[count];
                    input.ReadBytes(buf, 0, count);
                    Assert.Equal(expected.Skip(pos).Take(count), buf);
                }
                input.Seek(0);
                using IndexInput clone = (IndexInput)input.Clone();
                int clonePos = rnd.Next(len);
                clone.Seek(clonePos);
                Assert.Equal(expected[clonePos], clone.ReadByte());
                Assert.Equal(0, input.Position);
                // Lucene's contract, which the port's direct input does not keep: past the end throws
                input.Seek(len);
                Assert.Throws<EndOfStreamException>(() => input.ReadByte());
                input.Seek(len - 4);
                Assert.Throws<EndOfStreamException>(() => input.ReadBytes(new byte[8], 0, 8));
            }
        }

        private static void ReportIfNotDirect(IoStrategy strategy, string what)
        {
            // direct I/O where the file system has it; drop-behind where it refuses it (tmpfs)
            Assert.True(strategy == IoStrategy.Direct || strategy == IoStrategy.DropBehind, $"{what} is {strategy}");
            if (strategy != IoStrategy.Direct)
                Console.Error.WriteLine($"*** NOTE: {what} is {strategy}: the temporary folder's file system has no direct I/O");
        }

        [Fact]
        public void NativeUnixCloneDisposeLeavesTheFileOpen()
        {
            RequireUnix();
            using var t = new TestDir("misc-dispose");
            using NativeUnixDirectory dir = Direct(t.Path, out SimpleFSDirectory d);
            using (d)
            {
                byte[] data = RandomBytes(new Random(7), 2048);
                IndexOutput output = dir.CreateOutput("data", Merge);
                output.WriteBytes(data, data.Length);
                output.Dispose();
                output.Dispose(); // twice: nothing
                Assert.Equal(2048, dir.FileLength("data"));

                IndexInput input = dir.OpenInput("data", Merge);
                var clone = (IndexInput)input.Clone();
                clone.Dispose();
                clone.Dispose();
                input.Seek(0);
                var check = new byte[data.Length];
                input.ReadBytes(check, 0, check.Length);
                Assert.Equal(data, check);
                input.Dispose();
                input.Dispose();
            }
        }

        [Fact]
        public void NativeUnixClonesOnThreads()
        {
            RequireUnix();
            using var t = new TestDir("misc-threads");
            using NativeUnixDirectory dir = Direct(t.Path, out SimpleFSDirectory d);
            using (d)
            {
                byte[] expected = RandomBytes(new Random(11), 50_000);
                using (IndexOutput output = dir.CreateOutput("data", Merge))
                    output.WriteBytes(expected, expected.Length);
                using IndexInput input = dir.OpenInput("data", Merge);
                Assert.Null(ClonesOnThreads(input, expected, 1000));
            }
        }

        /// <summary>Threads reading random ranges through clones of one input; the first mismatch
        /// or failure, or null.</summary>
        private static string ClonesOnThreads(IndexInput input, byte[] expected, int reads)
        {
            int n = Math.Max(2, Environment.ProcessorCount);
            string failure = null;
            using var start = new ManualResetEventSlim(false);
            var threads = Enumerable.Range(0, n).Select(t => new Thread(() =>
            {
                try
                {
                    var rnd = new Random(t + 1);
                    using var clone = (IndexInput)input.Clone();
                    start.Wait();
                    var buf = new byte[256];
                    for (int i = 0; i < reads && failure == null; i++)
                    {
                        int pos = rnd.Next(expected.Length);
                        int count = Math.Min(rnd.Next(1, 256), expected.Length - pos);
                        clone.Seek(pos);
                        clone.ReadBytes(buf, 0, count);
                        for (int j = 0; j < count; j++)
                            if (buf[j] != expected[pos + j])
                                throw new InvalidDataException($"byte {pos + j}: {buf[j]}, expected {expected[pos + j]}");
                    }
                }
                catch (Exception e)
                {
                    Interlocked.CompareExchange(ref failure, $"thread {t}: {e}", null);
                }
            })).ToList();
            threads.ForEach(x => x.Start());
            start.Set();
            threads.ForEach(x => x.Join());
            return failure;
        }

        [Fact]
        public void NativeUnixSendsEverythingElseToTheDelegate()
        {
            RequireUnix();
            using var t = new TestDir("misc-route");
            using var d = new SimpleFSDirectory(new DirectoryInfo(t.Path));
            using var dir = new NativeUnixDirectory(t.Path, d); // minBytesDirect 10 MiB
            var small = new IOContext(new MergeInfo(1, 1024, false, 1));
            var large = new IOContext(new MergeInfo(1, 1L << 30, false, 1));
            foreach (IOContext c in new[] { IOContext.DEFAULT, IOContext.READ_ONCE, small, new IOContext(new FlushInfo(1, 1L << 30)) })
                using (IndexOutput o = dir.CreateOutput("o", c))
                {
                    Assert.IsNotType<NativeIndexOutput>(o);
                    o.WriteInt64(42);
                }
            using (IndexOutput o = dir.CreateOutput("big", large))
                Assert.IsType<NativeIndexOutput>(o);
            // a large merge reading a file smaller than minBytesDirect reads it through the delegate
            using (IndexInput i = dir.OpenInput("o", large))
            {
                Assert.IsNotType<NativeIndexInput>(i);
                Assert.Equal(42L, i.ReadInt64());
            }
            using (IndexOutput o = dir.CreateOutput("big", large))
                o.WriteBytes(new byte[NativeUnixDirectory.DEFAULT_MIN_BYTES_DIRECT], (int)NativeUnixDirectory.DEFAULT_MIN_BYTES_DIRECT);
            using (IndexInput i = dir.OpenInput("big", large))
                Assert.IsType<NativeIndexInput>(i);
            using (IndexInput i = dir.OpenInput("big", IOContext.DEFAULT))
                Assert.IsNotType<NativeIndexInput>(i);
            Assert.Equal(new[] { "big", "o" }, dir.ListAll().OrderBy(x => x, StringComparer.Ordinal));
            dir.DeleteFile("big");
            dir.DeleteFile("o");
            Assert.Empty(dir.ListAll());
        }

        /// <summary>Records what its FSDirectory syncs.</summary>
        private sealed class RecordingFS : SimpleFSDirectory
        {
            public RecordingFS(string path) : base(new DirectoryInfo(path)) { }

            public List<string> Synced { get; } = new();

            protected override void Fsync(string name)
            {
                lock (Synced)
                    Synced.Add(name);
                base.Fsync(name);
            }
        }

        [Fact]
        public void NativeUnixSyncsWhatTheDelegateWrote()
        {
            RequireUnix();
            using var t = new TestDir("misc-sync");
            using var d = new RecordingFS(t.Path);
            using var dir = new NativeUnixDirectory(t.Path, 4096, 0, d);
            using (IndexOutput o = dir.CreateOutput("flushed", IOContext.DEFAULT))
                o.WriteInt32(1);
            using (IndexOutput o = dir.CreateOutput("merged", Merge))
                o.WriteInt32(2);
            dir.Sync(new[] { "flushed", "merged" });
            // the delegate's own file is synced (an FSDirectory's Sync alone would only sync the
            // files it wrote itself, and never this one); the merged one through the direct path
            Assert.Equal(new[] { "flushed" }, d.Synced);
            dir.Sync(new[] { "flushed", "merged" });
            Assert.Equal(new[] { "flushed" }, d.Synced); // synced once, as FSDirectory does
            // control: the delegate on its own syncs only what it wrote
            using var plain = new RecordingFS(t.Path);
            plain.Sync(new[] { "flushed" });
            Assert.Empty(plain.Synced);
        }

        [Fact]
        public void NativeUnixUnderIndexWriterMergesDirect()
        {
            RequireUnix();
            using var t = new TestDir("misc-writer");
            using var d = new SimpleFSDirectory(new DirectoryInfo(t.Path));
            using var dir = new NativeUnixDirectory(t.Path, 4096, 0, d);
            MonoLucene.Write(dir, target =>
            {
                var cfg = new IndexWriterConfig(LuceneVersion.LUCENE_48, new WhitespaceAnalyzer(LuceneVersion.LUCENE_48))
                { OpenMode = OpenMode.CREATE };
                using var w = new IndexWriter(target, cfg);
                for (int seg = 0; seg < 4; seg++)
                {
                    for (int i = 0; i < 10; i++)
                        w.AddDocument(new Document { new TextField("body", $"doc {seg * 10 + i} segment{seg} common", Field.Store.YES) });
                    w.Commit();
                }
                w.ForceMerge(1); // the merge writes and reads through direct I/O (minBytesDirect 0)
                w.Commit();
            });
            using (DirectoryReader r = DirectoryReader.Open(dir))
            {
                Assert.Equal(40, r.NumDocs);
                Assert.Single(r.Leaves);
                var s = new IndexSearcher(r);
                Assert.Equal(40, s.Search(new TermQuery(new Term("body", "common")), 100).TotalHits);
                Assert.Equal(10, s.Search(new TermQuery(new Term("body", "segment2")), 100).TotalHits);
            }
            var check = new CheckIndex(dir);
            Assert.True(check.DoCheckIndex().Clean);
        }

        // ---- WindowsDirectory (Windows, Wine) ----

        [Fact]
        public void WindowsRandomAccessAndClones()
        {
            RequireWindows();
            using var t = new TestDir("misc-win-random");
            using var dir = new WindowsDirectory(t.Path);
            var rnd = new Random(1342);
            int len = rnd.Next(100, 100_000);
            byte[] expected = RandomBytes(rnd, len);
            using (IndexOutput output = dir.CreateOutput("data", IOContext.DEFAULT))
                output.WriteBytes(expected, expected.Length);
            foreach (IOContext c in new[] { IOContext.DEFAULT, IOContext.READ_ONCE, Merge })
            {
                using IndexInput input = dir.OpenInput("data", c);
                Assert.Equal(len, input.Length);
                var actual = new byte[len];
                input.ReadBytes(actual, 0, len);
                Assert.Equal(expected, actual);
                for (int i = 0; i < 100; i++)
                {
                    int pos = rnd.Next(len);
                    int count = Math.Min(rnd.Next(1, 1001), len - pos);
                    input.Seek(pos);
                    var buf = new byte[count];
                    input.ReadBytes(buf, 0, count);
                    Assert.Equal(expected.Skip(pos).Take(count), buf);
                }
                input.Seek(0);
                using (var clone = (IndexInput)input.Clone())
                {
                    int clonePos = rnd.Next(len);
                    clone.Seek(clonePos);
                    Assert.Equal(expected[clonePos], clone.ReadByte());
                    Assert.Equal(0, input.Position);
                    Assert.Equal(expected[0], input.ReadByte());
                }
            }
        }

        [Fact]
        public void WindowsReadPastTheEnd()
        {
            RequireWindows();
            using var t = new TestDir("misc-win-eof");
            using var dir = new WindowsDirectory(t.Path);
            using (IndexOutput output = dir.CreateOutput("eof", IOContext.DEFAULT))
                output.WriteBytes(new byte[100], 100);
            using IndexInput input = dir.OpenInput("eof", IOContext.DEFAULT);
            Assert.Equal(100, input.Length);
            input.Seek(100);
            Assert.Throws<EndOfStreamException>(() => input.ReadByte());
            input.Seek(96);
            Assert.Throws<EndOfStreamException>(() => input.ReadBytes(new byte[8], 0, 8));
        }

        [Fact]
        public void WindowsCloneDisposeLeavesTheFileOpen()
        {
            RequireWindows();
            using var t = new TestDir("misc-win-dispose");
            using var dir = new WindowsDirectory(t.Path);
            using (IndexOutput output = dir.CreateOutput("data", IOContext.DEFAULT))
                output.WriteInt64(42);
            IndexInput input = dir.OpenInput("data", IOContext.DEFAULT);
            var clone = (IndexInput)input.Clone();
            clone.Dispose();
            clone.Dispose();
            input.Seek(0);
            Assert.Equal(42L, input.ReadInt64());
            input.Dispose();
            input.Dispose();
        }

        [Fact]
        public void WindowsClonesOnThreads()
        {
            RequireWindows();
            using var t = new TestDir("misc-win-threads");
            using var dir = new WindowsDirectory(t.Path);
            byte[] expected = RandomBytes(new Random(13), 50_000);
            using (IndexOutput output = dir.CreateOutput("data", IOContext.DEFAULT))
                output.WriteBytes(expected, expected.Length);
            using IndexInput input = dir.OpenInput("data", IOContext.DEFAULT);
            Assert.Null(ClonesOnThreads(input, expected, 2000));
        }

        [Fact]
        public void WindowsUnderIndexWriter()
        {
            RequireWindows();
            using var t = new TestDir("misc-win-writer");
            using var dir = new WindowsDirectory(t.Path);
            var cfg = new IndexWriterConfig(LuceneVersion.LUCENE_48, new WhitespaceAnalyzer(LuceneVersion.LUCENE_48)) { OpenMode = OpenMode.CREATE };
            using (var w = new IndexWriter(dir, cfg))
            {
                for (int i = 0; i < 30; i++)
                {
                    w.AddDocument(new Document { new TextField("body", $"doc {i} common", Field.Store.YES) });
                    if (i % 10 == 9)
                        w.Commit();
                }
                w.ForceMerge(1);
            }
            using (DirectoryReader r = DirectoryReader.Open(dir))
            {
                Assert.Equal(30, r.NumDocs);
                Assert.Equal(30, new IndexSearcher(r).Search(new TermQuery(new Term("body", "common")), 100).TotalHits);
            }
            Assert.True(new CheckIndex(dir).DoCheckIndex().Clean);
        }
    }
#pragma warning restore CA1416
}
