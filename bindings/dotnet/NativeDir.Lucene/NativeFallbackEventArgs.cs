using System;
using Lucene.Net.Store;

namespace NativeDir.Lucene
{
    /// <summary>What <see cref="NativeFSDirectory.OpenOrFallback(string)"/> chose instead of a
    /// <see cref="NativeFSDirectory"/>, and why.</summary>
    public sealed class NativeFallbackEventArgs : EventArgs
    {
        internal NativeFallbackEventArgs(string path, FSDirectory directory, NativeDirUnavailableException reason)
        {
            Path = path;
            Directory = directory;
            Reason = reason;
        }

        /// <summary>The index directory's full path.</summary>
        public string Path { get; }

        /// <summary>The directory returned: Lucene.NET's own choice (FSDirectory.Open).</summary>
        public FSDirectory Directory { get; }

        /// <summary>Why nativedir's native library does not load here.</summary>
        public NativeDirUnavailableException Reason { get; }
    }
}
