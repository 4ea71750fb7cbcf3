using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using Lucene.Net.Store;
using Xunit;

namespace NativeDir.Lucene.Tests
{
    public class InputTests
    {
        /// <summary>Every context that reads differently: mapped, mapped for merges, buffered.</summary>
        public static IEnumerable<object[]> Contexts() => new[]
        {
            new object[] { "read" }, new object[] { "readonce" }, new object[] { "merge" },
        };

        private static IOContext Ctx(string name) => name switch
        {
            "read" => IOContext.READ,
            "readonce" => IOContext.READ_ONCE,
            _ => new IOContext(new MergeInfo(1, 64L << 20, false, 1)),
        };

        internal static byte[] Data(int n)
        {
            var b = new byte[n];
            new Random(5).NextBytes(b);
            return b;
        }

        [Theory, MemberData(nameof(Contexts))]
        public void ReadPastEofThrowsEndOfStream(string ctx)
        {
            using var t = new TestDir("eof");
            using var d = new NativeFSDirectory(t.Path);
            byte[] data = Data(10_000);
            DirectoryTests.Write(d, "f", data);
            using IndexInput i = d.OpenInput("f", Ctx(ctx));
            i.Seek(9_999);
            Assert.Equal(data[9_999], i.ReadByte());
            Assert.Throws<EndOfStreamException>(() => i.ReadByte());
            i.Seek(9_990);
            var buf = new byte[100_000];
            Assert.Throws<EndOfStreamException>(() => i.ReadBytes(buf, 0, 11));
            i.Seek(0);
            Assert.Throws<EndOfStreamException>(() => i.ReadBytes(buf, 0, 10_001));
            Assert.Throws<EndOfStreamException>(() => i.Seek(10_001));
            i.Seek(10_000); // seeking to the end is allowed
            Assert.Throws<EndOfStreamException>(() => i.ReadInt32());
            Assert.Throws<EndOfStreamException>(() => i.ReadVInt64());
            i.Seek(9_998);
            Assert.Throws<EndOfStreamException>(() => i.ReadInt64());
            Assert.Throws<ArgumentOutOfRangeException>(() => i.ReadBytes(buf, 99_990, 20));
        }

        [Theory, MemberData(nameof(Contexts))]
        public void ClonesHaveTheirOwnPosition(string ctx)
        {
            using var t = new TestDir("clone");
            using var d = new NativeFSDirectory(t.Path);
            byte[] data = Data(50_000);
            DirectoryTests.Write(d, "f", data);
            using IndexInput i = d.OpenInput("f", Ctx(ctx));
            i.Seek(1234);
            var c = (IndexInput)i.Clone();
            Assert.Equal(1234, c.Position); // a clone starts where its parent is
            Assert.Equal(data[1234], c.ReadByte());
            Assert.Equal(1234, i.Position);
            c.Seek(40_000);
            var c2 = (IndexInput)c.Clone();
            Assert.Equal(data[1234], i.ReadByte());
            Assert.Equal(data[40_000], c2.ReadByte());
            Assert.Equal(data[40_000], c.ReadByte());
            var big = new byte[20_000];
            i.Seek(100);
            i.ReadBytes(big, 0, big.Length);
            Assert.Equal(data.AsSpan(100, 20_000).ToArray(), big);
            Assert.Equal(data[40_001], c.ReadByte());
            c.Dispose(); // Lucene never does, but it must be harmless
            Assert.Equal(data[20_100], i.ReadByte());
        }

        [Theory, MemberData(nameof(Contexts))]
        public void SlicesSeeOnlyTheirRange(string ctx)
        {
            using var t = new TestDir("slice");
            using var d = new NativeFSDirectory(t.Path);
            byte[] data = Data(100_000);
            DirectoryTests.Write(d, "cfs", data);
            using global::Lucene.Net.Store.Directory.IndexInputSlicer slicer = d.CreateSlicer("cfs", Ctx(ctx));
            using IndexInput s = slicer.OpenSlice("sub", 1000, 5000);
            Assert.Equal(5000, s.Length);
            Assert.Equal(data[1000], s.ReadByte());
            s.Seek(4999);
            Assert.Equal(data[5999], s.ReadByte());
            Assert.Throws<EndOfStreamException>(() => s.ReadByte());
            var buf = new byte[5000];
            s.Seek(0);
            s.ReadBytes(buf, 0, 5000);
            Assert.Equal(data.AsSpan(1000, 5000).ToArray(), buf);
            var sc = (IndexInput)s.Clone();
            sc.Seek(10);
            Assert.Equal(data[1010], sc.ReadByte());
            Assert.Throws<EndOfStreamException>(() => sc.Seek(5001));
            // MMapDirectory's types: past the end a bad argument, a negative bound out of range
            Assert.Throws<ArgumentException>(() => slicer.OpenSlice("bad", 99_000, 2000));
            Assert.Throws<ArgumentOutOfRangeException>(() => slicer.OpenSlice("bad", -1, 10));
            // a slice outlives the slicer that made it (compound readers close them in any order)
            slicer.Dispose();
            s.Seek(2);
            Assert.Equal(data[1002], s.ReadByte());
        }

