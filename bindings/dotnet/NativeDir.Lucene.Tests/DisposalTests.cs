using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Lucene.Net.Analysis.Standard;
using Lucene.Net.Documents;
using Lucene.Net.Index;
using Lucene.Net.Search;
using Lucene.Net.Store;
using Lucene.Net.Util;
using NativeDir.Testing;
using Xunit;
using LuceneDirectory = Lucene.Net.Store.Directory;

namespace NativeDir.Lucene.Tests
{
    /// <summary>
    /// Close means closed: once an index's writer, readers and directory are disposed, nothing of
    /// the process holds a file of it, with no garbage collection in between. Checked the way an
    /// application would meet it: the folder is deleted at once with
    /// <c>Directory.Delete(path, recursive: true)</c> (Windows refuses a file that is mapped or
    /// open without delete sharing); before that, on Windows, every file opens exclusively (no
    /// handle or view of it is left: Wine lets a file that is open with delete sharing be deleted
    /// and its folder removed), and on Linux no descriptor (/proc/self/fd) or mapping
    /// (/proc/self/maps) of a file under it is left. The same rounds run on Lucene.NET's MMapDirectory and
    /// SimpleFSDirectory, which show the checks can pass; a negative control keeps one input open
    /// and must fail them.
    /// </summary>
    public class DisposalTests
    {
        private static readonly (string Name, Func<DirectoryInfo, LuceneDirectory> Make)[] Kinds =
        {
            ("NativeFSDirectory", p => new NativeFSDirectory(p)),
            ("MMapDirectory", p => new MMapDirectory(p)),
            ("SimpleFSDirectory", p => new SimpleFSDirectory(p)),
        };

        // Rounds per kind: fewer where every instruction is emulated.
        private static int Rounds => Emulator.Qemu != null ? 2 : Emulator.Wine != null ? 3 : 5;

        public static IEnumerable<object[]> KindNames() => Kinds.Select(k => new object[] { k.Name });

        [Theory]
        [MemberData(nameof(KindNames))]
        public void ADisposedIndexLeavesNoFileOpen(string kind)
        {
            var make = Kinds.Single(k => k.Name == kind).Make;
            int seed0 = Environment.TickCount;
            for (int round = 0; round < Rounds; round++)
            {
                int seed = seed0 + round;
                using var t = new TestDir("dispose");
                string path = t.Sub("index");
                UseAnIndex(make(new DirectoryInfo(path)), seed, keep: false);
                string left = WhatIsLeft(path);
                Assert.True(left == null, $"{kind}, seed {seed}: {left}");
            }
        }

        // The negative control: the same round, with one input of the index left open.
        [Fact]
        public void AnInputLeftOpenFailsTheChecks()
        {
            using var t = new TestDir("dispose-control");
            string path = t.Sub("index");
            IndexInput kept = UseAnIndex(new NativeFSDirectory(new DirectoryInfo(path)), 1234, keep: true);
            try
            {
                Assert.NotNull(kept);
                string left = WhatIsLeft(path);
                Assert.True(left != null, "an input left open passed every check: the checks cannot see an open file");
            }
            finally
            {
                kept.Dispose();
            }
        }

