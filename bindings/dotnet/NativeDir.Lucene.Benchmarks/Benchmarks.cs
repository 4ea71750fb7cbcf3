using System;
using System.IO;
using BenchmarkDotNet.Attributes;
using Lucene.Net.Index;
using Lucene.Net.Search;
using Lucene.Net.Store;
using LuceneDirectory = Lucene.Net.Store.Directory;

namespace NativeDir.Lucene.Benchmarks
{
    /// <summary>Sizes of the run of record; lucene.sh may shrink them with --quick.</summary>
    public static class Sizes
    {
        public static long FileBytes = 64L << 20;
        public static long ByteReads = 16L << 20; // ReadByte: a quarter of the file, byte by byte
        public static int IndexDocs = 5000;
        public static int SearchDocs = 25_000;
        public static int Queries = 500;
        public static int QueryRounds = 4;
    }

    /// <summary>The read rows of the file table; the input stays open across invocations.</summary>
    [MemoryDiagnoser]
    public class FileReads
    {
        private FileWorkload _w;

        [Params(Dir.NativeDir, Dir.SimpleFS, Dir.NIOFS, Dir.MMap, Dir.RAM)]
        public Dir Directory;

        /// <summary>One loop on one thread against another (each directory against RAMDirectory,
        /// run minutes apart): every row on the same CPU, as the NativeDir suite's read rows. Left
        /// free, the thread ran wherever the scheduler put it while the host slowed one vCPU to
        /// ~0.55 of the other for minutes: NativeFSDirectory's ReadByte measured 44 ms against
        /// 23-30 ms in five other full runs, and RAMDirectory 29 ms against 35-42.</summary>
        [GlobalSetup(Targets = new[] { nameof(ReadSequential), nameof(ReadByteSequential), nameof(ReadRandom) })]
        public void SetupOnOneCpu()
        {
            NativeDir.Benchmarks.SameCpu.Pin();
            Setup();
        }

        /// <summary>The two-thread row needs both CPUs.</summary>
        [GlobalSetup(Target = nameof(ConcurrentCloneReads))]
        public void Setup() => _w = new FileWorkload(Directory, Sizes.FileBytes);

        [GlobalCleanup]
        public void Cleanup()
        {
            _w.Dispose();
            NativeDir.Benchmarks.SameCpu.Unpin();
        }

        [Benchmark]
        public long ReadSequential() => _w.ReadSequential();

        [Benchmark]
        public long ReadByteSequential() => _w.ReadByte(Sizes.ByteReads);

        [Benchmark]
        public long ReadRandom() => _w.ReadRandom();

        [Benchmark]
        public long ConcurrentCloneReads() => _w.ConcurrentCloneReads();
    }

    /// <summary>Write: 64 MiB through a merge-sized output, closed and synced (durable).</summary>
    [MemoryDiagnoser]
    public class FileWrite
    {
        private FileWorkload _w;

        [Params(Dir.NativeDir, Dir.SimpleFS, Dir.NIOFS, Dir.MMap, Dir.RAM)]
        public Dir Directory;

        [GlobalSetup]
        public void Setup() => _w = new FileWorkload(Directory, Sizes.FileBytes, "write");

        [GlobalCleanup]
        public void Cleanup() => _w.Dispose();

        [IterationSetup]
        public void Remove()
        {
            if (_w.Directory.FileExists("w"))
                _w.Directory.DeleteFile("w");
        }

        [Benchmark]
        public void Write() => _w.Write("w");
    }

    /// <summary>The device's limit through nativedir itself: direct I/O required (no fallback),
    /// 1 MiB writes, fsync through the handle. The C suite's raw O_DIRECT row (no library at
    /// all) is measured by lucene.sh in the same run.</summary>
    [MemoryDiagnoser]
    public class DeviceLimit
    {
        private NativeDirectory _dir;
        private readonly byte[] _buf = new byte[1 << 20];

        [GlobalSetup]
        public void Setup()
        {
            string p = Dirs.PathOf(Dir.NativeDir, "limit");
            Dirs.Clear(p);
            _dir = NativeDirectory.Open(p);
            new Random(42).NextBytes(_buf);
        }

        [GlobalCleanup]
        public void Cleanup() => _dir.Dispose();

        [IterationSetup]
        public void Remove()
        {
            if (_dir.FileExists("raw"))
                _dir.DeleteFile("raw");
        }

        [Benchmark]
        public void DirectWriteSync()
        {
            using NativeOutput o = _dir.CreateOutput("raw", IoOptions.Merge | IoOptions.RequireDirect);
            for (long n = 0; n < Sizes.FileBytes; n += _buf.Length)
                o.Write(_buf);
            o.Sync();
        }
    }

    /// <summary>Many queries with Parallel.For over one reader and searcher.</summary>
    [MemoryDiagnoser]
    public class ParallelSearch
    {
        private LuceneDirectory _dir;
        private DirectoryReader _reader;
        private IndexSearcher _searcher;
        private Query[] _queries;

        [Params(Dir.NativeDir, Dir.SimpleFS, Dir.NIOFS, Dir.MMap, Dir.RAM)]
        public Dir Directory;

        [GlobalSetup]
        public void Setup()
        {
            var docs = SearchWorkload.Corpus(Sizes.SearchDocs);
            string p = Dirs.PathOf(Directory, "search");
            Dirs.Clear(p);
            _dir = Dirs.Open(Directory, p);
            SearchWorkload.Index(_dir, docs);
            _reader = DirectoryReader.Open(_dir);
            _searcher = new IndexSearcher(_reader);
            _queries = SearchWorkload.Queries(docs, Sizes.Queries);
        }

        [GlobalCleanup]
        public void Cleanup()
        {
            _reader.Dispose();
            _dir.Dispose();
        }

        [Benchmark]
        public long Search() => SearchWorkload.ParallelSearch(_searcher, _queries, Sizes.QueryRounds);
    }

    /// <summary>Indexing the corpus' first documents into a fresh directory, then commit.</summary>
    [MemoryDiagnoser]
    public class Indexing
    {
        private string _path;
        private System.Collections.Generic.List<(string Id, string Body)> _docs;

        [Params(Dir.NativeDir, Dir.SimpleFS, Dir.NIOFS, Dir.MMap, Dir.RAM)]
        public Dir Directory;

        [GlobalSetup]
        public void Setup()
        {
            _docs = SearchWorkload.Corpus(Sizes.IndexDocs);
            _path = Dirs.PathOf(Directory, "index");
        }

        [IterationSetup]
        public void Fresh() => Dirs.Clear(_path);

        [Benchmark]
        public void Index()
        {
            using LuceneDirectory d = Dirs.Open(Directory, _path);
            SearchWorkload.Index(d, _docs);
        }
    }
}
