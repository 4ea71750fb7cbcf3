using System;
using System.IO;
using System.Threading;
using Xunit;

namespace NativeDir.Tests
{
    /// <summary>Dispose, use after dispose, clones across threads, and a reader racing Dispose:
    /// every outcome is a value or a managed exception, never a crash.</summary>
    public class LifetimeTests : DataFileTests
    {
        private const int Size = 1 << 20;

        public LifetimeTests() : base(Size, seed: 11) { }

        [Theory]
        [InlineData(IoOptions.None)]
        [InlineData(IoOptions.Mapped)]
        public void UseAfterDisposeThrowsObjectDisposed(IoOptions options)
        {
            NativeInput input = _dir.OpenInput("data", options);
            Assert.Equal(_data[0], input.ReadByte()); // a window is cached now
            input.Dispose();
            Assert.True(input.NativeReleased);
            input.Dispose();
            Assert.Throws<ObjectDisposedException>(() => input.ReadByte());
            Assert.Throws<ObjectDisposedException>(() => input.ReadBytes(new byte[4]));
            Assert.Throws<ObjectDisposedException>(() => input.ReadBytes(0, new byte[4]));
            Assert.Throws<ObjectDisposedException>(() => input.GetWindow(0));
            Assert.Throws<ObjectDisposedException>(() => input.Seek(0));
            Assert.Throws<ObjectDisposedException>(() => input.Clone());
            Assert.Throws<ObjectDisposedException>(() => input.Slice(0, 1));
            Assert.Throws<ObjectDisposedException>(() => input.Length);
            Assert.Throws<ObjectDisposedException>(() => input.Strategy);
        }

        [Fact]
        public void DisposeWithoutAnyReadClosesAtOnce()
        {
            NativeInput input = _dir.OpenInput("data");
            input.ReadBytes(0, new byte[8]);
            input.Dispose();
            Assert.True(input.NativeReleased);
        }

        [Theory]
        [InlineData(IoOptions.None)]
        [InlineData(IoOptions.Mapped)]
        public void DisposeOnAnotherThreadIsCompletedByTheReadersNextCall(IoOptions options)
        {
            NativeInput input = _dir.OpenInput("data", options);
            Assert.Equal(_data[0], input.ReadByte()); // this thread's window is pinned now
            ReadOnlySpan<byte> window = input.GetWindow(0);
            OnAnotherThread(input.Dispose);
            Assert.True(input.NativeReleased); // nd_close ran on the other thread...
            // ...and the file went with it (the last input of the file): no descriptor, no mapping
            Assert.False(NativeFiles.Holds(_tmp.File("data")));
            // yet the window's memory stays until this thread lets go of it: a buffer keeps its
            // bytes, a mapping's addresses read zeros now
            Assert.True(WindowReads(window.Slice(0, 4096), _data.AsSpan(0, 4096), options));
            Assert.Throws<ObjectDisposedException>(() => input.ReadByte());
            Assert.False(NativeFiles.Holds(_tmp.File("data")));
        }

        [Theory]
        [InlineData(IoOptions.None)]
        [InlineData(IoOptions.Mapped)]
        public void DisposeOnTheReadingThreadLeavesTheWindowToTheCursorsNextCall(IoOptions options)
        {
            NativeInput input = _dir.OpenInput("data", options);
            Assert.Equal(_data[0], input.ReadByte());
            input.Dispose(); // this thread read last, but the library cannot know nobody else reads
            Assert.True(input.NativeReleased);
            Assert.False(NativeFiles.Holds(_tmp.File("data"))); // the window's memory stays, the file goes
            Assert.Throws<ObjectDisposedException>(() => input.ReadByte()); // releases the window
            Assert.False(NativeFiles.Holds(_tmp.File("data")));

            input = _dir.OpenInput("data", options);
            Assert.Equal(_data[0], input.ReadByte());
            input.ReleaseWindow(); // the reader says it is done: Dispose then releases everything
            input.Dispose();
            Assert.False(NativeFiles.Holds(_tmp.File("data")));
        }

        /// <summary>Whether a window read after its file closed still reads what it should: a
        /// buffer's bytes, or the zeros that replace a mapping at the file's close.</summary>
        private static bool WindowReads(ReadOnlySpan<byte> window, ReadOnlySpan<byte> data, IoOptions options)
        {
            if ((options & IoOptions.Mapped) == 0)
                return window.SequenceEqual(data);
            foreach (byte b in window)
                if (b != 0)
                    return false;
            return true;
        }

        /// <summary>Deletes "data", writes new bytes under its name at once and reads them back:
        /// what Lucene does right after it disposes a segment's inputs. On Windows a file still
        /// open refuses the deletion, or keeps its name taken until its last handle closes.</summary>
        private void ReplaceDataAtOnce(int seed)
        {
            string path = _tmp.File("data");
            File.Delete(path);
            byte[] fresh = Data.Make(5000, seed);
            File.WriteAllBytes(path, fresh);
            Assert.Equal(fresh, File.ReadAllBytes(path));
            using NativeInput again = _dir.OpenInput("data");
            var back = new byte[fresh.Length];
            again.ReadBytes(0, back);
            Assert.Equal(fresh, back);
        }

