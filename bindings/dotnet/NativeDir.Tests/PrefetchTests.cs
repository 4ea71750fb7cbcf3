using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using NativeDir.Testing;
using Xunit;

namespace NativeDir.Tests
{
    /// <summary>NativeInput.Prefetch and Advise (nd_input_prefetch, nd_input_advise): the range
    /// rules and the advice values reach the library and come back as .NET exceptions; nothing
    /// read changes. That the pages really come in is test_prefetch's (C) to show.</summary>
    public class PrefetchTests : DataFileTests
    {
        private const int Size = 300_001;

        public PrefetchTests() : base(Size, seed: 18) { }

        public static TheoryData<IoOptions> Options => new()
        {
            IoOptions.None, IoOptions.Random, IoOptions.Mapped, IoOptions.Mapped | IoOptions.Random,
            IoOptions.Mapped | IoOptions.Preload, IoOptions.Merge,
        };

        private static void RangeRules(NativeInput input, long len)
        {
            input.Prefetch(0, 0);
            input.Prefetch(0, len);
            input.Prefetch(len, 0);
            if (len > 0)
            {
                input.Prefetch(len - 1, 1);
                input.Prefetch(1, len - 1);
            }
            Assert.Throws<EndOfStreamException>(() => input.Prefetch(0, len + 1));
            Assert.Throws<EndOfStreamException>(() => input.Prefetch(len, 1));
            Assert.Throws<EndOfStreamException>(() => input.Prefetch(long.MaxValue, 1));
            var e = Assert.Throws<ArgumentException>(() => input.Prefetch(-1, 1));
            Assert.Contains("nd_input_prefetch", e.Message);
            Assert.Throws<ArgumentException>(() => input.Prefetch(0, -1));
        }

        [Theory]
        [MemberData(nameof(Options))]
        public void PrefetchTakesEveryRangeInsideAndRefusesTheRest(IoOptions options)
        {
            using NativeInput input = _dir.OpenInput("data", options);
            RangeRules(input, Size);
            using NativeInput slice = input.Slice(4097, 70_001);
            RangeRules(slice, 70_001);
            using NativeInput clone = input.Clone();
            for (int i = 0; i < 500; i++) // through the back-off's looks and skips
                (i % 2 == 0 ? input : clone).Prefetch((i * 104_729L) % (Size - 65_536), 1 + (i * 7919) % 65_536);
            var buf = new byte[70_001];
            slice.ReadBytes(0, buf);
            Assert.True(buf.AsSpan().SequenceEqual(_data.AsSpan(4097, 70_001)));
            input.ReadBytes(Size - 70_001, buf);
            Assert.True(buf.AsSpan().SequenceEqual(_data.AsSpan(Size - 70_001, 70_001)));
        }

        [Theory]
        [MemberData(nameof(Options))]
        public void AdviseTakesRandomSequentialOrNormalOnly(IoOptions options)
        {
            using NativeInput input = _dir.OpenInput("data", options);
            using NativeInput slice = input.Slice(5000, 100_000);
            foreach (NativeInput i in new[] { input, slice })
            {
                foreach (IoOptions good in new[] { IoOptions.Random, IoOptions.Sequential, IoOptions.None })
                    i.Advise(good);
                foreach (IoOptions bad in new[] { IoOptions.Random | IoOptions.Sequential, IoOptions.Mapped,
                                                  IoOptions.Merge, IoOptions.Preload, (IoOptions)0x80000000u })
                {
                    var e = Assert.Throws<ArgumentException>(() => i.Advise(bad));
                    Assert.Contains("nd_input_advise", e.Message);
                }
            }
            var buf = new byte[100_000];
            slice.ReadBytes(0, buf);
            Assert.True(buf.AsSpan().SequenceEqual(_data.AsSpan(5000, 100_000)));
            Assert.Equal(options.HasFlag(IoOptions.Mapped) ? IoStrategy.Mapped : input.Strategy, input.Strategy);
        }

