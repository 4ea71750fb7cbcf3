using System;
using System.IO;
using Xunit;

namespace NativeDir.Tests
{
    /// <summary>Every status code maps to the exception .NET code expects. Most are also triggered
    /// for real by the other tests; the ones a test cannot provoke portably (a full disk, no
    /// memory, no descriptors) are checked through the mapping itself.</summary>
    public class ErrorMappingTests
    {
        [Theory]
        [InlineData(-1, typeof(ArgumentException))]
        [InlineData(-2, typeof(ObjectDisposedException))]
        [InlineData(-3, typeof(FileNotFoundException))]
        [InlineData(-4, typeof(NativeDirException))]
        [InlineData(-5, typeof(UnauthorizedAccessException))]
        [InlineData(-6, typeof(ArgumentException))]
        [InlineData(-7, typeof(EndOfStreamException))]
        [InlineData(-8, typeof(NativeDirException))]
        [InlineData(-9, typeof(NativeDirException))]
        [InlineData(-10, typeof(NotSupportedException))]
        [InlineData(-11, typeof(NativeDirLockedException))]
        [InlineData(-12, typeof(NativeDirException))]
        [InlineData(-13, typeof(NativeDirException))]
        [InlineData(-99, typeof(NativeDirException))]
        public void StatusMapsToItsException(int status, Type expected)
        {
            Exception e = Errors.For(status, "f");
            Assert.IsType(expected, e);
            if (e is NativeDirException nd)
            {
                Assert.Equal(status, nd.Status);
                Assert.Equal(status == -99 ? "ND_E_UNKNOWN" : nd.StatusName, nd.StatusName);
                Assert.StartsWith("ND_E_", nd.StatusName);
            }
        }

        [Fact]
        public void MessagesCarryTheLibrarysDescriptionAndOsError()
        {
            using var tmp = new TempDir();
            using var dir = NativeDirectory.Open(tmp.Path);
            var e = Assert.Throws<FileNotFoundException>(() => dir.OpenInput("nope"));
            Assert.Contains("nd_open_input", e.Message);
            Assert.Contains("nope", e.Message);
            Assert.Contains("os error 2", e.Message); // ENOENT
        }
    }
}
