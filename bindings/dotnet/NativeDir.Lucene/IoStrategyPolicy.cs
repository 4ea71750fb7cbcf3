using Lucene.Net.Store;

namespace NativeDir.Lucene
{
    /// <summary>
    /// Which nativedir flags each Lucene <see cref="IOContext"/> gets (see README.md, "Strategy
    /// per IOContext", for the measurements behind it). Subclass to change the choice.
    /// </summary>
    public class IoStrategyPolicy
    {
        /// <summary>Like NativeUnixDirectory's minBytesDirect: merges estimated below this write
        /// through the page cache (small merges are cheap to keep cached and direct I/O's fixed
        /// costs dominate them).</summary>
        public const long DefaultMinBytesDirect = 10L << 20;

        /// <summary>A policy with the given direct-I/O threshold for merge outputs.</summary>
        public IoStrategyPolicy(long minBytesDirect = DefaultMinBytesDirect)
        {
            MinBytesDirect = minBytesDirect;
        }

        /// <summary>Merges estimated at or above this many bytes write with direct I/O.</summary>
        public long MinBytesDirect { get; }

        /// <summary>Flags for an output created in <paramref name="context"/>. Large merges write
        /// with <see cref="IoOptions.Merge"/> (direct I/O, or buffered with drop-behind where the
        /// file system refuses it) so a merge does not evict the pages searches are reading.</summary>
        public virtual IoOptions ForOutput(IOContext context)
        {
            if (context != null && context.Context == IOContext.UsageContext.MERGE
                && context.MergeInfo != null && context.MergeInfo.EstimatedMergeBytes >= MinBytesDirect)
                return IoOptions.Merge;
            return IoOptions.None;
        }

        /// <summary>Flags for an input opened in <paramref name="context"/>: read-once inputs
        /// (checksums, segments_N, .si) read sequentially through the library's buffer instead of
        /// mapping the file; everything else (searches, and merges reading segments that searches
        /// also read) is mapped, so byte reads are loads from the page cache.</summary>
        public virtual IoOptions ForInput(IOContext context)
        {
            if (context != null && context.ReadOnce)
                return IoOptions.Sequential;
            if (context != null && context.Context == IOContext.UsageContext.MERGE)
                return IoOptions.Mapped | IoOptions.Sequential;
            return IoOptions.Mapped;
        }

        /// <summary>The managed buffer of an input that is not mapped (and of each of its clones);
        /// 0 (the default) takes the library's size for the file as opened
        /// (<see cref="NativeInput.BufferSize"/>: from the access flags <see cref="ForInput"/>
        /// chose, so a read-once or merge input gets a large one), the one policy every binding
        /// shares.</summary>
        public virtual int InputBufferSize(IOContext context) => 0;

        /// <summary>The managed buffer of an output: large for direct-I/O merges (fewer, bigger
        /// aligned writes), 64 KiB otherwise.</summary>
        public virtual int OutputBufferSize(IoOptions flags) =>
            (flags & IoOptions.Merge) != 0 ? 1 << 20 : 64 * 1024;
    }
}
