using System;
using System.IO;
using System.Linq;
using Lucene.Net.Store;
using NativeDir;
using NativeDir.Lucene;

// fallback <path>: NativeFSDirectory.OpenOrFallback, then the library indexes and searches.
// strict <path>:   new NativeFSDirectory twice; each attempt reports what it threw.
static class Program
{
    static int Main(string[] args)
    {
        string mode = args[0], path = args[1];
        if (System.IO.Directory.Exists(path))
            System.IO.Directory.Delete(path, true);
        if (mode == "fallback")
        {
            int events = 0;
            NativeFSDirectory.FellBack += (_, e) =>
            {
                events++;
                Console.WriteLine($"event: fell back to {e.Directory.GetType().Name} at {e.Path}");
            };
            using (FSDirectory dir = NativeFSDirectory.OpenOrFallback(new DirectoryInfo(path), out NativeDirUnavailableException why))
            {
                Console.WriteLine($"chose: {dir.GetType().Name}");
                if (why != null)
                    Console.WriteLine($"reason: {why.Message}");
                if ((why != null) != (events == 1) || (why == null) != (dir is NativeFSDirectory))
                    throw new InvalidOperationException("the reason, the event and the type disagree");
                Console.WriteLine($"hits: {NetFxSearch.IndexAndSearch.Run(dir)}");
            }
            return 0;
        }
        for (int attempt = 1; attempt <= 2; attempt++)
        {
            try
            {
                using (var dir = new NativeFSDirectory(path))
                    Console.WriteLine($"attempt {attempt}: hits {NetFxSearch.IndexAndSearch.Run(dir)}");
            }
            catch (Exception e)
            {
                Console.WriteLine($"attempt {attempt}: {e.GetType().FullName}: {e.Message}");
                if (e is NativeDirUnavailableException u)
                {
                    Console.WriteLine($"attempt {attempt} rid: {u.RuntimeIdentifier}");
                    Console.WriteLine($"attempt {attempt} searched: {string.Join("|", u.SearchedPaths)}");
                    Console.WriteLine($"attempt {attempt} packaged: {string.Join(",", u.PackagedRuntimeIdentifiers.OrderBy(r => r, StringComparer.Ordinal))}");
                    Console.WriteLine($"attempt {attempt} reason: {u.LoaderReason}");
                }
            }
        }
        return 0;
    }
}
