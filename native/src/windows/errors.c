/*
 * errors.c - GetLastError() codes to the frozen status codes, and their text.
 *
 * The table gives each code the status it has at any call; a call site where
 * a code means something else (ERROR_LOCK_VIOLATION from LockFileEx: "held")
 * returns its own status after recording the message.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "win.h"

int32_t nd__status_from_os(int os_error)
{
    switch ((DWORD)os_error) {
    case 0: return ND_E_IO; /* a failure without an error code is still a failure */
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND:
    case ERROR_DIRECTORY: /* a file where a directory was expected, like ENOTDIR */
    case ERROR_BAD_NETPATH:
    case ERROR_BAD_NET_NAME:
    case ERROR_INVALID_DRIVE:
    case ERROR_NOT_READY: return ND_E_NOT_FOUND;
    case ERROR_FILE_EXISTS:
    case ERROR_ALREADY_EXISTS:
    case ERROR_DIR_NOT_EMPTY: return ND_E_EXISTS;
    case ERROR_ACCESS_DENIED:
    case ERROR_SHARING_VIOLATION:
    case ERROR_WRITE_PROTECT:
    case ERROR_PRIVILEGE_NOT_HELD:
    case ERROR_CANT_ACCESS_FILE: /* a reparse point we refuse to follow, like ELOOP */
    case ERROR_CANT_RESOLVE_FILENAME:
    case ERROR_DELETE_PENDING:
    /* a read or write that meets another process's byte-range lock: refused
     * access to those bytes, not our lock being held (nd__os_lock returns
     * ND_E_LOCKED itself, at the one call where it means that) */
    case ERROR_LOCK_VIOLATION: return ND_E_ACCESS;
    case ERROR_DISK_FULL:
    case ERROR_HANDLE_DISK_FULL:
    case ERROR_FILE_TOO_LARGE: return ND_E_NO_SPACE;
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY:
    case ERROR_COMMITMENT_LIMIT:
    case ERROR_NO_SYSTEM_RESOURCES:
    case ERROR_NOT_ENOUGH_QUOTA: return ND_E_NO_MEMORY;
    case ERROR_TOO_MANY_OPEN_FILES: return ND_E_TOO_MANY_OPEN;
    case ERROR_INVALID_NAME:
    case ERROR_FILENAME_EXCED_RANGE:
    case ERROR_BAD_PATHNAME:
    case ERROR_NO_UNICODE_TRANSLATION: return ND_E_INVALID_NAME;
    case ERROR_INVALID_PARAMETER: /* also: unaligned unbuffered I/O, like EINVAL */
    case ERROR_INVALID_HANDLE:
    case ERROR_NOACCESS: return ND_E_INVALID_ARGUMENT;
    case ERROR_NOT_SUPPORTED:
    case ERROR_INVALID_FUNCTION:
    case ERROR_CALL_NOT_IMPLEMENTED: return ND_E_NOT_SUPPORTED;
    default: return ND_E_IO;
    }
}

void nd__os_error_text(int os_error, char *buf, size_t cap)
{
    if (cap == 0)
        return;
    wchar_t wide[512];
    DWORD n = FormatMessageW(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL,
                             (DWORD)os_error, MAKELANGID(LANG_NEUTRAL, SUBLANG_DEFAULT), wide,
                             (DWORD)(sizeof(wide) / sizeof(wide[0])), NULL);
    while (n > 0 && (wide[n - 1] == L'\r' || wide[n - 1] == L'\n' || wide[n - 1] == L' ' ||
                     wide[n - 1] == L'.'))
        n--;
    int m = 0;
    if (n > 0 && cap > 1)
        m = WideCharToMultiByte(CP_UTF8, 0, wide, (int)n, buf, (int)(cap - 1), NULL, NULL);
    if (m <= 0) {
        /* no text for this code, or it did not fit: the number still says it */
        snprintf(buf, cap, "Windows error %lu", (unsigned long)(DWORD)os_error);
        return;
    }
    buf[m] = '\0';
    /* the code itself, which the text alone does not name */
    size_t used = (size_t)m;
    if (used + 24 < cap)
        snprintf(buf + used, cap - used, " (Windows error %lu)", (unsigned long)(DWORD)os_error);
}

/* The errno a fault point injects (fault.h, the test build), as the Win32
 * error the same failure would give, so the status table above maps it. */
DWORD nd__win_error_from_errno(int e)
{
    switch (e) {
    case ENOSPC: return ERROR_DISK_FULL;
    case ENOENT: return ERROR_FILE_NOT_FOUND;
    case EEXIST: return ERROR_FILE_EXISTS;
    case EACCES:
    case EPERM: return ERROR_ACCESS_DENIED;
    case ENOMEM: return ERROR_NOT_ENOUGH_MEMORY;
    case EMFILE:
    case ENFILE: return ERROR_TOO_MANY_OPEN_FILES;
    case EINVAL: return ERROR_INVALID_PARAMETER;
    case EAGAIN: return ERROR_NO_SYSTEM_RESOURCES; /* a thread or memory short for now */
    case ENOSYS: return ERROR_NOT_SUPPORTED;
    default: return ERROR_IO_DEVICE;
    }
}
