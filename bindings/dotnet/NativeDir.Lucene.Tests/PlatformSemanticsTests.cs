using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Runtime.CompilerServices;
using Lucene.Net.Analysis.Core;
using Lucene.Net.Documents;
using Lucene.Net.Index;
using Lucene.Net.Search;
using Lucene.Net.Store;
using Lucene.Net.Util;
using NativeDir.Testing;
using Xunit;

namespace NativeDir.Lucene.Tests
{
    /// <summary>
    /// The file-system behaviour Lucene.NET relies on and Windows gives differently from POSIX,
    /// asserted the same way on every platform the package ships for: these run on
    /// linux-x64, under Wine (win-x64) and under qemu-user (linux-arm64).
    /// <list type="bullet">
    /// <item>IndexWriter deletes merged-away segment files while an older reader still has them
    /// open and mapped; the delete must succeed at once (not be retried later) and the reader must
    /// go on reading the old bytes.</item>
    /// <item>Files nativedir holds open can be deleted and renamed over by others (Windows:
    /// FILE_SHARE_DELETE on every handle).</item>
    /// <item>The write lock held by another process keeps an IndexWriter out, and is free again
    /// when that process lets go.</item>
    /// <item>The directory sync policy: Windows cannot flush a directory, so nd_sync_dir checks
    /// that the directory is still there, and the open directory handle keeps it there.</item>
    /// </list>
    /// </summary>
    public class PlatformSemanticsTests
    {
        private static IndexWriterConfig Config() =>
            new(LuceneVersion.LUCENE_48, new WhitespaceAnalyzer(LuceneVersion.LUCENE_48))
            {
                MergeScheduler = new SerialMergeScheduler(),
                // one segment per commit until ForceMerge (NoMergePolicy would refuse that too)
                MergePolicy = new LogDocMergePolicy { MergeFactor = 1000 },
            };

        private static void AddDocs(IndexWriter w, int from, int count)
        {
            for (int i = from; i < from + count; i++)
                w.AddDocument(new Document
                {
                    new StringField("id", i.ToString(), Field.Store.YES),
                    new TextField("body", $"word{i % 7} common", Field.Store.NO),
                });
        }

        [Fact]
        public void MergedAwaySegmentFilesAreDeletedWhileAnOldReaderHoldsThem()
        {
            using var tmp = new TestDir("merge-delete");
            using var dir = new NativeFSDirectory(tmp.Path);
            using var w = new IndexWriter(dir, Config());
            for (int c = 0; c < 3; c++)
            {
                AddDocs(w, c * 50, 50);
                w.Commit();
            }
            using DirectoryReader old = DirectoryReader.Open(dir);
            Assert.Equal(3, old.Leaves.Count);
            var oldFiles = new HashSet<string>();
            foreach (var ctx in old.Leaves)
                oldFiles.UnionWith(((SegmentReader)ctx.Reader).SegmentInfo.GetFiles());
            var oldSearcher = new IndexSearcher(old);
            Assert.Equal(21, oldSearcher.Search(new TermQuery(new Term("body", "word3")), 1000).TotalHits);

            w.ForceMerge(1); // IndexWriter deletes the three segments' files now, the reader holds them
            w.Commit();

            string[] listed = dir.ListAll();
            string[] left = oldFiles.Where(f => listed.Contains(f)).ToArray();
            // a delete that failed (a sharing violation) would leave the file for a later retry
            Assert.True(left.Length == 0, "merged-away files still in the directory: " + string.Join(", ", left));
            foreach (string f in oldFiles)
                Assert.False(File.Exists(Path.Combine(tmp.Path, f)), f + " is still visible to the OS");

            // the old reader reads what it had, through handles and mappings of deleted files
            Assert.Equal(21, oldSearcher.Search(new TermQuery(new Term("body", "word3")), 1000).TotalHits);
            Assert.Equal("77", old.Document(77).Get("id"));
            using DirectoryReader now = DirectoryReader.OpenIfChanged(old);
            Assert.NotNull(now);
            Assert.Single(now.Leaves);
            Assert.Equal(150, now.NumDocs);
        }

