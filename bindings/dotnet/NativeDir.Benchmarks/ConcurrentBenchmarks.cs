using System;
using System.IO;
using System.Threading;
using BenchmarkDotNet.Attributes;

namespace NativeDir.Benchmarks
{
    /// <summary>The random reads split over two threads, each through its own clone (its own
    /// cursor and window), against one thread doing all of them: the ratio is the scaling the
    /// library allows (0.5 is perfect on two idle cores).</summary>
    public class ConcurrentCloneReads : ReadFixture
    {
        private NativeInput[] _bufferedClones = null!, _mappedClones = null!;
        private Helper _helper = null!;

        /// <summary>The two-thread rows need both CPUs; the one-thread rows run where they fall.</summary>
        protected override bool SingleThreaded => false;

        protected override void OnOpened()
        {
            _helper = new Helper();
            _bufferedClones = new[] { RandomBuffered.Clone(), RandomBuffered.Clone() };
            _mappedClones = new[] { Mapped.Clone(), Mapped.Clone() };
        }

        protected override void OnClosing()
        {
            _helper.Dispose();
            foreach (NativeInput c in _bufferedClones)
                c.Dispose();
            foreach (NativeInput c in _mappedClones)
                c.Dispose();
        }

        [Benchmark(Baseline = true)]
        [Row("random (buffered) 1 thread", Note = "Seek+ReadBytes of 64 bytes, random advice")]
        public long OneThreadBuffered() => Cursor(_bufferedClones[0], 0, Workload.Offsets.Length);

        [Benchmark]
        [Row("random (buffered) 2 threads, clone each", Baseline = nameof(OneThreadBuffered))]
        public long TwoThreadsBuffered() => Split(_bufferedClones);

        [Benchmark]
        [Row("random (mapped) 1 thread")]
        public long OneThreadMapped() => Cursor(_mappedClones[0], 0, Workload.Offsets.Length);

        [Benchmark]
        [Row("random (mapped) 2 threads, clone each", Baseline = nameof(OneThreadMapped))]
        public long TwoThreadsMapped() => Split(_mappedClones);

        [Benchmark]
        [Row("RandomAccess.Read 1 thread")]
        public long OneThreadRandomAccess() => Positional(0, Workload.Offsets.Length);

        [Benchmark]
        [Row("RandomAccess.Read 2 threads, one handle", Baseline = nameof(OneThreadRandomAccess),
             Note = "the runtime's own scaling")]
        public long TwoThreadsRandomAccess() => TwoThreads(half => Positional(half * (Workload.Offsets.Length / 2), Workload.Offsets.Length / 2));

        private long Split(NativeInput[] clones) =>
            TwoThreads(half => Cursor(clones[half], half * (Workload.Offsets.Length / 2), Workload.Offsets.Length / 2));

        private long TwoThreads(Func<int, long> work)
        {
            _helper.Start(work);
            long mine = work(0);
            return mine + _helper.Wait();
        }

        /// <summary>A second thread started once, so an operation measures reads, not thread
        /// creation.</summary>
        private sealed class Helper : IDisposable
        {
            private readonly Thread _thread;
            private readonly SemaphoreSlim _go = new(0), _done = new(0);
            private Func<int, long>? _work;
            private long _result;

            public Helper()
            {
                _thread = new Thread(Loop) { IsBackground = true, Name = "bench helper" };
                _thread.Start();
            }

            public void Start(Func<int, long> work)
            {
                _work = work;
                _go.Release();
            }

            public long Wait()
            {
                _done.Wait();
                return _result;
            }

            private void Loop()
            {
                while (true)
                {
                    _go.Wait();
                    Func<int, long>? work = _work;
                    if (work == null)
                        return;
                    _result = work(1);
                    _done.Release();
                }
            }

            public void Dispose()
            {
                _work = null;
                _go.Release();
                _thread.Join();
            }
        }

        private static long Cursor(NativeInput input, int first, int count)
        {
            Span<byte> buf = stackalloc byte[Workload.RandomReadSize];
            long sum = 0;
            long[] offsets = Workload.Offsets;
            for (int i = first; i < first + count; i++)
            {
                input.Seek(offsets[i]);
                input.ReadBytes(buf);
                sum += Mix(buf);
            }
            return sum;
        }

        private long Positional(int first, int count)
        {
            Span<byte> buf = stackalloc byte[Workload.RandomReadSize];
            long sum = 0;
            long[] offsets = Workload.Offsets;
            for (int i = first; i < first + count; i++)
            {
                RandomAccess.Read(Handle, buf, offsets[i]);
                sum += Mix(buf);
            }
            return sum;
        }
    }
}
