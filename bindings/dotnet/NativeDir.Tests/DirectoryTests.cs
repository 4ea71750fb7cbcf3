using System;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Runtime.InteropServices;
using System.Text.RegularExpressions;
using NativeDir.Testing;
using Xunit;

namespace NativeDir.Tests
{
    public class DirectoryTests
    {
        [Fact]
        public void LibraryReportsVersionAndAbi()
        {
            Assert.Equal(1, NativeDirectory.AbiVersion);
            Assert.Matches(new Regex(@"^\d+\.\d+\.\d+$"), NativeDirectory.LibraryVersion);
        }

        [Fact]
        public void LibraryLoadsFromThePackageOfThisRid()
        {
            // the tests run RID-specific publishes (scripts/platform-tests.sh): the RID the app was
            // published for is the one the loader computes, and the package's glue library for it
            // (flattened beside the app by the SDK, or under runtimes/<rid>/native/ in a
            // RID-less build) is the file the process has loaded
#if NETFRAMEWORK
            // (no RuntimeIdentifier on .NET Framework: Mono runs the AnyCPU build on linux-x64 here)
            Assert.Equal((OperatingSystem.IsWindows() ? "win-" : "linux-") +
                RuntimeInformation.ProcessArchitecture.ToString().ToLowerInvariant(), NativeLibraryLoader.RuntimeId);
#else
            Assert.Equal(RuntimeInformation.RuntimeIdentifier, NativeLibraryLoader.RuntimeId);
#endif
            string flat = Path.Combine(AppContext.BaseDirectory, NativeLibraryLoader.FileName);
            string nested = Path.Combine(AppContext.BaseDirectory, "runtimes", NativeLibraryLoader.RuntimeId,
                "native", NativeLibraryLoader.FileName);
            string expected = File.Exists(flat) ? flat : nested;
            Assert.True(File.Exists(expected), expected);
            Assert.Equal(1, NativeDirectory.AbiVersion); // loads it
            var comparison = OperatingSystem.IsWindows() ? StringComparison.OrdinalIgnoreCase : StringComparison.Ordinal;
            // (Mono lists only its own executable as a module: there the mappings say it)
            string[] loaded = Platform.Mono != null
                ? File.ReadAllLines("/proc/self/maps").Where(l => l.Contains('/')).Select(l => l.Substring(l.IndexOf('/'))).Distinct().ToArray()
                : Process.GetCurrentProcess().Modules.Cast<ProcessModule>().Select(m => m.FileName).ToArray();
            Assert.True(loaded.Any(f => string.Equals(Path.GetFullPath(f), Path.GetFullPath(expected), comparison)),
                expected + " is not among the loaded modules:\n" + string.Join("\n", loaded));
        }

        [Fact]
        public void OpenCreatesWhenAskedAndOtherwiseThrowsDirectoryNotFound()
        {
            using var tmp = new TempDir();
            string sub = Path.Combine(tmp.Path, "a", "b");
            var e = Assert.Throws<DirectoryNotFoundException>(() => NativeDirectory.Open(sub));
            Assert.Contains("b", e.Message);
            using (var d = NativeDirectory.Open(sub, create: true))
                Assert.Equal(sub, d.Path);
            Assert.True(Directory.Exists(sub));
        }

        [Fact]
        public void ListExistsLengthDeleteRename()
        {
            using var tmp = new TempDir();
            using var dir = NativeDirectory.Open(tmp.Path);
            Assert.Empty(dir.ListAll());
            foreach (string n in new[] { "b.bin", "a.bin", "é.bin", "日本.dat" })
                File.WriteAllBytes(tmp.File(n), Data.Make(n.Length * 10));
            Directory.CreateDirectory(tmp.File("subdir"));
            Emulator.SymbolicLink(tmp.File("link"), tmp.File("a.bin"));

            string[] names = dir.ListAll();
            // byte order of the UTF-8 names; subdirectories and symlinks are left out
            Assert.Equal(new[] { "a.bin", "b.bin", "é.bin", "日本.dat" }, names);

            Assert.True(dir.FileExists("a.bin"));
            Assert.True(dir.FileExists("日本.dat"));
            Assert.False(dir.FileExists("missing"));
            Assert.False(dir.FileExists("link"));
            Assert.False(dir.FileExists("subdir"));
            Assert.Equal("日本.dat".Length * 10, dir.FileLength("日本.dat"));

            dir.Rename("a.bin", "b.bin"); // replaces b.bin
            Assert.False(dir.FileExists("a.bin"));
            Assert.Equal("a.bin".Length * 10, dir.FileLength("b.bin"));

            dir.DeleteFile("b.bin");
            Assert.False(File.Exists(tmp.File("b.bin")));
            dir.DeleteFile("link"); // the link itself, never its target
            Assert.False(File.Exists(tmp.File("link")));
            Assert.Equal(new[] { "é.bin", "日本.dat" }, dir.ListAll());
        }