        [Fact]
        public void OpenAndMappedFilesCanBeDeletedAndRenamedOverByOthers()
        {
            using var tmp = new TestDir("share-delete");
            using var dir = new NativeFSDirectory(tmp.Path);
            byte[] first = Enumerable.Range(0, 100_000).Select(i => (byte)(i * 7)).ToArray();
            byte[] second = Enumerable.Range(0, 100_000).Select(i => (byte)(i * 13 + 1)).ToArray();
            File.WriteAllBytes(Path.Combine(tmp.Path, "a"), first);
            File.WriteAllBytes(Path.Combine(tmp.Path, "b"), second);

            using IndexInput mapped = dir.OpenInput("a", IOContext.READ_ONCE);
            using IndexInput held = dir.OpenInput("b", IOContext.DEFAULT);
            // another component of the process (plain .NET file APIs) deletes and renames over
            // files nativedir holds: on Windows this needs FILE_SHARE_DELETE on nativedir's handles
            File.Delete(Path.Combine(tmp.Path, "a"));
            // Windows 10 (1903) and later delete with POSIX semantics: the name goes at once.
            // Wine keeps it until the last handle closes, as Windows before them did.
            if (File.Exists(Path.Combine(tmp.Path, "a")))
                Emulator.SkipUnderWine("DeleteFileW of a file open elsewhere leaves its name until the last handle closes (no POSIX delete semantics)");
            Assert.False(File.Exists(Path.Combine(tmp.Path, "a")));
            File.WriteAllBytes(Path.Combine(tmp.Path, "c"), second);
            File.Move(Path.Combine(tmp.Path, "c"), Path.Combine(tmp.Path, "b"), overwrite: true);
            // and the name of a deleted file can be taken again at once
            File.WriteAllBytes(Path.Combine(tmp.Path, "a"), second);

            var buf = new byte[first.Length];
            mapped.Seek(0);
            mapped.ReadBytes(buf, 0, buf.Length);
            Assert.Equal(first, buf);
            held.Seek(0);
            held.ReadBytes(buf, 0, buf.Length);
            Assert.Equal(second, buf);
            using IndexInput again = dir.OpenInput("a", IOContext.DEFAULT);
            again.ReadBytes(buf, 0, buf.Length);
            Assert.Equal(second, buf);

            // nativedir's own rename replaces a file that is open and mapped
            using (IndexOutput o = dir.CreateOutput("d", IOContext.DEFAULT))
                o.WriteBytes(first, first.Length);
            using IndexInput reopened = dir.OpenInput("a", IOContext.READ_ONCE);
            dir.Native.Rename("d", "a");
            reopened.Seek(0);
            reopened.ReadBytes(buf, 0, buf.Length);
            Assert.Equal(second, buf);
            using IndexInput renamed = dir.OpenInput("a", IOContext.DEFAULT);
            renamed.ReadBytes(buf, 0, buf.Length);
            Assert.Equal(first, buf);
        }

        [Fact]
        public void WriteLockHeldByAnotherProcessKeepsTheWriterOut()
        {
            using var tmp = new TestDir("lock-process");
            using (var child = LockChild.Start(tmp.Path))
            {
                using var dir = new NativeFSDirectory(tmp.Path);
                Assert.Throws<LockObtainFailedException>(() => new IndexWriter(dir, Config()));
                using (var probe = dir.MakeLock(IndexWriter.WRITE_LOCK_NAME))
                    Assert.True(probe.IsLocked());
                child.Release();
                using var w = new IndexWriter(dir, Config());
                AddDocs(w, 0, 3);
                w.Commit();
                // and now it is this process that keeps another out
                Assert.Equal(LockChild.Refused, LockChild.TryOnce(tmp.Path));
            }
        }

        [Fact]
        public void DirectorySyncPolicy()
        {
            using var tmp = new TestDir("sync-dir");
            string path = tmp.Sub("index");
            using (var dir = new NativeFSDirectory(path))
            {
                using (var w = new IndexWriter(dir, Config()))
                {
                    AddDocs(w, 0, 10);
                    w.Commit(); // syncs the files, then the directory
                }
                dir.Native.SyncDirectory();
                if (OperatingSystem.IsWindows())
                {
                    // Windows has no directory fsync (FlushFileBuffers needs write access a
                    // directory handle cannot have; NTFS journals the names itself): nd_sync_dir
                    // checks the directory is still there, and the handle nativedir holds without
                    // FILE_SHARE_DELETE keeps it there: it cannot be removed or renamed meanwhile.
                    string moved = path + "-moved";
                    Assert.ThrowsAny<IOException>(() => System.IO.Directory.Move(path, moved));
                    Assert.True(System.IO.Directory.Exists(path));
                    Assert.False(System.IO.Directory.Exists(moved));
                }
                // POSIX: fsync of the directory's descriptor (the names it holds reach the disk)
            }
            using var reopened = new NativeFSDirectory(path);
            using var r = DirectoryReader.Open(reopened);
            Assert.Equal(10, r.NumDocs);
        }
    }

