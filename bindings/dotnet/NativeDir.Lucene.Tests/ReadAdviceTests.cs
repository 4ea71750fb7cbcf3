using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using Lucene.Net.Analysis.Standard;
using Lucene.Net.Documents;
using Lucene.Net.Index;
using Lucene.Net.Store;
using Lucene.Net.Util;
using NativeDir.Testing;
using Xunit;

namespace NativeDir.Lucene.Tests
{
    /// <summary>
    /// The access advice each kind of index file gets (IoStrategyPolicy.ForInput): the policy's
    /// table, and on Linux the advice the kernel actually holds for each mapping (VmFlags "rr" is
    /// MADV_RANDOM, "sr" MADV_SEQUENTIAL, in /proc/self/smaps), including each sub-file's range of
    /// a compound file and the files a real IndexReader opens.
    /// </summary>
    public class ReadAdviceTests
    {
        private static readonly IOContext Merge = new IOContext(new MergeInfo(10, 64L << 20, false, 1));

        // below IoStrategyPolicy.DefaultMinBytesDirect: read mapped, like the cached segments it merges
        private static readonly IOContext SmallMerge = new IOContext(new MergeInfo(10, 1L << 20, false, 1));

        private const IoOptions M = IoOptions.Mapped;
        // a search input is also read in at open while its directory fits in memory
        private const IoOptions S = IoOptions.Mapped | IoOptions.Warm;

        public static IEnumerable<object[]> Table() => new[]
        {
            // searches: random for the files read a small block per term or per hit, and no
            // reuse for those read per hit
            new object[] { "_0.tim", "read", S | IoOptions.Random },
            new object[] { "_0.fdt", "read", S | IoOptions.Random | IoOptions.NoReuse },
            new object[] { "_0.tvd", "read", S | IoOptions.Random | IoOptions.NoReuse },
            new object[] { "_0_Lucene45_0.dvd", "read", S | IoOptions.Random },
            new object[] { "_0.fdt", "default", S | IoOptions.Random | IoOptions.NoReuse },
            // searches: the OS's read-ahead for postings (read forward) and files read whole
            new object[] { "_0_Lucene41_0.doc", "read", S },
            new object[] { "_0_Lucene41_0.pos", "read", S },
            new object[] { "_0_Lucene41_0.pay", "read", S },
            new object[] { "_0.tip", "read", S },
            new object[] { "_0.fdx", "read", S },
            new object[] { "_0.nvd", "read", S },
            new object[] { "_0.cfs", "read", S },
            new object[] { "segments_2", "read", S },
            new object[] { "noextension", "read", S },
            // a large merge reads every file with direct I/O (no mapping, no advice of the file's
            // kind); a small one maps it, front to back; read-once files are not mapped
            new object[] { "_0.fdt", "merge", IoOptions.Merge },
            new object[] { "_0_Lucene41_0.doc", "merge", IoOptions.Merge },
            new object[] { "_0.cfs", "merge", IoOptions.Merge },
            new object[] { "_0.fdt", "smallmerge", M | IoOptions.Sequential },
            new object[] { "_0_Lucene41_0.doc", "smallmerge", M | IoOptions.Sequential },
            new object[] { "_0.fdt", "readonce", IoOptions.Sequential },
            new object[] { "segments_2", "readonce", IoOptions.Sequential },
        };

        private static IOContext Ctx(string name) => name switch
        {
            "read" => IOContext.READ,
            "default" => IOContext.DEFAULT,
            "readonce" => IOContext.READ_ONCE,
            "smallmerge" => SmallMerge,
            _ => Merge,
        };

        [Theory]
        [MemberData(nameof(Table))]
        public void PolicyAdvisesByFileKind(string name, string ctx, IoOptions expected)
        {
            Assert.Equal(expected, new IoStrategyPolicy().ForInput(name, Ctx(ctx)));
        }

        [Fact]
        public void SubclassCanChangeTheAdvice()
        {
            var policy = new NoAdvice();
            Assert.Equal(S, policy.ForInput("_0.fdt", IOContext.READ));
            Assert.Equal(M | IoOptions.Sequential, policy.ForInput("_0.fdt", SmallMerge));
            Assert.Equal(IoOptions.Merge, policy.ForInput("_0.fdt", Merge));
        }