        [Fact]
        public void MultiByteValuesMatchLuceneEncoding()
        {
            using var t = new TestDir("values");
            using var d = new NativeFSDirectory(t.Path);
            using var ram = new RAMDirectory();
            var rnd = new Random(3);
            var ints = Enumerable.Range(0, 5000).Select(_ => rnd.Next(int.MinValue, int.MaxValue)).ToArray();
            var longs = ints.Select(x => ((long)x << 17) ^ rnd.NextInt64()).ToArray();
            foreach (global::Lucene.Net.Store.Directory dir in new global::Lucene.Net.Store.Directory[] { d, ram })
            {
                using IndexOutput o = dir.CreateOutput("v", IOContext.DEFAULT);
                for (int k = 0; k < ints.Length; k++)
                {
                    o.WriteInt32(ints[k]);
                    o.WriteVInt32(ints[k] & int.MaxValue);
                    o.WriteInt64(longs[k]);
                    o.WriteVInt64(longs[k] & long.MaxValue);
                    o.WriteInt16((short)ints[k]);
                    o.WriteString("s" + k);
                }
            }
            foreach (string ctx in new[] { "read", "readonce" })
            {
                using IndexInput i = d.OpenInput("v", Ctx(ctx));
                using IndexInput r = ram.OpenInput("v", IOContext.DEFAULT);
                Assert.Equal(r.Length, i.Length);
                for (int k = 0; k < ints.Length; k++)
                {
                    Assert.Equal(r.ReadInt32(), i.ReadInt32());
                    Assert.Equal(r.ReadVInt32(), i.ReadVInt32());
                    Assert.Equal(r.ReadInt64(), i.ReadInt64());
                    Assert.Equal(r.ReadVInt64(), i.ReadVInt64());
                    Assert.Equal(r.ReadInt16(), i.ReadInt16());
                    Assert.Equal(r.ReadString(), i.ReadString());
                }
                Assert.Equal(i.Length, i.Position);
            }
        }

        [Fact]
        public void MalformedVIntIsRefused()
        {
            using var t = new TestDir("vint");
            using var d = new NativeFSDirectory(t.Path);
            DirectoryTests.Write(d, "bad", new byte[] { 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0, 0, 0, 0, 0, 0 });
            using IndexInput i = d.OpenInput("bad", IOContext.READ);
            Assert.Throws<IOException>(() => i.ReadVInt32());
        }

        [Theory, MemberData(nameof(Contexts))]
        public async Task ClonesAfterTheParentIsClosedNeverCrash(string ctx)
        {
            using var t = new TestDir("closed");
            using var d = new NativeFSDirectory(t.Path);
            byte[] data = Data(200_000);
            DirectoryTests.Write(d, "f", data);
            IndexInput i = d.OpenInput("f", Ctx(ctx));
            var clones = Enumerable.Range(0, 4).Select(_ => (IndexInput)i.Clone()).ToArray();
            // readers racing the close: every read returns the right byte, or (a read racing the
            // close of a mapped file) the zeros the close leaves at the mapping's addresses
            // (SharedFile), after which the reader stops, or throws; a read started after Dispose
            // returned throws; none crashes
            int closing = 0, closed = 0;
            using var stop = new CancellationTokenSource();
            Task[] readers = clones.Select((c, n) => Task.Run(() =>
            {
                var rnd = new Random(n);
                var buf = new byte[10_000];
                int ok = 0;
                while (!stop.IsCancellationRequested)
                {
                    try
                    {
                        long pos = rnd.Next(0, data.Length - buf.Length);
                        bool after = Volatile.Read(ref closed) != 0;
                        c.Seek(pos);
                        byte got = c.ReadByte();
                        if (after)
                            throw new Exception("a read started after Dispose returned did not throw");
                        if (got != data[pos])
                        {
                            if (Volatile.Read(ref closing) == 0 || got != 0)
                                throw new Exception("wrong byte");
                            // it raced the close: stop here (under Wine each further read of the
                            // revoked addresses goes through the fault handler, which the runtime
                            // there does not always survive)
                            return ok;
                        }
                        c.ReadBytes(buf, 0, rnd.Next(1, buf.Length));
                        ok++;
                    }
                    catch (ObjectDisposedException)
                    {
                        return ok;
                    }
                }
                return ok;
            })).ToArray();
            await Task.Delay(100);
            Volatile.Write(ref closing, 1);
            i.Dispose();
            Volatile.Write(ref closed, 1);
            await Task.Delay(100);
            stop.Cancel();
            await Task.WhenAll(readers);
            // after the close, a clone's slow paths refuse
            Assert.ThrowsAny<ObjectDisposedException>(() => clones[0].Seek(0));
            Assert.ThrowsAny<ObjectDisposedException>(() => i.Clone());
        }