    /// <summary>A second process (this same test executable) that takes the index's write lock
    /// through NativeLockFactory and keeps it until told to let go.</summary>
    internal sealed class LockChild : IDisposable
    {
        internal const int Held = 0, Refused = 3;
        private const string Env = "NATIVEDIR_TEST_LOCK_CHILD";
        private readonly Process _p;

        private LockChild(Process p) => _p = p;

        /// <summary>The child's side: runs before xunit's Main when the variable is set.</summary>
#pragma warning disable CA2255 // the child must act before the test runner starts
        [ModuleInitializer]
#pragma warning restore CA2255
        internal static void ChildMain()
        {
            string path = Environment.GetEnvironmentVariable(Env);
            if (string.IsNullOrEmpty(path))
                return;
            string mode = Environment.GetEnvironmentVariable(Env + "_MODE") ?? "hold";
            int code;
            using (var dir = new NativeFSDirectory(path))
            using (var l = dir.MakeLock(IndexWriter.WRITE_LOCK_NAME))
            {
                if (!l.Obtain())
                {
                    Console.WriteLine("refused");
                    code = Refused;
                }
                else
                {
                    Console.WriteLine("locked");
                    if (mode == "hold")
                        Console.In.ReadToEnd(); // until the parent closes our stdin
                    code = Held;
                }
            }
            Console.Out.Flush();
            Environment.Exit(code);
        }

        private static ProcessStartInfo Info(string path, string mode)
        {
#if NETFRAMEWORK
            // Mono: the process is the runtime; the child is the runtime on this executable
            string exe = System.Reflection.Assembly.GetEntryAssembly()?.Location ?? throw new InvalidOperationException("no entry assembly");
            string launcher = Process.GetCurrentProcess().MainModule?.FileName ?? "mono";
#else
            string exe = Environment.ProcessPath ?? throw new InvalidOperationException("no process path");
            // qemu-user cannot exec an arm64 program by itself: the runner says how to launch one
            string launcher = Environment.GetEnvironmentVariable("ND_TEST_CHILD_LAUNCHER");
#endif
            ProcessStartInfo psi;
            if (string.IsNullOrEmpty(launcher))
                psi = new ProcessStartInfo(exe);
            else
            {
                string[] parts = launcher.Split(' ', StringSplitOptions.RemoveEmptyEntries);
                psi = new ProcessStartInfo(parts[0]);
                foreach (string a in parts.Skip(1))
                    psi.AddArgument(a);
                psi.AddArgument(exe);
            }
            psi.UseShellExecute = false;
            psi.RedirectStandardInput = true;
            psi.RedirectStandardOutput = true;
            psi.Environment[Env] = path;
            psi.Environment[Env + "_MODE"] = mode;
            return psi;
        }

        internal static LockChild Start(string path)
        {
            var p = Process.Start(Info(path, "hold"));
            Assert.NotNull(p);
            string line = p.StandardOutput.ReadLine();
            Assert.Equal("locked", line);
            return new LockChild(p);
        }

        internal static int TryOnce(string path)
        {
            using var p = Process.Start(Info(path, "once"));
            Assert.NotNull(p);
            p.StandardInput.Close();
            string line = p.StandardOutput.ReadLine();
            Assert.True(p.WaitForExit(120_000), "the lock child did not exit");
            Assert.Equal(p.ExitCode == Refused ? "refused" : "locked", line);
            return p.ExitCode;
        }

        internal void Release()
        {
            _p.StandardInput.Close();
            Assert.True(_p.WaitForExit(120_000), "the lock child did not exit");
            Assert.Equal(Held, _p.ExitCode);
        }

        public void Dispose()
        {
            if (!_p.HasExited)
            {
                _p.Kill();
                _p.WaitForExit();
            }
            _p.Dispose();
        }
    }
}