        [Theory]
        [InlineData(IoOptions.None)]
        [InlineData(IoOptions.Random)]
        [InlineData(IoOptions.Sequential)]
        [InlineData(IoOptions.Merge)]
        public void DisposeLetsGoOfTheFileAtOnceThoughAWindowIsPinned(IoOptions options)
        {
            NativeInput input = _dir.OpenInput("data", options);
            Assert.Equal(_data[0], input.ReadByte()); // through the library's window
            var buf = new byte[3000];
            input.Seek(500_000);
            input.ReadBytes(buf); // smaller than the buffer: through windows too
            Assert.True(buf.AsSpan().SequenceEqual(_data.AsSpan(500_000, 3000)));
            ReadOnlySpan<byte> window = input.GetWindow(200_000);
            Assert.True(NativeFiles.Holds(_tmp.File("data")) || !NativeFiles.CanTell);
            input.Dispose(); // no ReleaseWindow: the window stays pinned for its reader...
            // ...but the file does not wait for it (Linux: no descriptor left)
            Assert.False(NativeFiles.Holds(_tmp.File("data")));
            Assert.True(window.Slice(0, 64).SequenceEqual(_data.AsSpan(200_000, 64)));
            ReplaceDataAtOnce(40);
            Assert.True(window.Slice(0, 64).SequenceEqual(_data.AsSpan(200_000, 64))); // not the file
            Assert.Throws<ObjectDisposedException>(() => input.ReadByte()); // releases the window
        }

        [Theory]
        [InlineData(IoOptions.None)]
        [InlineData(IoOptions.Merge)]
        public void DisposingAClonePinnedLeavesTheFileToTheOthers(IoOptions options)
        {
            NativeInput input = _dir.OpenInput("data", options);
            NativeInput clone = input.Clone();
            NativeInput slice = input.Slice(4096, Size - 8192);
            clone.Seek(300_000);
            Assert.Equal(_data[300_000], clone.ReadByte());
            Assert.Equal(_data[4096 + 10], slice.GetWindow(10)[0]);
            clone.Dispose();
            Assert.True(NativeFiles.Holds(_tmp.File("data")) || !NativeFiles.CanTell); // the others read it
            input.Seek(700_000);
            Assert.Equal(_data[700_000], input.ReadByte());
            var buf = new byte[3000];
            slice.ReadBytes(600_000, buf);
            Assert.True(buf.AsSpan().SequenceEqual(_data.AsSpan(4096 + 600_000, 3000)));
            input.Dispose();
            Assert.True(NativeFiles.Holds(_tmp.File("data")) || !NativeFiles.CanTell); // the slice reads it
            slice.Seek(20);
            Assert.Equal(_data[4096 + 20], slice.ReadByte());
            slice.Dispose();
            Assert.False(NativeFiles.Holds(_tmp.File("data")));
            ReplaceDataAtOnce(41);
        }

        [Theory]
        [InlineData(IoOptions.None)]
        [InlineData(IoOptions.Mapped)]
        public unsafe void WindowHandedToAnotherThreadOutlivesItsTakersDispose(IoOptions options)
        {
            // the input moves, window and all, to another thread that reads it while the thread
            // that took the window disposes it (that Dispose freed the window under the reader)
            NativeInput input = _dir.OpenInput("data", options);
            input.Seek(100);
            ReadOnlySpan<byte> w = input.GetWindow(100); // taken on this thread
            IntPtr p = (IntPtr)System.Runtime.CompilerServices.Unsafe.AsPointer(
                ref System.Runtime.InteropServices.MemoryMarshal.GetReference(w));
            int n = Math.Min(w.Length, 8192);
            using var disposed = new ManualResetEventSlim();
            bool right = false;
            Exception? after = null;
            var reader = new Thread(() =>
            {
                disposed.Wait();
                // still readable memory: the buffer's bytes, or a released mapping's zeros
                right = WindowReads(new ReadOnlySpan<byte>((byte*)p, n), _data.AsSpan(100, n), options);
                after = Record.Exception(() => input.ReadBytes(new byte[n + 1]));
            });
            reader.Start();
            input.Dispose();
            // another input of the same size takes a buffer now: freed memory would be reused here
            File.WriteAllBytes(_tmp.File("other"), Data.Make(Size, 12));
            using (NativeInput other = _dir.OpenInput("other", options))
            {
                other.ReadByte();
                disposed.Set();
                Assert.True(reader.Join(TimeSpan.FromSeconds(30)));
            }
            Assert.True(right);
            Assert.IsType<ObjectDisposedException>(after); // the reader's call released it
            Assert.False(NativeFiles.Holds(_tmp.File("data")));
        }

