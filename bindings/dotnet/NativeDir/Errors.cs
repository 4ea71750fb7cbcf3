using System;
using System.IO;
using System.Runtime.InteropServices;
using Native = NativeDir.Interop.nativedir;

namespace NativeDir
{
    /// <summary>Turns a native status into the exception .NET code expects. It must be called on
    /// the failing thread right after the failing call: the library keeps the message and the OS
    /// error per thread, until that thread's next failure.</summary>
    internal static unsafe class Errors
    {
        internal static string StatusName(int status) => Utf8.Decode(Native.nd_status_name(status));

        internal static Exception For(long status, string? name = null, string? param = null)
        {
            int st = (int)status;
            string native = Utf8.Decode(Native.nd_last_error_message());
            int os = Native.nd_last_os_error();
            string message = os != 0
                ? $"{native} [{StatusName(st)}, os error {os}]"
                : $"{native} [{StatusName(st)}]";
            switch (st)
            {
                case Native.ND_E_NOT_FOUND:
                    return new FileNotFoundException(message, name);
                case Native.ND_E_ACCESS:
                    return new UnauthorizedAccessException(message);
                case Native.ND_E_INVALID_NAME:
                    return new ArgumentException(message, param ?? "name");
                case Native.ND_E_INVALID_ARGUMENT:
                    return new ArgumentException(message, param);
                case Native.ND_E_BAD_HANDLE:
                    return new ObjectDisposedException(null, message);
                case Native.ND_E_EOF:
                    return new EndOfStreamException(message);
                case Native.ND_E_NOT_SUPPORTED:
                    return new NotSupportedException(message);
                case Native.ND_E_LOCKED:
                    return new NativeDirLockedException(message, st, os);
                default: // EXISTS, NO_SPACE, IO, NO_MEMORY, TOO_MANY_OPEN and any future code
                    return new NativeDirException(message, st, os);
            }
        }

        internal static ObjectDisposedException Disposed(string type) => new(type);
    }

    /// <summary>Names and paths cross the boundary as NUL-terminated UTF-8 that this layer encodes
    /// itself, so no P/Invoke needs string marshalling.</summary>
    internal static unsafe class Utf8
    {
        /// <summary>Bytes that fit every valid name (255 UTF-8 bytes) and its terminator.</summary>
        internal const int NameScratch = 256;

        private static readonly System.Text.UTF8Encoding Strict = new(false, true);

        /// <summary>The NUL-terminated UTF-8 form of <paramref name="s"/>, in
        /// <paramref name="scratch"/> when it fits, else on the heap (names that long are refused
        /// by the library anyway, with its own message).</summary>
        internal static Span<byte> Encode(string s, Span<byte> scratch, string param)
        {
            ArgumentNullException.ThrowIfNull(s, param);
            if (s.Contains('\0'))
                throw new ArgumentException($"'{s.Replace("\0", "\\0")}' contains a NUL character", param);
            int n;
            try
            {
                n = Strict.GetByteCount(s);
            }
            catch (System.Text.EncoderFallbackException e)
            {
                throw new ArgumentException($"'{s}' is not valid UTF-16 (a lone surrogate)", param, e);
            }
            Span<byte> dst = n < scratch.Length ? scratch : new byte[n + 1];
            Strict.GetBytes(s, dst);
            dst[n] = 0;
            return dst.Slice(0, n + 1);
        }

        internal static string Decode(byte* p)
        {
            if (p == null)
                return string.Empty;
            int n = 0;
            while (p[n] != 0)
                n++;
            return n == 0 ? string.Empty : System.Text.Encoding.UTF8.GetString(p, n);
        }
    }
}