        /// <summary>Advise(Random) is MADV_RANDOM (VmFlags "rr"), Sequential MADV_SEQUENTIAL
        /// ("sr"), None MADV_NORMAL, and a slice advises its own pages only: a binding passing the
        /// wrong flag value (or none) would still return without error; only the kernel's record
        /// shows it.</summary>
        [Fact]
        public void AdviceReachesTheMapping()
        {
            if (!OperatingSystem.IsLinux() || !File.Exists("/proc/self/smaps"))
                Assert.Skip("the kernel's advice of a mapping is read from /proc/self/smaps (VmFlags), which only Linux has");
            Emulator.SkipUnderQemu("qemu-user takes madvise without passing it to the kernel, so VmFlags never show the advice");
            const int Align = 64 * 1024; // page-aligned with 4 KiB and 64 KiB pages alike
            string path = Path.GetFullPath(_tmp.File("data"));
            using (NativeInput input = _dir.OpenInput("data", IoOptions.Mapped))
            {
                Assert.Equal(IoStrategy.Mapped, input.Strategy);
                foreach ((IoOptions advice, string? flag) in new[] { (IoOptions.Random, "rr"), (IoOptions.Sequential, "sr"), (IoOptions.None, (string?)null) })
                {
                    input.Advise(advice);
                    var vmas = Mappings(path);
                    Assert.NotEmpty(vmas);
                    foreach (var v in vmas)
                    {
                        Assert.True(v.Flags.Contains("rr") == (flag == "rr") && v.Flags.Contains("sr") == (flag == "sr"),
                            $"{advice}: VmFlags {string.Join(' ', v.Flags)}");
                    }
                }
                using NativeInput slice = input.Slice(2 * Align, 2 * Align);
                slice.Advise(IoOptions.Random);
                for (long off = 2 * Align; off < 4 * Align; off += Environment.SystemPageSize)
                    Assert.Contains("rr", FlagsAt(path, off));
                Assert.DoesNotContain("rr", FlagsAt(path, 2 * Align - 1));
                Assert.DoesNotContain("rr", FlagsAt(path, 4 * Align));
            }
            // another file: the first one's mapping may outlive its Dispose until the GC runs
            File.WriteAllBytes(_tmp.File("random"), _data);
            string random = Path.GetFullPath(_tmp.File("random"));
            using (NativeInput input = _dir.OpenInput("random", IoOptions.Mapped | IoOptions.Random))
            {
                Assert.NotEmpty(Mappings(random));
                Assert.All(Mappings(random), v => Assert.Contains("rr", v.Flags));
            }
        }

        private static HashSet<string> FlagsAt(string path, long off) =>
            Mappings(path).Single(v => off >= v.Offset && off < v.Offset + v.Length).Flags;

        private static List<(long Offset, long Length, HashSet<string> Flags)> Mappings(string path)
        {
            var found = new List<(long, long, HashSet<string>)>();
            bool ours = false;
            long offset = 0, length = 0;
            foreach (string line in File.ReadLines("/proc/self/smaps"))
            {
                string[] f = line.Split(' ', 6, StringSplitOptions.RemoveEmptyEntries);
                int dash = f[0].IndexOf('-');
                if (dash > 0 && !f[0].EndsWith(':') && f.Length >= 5)
                {
                    ours = f.Length == 6 && f[5].Trim() == path;
                    length = long.Parse(f[0].Substring(dash + 1), NumberStyles.HexNumber, CultureInfo.InvariantCulture)
                             - long.Parse(f[0].Substring(0, dash), NumberStyles.HexNumber, CultureInfo.InvariantCulture);
                    offset = long.Parse(f[2], NumberStyles.HexNumber, CultureInfo.InvariantCulture);
                }
                else if (ours && line.StartsWith("VmFlags:", StringComparison.Ordinal))
                {
                    found.Add((offset, length, line.Substring(8).Split(' ', StringSplitOptions.RemoveEmptyEntries).ToHashSet()));
                    ours = false;
                }
            }
            return found;
        }

        [Fact]
        public void DisposedInputRefusesBoth()
        {
            NativeInput input = _dir.OpenInput("data");
            input.Dispose();
            Assert.Throws<ObjectDisposedException>(() => input.Prefetch(0, 1));
            Assert.Throws<ObjectDisposedException>(() => input.Advise(IoOptions.Random));
        }
    }
}
