using System.IO;

namespace NativeDir
{
    /// <summary>An I/O failure reported by the native library: its Message is
    /// the library's own description (call, file and the OS's reason).</summary>
    public class NativeDirException : IOException
    {
        /// <summary>Creates the exception for a native status.</summary>
        public NativeDirException(string message, int status, int osError)
            : base(message, osError != 0 ? osError : DefaultHResult)
        {
            Status = status;
            OsError = osError;
        }

        private const int DefaultHResult = unchecked((int)0x80131620); // COR_E_IO, as IOException

        /// <summary>The library's status code (a negative ND_E_* value).</summary>
        public int Status { get; }

        /// <summary>The library's name of <see cref="Status"/>, e.g. "ND_E_IO".</summary>
        public string StatusName => Errors.StatusName(Status);

        /// <summary>errno (POSIX) or GetLastError() (Windows) of the failure; 0 if none. Also the
        /// exception's HResult when non-zero.</summary>
        public int OsError { get; }
    }

    /// <summary>The lock is held by another handle or another process (ND_E_LOCKED).</summary>
    public sealed class NativeDirLockedException : NativeDirException
    {
        /// <summary>Creates the exception.</summary>
        public NativeDirLockedException(string message, int status, int osError)
            : base(message, status, osError) { }
    }
}
