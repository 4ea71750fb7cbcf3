using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using Lucene.Net.Store;
using LuceneDirectory = Lucene.Net.Store.Directory;

namespace NativeDir.Lucene.Benchmarks
{
    /// <summary>
    /// --profile-index: where a directory's indexing time goes, call by call. The directory is
    /// wrapped so that every Directory and IndexOutput call is counted and timed (Stopwatch
    /// ticks); the same workload runs on each directory in turn. Under load the absolute times
    /// are noise, but the counts and the split between calls are not.
    /// </summary>
    internal sealed class CallProfile
    {
        private readonly Dictionary<string, (long Count, long Ticks, long Bytes)> _calls = new();

        internal void Add(string call, long ticks, long bytes = 0, long count = 1)
        {
            lock (_calls)
            {
                _calls.TryGetValue(call, out var c);
                _calls[call] = (c.Count + count, c.Ticks + ticks, c.Bytes + bytes);
            }
        }

        internal T Time<T>(string call, Func<T> f, long bytes = 0)
        {
            long t0 = Stopwatch.GetTimestamp();
            try
            {
                return f();
            }
            finally
            {
                Add(call, Stopwatch.GetTimestamp() - t0, bytes);
            }
        }

        internal void Time(string call, Action f, long bytes = 0)
        {
            long t0 = Stopwatch.GetTimestamp();
            try
            {
                f();
            }
            finally
            {
                Add(call, Stopwatch.GetTimestamp() - t0, bytes);
            }
        }

        internal void Print(string title, double totalMs)
        {
            Console.WriteLine($"{title}: {totalMs:F1} ms total");
            foreach (var (call, c) in _calls.OrderByDescending(kv => kv.Value.Ticks))
                Console.WriteLine($"  {call,-22} {c.Count,8} calls {c.Ticks * 1000.0 / Stopwatch.Frequency,9:F2} ms {c.Bytes,12} B");
        }

        internal static int Run(Dir[] kinds, int runs)
        {
            var docs = SearchWorkload.Corpus(Sizes.IndexDocs);
            foreach (Dir kind in kinds)
            {
                string p = Dirs.PathOf(kind, "profile-index");
                for (int r = 0; r < runs; r++)
                {
                    Dirs.Clear(p);
                    var prof = new CallProfile();
                    var sw = Stopwatch.StartNew();
                    using (var d = new CountingDirectory(Dirs.Open(kind, p), prof))
                        SearchWorkload.Index(d, docs);
                    if (r == runs - 1)
                        prof.Print($"{kind} index {docs.Count} docs (run {r + 1})", sw.Elapsed.TotalMilliseconds);
                }
            }
            return 0;
        }
    }

    /// <summary>Every call to the wrapped directory and its outputs, counted and timed.</summary>
    internal sealed class CountingDirectory : LuceneDirectory
    {
        private readonly LuceneDirectory _d;
        private readonly CallProfile _p;

        internal CountingDirectory(LuceneDirectory d, CallProfile p)
        {
            _d = d;
            _p = p;
        }

        public override string[] ListAll() => _p.Time("ListAll", () => _d.ListAll());
        [Obsolete]
        public override bool FileExists(string name) => _p.Time("FileExists", () => _d.FileExists(name));
        public override void DeleteFile(string name) => _p.Time("DeleteFile", () => _d.DeleteFile(name));
        public override long FileLength(string name) => _p.Time("FileLength", () => _d.FileLength(name));
        public override IndexOutput CreateOutput(string name, IOContext context) =>
            new CountingOutput(_p.Time("CreateOutput", () => _d.CreateOutput(name, context)), _p);
        public override void Sync(ICollection<string> names) => _p.Time("Sync", () => _d.Sync(names), names.Count);
        public override IndexInput OpenInput(string name, IOContext context) =>
            _p.Time("OpenInput", () => _d.OpenInput(name, context));
        public override Lock MakeLock(string name) => _p.Time("MakeLock", () => _d.MakeLock(name));
        public override void ClearLock(string name) => _d.ClearLock(name);
        public override void SetLockFactory(LockFactory lockFactory) => _d.SetLockFactory(lockFactory);
        public override LockFactory LockFactory => _d.LockFactory;
        public override string GetLockID() => _d.GetLockID();
        public override IndexInputSlicer CreateSlicer(string name, IOContext context) =>
            _p.Time("CreateSlicer", () => _d.CreateSlicer(name, context));

        protected override void Dispose(bool disposing)
        {
            if (disposing)
                _p.Time("Dispose(dir)", () => _d.Dispose());
        }
    }

    internal sealed class CountingOutput : IndexOutput
    {
        private readonly IndexOutput _o;
        private readonly CallProfile _p;
        private long _byteTicks, _bytes;
        private long _bytesTicks, _bytesCalls, _bytesBytes;

        internal CountingOutput(IndexOutput o, CallProfile p)
        {
            _o = o;
            _p = p;
        }

        // per-byte calls are too many to time one by one with the lock: sum them here
        public override void WriteByte(byte b)
        {
            long t0 = Stopwatch.GetTimestamp();
            _o.WriteByte(b);
            _byteTicks += Stopwatch.GetTimestamp() - t0;
            _bytes++;
        }

        public override void WriteBytes(byte[] b, int offset, int length)
        {
            long t0 = Stopwatch.GetTimestamp();
            _o.WriteBytes(b, offset, length);
            _bytesTicks += Stopwatch.GetTimestamp() - t0;
            _bytesCalls++;
            _bytesBytes += length;
        }

        public override void Flush() => _p.Time("Flush", () => _o.Flush());
        public override long Position => _o.Position;
        public override long Length => _o.Length;
        public override long Checksum => _p.Time("Checksum", () => _o.Checksum);
        [Obsolete]
        public override void Seek(long pos) => _p.Time("Seek", () => _o.Seek(pos));

        protected override void Dispose(bool disposing)
        {
            if (!disposing)
                return;
            _p.Time("Dispose(output)", () => _o.Dispose());
            _p.Add("WriteByte", _byteTicks, _bytes, _bytes);
            _p.Add("WriteBytes", _bytesTicks, _bytesBytes, _bytesCalls);
        }
    }
}
