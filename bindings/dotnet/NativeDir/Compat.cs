#if !NET
// netstandard2.0 and .NET Framework: the few .NET 8 members this layer calls, with the same
// meaning, so the sources stay one. The attributes are the compiler's own (recognized by name).
using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading.Tasks;

namespace System.Runtime.CompilerServices
{
    [AttributeUsage(AttributeTargets.Method | AttributeTargets.Constructor | AttributeTargets.Class | AttributeTargets.Struct | AttributeTargets.Module, Inherited = false)]
    internal sealed class SkipLocalsInitAttribute : Attribute
    {
    }

    [AttributeUsage(AttributeTargets.Parameter, Inherited = false)]
    internal sealed class CallerArgumentExpressionAttribute : Attribute
    {
        public CallerArgumentExpressionAttribute(string parameterName) => ParameterName = parameterName;

        public string ParameterName { get; }
    }
}

namespace System.Diagnostics.CodeAnalysis
{
    [AttributeUsage(AttributeTargets.Parameter, Inherited = false)]
    internal sealed class MaybeNullWhenAttribute : Attribute
    {
        public MaybeNullWhenAttribute(bool returnValue) => ReturnValue = returnValue;

        public bool ReturnValue { get; }
    }

    [AttributeUsage(AttributeTargets.All, Inherited = false, AllowMultiple = true)]
    internal sealed class UnconditionalSuppressMessageAttribute : Attribute
    {
        public UnconditionalSuppressMessageAttribute(string category, string checkId)
        {
            Category = category;
            CheckId = checkId;
        }

        public string Category { get; }

        public string CheckId { get; }

        public string? Justification { get; set; }
    }
}

namespace NativeDir
{
    /// <summary>Shared by NativeDir and NativeDir.Lucene (linked there).</summary>
    internal static class Compat
    {
        extension(ArgumentNullException)
        {
            internal static void ThrowIfNull(object? argument, [CallerArgumentExpression(nameof(argument))] string? paramName = null)
            {
                if (argument is null)
                    throw new ArgumentNullException(paramName);
            }
        }

        extension(ValueTask)
        {
            internal static ValueTask<T> FromException<T>(Exception e) => new ValueTask<T>(Task.FromException<T>(e));

            internal static ValueTask<T> FromCanceled<T>(System.Threading.CancellationToken token) =>
                new ValueTask<T>(Task.FromCanceled<T>(token));
        }

        extension<T>(System.Collections.Generic.Stack<T> stack)
        {
            internal bool TryPop([System.Diagnostics.CodeAnalysis.MaybeNullWhen(false)] out T result)
            {
                if (stack.Count == 0)
                {
                    result = default!;
                    return false;
                }
                result = stack.Pop();
                return true;
            }
        }

        internal static void Deconstruct<TKey, TValue>(this System.Collections.Generic.KeyValuePair<TKey, TValue> pair, out TKey key, out TValue value)
        {
            key = pair.Key;
            value = pair.Value;
        }

        extension(string s)
        {
            internal bool Contains(char c) => s.IndexOf(c) >= 0;
        }

        extension(Encoding encoding)
        {
            internal unsafe int GetBytes(string s, Span<byte> bytes)
            {
                fixed (char* c = s)
                fixed (byte* b = bytes)
                    return encoding.GetBytes(c, s.Length, b, bytes.Length);
            }

            internal unsafe string GetString(ReadOnlySpan<byte> bytes)
            {
                fixed (byte* b = bytes)
                    return bytes.Length == 0 ? string.Empty : encoding.GetString(b, bytes.Length);
            }
        }
    }
}
#endif
