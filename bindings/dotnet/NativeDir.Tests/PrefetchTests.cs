using System;
using System.IO;
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
