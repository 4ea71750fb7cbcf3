using System;
using System.Reflection;
using System.Threading.Tasks;
using Xunit;

namespace NativeDir.Tests
{
    /// <summary>The test host's own setting for Windows (EmulatedHost.props): under Wine 8 an
    /// exception out of .NET's interpreted reflection invoke stops the process's timers, and
    /// xunit calls each test method through reflection, so one failing or skipped test hung the
    /// whole win-x64 run. These keep the setting in place and show its effect.</summary>
    public class EmulatedHostTests
    {
        [Fact]
        public void WindowsBuildsInvokeTestsThroughEmittedStubs()
        {
            bool set = AppContext.TryGetSwitch("Switch.System.Reflection.ForceEmitInvoke", out bool on) && on;
            Assert.Equal(OperatingSystem.IsWindows(), set);
        }

        private static void Throws() => throw new InvalidOperationException("thrown through reflection");

        [Fact]
        public async Task TimersFireAfterAnExceptionThroughReflectionInvoke()
        {
            MethodInfo m = typeof(EmulatedHostTests).GetMethod(nameof(Throws), BindingFlags.NonPublic | BindingFlags.Static)!;
            for (int i = 0; i < 3; i++) // the first calls are the interpreted ones
            {
                var e = Assert.Throws<TargetInvocationException>(() => m.Invoke(null, null));
                Assert.IsType<InvalidOperationException>(e.InnerException);
            }
            // a dead timer never completes this; the runner's time limit reports the hang
            await Task.Delay(10);
        }
    }
}
