using System;
using Xunit;

namespace NativeDir.Tests
{
    /// <summary>IoPolicy (nd_policy_input, nd_policy_output): the library's rules reach .NET
    /// unchanged, and bad arguments come back as ArgumentException. The table itself is
    /// test_policy's (C) to check in full.</summary>
    public class PolicyTests
    {
        [Theory]
        [InlineData(FileUse.Search, "_0.tim", 0L, IoOptions.Mapped | IoOptions.Warm | IoOptions.Random)]
        [InlineData(FileUse.Search, "_0.doc", 0L, IoOptions.Mapped | IoOptions.Warm)]
        [InlineData(FileUse.Search, null, 0L, IoOptions.Mapped | IoOptions.Warm)]
        [InlineData(FileUse.ReadOnce, "segments_3", 0L, IoOptions.Sequential)]
        [InlineData(FileUse.Merge, "_4.fdt", 1L << 30, IoOptions.Merge)]
        [InlineData(FileUse.Merge, "_4.fdt", 1L << 20, IoOptions.Mapped | IoOptions.Sequential)]
        [InlineData(FileUse.Flush, "_5.tim", 0L, IoOptions.Mapped | IoOptions.Warm | IoOptions.Random)]
        public void InputFlagsAreTheLibrarys(FileUse use, string? name, long mergeBytes, IoOptions expected)
        {
            Assert.Equal(expected, IoPolicy.Input(use, name, mergeBytes));
        }

        [Fact]
        public void OutputsGoDirectOnlyForLargeMerges()
        {
            Assert.Equal(IoOptions.Merge, IoPolicy.Output(FileUse.Merge, "_9.cfs", IoPolicy.DefaultMinBytesDirect));
            Assert.Equal(IoOptions.None, IoPolicy.Output(FileUse.Merge, "_9.cfs", IoPolicy.DefaultMinBytesDirect - 1));
            Assert.Equal(IoOptions.None, IoPolicy.Output(FileUse.Flush, "_9.cfs"));
            Assert.Equal(IoOptions.Merge, IoPolicy.Output(FileUse.Merge, "_9.cfs", 0, minBytesDirect: 0));
            Assert.Equal(10L << 20, IoPolicy.DefaultMinBytesDirect);
        }

        [Fact]
        public void BadArgumentsAreArgumentExceptions()
        {
            Assert.Throws<ArgumentException>(() => IoPolicy.Input(FileUse.Search, "../x.tim"));
            Assert.Throws<ArgumentException>(() => IoPolicy.Input((FileUse)9, "_0.tim"));
            Assert.Throws<ArgumentException>(() => IoPolicy.Output(FileUse.Merge, "_0.tim", 0, minBytesDirect: -2));
        }
    }
}