        /// <summary>An index used as Lucene.NET's applications and tests use one: several threads
        /// indexing (small segments, compound files, merges, deletes), near-real-time readers
        /// opened and searched while they do, stored fields read through clones of compound-file
        /// slices, the write lock taken and released; on NativeFSDirectory also a clone, a slice and
        /// asynchronous reads of one file of its own. Then everything is disposed, the directory
        /// last; with <paramref name="keep"/> one input is left open and returned.</summary>
        private static IndexInput UseAnIndex(LuceneDirectory dir, int seed, bool keep)
        {
            var rnd = new Random(seed);
            IndexInput kept = null;
            try
            {
                var cfg = new IndexWriterConfig(LuceneVersion.LUCENE_48, new StandardAnalyzer(LuceneVersion.LUCENE_48))
                {
                    MaxBufferedDocs = 10 + rnd.Next(20),
                    MergePolicy = new LogDocMergePolicy { MergeFactor = 3 },
                    OpenMode = OpenMode.CREATE,
                };
                using (var writer = new IndexWriter(dir, cfg))
                {
                    int docs = 120 + rnd.Next(120);
                    var indexers = Enumerable.Range(0, 2).Select(n => Task.Run(() =>
                    {
                        var r = new Random(seed * 31 + n);
                        for (int i = 0; i < docs; i++)
                        {
                            writer.AddDocument(new Document
                            {
                                new StringField("id", $"{n}-{i}", Field.Store.YES),
                                new TextField("body", Words(r, 30), Field.Store.YES),
                            });
                            if (i % 37 == 36)
                                writer.DeleteDocuments(new Term("id", $"{n}-{i - 5}"));
                        }
                    })).ToArray();
                    var searcher = Task.Run(() =>
                    {
                        var r = new Random(seed * 17);
                        int searches = 0;
                        while (!indexers.All(i => i.IsCompleted) || searches < 3)
                        {
                            using DirectoryReader reader = DirectoryReader.Open(writer, applyAllDeletes: true);
                            var s = new IndexSearcher(reader);
                            TopDocs top = s.Search(new TermQuery(new Term("body", Vocabulary[r.Next(Vocabulary.Length)])), 5);
                            foreach (ScoreDoc sd in top.ScoreDocs)
                                Assert.NotNull(s.Doc(sd.Doc).Get("id"));
                            searches++;
                        }
                    });
                    Task.WaitAll(indexers.Append(searcher).ToArray());
                    writer.Commit();
                }
                using (DirectoryReader reader = DirectoryReader.Open(dir))
                    Assert.True(reader.NumDocs > 0);
                if (dir is NativeFSDirectory nd)
                    UseOneFile(nd, rnd);
                if (keep)
                {
                    kept = dir.OpenInput(ADataFile(dir), IOContext.READ);
                    kept.ReadByte();
                }
            }
            finally
            {
                dir.Dispose();
            }
            return kept;
        }

        /// <summary>A file of the directory read through an input, a clone and a slice of it, and
        /// asynchronously through the library's ring, each disposed (the clone is not: Lucene never
        /// disposes clones).</summary>
        private static void UseOneFile(NativeFSDirectory dir, Random rnd)
        {
            string name = ADataFile(dir);
            using (IndexInput i = dir.OpenInput(name, IOContext.READ))
            {
                var c = (IndexInput)i.Clone();
                c.Seek(rnd.Next((int)Math.Min(int.MaxValue, c.Length)));
                c.ReadByte();
                using var slicer = dir.CreateSlicer(name, IOContext.READ);
                using IndexInput s = slicer.OpenSlice("part", 0, i.Length / 2);
                ((IndexInput)s.Clone()).ReadBytes(new byte[16], 0, (int)Math.Min(16, s.Length));
            }
            using NativeInput n = dir.Native.OpenInput(name);
            var buf = new byte[4096];
            for (int k = 0; k < 4; k++)
                n.ReadAsync(rnd.Next((int)Math.Min(int.MaxValue, n.Length)), buf).AsTask().Wait();
        }

        /// <summary>The largest file of a segment (a compound file where there is one).</summary>
        private static string ADataFile(LuceneDirectory dir) =>
            dir.ListAll().Where(f => f.StartsWith("_", StringComparison.Ordinal)).OrderByDescending(dir.FileLength).First();

        /// <summary>null when nothing of the folder is held: on Linux no descriptor or mapping of a
        /// file under it, and everywhere the folder deletes at once; else what is left.</summary>
        internal static string WhatIsLeft(string path)
        {
            var held = new List<string>();
            if (OperatingSystem.IsLinux())
            {
                string prefix = path + "/";
                int fds = 0;
                foreach (string fd in System.IO.Directory.GetFiles("/proc/self/fd"))
                {
                    try
                    {
                        if (new FileInfo(fd).LinkTarget?.StartsWith(prefix, StringComparison.Ordinal) == true)
                            fds++;
                    }
                    catch (IOException)
                    {
                        // closed between the listing and the readlink
                    }
                }
                int maps = File.ReadAllLines("/proc/self/maps").Count(l => l.Contains(prefix, StringComparison.Ordinal));
                if (fds + maps > 0)
                    held.Add($"{fds} descriptors and {maps} mappings of files under {path}");
            }
            else if (OperatingSystem.IsWindows())
            {
                foreach (string f in System.IO.Directory.EnumerateFiles(path, "*", SearchOption.AllDirectories))
                {
                    try
                    {
                        using var exclusive = new FileStream(f, FileMode.Open, FileAccess.Read, FileShare.None);
                    }
                    catch (IOException e)
                    {
                        held.Add($"{Path.GetFileName(f)} does not open exclusively: {e.Message}");
                    }
                }
            }
            try
            {
                System.IO.Directory.Delete(path, recursive: true);
            }
            catch (IOException e)
            {
                held.Add($"Directory.Delete failed: {e.Message}; left: {string.Join(", ", System.IO.Directory.EnumerateFileSystemEntries(path).Select(Path.GetFileName))}");
            }
            catch (UnauthorizedAccessException e)
            {
                held.Add($"Directory.Delete failed: {e.Message}");
            }
            return held.Count == 0 ? null : string.Join("; ", held);
        }

