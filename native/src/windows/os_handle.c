/*
 * os_handle.c - nd_os_* on Win32, on a HANDLE the caller opened: ReadFile and
 * WriteFile at an offset given in an OVERLAPPED, GetFileSizeEx.
 *
 * On a synchronous handle (one opened without FILE_FLAG_OVERLAPPED) ReadFile
 * and WriteFile move the file pointer to the end of the transfer even when an
 * OVERLAPPED gives the offset, and the .NET Framework's FileStream checks that
 * pointer against its own position before each use of a handle it exposed.
 * So the pointer is read before the transfer and put back after it, under a
 * lock per handle, or a concurrent call could read the other's moved pointer
 * as its own. On an overlapped handle there is no pointer to keep and the
 * same steps cost only the lock; the transfer is waited for on an event.
 */
#include <stdlib.h>

#include "../os_handle.h"
#include "win.h"

/* One transfer's cap: ReadFile/WriteFile count in DWORDs. */
#define CHUNK ((DWORD)1 << 30)

/* Locks keyed by the handle's value: two handles may share one, which only
 * makes them wait for each other. */
#define STRIPES 64
static SRWLOCK stripes[STRIPES]; /* all zero: SRWLOCK_INIT */

static SRWLOCK *stripe_of(HANDLE h)
{
    uintptr_t v = (uintptr_t)h >> 2; /* kernel handles are multiples of 4 */
    return &stripes[(v ^ (v >> 6)) % STRIPES];
}

/* A handle that is no disk file cannot seek: ND_E_NOT_SUPPORTED (or the
 * error GetFileType met, e.g. for a handle that is not open). */
static int32_t check_disk_file(HANDLE h)
{
    SetLastError(NO_ERROR); /* GetFileType answers UNKNOWN for a failure and for a type */
    DWORD type = GetFileType(h);
    if (type == FILE_TYPE_DISK)
        return ND_OK;
    DWORD e = GetLastError();
    if (type == FILE_TYPE_UNKNOWN && e != NO_ERROR)
        return nd__fail_os((int)e, "GetFileType of handle %p", (void *)h);
    return nd__fail(ND_E_NOT_SUPPORTED, "handle %p cannot seek (a pipe, a socket or a console)",
                    (void *)h);
}

/* The transfer at off, waited for; 0 or the Win32 error (ERROR_HANDLE_EOF:
 * nothing at or past the end). */
static DWORD transfer(HANDLE h, int write, void *buf, DWORD want, int64_t off, DWORD *done)
{
    *done = 0;
    DWORD err = 0;
    HANDLE ev = nd__win_event_take(&err); /* file.c's pool, shared with the library's own files */
    if (ev == NULL)
        return err;
    OVERLAPPED ov;
    ZeroMemory(&ov, sizeof ov);
    ov.Offset = (DWORD)((uint64_t)off & 0xffffffffu);
    ov.OffsetHigh = (DWORD)((uint64_t)off >> 32);
    ov.hEvent = ev; /* ReadFile/WriteFile reset it when they start */
    DWORD e = 0;
    BOOL ok = write ? WriteFile(h, buf, want, NULL, &ov) : ReadFile(h, buf, want, NULL, &ov);
    if (!ok && (e = GetLastError()) == ERROR_IO_PENDING)
        e = 0;
    if (e == 0 && !GetOverlappedResult(h, &ov, done, TRUE))
        e = GetLastError();
    nd__win_event_give(ev);
    return e;
}

/* Reads or writes [off, off+len) in chunks, the file pointer put back. */
static int64_t transfer_all(int64_t f, int write, void *buf, int64_t off, int64_t len)
{
    HANDLE h = (HANDLE)(intptr_t)f;
    const char *op = write ? "WriteFile" : "ReadFile";
    int32_t rc = check_disk_file(h);
    if (rc != ND_OK)
        return rc;
    SRWLOCK *lock = stripe_of(h);
    AcquireSRWLockExclusive(lock);
    LARGE_INTEGER zero, saved;
    zero.QuadPart = 0;
    BOOL have_pointer = SetFilePointerEx(h, zero, &saved, FILE_CURRENT);
    int64_t done = 0;
    DWORD e = 0;
    while (done < len || len == 0) {
        int64_t rest = len - done;
        DWORD want = rest > (int64_t)CHUNK ? CHUNK : (DWORD)rest;
        DWORD n = 0;
        e = transfer(h, write, (char *)buf + done, want, off + done, &n);
        if (e != 0 || n == 0 || len == 0)
            break;
        done += n;
    }
    if (have_pointer)
        SetFilePointerEx(h, saved, NULL, FILE_BEGIN);
    ReleaseSRWLockExclusive(lock);
    if (!write && e == ERROR_HANDLE_EOF)
        e = 0;
    if (e != 0 && !(done > 0 && !write))
        return nd__fail_os((int)e, "%s of handle %p at %lld", op, (void *)h,
                           (long long)(off + done));
    if (write && done < len)
        return nd__fail_os(ERROR_HANDLE_DISK_FULL, "%s of handle %p at %lld", op, (void *)h,
                           (long long)(off + done));
    return done;
}

int64_t nd__os_handle_read(int64_t f, int64_t off, void *dst, int64_t len)
{
    return transfer_all(f, 0, dst, off, len);
}

int64_t nd__os_handle_write(int64_t f, int64_t off, const void *src, int64_t len)
{
    return transfer_all(f, 1, (void *)src, off, len);
}

int32_t nd__os_handle_length(int64_t f, int64_t *out_len)
{
    HANDLE h = (HANDLE)(intptr_t)f;
    int32_t rc = check_disk_file(h);
    if (rc != ND_OK)
        return rc;
    FILE_STANDARD_INFO info;
    if (!GetFileInformationByHandleEx(h, FileStandardInfo, &info, sizeof info))
        return nd__fail_os((int)GetLastError(), "GetFileInformationByHandleEx of handle %p",
                           (void *)h);
    if (info.Directory)
        return nd__fail_os(ERROR_ACCESS_DENIED, "handle %p is a directory", (void *)h);
    *out_len = (int64_t)info.EndOfFile.QuadPart;
    return ND_OK;
}

int32_t nd__os_handle_set_direct(int64_t f, int direct)
{
    (void)direct;
    return nd__fail(ND_E_NOT_SUPPORTED,
                    "handle %p: Windows chooses unbuffered I/O when a file is opened",
                    (void *)(intptr_t)f);
}

int32_t nd__os_handle_advise(int64_t f, int64_t off, int64_t len, int32_t advice)
{
    (void)off;
    (void)len;
    (void)advice;
    return nd__fail(ND_E_NOT_SUPPORTED, "handle %p: Windows takes access advice only at open",
                    (void *)(intptr_t)f);
}

int32_t nd__os_memory_advise(void *addr, int64_t len, int32_t advice, int posix)
{
    (void)len;
    (void)advice;
    (void)posix;
    return nd__fail(ND_E_NOT_SUPPORTED, "memory at %p: Windows has no madvise", addr);
}
