using System;
using System.Runtime.CompilerServices;
using Native = NativeDir.Interop.nativedir;

namespace NativeDir
{
    /// <summary>What a search engine is about to do with a file (the library's ND_USE_* values):
    /// a Lucene directory maps its IOContext onto one of these.</summary>
    public enum FileUse
    {
        /// <summary>Read while the index is open (Lucene: DEFAULT, READ).</summary>
        Search = Native.ND_USE_SEARCH,
        /// <summary>Read front to back once (Lucene: READONCE: checksums, commit points, segment infos).</summary>
        ReadOnce = Native.ND_USE_READ_ONCE,
        /// <summary>Read or written once, in bulk, by a merge (Lucene: MERGE, with its estimated size).</summary>
        Merge = Native.ND_USE_MERGE,
        /// <summary>Written by a flush of new documents (Lucene: FLUSH).</summary>
        Flush = Native.ND_USE_FLUSH,
    }

    /// <summary>How the process's mapped inputs are read (the library's ND_MEMORY_* values).</summary>
    public enum MemoryMode
    {
        /// <summary>Through the mapping while the page cache the process may use holds what is
        /// read, with positional reads while it thrashes (the default).</summary>
        Auto = Native.ND_MEMORY_AUTO,
        /// <summary>Always through the mapping.</summary>
        Mapped = Native.ND_MEMORY_MAPPED,
        /// <summary>Always with positional reads through the file's descriptor.</summary>
        Positional = Native.ND_MEMORY_POSITIONAL,
    }

    /// <summary>
    /// The library's read and write policy (nd_policy_input, nd_policy_output): which
    /// <see cref="IoOptions"/> a search engine's file gets for what the engine is about to do with
    /// it. The rules live in the C library, so every binding's directory (Lucene.NET's, Lucene's
    /// for Java) follows the same ones; see docs/strategies.md for what they are and why.
    /// </summary>
    public static unsafe class IoPolicy
    {
        /// <summary>A merge estimated at or above this many bytes reads and writes with direct I/O.</summary>
        public const long DefaultMinBytesDirect = Native.ND_POLICY_MIN_DIRECT;

        /// <summary>The flags to open the file <paramref name="name"/> with as an input used as
        /// <paramref name="use"/>: the use's flags plus the file's own access advice (none when
        /// <paramref name="name"/> is null). <paramref name="mergeBytes"/> is a merge's estimated
        /// size; <paramref name="minBytesDirect"/> the size from which a merge bypasses the page
        /// cache (-1: <see cref="DefaultMinBytesDirect"/>).</summary>
        /// <exception cref="ArgumentException">An invalid name, use or threshold.</exception>
        public static IoOptions Input(FileUse use, string? name = null, long mergeBytes = 0, long minBytesDirect = -1)
            => Ask(output: false, use, name, mergeBytes, minBytesDirect);

        /// <summary>How the process's mapped inputs are read (nd_memory_mode): by default
        /// <see cref="MemoryMode.Auto"/>, which reads a mapped file with positional reads while the
        /// page cache the process may use (its memory cgroup's, else the machine's) thrashes and
        /// through the mapping otherwise. Process-wide; a change reaches each reader at its next
        /// window (at most 4 MiB on).</summary>
        public static MemoryMode MemoryMode
        {
            get => (MemoryMode)Check(Native.nd_memory_mode(-1));
            set => Check(Native.nd_memory_mode((int)value));
        }

        private static int Check(int rc) => rc >= 0 ? rc : throw Errors.For(rc);

        /// <summary>The flags to create the file <paramref name="name"/> with as an output written as
        /// <paramref name="use"/> (arguments as for <see cref="Input"/>).</summary>
        /// <exception cref="ArgumentException">An invalid name, use or threshold.</exception>
        public static IoOptions Output(FileUse use, string? name = null, long mergeBytes = 0, long minBytesDirect = -1)
            => Ask(output: true, use, name, mergeBytes, minBytesDirect);

        [SkipLocalsInit]
        private static IoOptions Ask(bool output, FileUse use, string? name, long mergeBytes, long minBytesDirect)
        {
            Span<byte> scratch = stackalloc byte[Utf8.NameScratch];
            Span<byte> n = name == null ? default : Utf8.Encode(name, scratch, nameof(name));
            int rc;
            fixed (byte* p = n)
            {
                byte* at = name == null ? null : p;
                rc = output ? Native.nd_policy_output(0, at, (int)use, mergeBytes, minBytesDirect)
                    : Native.nd_policy_input(0, at, (int)use, mergeBytes, minBytesDirect);
            }
            return rc >= 0 ? (IoOptions)rc : throw Errors.For(rc, name ?? "");
        }
    }
}
