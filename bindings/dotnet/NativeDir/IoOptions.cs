using System;

namespace NativeDir
{
    /// <summary>How an input is read or an output written (the library's ND_IO_* flags).</summary>
    [Flags]
    public enum IoOptions : uint
    {
        /// <summary>Buffered through the page cache with the library's default buffer.</summary>
        None = 0,
        /// <summary>Access advice: random reads (small buffer, no read-ahead).</summary>
        Random = 1,
        /// <summary>Access advice: sequential reads (large buffer, read-ahead).</summary>
        Sequential = 2,
        /// <summary>Read or written once in bulk (merges): direct I/O where the file system allows
        /// it, otherwise buffered without polluting the page cache.</summary>
        Merge = 4,
        /// <summary>Serve reads from a memory mapping.</summary>
        Mapped = 8,
        /// <summary>Fault the mapping in, or read ahead, when the input opens.</summary>
        Preload = 16,
        /// <summary>Fail with <see cref="NotSupportedException"/> instead of falling back when
        /// direct I/O is refused.</summary>
        RequireDirect = 32,
        /// <summary>Creating an output replaces an existing file instead of failing.</summary>
        Overwrite = 64,
    }

    /// <summary>What an input or output actually does (it may differ from what was asked).</summary>
    public enum IoStrategy
    {
        /// <summary>Page cache and a library buffer.</summary>
        Buffered = 1,
        /// <summary>A memory mapping.</summary>
        Mapped = 2,
        /// <summary>Direct I/O that bypasses the page cache.</summary>
        Direct = 3,
        /// <summary>Buffered, dropping from the page cache what it brought in.</summary>
        DropBehind = 4,
    }
}
