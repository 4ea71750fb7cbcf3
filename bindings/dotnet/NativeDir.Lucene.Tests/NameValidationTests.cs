using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Reflection;
using Lucene.Net.Store;
using Xunit;

using LuceneDirectory = Lucene.Net.Store.Directory;

namespace NativeDir.Lucene.Tests
{
    /// <summary>
    /// Lucene.NET 4.8.0-beta00018 validates file names in FSDirectory (EnsureCanWrite,
    /// EnsureCanRead, IsValidSinglePathComponent): its built-in directories refuse a name that is
    /// not a single path component before touching the file system. Every invalid name, through
    /// every call that takes a name, on NativeFSDirectory and on MMapDirectory of the Lucene.NET
    /// this suite runs on (ctest runs it on beta00017 and beta00018): where the built-in refuses
    /// the name, NativeFSDirectory throws exactly its exception type; where it does not (beta00017
    /// everywhere; FileExists, FileLength and DeleteFile in beta00018), NativeFSDirectory refuses
    /// it with ArgumentException, the accepted difference of README "Contract": nothing outside
    /// the folder is read, written, created or deleted.
    /// </summary>
    public class NameValidationTests
    {
        /// <summary>Whether the running Lucene.NET validates names (beta00018 and later).</summary>
        private static readonly bool Validates = typeof(FSDirectory).GetMethod("EnsureCanRead",
            BindingFlags.Instance | BindingFlags.NonPublic, null, new[] { typeof(string) }, null) != null;

        private static readonly Dictionary<string, Func<string, string>> Names = new()
        {
            ["../../foo.txt"] = _ => "../../foo.txt",
            ["..\\foo.txt"] = _ => "..\\foo.txt",
            ["absolute path"] = sandbox => Path.Combine(sandbox, "foo.txt"),
            ["subdir/file.txt"] = _ => "subdir/file.txt",
            ["subdir\\file.txt"] = _ => "subdir\\file.txt",
            [".."] = _ => "..",
            ["."] = _ => ".",
            ["empty"] = _ => "",
            ["null"] = _ => null,
            ["a NUL inside"] = _ => "a\0b",
            ["a trailing separator"] = _ => "foo.txt/",
        };

        public static IEnumerable<object[]> Cases()
        {
            foreach (string call in Calls.Keys)
                foreach (string name in Names.Keys)
                    yield return new object[] { call, name };
            // and every character this platform's file names cannot hold (what beta00018 checks)
            foreach (char c in Path.GetInvalidFileNameChars().Distinct())
                foreach (string call in new[] { "CreateOutput", "OpenInput" })
                    yield return new object[] { call, $"char U+{(int)c:X4}" };
        }

        private static readonly Dictionary<string, Action<LuceneDirectory, string>> Calls = new()
        {
            ["CreateOutput"] = (d, n) => d.CreateOutput(n, IOContext.DEFAULT).Dispose(),
            ["OpenInput"] = (d, n) => d.OpenInput(n, IOContext.DEFAULT).Dispose(),
            ["CreateSlicer"] = (d, n) => d.CreateSlicer(n, IOContext.DEFAULT).Dispose(),
#pragma warning disable CS0618 // FileExists is obsolete in Lucene.NET, and still a name-taking call
            ["FileExists"] = (d, n) => d.FileExists(n),
#pragma warning restore CS0618
            ["FileLength"] = (d, n) => d.FileLength(n),
            ["DeleteFile"] = (d, n) => d.DeleteFile(n),
        };

        /// <summary>What the call did: "ok" or the exception's type name.</summary>
        private static string Outcome(Action a)
        {
            try
            {
                a();
                return "ok";
            }
            catch (Exception e)
            {
                return "!" + e.GetType().Name;
            }
        }

        private static string NameFor(string label, string sandbox) =>
            label.StartsWith("char U+", StringComparison.Ordinal)
                ? "a" + (char)Convert.ToInt32(label.Substring(7), 16) + "b"
                : Names[label](sandbox);

        /// <summary>Everything under the sandbox: the test's evidence that nothing outside the
        /// index folder was made or removed.</summary>
        private static string[] Tree(string root) =>
            System.IO.Directory.GetFileSystemEntries(root, "*", SearchOption.AllDirectories)
                .Select(p => p.Substring(root.Length)).OrderBy(p => p, StringComparer.Ordinal).ToArray();

        [Theory, MemberData(nameof(Cases))]
        public void RefusedAsTheBuiltInOfThisVersionRefusesIt(string call, string label)
        {
            // the index folder sits two levels down a sandbox, so a name that climbs out of it
            // stays inside the test's own folder even when a built-in follows it
            using var t = new TestDir("names");
            string builtInFolder = t.Sub("mmap/a/b/index"), ourFolder = t.Sub("native/a/b/index");
            string builtInName = NameFor(label, t.Sub("mmap/outside")), ourName = NameFor(label, t.Sub("native/outside"));
            string builtIn;
            using (var mmap = new MMapDirectory(new DirectoryInfo(builtInFolder)))
                builtIn = Outcome(() => Calls[call](mmap, builtInName));
            string[] before = Tree(Path.Combine(t.Path, "native"));
            string ours;
            using (var native = new NativeFSDirectory(ourFolder))
                ours = Outcome(() => Calls[call](native, ourName));
            bool refusedByBuiltIn = builtIn != "ok" && (builtIn == "!ArgumentException" || builtIn == "!ArgumentNullException")
                                    && (Validates || label == "null");
            Console.WriteLine($"{(Validates ? "beta00018+" : "beta00017")} {call}({label}): MMapDirectory {builtIn}, NativeFSDirectory {ours}");
            if (refusedByBuiltIn)
                Assert.Equal(builtIn, ours);
            else
            {
                // the built-in reaches for the name: NativeFSDirectory refuses it (any ArgumentException)
                Assert.StartsWith("!Argument", ours);
                Assert.EndsWith("Exception", ours);
            }
            Assert.Equal(before, Tree(Path.Combine(t.Path, "native")));
        }

        [Fact]
        public void Beta00018BuiltInsRefuseTheNamesTheIssueListed()
        {
            // the premise of the test above, pinned: on beta00018 MMapDirectory itself refuses
            // these in CreateOutput and OpenInput with ArgumentException
            if (!Validates)
                Assert.Skip("this Lucene.NET (before 4.8.0-beta00018) does not validate names in FSDirectory; ctest runs this suite on beta00018 too");
            using var t = new TestDir("names18");
            using var mmap = new MMapDirectory(new DirectoryInfo(t.Sub("a/b/index")));
            foreach (string label in new[] { "../../foo.txt", "..\\foo.txt", "absolute path", "subdir/file.txt", "subdir\\file.txt", "..", ".", "empty" })
                foreach (string call in new[] { "CreateOutput", "OpenInput" })
                    Assert.Equal("!ArgumentException", Outcome(() => Calls[call](mmap, NameFor(label, t.Sub("outside")))));
        }
    }
}
