using System;
using System.Collections.Generic;
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

    /// <summary>
    /// nativedir's native library cannot be loaded in this process: the package carries none for
    /// this platform, the file is missing, or the loader refused it (wrong architecture, a libc
    /// symbol this system lacks, a damaged file). The first NativeDir call that needs the library
    /// throws it, and so does every later one, with the same message: the RID and platform, every
    /// file looked for, the loader's own reason, and the RIDs the package carries.
    /// </summary>
    public sealed class NativeDirUnavailableException : PlatformNotSupportedException
    {
        internal NativeDirUnavailableException(string message, string runtimeIdentifier, string platform,
            IReadOnlyList<string> searchedPaths, string loaderReason, IReadOnlyList<string> packagedRuntimeIdentifiers)
            : base(message)
        {
            RuntimeIdentifier = runtimeIdentifier;
            Platform = platform;
            SearchedPaths = searchedPaths;
            LoaderReason = loaderReason;
            PackagedRuntimeIdentifiers = packagedRuntimeIdentifiers;
        }

        /// <summary>The RID whose library this process needs, e.g. "linux-musl-x64".</summary>
        public string RuntimeIdentifier { get; }

        /// <summary>The operating system, process architecture and runtime.</summary>
        public string Platform { get; }

        /// <summary>Every file the loader looked for, in order.</summary>
        public IReadOnlyList<string> SearchedPaths { get; }

        /// <summary>What the loader said for each file it tried (dlerror, the Windows error,
        /// the runtime's own message), or that no file was found.</summary>
        public string LoaderReason { get; }

        /// <summary>The RIDs whose native library the NativeDir package carries.</summary>
        public IReadOnlyList<string> PackagedRuntimeIdentifiers { get; }
    }
}
