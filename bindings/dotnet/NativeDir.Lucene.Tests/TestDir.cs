using System;
using System.IO;

namespace NativeDir.Lucene.Tests
{
    /// <summary>A fresh directory under the system temp folder, removed on dispose.</summary>
    internal sealed class TestDir : IDisposable
    {
        public TestDir(string tag)
        {
            Path = System.IO.Path.Combine(System.IO.Path.GetTempPath(),
                $"ndlucene-{tag}-{Environment.ProcessId}-{Guid.NewGuid():N}");
            System.IO.Directory.CreateDirectory(Path);
        }

        public string Path { get; }

        public string Sub(string name)
        {
            string p = System.IO.Path.Combine(Path, name);
            System.IO.Directory.CreateDirectory(p);
            return p;
        }

        public void Dispose()
        {
            try
            {
                System.IO.Directory.Delete(Path, recursive: true);
            }
            catch (IOException)
            {
                // a mapping still held until the next GC keeps nothing from deletion on Linux;
                // anything else left behind is only a temp folder
            }
        }
    }
}
