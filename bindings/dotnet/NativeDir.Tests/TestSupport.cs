using System;
using System.IO;

namespace NativeDir.Tests
{
    /// <summary>A fresh directory under the system's temp folder, deleted afterwards.</summary>
    internal sealed class TempDir : IDisposable
    {
        public TempDir(string? root = null)
        {
            Path = System.IO.Path.Combine(root ?? System.IO.Path.GetTempPath(),
                "nd-dotnet-" + Guid.NewGuid().ToString("N"));
            Directory.CreateDirectory(Path);
        }

        public string Path { get; }

        public string File(string name) => System.IO.Path.Combine(Path, name);

        public void Dispose()
        {
            try
            {
                Directory.Delete(Path, recursive: true);
            }
            catch (IOException)
            {
                // a test that failed may still hold files open; the OS cleans temp
            }
        }
    }

    /// <summary>The fixture most tests share: a fresh directory holding "data" (deterministic
    /// bytes), opened as a <see cref="NativeDirectory"/>; both are removed at Dispose.</summary>
    public abstract class DataFileTests : IDisposable
    {
        private protected readonly TempDir _tmp = new();
        private protected readonly NativeDirectory _dir;
        private protected readonly byte[] _data;

        private protected DataFileTests(int size, int seed)
        {
            _data = Data.Make(size, seed);
            File.WriteAllBytes(_tmp.File("data"), _data);
            _dir = NativeDirectory.Open(_tmp.Path);
        }

        public void Dispose()
        {
            _dir.Dispose();
            _tmp.Dispose();
        }
    }

    /// <summary>Whether this process still has a file open or mapped (Linux: /proc/self). Other
    /// tests run in parallel, so ask only about a file of your own.</summary>
    internal static class NativeFiles
    {
        public static bool CanTell => OperatingSystem.IsLinux();

        public static bool Holds(string path)
        {
            if (!OperatingSystem.IsLinux())
                return false;
            path = System.IO.Path.GetFullPath(path);
            foreach (string line in File.ReadAllLines("/proc/self/maps"))
            {
                string[] f = line.Split(' ', 6, StringSplitOptions.RemoveEmptyEntries);
                if (f.Length == 6 && f[5].Trim() == path)
                    return true;
            }
            foreach (string fd in System.IO.Directory.GetFiles("/proc/self/fd"))
            {
                try
                {
                    if (new FileInfo(fd).LinkTarget == path)
                        return true;
                }
                catch (IOException)
                {
                    // closed meanwhile
                }
                catch (UnauthorizedAccessException)
                {
                }
            }
            return false;
        }
    }

    internal static class Data
    {
        /// <summary>Deterministic, position-dependent bytes, so a read at the wrong offset shows.</summary>
        public static byte[] Make(int length, int seed = 1)
        {
            var data = new byte[length];
            new Random(seed).NextBytes(data);
            return data;
        }

        /// <summary>Reference CRC-32 (zlib's polynomial), bit by bit.</summary>
        public static uint Crc32(ReadOnlySpan<byte> bytes)
        {
            uint crc = 0xFFFFFFFFu;
            foreach (byte b in bytes)
            {
                crc ^= b;
                for (int k = 0; k < 8; k++)
                    crc = (crc & 1) != 0 ? (crc >> 1) ^ 0xEDB88320u : crc >> 1;
            }
            return ~crc;
        }
    }
}