        // The opening thread disposes a mapped input while another thread reads it. The window
        // was taken at open, on this thread; the reads below run on another one and never call the
        // library again, so the library cannot tell that they are inside the mapping when this
        // thread disposes the input. The close lets go of the file at once and leaves zeros at the
        // mapping's addresses: a read racing it returns the file's bytes or zeros (which the
        // reader discards), never faults, and a read started after Dispose returned throws.
        [Fact]
        public void DisposeOnTheOpeningThreadRacingReadsOfTheInputItselfNeverCrashes()
        {
            using var t = new TestDir("owner-race");
            using var d = new NativeFSDirectory(t.Path);
            byte[] data = Data(1 << 20);
            DirectoryTests.Write(d, "f", data);
            for (int round = 0; round < 20; round++)
            {
                // odd rounds: a compound-file style slice (its slicer disposed with it)
                global::Lucene.Net.Store.Directory.IndexInputSlicer slicer = round % 2 == 1 ? d.CreateSlicer("f", IOContext.READ) : null;
                IndexInput i = slicer != null ? slicer.OpenSlice("s", 0, data.Length) : d.OpenInput("f", IOContext.READ);
                Exception failure = null;
                int closing = 0, closed = 0;
                var reader = new Thread(() =>
                {
                    var rnd = new Random(round);
                    var buf = new byte[1 << 16];
                    try
                    {
                        while (true)
                        {
                            long pos = rnd.Next(0, data.Length - buf.Length);
                            bool after = Volatile.Read(ref closed) != 0;
                            i.Seek(pos);
                            i.ReadBytes(buf, 0, buf.Length);
                            if (after)
                                throw new Exception("a read started after Dispose returned did not throw");
                            if (buf[0] != data[pos] || buf[^1] != data[pos + buf.Length - 1])
                            {
                                if (Volatile.Read(ref closing) == 0 || buf[0] != 0 && buf[0] != data[pos])
                                    throw new Exception("wrong bytes");
                            }
                        }
                    }
                    catch (ObjectDisposedException)
                    {
                    }
                    catch (Exception e)
                    {
                        failure = e;
                    }
                });
                reader.Start();
                Thread.Sleep(5);
                Volatile.Write(ref closing, 1);
                i.Dispose();
                slicer?.Dispose();
                Volatile.Write(ref closed, 1);
                Assert.True(reader.Join(10_000));
                Assert.Null(failure);
            }
        }

        // The file goes when its last input is disposed, clones read or not, with no collection:
        // each round is checked while its inputs and clones are still reachable.
        [Fact]
        public void MappingsOfClosedInputsAreReleased()
        {
            if (!OperatingSystem.IsLinux())
                Assert.Skip("the mappings and descriptors are counted in /proc/self/maps and /proc/self/fd, which only Linux has");
            using var t = new TestDir("leak");
            using var d = new NativeFSDirectory(t.Path);
            DirectoryTests.Write(d, "mapped-once", Data(1 << 20));
            string file = Path.Combine(t.Path, "mapped-once");
            for (int round = 0; round < 50; round++)
            {
                IndexInput i = d.OpenInput("mapped-once", IOContext.READ);
                var c = (IndexInput)i.Clone();
                c.Seek(1000 + round);
                c.ReadByte();
                i.ReadByte();
                Assert.Contains(file, MappedFiles());
                i.Dispose();
                Assert.DoesNotContain(file, MappedFiles());
                Assert.Equal(0, DescriptorsOn(file));
                Assert.ThrowsAny<ObjectDisposedException>(() => c.ReadByte()); // a clone of a closed input
                GC.KeepAlive(c);
            }
        }

        /// <summary>Descriptors of this process open on <paramref name="path"/> (other tests run
        /// in parallel, so only this file's count means anything).</summary>
        private static int DescriptorsOn(string path)
        {
            int n = 0;
            foreach (string fd in System.IO.Directory.GetFiles("/proc/self/fd"))
            {
                try
                {
                    if (new FileInfo(fd).LinkTarget == path)
                        n++;
                }
                catch (IOException)
                {
                    // closed between the listing and the readlink
                }
            }
            return n;
        }

        private static HashSet<string> MappedFiles() =>
            File.ReadAllLines("/proc/self/maps")
                .Select(l => l.Split(' ', 6, StringSplitOptions.RemoveEmptyEntries))
                .Where(f => f.Length == 6)
                .Select(f => f[5].Trim())
                .ToHashSet();
    }
}