        [Theory]
        [InlineData(IoOptions.None)]
        [InlineData(IoOptions.Mapped)]
        public void AbandonedWindowIsReleasedByTheFinalizer(IoOptions options)
        {
            Platform.SkipOnMono("Mono's garbage collector scans stacks and registers conservatively: an object no longer referenced may stay alive through a stale word that looks like a pointer, so its release by the finalizer cannot be awaited");
            WeakReference released = AbandonAfterForeignDispose(options);
            for (int i = 0; i < 10 && (released.IsAlive || NativeFiles.Holds(_tmp.File("data"))); i++)
            {
                GC.Collect();
                GC.WaitForPendingFinalizers();
            }
            Assert.False(released.IsAlive);
            Assert.False(NativeFiles.Holds(_tmp.File("data")));
        }

        [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
        private WeakReference AbandonAfterForeignDispose(IoOptions options)
        {
            NativeInput input = _dir.OpenInput("data", options);
            input.ReadByte();
            OnAnotherThread(input.Dispose);
            Assert.True(input.NativeReleased);
            // the file went with the Dispose; what the finalizer has left to release is memory
            // (a buffer, a released mapping's addresses). Checked here, while the input is still
            // reachable
            Assert.False(NativeFiles.Holds(_tmp.File("data")));
            GC.KeepAlive(input);
            return new WeakReference(input);
        }

        [Theory]
        [InlineData(IoOptions.None)]
        [InlineData(IoOptions.Mapped)]
        [InlineData(IoOptions.Merge)]
        public void ConcurrentReadsThroughClones(IoOptions options)
        {
            using NativeInput input = _dir.OpenInput("data", options);
            const int threads = 4;
            var threadsRun = new Thread[threads];
            Exception? failure = null;
            for (int t = 0; t < threads; t++)
            {
                int seed = t;
                threadsRun[t] = new Thread(() =>
                {
                  try
                  {
                    using NativeInput clone = input.Clone();
                    var rnd = new Random(seed);
                    var buf = new byte[64];
                    for (int round = 0; round < 2; round++)
                    {
                        clone.Seek(0);
                        for (int i = 0; i < Size; i++)
                            if (clone.ReadByte() != _data[i])
                                throw new Exception($"clone {seed}: byte {i}");
                        for (int i = 0; i < 2000; i++)
                        {
                            int off = rnd.Next(Size - 64);
                            // positional reads on the shared input are thread-safe too
                            input.ReadBytes(off, buf);
                            if (!buf.AsSpan().SequenceEqual(_data.AsSpan(off, 64)))
                                throw new Exception($"shared input at {off}");
                        }
                    }
                  }
                  catch (Exception e)
                  {
                      failure = e;
                  }
                });
                threadsRun[t].Start();
            }
            foreach (Thread th in threadsRun)
                th.Join();
            Assert.Null(failure);
        }

        [Theory]
        [InlineData(IoOptions.None)]
        [InlineData(IoOptions.Mapped)]
        public void ReaderRacingDisposeNeverCrashes(IoOptions options)
        {
            int disposedSeen = 0, completed = 0;
            Exception? unexpected = null;
            for (int round = 0; round < 60; round++)
            {
                NativeInput input = _dir.OpenInput("data", options);
                using var started = new ManualResetEventSlim();
                int mode = round % 3;
                bool stoppedByDispose = false;
                var reader = new Thread(() =>
                {
                    var buf = new byte[256];
                    try
                    {
                        started.Set();
                        long sum = 0;
                        for (int pass = 0; pass < 50; pass++)
                        {
                            input.Seek(0);
                            for (int i = 0; i < Size; i++)
                            {
                                sum += mode switch
                                {
                                    0 => input.ReadByte(),
                                    1 => input.GetWindow(i)[0],
                                    _ => ReadPositional(input, i, buf),
                                };
                            }
                        }
                        Interlocked.Increment(ref completed);
                        GC.KeepAlive(sum);
                    }
                    catch (ObjectDisposedException)
                    {
                        Interlocked.Increment(ref disposedSeen);
                        stoppedByDispose = true;
                    }
                    catch (Exception e)
                    {
                        unexpected = e; // anything but ObjectDisposedException is a bug
                    }
                });
                reader.Start();
                started.Wait();
                Thread.SpinWait(round * 500);
                input.Dispose();
                Assert.True(reader.Join(TimeSpan.FromSeconds(30)), "the reader did not stop");
                Assert.Null(unexpected);
                Assert.True(input.NativeReleased, $"round {round}: the native handle was never closed");
                // a reader stopped by the dispose has let go of its window: nothing is left open
                if (stoppedByDispose)
                    Assert.False(NativeFiles.Holds(_tmp.File("data")), $"round {round}: the file is still open or mapped");
            }
            Assert.True(disposedSeen > 0, "no reader ever observed the dispose");
            Assert.Equal(60, disposedSeen + completed);
        }

        private static void OnAnotherThread(Action action)
        {
            var t = new Thread(() => action());
            t.Start();
            t.Join();
        }

        private static byte ReadPositional(NativeInput input, int i, byte[] buf)
        {
            input.ReadBytes(i, buf.AsSpan(0, 1));
            return buf[0];
        }
    }
}
