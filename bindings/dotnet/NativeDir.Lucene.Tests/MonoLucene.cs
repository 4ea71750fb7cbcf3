using System;
using Lucene.Net.Store;
using NativeDir.Testing;
using LuceneDirectory = Lucene.Net.Store.Directory;

namespace NativeDir.Lucene.Tests
{
    /// <summary>
    /// Lucene.NET 4.8 on Mono fails by itself on some indexes (README.md, "Mono"): a test whose
    /// index cannot be written there with Lucene.NET's own RAMDirectory either is skipped on Mono,
    /// with the reason; one that fails only on NativeFSDirectory still fails.
    /// </summary>
    internal static class MonoLucene
    {
        public static void Write(LuceneDirectory dir, Action<LuceneDirectory> write)
        {
            try
            {
                write(dir);
            }
            catch (Exception e) when (Platform.Mono != null)
            {
                string builtIn = "no exception";
                try
                {
                    using var ram = new RAMDirectory();
                    write(ram);
                }
                catch (Exception r)
                {
                    builtIn = r.GetType().Name;
                }
                if (builtIn == e.GetType().Name)
                    Platform.SkipOnMono($"Lucene.NET itself cannot write this index here: {builtIn} with its own RAMDirectory too ({e.Message})");
                throw;
            }
        }
    }
}