        private sealed class NoAdvice : IoStrategyPolicy
        {
            public override IoOptions AdviceFor(string name) => IoOptions.None;
        }

        [Theory]
        [MemberData(nameof(Table))]
        public void MappingsHoldTheAdvice(string name, string ctx, IoOptions expected)
        {
            SkipUnlessSmaps();
            using var t = new TestDir("advice");
            using var d = new NativeFSDirectory(t.Path);
            DirectoryTests.Write(d, name, new byte[16 * Page]);
            string path = Path.Combine(t.Path, name);
            using var i = (NativeIndexInput)d.OpenInput(name, Ctx(ctx));
            Assert.Equal((expected & IoOptions.Mapped) != 0, i.IsMapped);
            List<Vma> vmas = Mappings(path);
            if (!i.IsMapped)
            {
                Assert.Empty(vmas);
                return;
            }
            Assert.NotEmpty(vmas);
            foreach (Vma v in vmas)
                AssertAdvice(expected, v, name);
        }

        [Theory]
        [InlineData("read")]
        [InlineData("smallmerge")]
        public void CompoundSubFilesHoldTheirOwnAdvice(string ctx)
        {
            SkipUnlessSmaps();
            using var t = new TestDir("advice-cfs");
            using var d = new NativeFSDirectory(t.Path);
            // four sub-files of four pages each, in the order a compound file stores them
            string[] subs = { "_0.fdt", "_0_Lucene41_0.doc", "_0.tim", "_0.nvd" };
            IoOptions[] advice = ctx == "read"
                ? new[] { IoOptions.Random, IoOptions.None, IoOptions.Random, IoOptions.None }
                : new[] { IoOptions.Sequential, IoOptions.Sequential, IoOptions.Sequential, IoOptions.Sequential };
            DirectoryTests.Write(d, "_0.cfs", new byte[subs.Length * 4 * Page]);
            string path = Path.Combine(t.Path, "_0.cfs");
            using var slicer = d.CreateSlicer("_0.cfs", Ctx(ctx));
            var slices = new List<IndexInput>();
            for (int k = 0; k < subs.Length; k++)
                slices.Add(slicer.OpenSlice(subs[k], k * 4L * Page, 4L * Page));
            List<Vma> vmas = Mappings(path);
            for (int k = 0; k < subs.Length; k++)
            {
                IoOptions expected = advice[k];
                // every page of the sub-file's range (the advice is page-granular)
                for (long off = k * 4L * Page; off < (k + 1) * 4L * Page; off += Page)
                    AssertAdvice(expected, vmas.Single(v => v.Covers(off)), $"{subs[k]} at {off}");
            }
            foreach (IndexInput s in slices)
                s.Dispose();
        }

