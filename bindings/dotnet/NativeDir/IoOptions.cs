using System;
using Native = NativeDir.Interop.nativedir;

namespace NativeDir
{
    // The values are the header's own, taken from the SWIG-generated constants: never restated.
    /// <summary>How an input is read or an output written (the library's ND_IO_* flags).</summary>
    [Flags]
    public enum IoOptions : uint
    {
        /// <summary>Buffered through the page cache with the library's default buffer.</summary>
        None = 0,
        /// <summary>Access advice: random reads (small buffer, no read-ahead).</summary>
        Random = Native.ND_IO_RANDOM,
        /// <summary>Access advice: sequential reads (large buffer, read-ahead).</summary>
        Sequential = Native.ND_IO_SEQUENTIAL,
        /// <summary>Read or written once in bulk (merges): direct I/O where the file system allows
        /// it, otherwise buffered without polluting the page cache.</summary>
        Merge = Native.ND_IO_MERGE,
        /// <summary>Serve reads from a memory mapping.</summary>
        Mapped = Native.ND_IO_MMAP,
        /// <summary>Fault the mapping in, or read ahead, when the input opens.</summary>
        Preload = Native.ND_IO_PRELOAD,
        /// <summary>Fail with <see cref="NotSupportedException"/> instead of falling back when
        /// direct I/O is refused.</summary>
        RequireDirect = Native.ND_IO_REQUIRE_DIRECT,
        /// <summary>Creating an output replaces an existing file instead of failing.</summary>
        Overwrite = Native.ND_IO_OVERWRITE,
        /// <summary>Each read is of bytes not read again soon (a search's stored fields, per hit):
        /// while the page cache thrashes (<see cref="IoPolicy.MemoryMode"/>), the input's reads
        /// leave none of its pages cached, so they do not evict the pages that are read again.</summary>
        NoReuse = Native.ND_IO_NOREUSE,
        /// <summary>A search input: while its directory's files fit in the page cache the process
        /// may use, the whole file is read into the cache at open, without waiting for it (an
        /// index that fits is then as fast from its first query as once warm).</summary>
        Warm = Native.ND_IO_WARM,
    }

    /// <summary>What an input or output actually does (it may differ from what was asked).</summary>
    public enum IoStrategy
    {
        /// <summary>Page cache and a library buffer.</summary>
        Buffered = Native.ND_STRATEGY_BUFFERED,
        /// <summary>A memory mapping.</summary>
        Mapped = Native.ND_STRATEGY_MAPPED,
        /// <summary>Direct I/O that bypasses the page cache.</summary>
        Direct = Native.ND_STRATEGY_DIRECT,
        /// <summary>Buffered, dropping from the page cache what it brought in.</summary>
        DropBehind = Native.ND_STRATEGY_DROP_BEHIND,
    }
}
