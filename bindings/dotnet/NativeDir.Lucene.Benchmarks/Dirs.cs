using System;
using System.IO;
using Lucene.Net.Store;
using LuceneDirectory = Lucene.Net.Store.Directory;

namespace NativeDir.Lucene.Benchmarks
{
    /// <summary>The directories compared: NativeDir.Lucene and Lucene.NET's own.</summary>
    public enum Dir
    {
        NativeDir,
        SimpleFS,
        NIOFS,
        MMap,
        RAM,
    }

    internal static class Dirs
    {
        /// <summary>Where scratch files go: a real disk (lucene.sh passes its build tree), never
        /// tmpfs, or page-cache and direct-I/O figures mean nothing.</summary>
        internal static string Scratch =>
            Environment.GetEnvironmentVariable("ND_LUCENE_BENCH_DIR") is { Length: > 0 } d ? d
                : Path.Combine(Path.GetTempPath(), "ndlucene-bench");

        internal static string PathOf(Dir kind, string tag)
        {
            string p = Path.Combine(Scratch, tag, kind.ToString());
            System.IO.Directory.CreateDirectory(p);
            return p;
        }

        internal static LuceneDirectory Open(Dir kind, string path) => kind switch
        {
            Dir.NativeDir => new NativeFSDirectory(path),
            Dir.SimpleFS => new SimpleFSDirectory(new DirectoryInfo(path)),
            Dir.NIOFS => new NIOFSDirectory(new DirectoryInfo(path)),
            Dir.MMap => new MMapDirectory(new DirectoryInfo(path)),
            Dir.RAM => new RAMDirectory(),
            _ => throw new ArgumentOutOfRangeException(nameof(kind)),
        };

        /// <summary>Removes what a previous run left (a fresh index or file per iteration).</summary>
        internal static void Clear(string path)
        {
            if (System.IO.Directory.Exists(path))
                System.IO.Directory.Delete(path, recursive: true);
            System.IO.Directory.CreateDirectory(path);
        }

        /// <summary>The context a large merge writes its output with (what triggers direct I/O in
        /// NativeDir.Lucene; Lucene.NET's own directories ignore it).</summary>
        internal static IOContext MergeContext(long bytes) => new(new MergeInfo(100_000, bytes, false, 1));
    }
}