        /// <summary>What a real reader opens: a segment written without a compound file (its
        /// .fdt and .tim random, its postings not), and one with (the .cfs holds both kinds).</summary>
        [Theory]
        [InlineData(false)]
        [InlineData(true)]
        public void AReaderOpensStoredFieldsRandomAndPostingsNormal(bool compound)
        {
            SkipUnlessSmaps();
            using var t = new TestDir("advice-reader");
            using var d = new NativeFSDirectory(t.Path);
            var cfg = new IndexWriterConfig(LuceneVersion.LUCENE_48, new StandardAnalyzer(LuceneVersion.LUCENE_48))
            {
                UseCompoundFile = compound,
            };
            cfg.MergePolicy.NoCFSRatio = compound ? 1.0 : 0.0;
            MonoLucene.Write(d, dir =>
            {
                var c = (IndexWriterConfig)cfg.Clone();
                using var w = new IndexWriter(dir, c);
                var rnd = new Random(18);
                for (int n = 0; n < 3000; n++)
                {
                    var doc = new Document
                    {
                        new StringField("id", n.ToString(CultureInfo.InvariantCulture), Field.Store.YES),
                        new TextField("body", string.Join(" ", Enumerable.Range(0, 60).Select(_ => "w" + rnd.Next(5000))), Field.Store.YES),
                    };
                    w.AddDocument(doc);
                }
                w.Commit();
            });
            using DirectoryReader r = DirectoryReader.Open(d);
            Assert.Equal(3000, r.NumDocs);
            string[] files = System.IO.Directory.GetFiles(t.Path).Select(Path.GetFileName).ToArray();
            if (compound)
            {
                string cfs = Path.Combine(t.Path, files.Single(f => f.EndsWith(".cfs", StringComparison.Ordinal)));
                List<Vma> vmas = Mappings(cfs);
                Assert.Contains(vmas, v => v.Flags.Contains("rr")); // stored fields, terms
                Assert.Contains(vmas, v => !v.Flags.Contains("rr") && !v.Flags.Contains("sr")); // postings
            }
            else
            {
                foreach (string f in files)
                {
                    string ext = IndexFileNames.GetExtension(f) ?? "";
                    List<Vma> vmas = Mappings(Path.Combine(t.Path, f));
                    if (ext is "fdt" or "tim")
                    {
                        Assert.NotEmpty(vmas);
                        Assert.All(vmas, v => Assert.Contains("rr", v.Flags));
                    }
                    else if (ext is "doc" or "pos")
                    {
                        Assert.NotEmpty(vmas);
                        Assert.All(vmas, v => Assert.DoesNotContain("rr", v.Flags));
                    }
                }
            }
        }

        private const int Page = 4096;

        private static void SkipUnlessSmaps()
        {
            if (!OperatingSystem.IsLinux() || !File.Exists("/proc/self/smaps"))
                Assert.Skip("the kernel's advice of a mapping is read from /proc/self/smaps (VmFlags), which only Linux has");
            Emulator.SkipUnderQemu("qemu-user takes madvise without passing it to the kernel, so VmFlags never show the advice");
            if (Environment.SystemPageSize != Page)
                Assert.Skip($"the compound-file layout of these tests assumes 4 KiB pages, not {Environment.SystemPageSize}");
        }

        private static void AssertAdvice(IoOptions expected, Vma v, string what)
        {
            bool random = (expected & IoOptions.Random) != 0, sequential = (expected & IoOptions.Sequential) != 0;
            string flags = string.Join(' ', v.Flags);
            Assert.True(random == v.Flags.Contains("rr") && sequential == v.Flags.Contains("sr"),
                $"{what}: expected {expected}, the mapping at file offset {v.FileOffset} has VmFlags: {flags}");
        }

        private sealed record Vma(long FileOffset, long Length, HashSet<string> Flags)
        {
            public bool Covers(long off) => off >= FileOffset && off < FileOffset + Length;
        }

        /// <summary>This process's mappings of <paramref name="path"/>, with their VmFlags.</summary>
        private static List<Vma> Mappings(string path)
        {
            var found = new List<Vma>();
            bool ours = false;
            long start = 0, end = 0, offset = 0;
            foreach (string line in File.ReadLines("/proc/self/smaps"))
            {
                string[] f = line.Split(' ', 6, StringSplitOptions.RemoveEmptyEntries);
                int dash = f[0].IndexOf('-');
                if (dash > 0 && !f[0].EndsWith(':') && f.Length >= 5)
                {
                    ours = f.Length == 6 && f[5].Trim() == path;
                    start = long.Parse(f[0].Substring(0, dash), NumberStyles.HexNumber, CultureInfo.InvariantCulture);
                    end = long.Parse(f[0].Substring(dash + 1), NumberStyles.HexNumber, CultureInfo.InvariantCulture);
                    offset = long.Parse(f[2], NumberStyles.HexNumber, CultureInfo.InvariantCulture);
                }
                else if (ours && line.StartsWith("VmFlags:", StringComparison.Ordinal))
                {
                    found.Add(new Vma(offset, end - start,
                        line.Substring(8).Split(' ', StringSplitOptions.RemoveEmptyEntries).ToHashSet()));
                    ours = false;
                }
            }
            return found;
        }
    }
}