        [Fact]
        public void ListAllSeesManyFiles()
        {
            using var tmp = new TempDir();
            using var dir = NativeDirectory.Open(tmp.Path);
            for (int i = 0; i < 300; i++)
                File.WriteAllBytes(tmp.File($"_{i:D4}.cfs"), new byte[1]);
            string[] names = dir.ListAll();
            Assert.Equal(300, names.Length);
            Assert.Equal(Enumerable.Range(0, 300).Select(i => $"_{i:D4}.cfs"), names);
        }

        [Fact]
        public void SyncNamesAndDirectory()
        {
            using var tmp = new TempDir();
            using var dir = NativeDirectory.Open(tmp.Path);
            File.WriteAllBytes(tmp.File("x"), new byte[] { 1, 2, 3 });
            File.WriteAllBytes(tmp.File("y"), new byte[] { 4 });
            dir.Sync(new[] { "x", "y" });
            dir.SyncDirectory();
            Assert.Throws<FileNotFoundException>(() => dir.Sync(new[] { "x", "missing" }));
        }

        // built at run time: xunit's test-case serialization would turn it into U+FFFD
        private static readonly string LoneSurrogate = "bad" + (char)0xD800;

        [Fact]
        public void LoneSurrogateIsRefusedBeforeReachingTheLibrary()
        {
            using var tmp = new TempDir();
            using var dir = NativeDirectory.Open(tmp.Path);
            var e = Assert.Throws<ArgumentException>("name", () => dir.CreateOutput(LoneSurrogate));
            Assert.Contains("surrogate", e.Message);
            Assert.Empty(Directory.GetFileSystemEntries(tmp.Path));
        }

        public static TheoryData<string> BadNames => new()
        {
            "", ".", "..", "a/b", "/abs", "a\\b", new string('n', 256), "a\0b",
        };

        [Theory]
        [MemberData(nameof(BadNames))]
        public void InvalidNamesAreArgumentExceptions(string name)
        {
            using var tmp = new TempDir();
            using var dir = NativeDirectory.Open(tmp.Path);
            Assert.Throws<ArgumentException>("name", () => dir.FileExists(name));
            Assert.Throws<ArgumentException>("name", () => dir.FileLength(name));
            Assert.Throws<ArgumentException>("name", () => dir.DeleteFile(name));
            Assert.Throws<ArgumentException>("name", () => dir.OpenInput(name));
            Assert.Throws<ArgumentException>("name", () => dir.CreateOutput(name));
            Assert.Throws<ArgumentException>("name", () => dir.Lock(name));
            Assert.Throws<ArgumentException>(() => dir.Rename(name, "ok"));
            Assert.Empty(Directory.GetFileSystemEntries(tmp.Path));
        }

        [Fact]
        public void NullNamesAreArgumentNullExceptions()
        {
            using var tmp = new TempDir();
            using var dir = NativeDirectory.Open(tmp.Path);
            Assert.Throws<ArgumentNullException>("name", () => dir.FileExists(null!));
            Assert.Throws<ArgumentNullException>("to", () => dir.Rename("a", null!));
            Assert.Throws<ArgumentNullException>("names", () => dir.Sync(null!));
            Assert.Throws<ArgumentNullException>("path", () => NativeDirectory.Open(null!));
        }

        [Fact]
        public void LongestValidNameWorks()
        {
            using var tmp = new TempDir();
            using var dir = NativeDirectory.Open(tmp.Path);
            string name = new string('é', 127) + "x"; // 255 UTF-8 bytes
            using (var o = dir.CreateOutput(name))
                o.WriteByte(7);
            Assert.Equal(1, dir.FileLength(name));
        }

        [Fact]
        public void DisposedDirectoryLeavesItsFilesWorking()
        {
            using var tmp = new TempDir();
            File.WriteAllBytes(tmp.File("in"), Data.Make(100));
            var dir = NativeDirectory.Open(tmp.Path);
            using NativeInput input = dir.OpenInput("in");
            using NativeOutput output = dir.CreateOutput("out");
            dir.Dispose();
            dir.Dispose(); // twice is harmless
            Assert.Throws<ObjectDisposedException>(() => dir.ListAll());
            Assert.Throws<ObjectDisposedException>(() => dir.FileExists("in"));
            Assert.Throws<ObjectDisposedException>(() => dir.OpenInput("in"));
            Assert.Equal(Data.Make(100)[42], input.GetWindow(42)[0]);
            output.Write(new byte[] { 1, 2 });
            output.Dispose();
            Assert.Equal(new byte[] { 1, 2 }, File.ReadAllBytes(tmp.File("out")));
        }
    }
}