        private static readonly string[] Vocabulary =
            "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda omicron sigma tau upsilon phi chi psi omega"
                .Split(' ');

        private static string Words(Random r, int n) =>
            string.Join(" ", Enumerable.Range(0, n).Select(_ => Vocabulary[r.Next(Vocabulary.Length)]));

        /// <summary>
        /// Reads of a mapped input and its clones on other threads race its Dispose, thousands of
        /// times: a read returns the file's bytes, or zeros where it raced the close (bytes the
        /// reader discards), or throws ObjectDisposedException, and never faults; a read that
        /// starts after Dispose returned throws.
        /// </summary>
        [Fact]
        public void ReadsRacingDisposeNeverCrash()
        {
            int iterations = Emulator.Qemu != null ? 300 : Emulator.Wine != null ? 1500 : 5000;
            using var t = new TestDir("dispose-race");
            using var d = new NativeFSDirectory(t.Path);
            byte[] data = new byte[256 << 10];
            new Random(5).NextBytes(data);
            for (int k = 0; k < data.Length; k++)
                data[k] |= 1; // never 0: a zero can only come from the released mapping
            DirectoryTests.Write(d, "f", data);

            const int Readers = 3;
            IndexInput[] inputs = new IndexInput[Readers];
            int closing = 0, closed = 0, stop = 0;
            string failure = null;
            long discarded = 0, reads = 0;
            using var start = new Barrier(Readers + 1);
            using var done = new Barrier(Readers + 1);
            var threads = Enumerable.Range(0, Readers).Select(n => new Thread(() =>
            {
                var rnd = new Random(n);
                var buf = new byte[512];
                while (true)
                {
                    start.SignalAndWait();
                    if (Volatile.Read(ref stop) != 0)
                        return;
                    IndexInput input = inputs[n];
                    try
                    {
                        while (true)
                        {
                            bool after = Volatile.Read(ref closed) != 0;
                            long pos = rnd.Next(data.Length - buf.Length - 8); // a byte, the buffer, an int
                            input.Seek(pos);
                            int b = input.ReadByte();
                            input.ReadBytes(buf, 0, buf.Length);
                            int v = input.ReadInt32();
                            Interlocked.Increment(ref reads);
                            if (after)
                            {
                                failure ??= "a read started after Dispose returned did not throw";
                                break;
                            }
                            bool right = b == data[pos] && buf[0] == data[pos + 1] && buf[^1] == data[pos + buf.Length];
                            if (!right)
                            {
                                if (Volatile.Read(ref closing) == 0)
                                    failure ??= $"wrong bytes at {pos} before the close began";
                                else
                                    Interlocked.Increment(ref discarded);
                            }
                            GC.KeepAlive(v);
                        }
                    }
                    catch (ObjectDisposedException)
                    {
                    }
                    catch (Exception e)
                    {
                        failure ??= $"{e.GetType().Name}: {e.Message}";
                    }
                    done.SignalAndWait();
                }
            })).ToArray();
            foreach (Thread th in threads)
                th.Start();
            var spin = new Random(9);
            for (int it = 0; it < iterations && failure == null; it++)
            {
                IndexInput i = d.OpenInput("f", IOContext.READ);
                inputs[0] = i;
                for (int n = 1; n < Readers; n++)
                    inputs[n] = (IndexInput)i.Clone();
                Volatile.Write(ref closing, 0);
                Volatile.Write(ref closed, 0);
                start.SignalAndWait();
                Thread.SpinWait(spin.Next(2000));
                Volatile.Write(ref closing, 1);
                i.Dispose();
                Volatile.Write(ref closed, 1);
                done.SignalAndWait();
            }
            Volatile.Write(ref stop, 1);
            start.SignalAndWait();
            foreach (Thread th in threads)
                th.Join();
            Assert.True(failure == null, failure);
            Console.Error.WriteLine($"dispose race: {iterations} closes under {Readers} readers, {reads} reads, {discarded} raced the close and were discarded");
        }
    }
}
