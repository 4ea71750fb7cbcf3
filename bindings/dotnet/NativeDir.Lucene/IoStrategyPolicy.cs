using System;
using Lucene.Net.Index;
using Lucene.Net.Store;

namespace NativeDir.Lucene
{
    /// <summary>
    /// Which nativedir flags each Lucene <see cref="IOContext"/> gets (see README.md, "Strategy
    /// per IOContext", for the measurements behind it). The rules are the library's own
    /// (<see cref="IoPolicy"/>: one policy for every binding's directory); this class maps a
    /// Lucene.NET <see cref="IOContext"/> onto them. Subclass to change the choice.
    /// </summary>
    public class IoStrategyPolicy
    {
        /// <summary>Like NativeUnixDirectory's minBytesDirect: merges estimated below this write
        /// through the page cache (small merges are cheap to keep cached and direct I/O's fixed
        /// costs dominate them). The library's <see cref="IoPolicy.DefaultMinBytesDirect"/>.</summary>
        public const long DefaultMinBytesDirect = IoPolicy.DefaultMinBytesDirect;

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
        public virtual IoOptions ForOutput(IOContext context) =>
            IoPolicy.Output(UseOf(context), null, MergeBytes(context), MinBytesDirect);

        /// <summary>Flags for an input opened in <paramref name="context"/>: read-once inputs
        /// (checksums, segments_N, .si) read sequentially through the library's buffer instead of
        /// mapping the file; a large merge (estimated at or above <see cref="MinBytesDirect"/>, as
        /// for its output) reads its segments with <see cref="IoOptions.Merge"/>, direct I/O that
        /// neither fills the page cache nor evicts what searches hold there (a direct read goes
        /// to the device and leaves the cached pages as they are), as NativeUnixDirectory reads
        /// merges; everything else (searches, small merges of freshly flushed, still cached
        /// segments) is mapped, so byte reads are loads from the page cache, small merges with
        /// sequential advice. The access advice of a search input depends on the file, not only
        /// the context (see <see cref="ForInput(string, IOContext)"/>).</summary>
        public virtual IoOptions ForInput(IOContext context) =>
            IoPolicy.Input(UseOf(context), null, MergeBytes(context), MinBytesDirect);

        /// <summary>A merge estimated at or above <see cref="MinBytesDirect"/>: its inputs and
        /// outputs bypass the page cache.</summary>
        protected bool IsLargeMerge(IOContext? context) =>
            UseOf(context) == FileUse.Merge
            && (IoPolicy.Output(FileUse.Merge, null, MergeBytes(context), MinBytesDirect) & IoOptions.Merge) != 0;

        /// <summary>What Lucene is about to do with a file opened in <paramref name="context"/>.</summary>
        protected static FileUse UseOf(IOContext? context) =>
            context == null ? FileUse.Search
            : context.ReadOnce ? FileUse.ReadOnce
            : context.Context == IOContext.UsageContext.MERGE ? FileUse.Merge
            : context.Context == IOContext.UsageContext.FLUSH ? FileUse.Flush
            : FileUse.Search;

        private static long MergeBytes(IOContext? context) => context?.MergeInfo?.EstimatedMergeBytes ?? 0;

        /// <summary>Flags for the file <paramref name="name"/> (a file of the directory, or a
        /// sub-file of a compound file: its slice is advised on its own range of the mapping)
        /// opened in <paramref name="context"/>: <see cref="ForInput(IOContext)"/>, plus
        /// <see cref="AdviceFor"/> of the file when the context chose no advice (searches).
        /// This is what the directory calls.</summary>
        public virtual IoOptions ForInput(string name, IOContext context)
        {
            IoOptions flags = ForInput(context);
            if ((flags & (IoOptions.Random | IoOptions.Sequential | IoOptions.Merge)) == 0)
                flags |= AdviceFor(name);
            return flags;
        }

        /// <summary>The access advice a search gives the file <paramref name="name"/>:
        /// <see cref="IoOptions.Random"/> for the files Lucene.NET 4.8's codecs read one small
        /// block at an unpredictable offset per term or per hit: the terms dictionary
        /// (<c>.tim</c>), stored fields (<c>.fdt</c>), term vectors (<c>.tvd</c>) and doc values
        /// data (<c>.dvd</c>), where the OS's read-around (up to 128 KiB per page fault on a
        /// mapping) mostly reads bytes nobody asks for and, once the index is larger than memory,
        /// evicts the ones that were (measured: 22x fewer reads a second with the default advice;
        /// README.md, "Read advice per file"). <see cref="IoOptions.None"/> (the OS's normal
        /// read-ahead) for everything else: postings (<c>.doc</c>, <c>.pos</c>, <c>.pay</c>) are
        /// read forward from a term's start, and the rest is read whole at open (term index,
        /// stored-field and term-vector indexes, norms, field infos, live docs). Stored fields and
        /// term vectors also get <see cref="IoOptions.NoReuse"/>: a hit's chunk, read for a results
        /// page, is not kept while the page cache thrashes, so that it does not evict the terms
        /// and postings every query reads.</summary>
        public virtual IoOptions AdviceFor(string name)
        {
            IoOptions flags;
            try
            {
                flags = IoPolicy.Input(FileUse.Search, name);
            }
            catch (ArgumentException)
            {
                return IoOptions.None; // no file's name (a slice's description): no advice of its own
            }
            return flags & (IoOptions.Random | IoOptions.Sequential | IoOptions.NoReuse);
        }

        /// <summary>The managed buffer of an input that is not mapped (and of each of its clones);
        /// 0 (the default) takes the library's size for the file as opened
        /// (<see cref="NativeInput.BufferSize"/>: from the access flags <see cref="ForInput(string, IOContext)"/>
        /// chose, so a read-once or merge input gets a large one), the one policy every binding
        /// shares.</summary>
        public virtual int InputBufferSize(IOContext context) => 0;

        /// <summary>The managed buffer of an output; 0 (the default) takes the library's size for
        /// the output as created (<see cref="NativeOutput.BufferSize"/>: its buffer, or a direct
        /// output's staging buffer, so each full managed buffer is one native call), the one
        /// policy every binding shares.</summary>
        public virtual int OutputBufferSize(IoOptions flags) => 0;
    }
}
