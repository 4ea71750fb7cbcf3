/*
 * file.c - open files on Win32: open, positional I/O, sync, locks.
 *
 * Files are opened for overlapped I/O and every read or write passes its
 * offset in an OVERLAPPED, then waits for itself: no file pointer is shared,
 * and threads reading one handle at once (an input, its clones and slices)
 * really run at once. On a synchronous handle the I/O manager would take the
 * file object's lock around every call and serialise them, the same
 * bottleneck as a FileChannel's monitor in Java's NIOFSDirectory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "win.h"

/* One transfer's cap: ReadFile/WriteFile count in DWORDs. A multiple of every
 * sector size, so direct transfers stay aligned when split. */
#define ND_IO_CHUNK ((DWORD)1 << 30)

/* Where lock files are locked: far past any content, so that the lock (which
 * Windows enforces on reads and writes) never blocks reading the file. */
#define ND_LOCK_OFFSET ((uint64_t)1 << 62)

static OVERLAPPED at_offset(int64_t off)
{
    return nd__win_at_offset(off);
}

/*
 * Each transfer in flight needs an event of its own to wait on (waiting on
 * the file handle would wake for any transfer on it). Events are kept on a
 * free stack and reused: created only when more transfers than ever before
 * run at once, never freed, so steady-state I/O allocates nothing.
 */
static SRWLOCK events_lock = SRWLOCK_INIT;
static HANDLE *events;
static size_t events_count, events_cap;

HANDLE nd__win_event_take(DWORD *err)
{
    HANDLE ev = NULL;
    AcquireSRWLockExclusive(&events_lock);
    if (events_count > 0)
        ev = events[--events_count];
    ReleaseSRWLockExclusive(&events_lock);
    if (ev == NULL) {
        ev = CreateEventW(NULL, TRUE, FALSE, NULL);
        if (ev == NULL)
            *err = GetLastError();
    }
    return ev;
}

void nd__win_event_give(HANDLE ev)
{
    AcquireSRWLockExclusive(&events_lock);
    if (events_count == events_cap) {
        size_t cap = events_cap ? events_cap * 2 : 16;
        HANDLE *grown = realloc(events, cap * sizeof(HANDLE));
        if (grown != NULL) {
            events = grown;
            events_cap = cap;
        }
    }
    if (events_count < events_cap) {
        events[events_count++] = ev;
        ev = NULL;
    }
    ReleaseSRWLockExclusive(&events_lock);
    if (ev != NULL)
        CloseHandle(ev); /* no room to keep it */
}

/* One positional transfer, waited for; 0 or the Win32 error. */
static DWORD transfer(HANDLE h, int write, void *buf, DWORD want, int64_t off, DWORD *done)
{
    DWORD e = 0;
    *done = 0;
    HANDLE ev = nd__win_event_take(&e);
    if (ev == NULL)
        return e;
    OVERLAPPED ov = at_offset(off);
    ov.hEvent = ev; /* ReadFile/WriteFile reset it when they start */
    BOOL ok = write ? WriteFile(h, buf, want, NULL, &ov) : ReadFile(h, buf, want, NULL, &ov);
    if (!ok && (e = GetLastError()) == ERROR_IO_PENDING)
        e = 0;
    if (e == 0 && !GetOverlappedResult(h, &ov, done, TRUE))
        e = GetLastError();
    nd__win_event_give(ev);
    return e;
}

/* Checks that what we opened is a regular file: not a directory, not a
 * link or other reparse point (opened as itself, never followed), not a
 * device. Returns 0 or the Win32 error to report. */
static DWORD check_regular(HANDLE h, int *is_link)
{
    *is_link = 0;
    if (GetFileType(h) != FILE_TYPE_DISK)
        return ERROR_ACCESS_DENIED;
    BY_HANDLE_FILE_INFORMATION info;
    if (!GetFileInformationByHandle(h, &info))
        return GetLastError();
    if (info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) {
        *is_link = 1;
        return ERROR_CANT_ACCESS_FILE;
    }
    if (info.dwFileAttributes & (FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_DEVICE))
        return ERROR_ACCESS_DENIED;
    return 0;
}

static int32_t set_length(HANDLE h, int64_t len, DWORD *err)
{
    FILE_END_OF_FILE_INFO eof;
    eof.EndOfFile.QuadPart = len;
    if (SetFileInformationByHandle(h, FileEndOfFileInfo, &eof, sizeof(eof)))
        return 0;
    *err = GetLastError();
    return -1;
}

/*
 * Access advice: Windows takes it only at open (FILE_FLAG_RANDOM_ACCESS,
 * FILE_FLAG_SEQUENTIAL_SCAN), and os.h passes advice later, through
 * nd__os_advise, on a handle that is already open. Outputs are always
 * written front to back, so they are opened with SEQUENTIAL_SCAN here; inputs
 * keep the cache manager's default read-ahead, which adapts to the pattern it
 * sees. A merge (direct) open bypasses the cache, where advice means nothing.
 */
int32_t nd__os_open_file(nd_os_dir *dir, const char *name, nd_open_mode mode, int direct,
                         nd_os_file *out)
{
    DWORD access = GENERIC_READ, disposition = OPEN_EXISTING;
    DWORD flags = FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_OVERLAPPED;
    switch (mode) {
    case ND_OPEN_READ: break;
    case ND_OPEN_CREATE_NEW:
        access |= GENERIC_WRITE;
        disposition = CREATE_NEW;
        flags |= FILE_FLAG_SEQUENTIAL_SCAN;
        break;
    }
    if (direct)
        flags =
            (flags & ~FILE_FLAG_SEQUENTIAL_SCAN) | FILE_FLAG_NO_BUFFERING | FILE_FLAG_WRITE_THROUGH;
    DWORD e = 0;
    HANDLE h = INVALID_HANDLE_VALUE;
    if (ND_FAULT(ND_FAULT_OPEN)) {
        e = nd__win_error_from_errno(errno);
    } else {
        wchar_t *p = nd__win_child_path(dir, name, &e);
        if (p != NULL) {
            h = CreateFileW(p, access, ND_WIN_SHARE_ALL, NULL, disposition, flags, NULL);
            if (h == INVALID_HANDLE_VALUE)
                e = GetLastError();
            free(p);
        }
    }
    if (h == INVALID_HANDLE_VALUE) {
        if (direct && (e == ERROR_INVALID_PARAMETER || e == ERROR_NOT_SUPPORTED))
            return nd__fail_os((int)e,
                               "CreateFileW '%s' in '%s' unbuffered: the file system "
                               "refuses it",
                               name, nd__os_dir_path(dir));
        return nd__fail_os((int)e, "CreateFileW '%s' in '%s'", name, nd__os_dir_path(dir));
    }
    int is_link;
    e = check_regular(h, &is_link);
    if (e != 0) {
        CloseHandle(h);
        if (is_link)
            return nd__fail_os((int)e,
                               "open '%s' in '%s': refusing to follow a link or "
                               "reparse point",
                               name, nd__os_dir_path(dir));
        return nd__fail_os((int)e, "open '%s' in '%s': not a regular file", name,
                           nd__os_dir_path(dir));
    }
    *out = (nd_os_file)(intptr_t)h | (direct ? ND_WIN_TAG_DIRECT : 0);
    return ND_OK;
}

/* As on POSIX (os.h): the new file is made under a temporary name and renamed
 * over the old one last, so that a failed create leaves the old file as it
 * was; readers of the old file keep their bytes (nd__os_rename replaces a
 * file that is open or mapped), where truncating it in place would change
 * them, or fail on a mapped file. */
int32_t nd__os_create_aside(nd_os_dir *dir, const char *name, int direct, nd_os_file *out,
                            char tmp[ND_OS_TMP_NAME_CAP])
{
    /* only a regular file is replaced: a link, directory or device in the way
     * is refused as opening it would be */
    DWORD e = 0;
    wchar_t *p = nd__win_child_path(dir, name, &e);
    if (p == NULL)
        return nd__fail_os((int)e, "replace '%s' in '%s'", name, nd__os_dir_path(dir));
    WIN32_FILE_ATTRIBUTE_DATA a;
    BOOL there = GetFileAttributesExW(p, GetFileExInfoStandard, &a);
    free(p);
    DWORD odd = FILE_ATTRIBUTE_REPARSE_POINT | FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_DEVICE;
    if (there && (a.dwFileAttributes & odd)) {
        int link = (a.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0;
        return nd__fail_os(link ? ERROR_CANT_ACCESS_FILE : ERROR_ACCESS_DENIED,
                           "replace '%s' in '%s': not a regular file%s", name, nd__os_dir_path(dir),
                           link ? " (refusing a link or reparse point)" : "");
    }
    static volatile LONG counter;
    int32_t rc = ND_E_EXISTS;
    for (int attempt = 0; attempt < 16 && rc == ND_E_EXISTS; attempt++) {
        snprintf(tmp, ND_OS_TMP_NAME_CAP, ".nd-%lu-%ld.tmp", (unsigned long)GetCurrentProcessId(),
                 (long)InterlockedIncrement(&counter));
        rc = nd__os_open_file(dir, tmp, ND_OPEN_CREATE_NEW, direct, out);
    }
    if (rc != ND_OK) /* the caller asked for `name`: say so, keeping the OS's reason */
        return nd__fail_again(rc, "replace '%s' in '%s' (through '%s')", name, nd__os_dir_path(dir),
                              tmp);
    return ND_OK;
}

void nd__os_close_file(nd_os_file f)
{
    if (f == ND_OS_FILE_INVALID)
        return;
    HANDLE h = nd__win_handle(f);
    if (f & ND_WIN_TAG_LOCK) {
        /* Windows releases a closed handle's locks "when resources allow";
         * unlocking first makes the lock free the moment nd_close returns */
        OVERLAPPED ov = at_offset((int64_t)ND_LOCK_OFFSET);
        UnlockFileEx(h, 0, 1, 0, &ov);
    }
    CloseHandle(h);
}

int32_t nd__os_lock(nd_os_dir *dir, const char *name, nd_os_file *out)
{
    DWORD e = 0;
    wchar_t *p = nd__win_child_path(dir, name, &e);
    if (p == NULL)
        return nd__fail_os((int)e, "lock '%s' in '%s'", name, nd__os_dir_path(dir));
    HANDLE h = CreateFileW(p, GENERIC_READ | GENERIC_WRITE, ND_WIN_SHARE_ALL, NULL, OPEN_ALWAYS,
                           FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT, NULL);
    e = h == INVALID_HANDLE_VALUE ? GetLastError() : 0;
    free(p);
    if (h == INVALID_HANDLE_VALUE)
        return nd__fail_os((int)e, "CreateFileW '%s' in '%s'", name, nd__os_dir_path(dir));
    int is_link;
    if ((e = check_regular(h, &is_link)) != 0) {
        CloseHandle(h);
        return nd__fail_os((int)e, "'%s' in '%s' is not a regular file", name,
                           nd__os_dir_path(dir));
    }
    /* byte-range locks belong to the handle, so a second handle in this
     * process is refused exactly as another process is */
    OVERLAPPED ov = at_offset((int64_t)ND_LOCK_OFFSET);
    if (!LockFileEx(h, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ov)) {
        e = GetLastError();
        CloseHandle(h);
        if (e == ERROR_LOCK_VIOLATION || e == ERROR_IO_PENDING) {
            nd__fail_os(ERROR_LOCK_VIOLATION, "'%s' in '%s' is held", name, nd__os_dir_path(dir));
            return ND_E_LOCKED;
        }
        return nd__fail_os((int)e, "LockFileEx '%s' in '%s'", name, nd__os_dir_path(dir));
    }
    *out = (nd_os_file)(intptr_t)h | ND_WIN_TAG_LOCK;
    return ND_OK;
}

int32_t nd__os_file_size(nd_os_file f, const char *what, int64_t *out)
{
    LARGE_INTEGER size;
    if (!GetFileSizeEx(nd__win_handle(f), &size))
        return nd__fail_os((int)GetLastError(), "GetFileSizeEx '%s'", what);
    *out = size.QuadPart;
    return ND_OK;
}

/* An unbuffered handle takes only whole sectors from aligned memory. Windows
 * enforces this with ERROR_INVALID_PARAMETER; we check it first, so the rule
 * holds (and says why) on every file system, Wine's included. */
int32_t nd__win_check_direct(nd_os_file f, const char *call, const char *what, const void *buf,
                             size_t len, int64_t off)
{
    if (!(f & ND_WIN_TAG_DIRECT))
        return ND_OK;
    uint32_t a = nd__win_alignment(nd__win_handle(f));
    if ((uintptr_t)buf % a == 0 && len % a == 0 && (uint64_t)off % a == 0)
        return ND_OK;
    return nd__fail_os(ERROR_INVALID_PARAMETER,
                       "%s '%s': unbuffered transfer of %llu bytes at %lld is not aligned to the "
                       "%u-byte sector (or its buffer is not)",
                       call, what, (unsigned long long)len, (long long)off, (unsigned)a);
}

ND_HOT size_t nd__os_pread_cached(nd_os_file f, void *dst, size_t len, int64_t off)
{
    /* Windows has no read that refuses to wait for the device: every ring
     * read goes to the completion port */
    (void)f, (void)dst, (void)len, (void)off;
    return 0;
}

ND_HOT int32_t nd__os_pread(nd_os_file f, const char *what, void *dst, size_t len, int64_t off,
                            size_t *got)
{
    *got = 0;
    int32_t rc = nd__win_check_direct(f, "ReadFile", what, dst, len, off);
    if (rc != ND_OK)
        return rc;
    HANDLE h = nd__win_handle(f);
    size_t done = 0;
    while (done < len) {
        DWORD want = len - done < ND_IO_CHUNK ? (DWORD)(len - done) : ND_IO_CHUNK;
        DWORD n = 0;
        int fault = ND_FAULT_CHECK(ND_FAULT_READ);
        DWORD e = 0;
        if (fault == 1) {
            e = nd__win_error_from_errno(errno);
            if (errno == EINTR)
                continue; /* no EINTR on Windows: the retry is all there is to test */
        } else {
            if (fault == 2 && want > 1 && !(f & ND_WIN_TAG_DIRECT))
                want /= 2;
            e = transfer(h, 0, (char *)dst + done, want, off + (int64_t)done, &n);
        }
        if (e == ERROR_HANDLE_EOF)
            break;
        if (e != 0) {
            *got = done;
            return nd__fail_os((int)e, "ReadFile '%s' at %lld", what,
                               (long long)(off + (int64_t)done));
        }
        if (n == 0)
            break;
        done += n;
    }
    *got = done;
    return ND_OK;
}

int32_t nd__os_pwrite(nd_os_file f, const char *what, const void *src, size_t len, int64_t off)
{
    int32_t rc = nd__win_check_direct(f, "WriteFile", what, src, len, off);
    if (rc != ND_OK)
        return rc;
    HANDLE h = nd__win_handle(f);
    size_t done = 0;
    while (done < len) {
        DWORD want = len - done < ND_IO_CHUNK ? (DWORD)(len - done) : ND_IO_CHUNK;
        DWORD n = 0;
        int fault = ND_FAULT_CHECK(ND_FAULT_WRITE);
        DWORD e = 0;
        if (fault == 1) {
            e = nd__win_error_from_errno(errno);
            if (errno == EINTR)
                continue;
        } else {
            if (fault == 2 && want > 1 && !(f & ND_WIN_TAG_DIRECT))
                want /= 2;
            e = transfer(h, 1, (char *)src + done, want, off + (int64_t)done, &n);
            if (e == 0 && n == 0)
                e = ERROR_DISK_FULL; /* no progress and no error: a full device */
        }
        if (e != 0)
            return nd__fail_os((int)e, "WriteFile '%s' at %lld", what,
                               (long long)(off + (int64_t)done));
        done += n;
    }
    return ND_OK;
}

int32_t nd__os_truncate(nd_os_file f, const char *what, int64_t len)
{
    DWORD e = 0;
    if (set_length(nd__win_handle(f), len, &e) != 0)
        return nd__fail_os((int)e, "SetFileInformationByHandle(EndOfFile) '%s' to %lld", what,
                           (long long)len);
    return ND_OK;
}

int32_t nd__os_fsync(nd_os_file f, const char *what)
{
    if (ND_FAULT(ND_FAULT_FSYNC))
        return nd__fail_os((int)nd__win_error_from_errno(errno), "FlushFileBuffers '%s'", what);
    HANDLE h = nd__win_handle(f);
    if (FlushFileBuffers(h))
        return ND_OK;
    DWORD e = GetLastError();
    if (e != ERROR_ACCESS_DENIED)
        return nd__fail_os((int)e, "FlushFileBuffers '%s'", what);
    /* FlushFileBuffers needs write access, and nd_fsync opens for reading.
     * The cache is the file's, not the handle's: flushing through a second,
     * writable handle on the same file object makes every write durable. */
    HANDLE w = ReOpenFile(h, GENERIC_WRITE, ND_WIN_SHARE_ALL, FILE_FLAG_OPEN_REPARSE_POINT);
    if (w == INVALID_HANDLE_VALUE)
        return nd__fail_os((int)GetLastError(), "ReOpenFile '%s' for FlushFileBuffers", what);
    BOOL ok = FlushFileBuffers(w);
    e = ok ? 0 : GetLastError();
    CloseHandle(w);
    if (!ok)
        return nd__fail_os((int)e, "FlushFileBuffers '%s'", what);
    return ND_OK;
}

/* The cache manager's lazy writer starts write-back by itself within about a
 * second; Windows has no call to start it for a range without waiting. */
void nd__os_writeback(nd_os_file f, int64_t off, int64_t len)
{
    (void)f, (void)off, (void)len;
}

/* See nd__os_open_file: Windows takes access advice at open only, and has no
 * call to drop a file's clean pages from its cache. */
void nd__os_advise(nd_os_file f, int64_t off, int64_t len, nd_advice advice)
{
    (void)f, (void)off, (void)len, (void)advice;
}

/* Sectors beyond 64 KiB are not taken as they are reported: no disk has them,
 * and 64 KiB is the most the POSIX side takes from st_blksize too
 * (posix/file.c). The buffers in file.c, cursor.c and output.c hold any alignment. */
static int usable_sector(ULONG s)
{
    return s >= 512 && s <= (64u << 10) && (s & (s - 1)) == 0;
}

uint32_t nd__win_alignment(HANDLE h)
{
    /* Windows 8+: the volume's sectors, logical and physical; aligning to the
     * physical one also avoids read-modify-write on 512e drives */
    FILE_STORAGE_INFO si;
    if (GetFileInformationByHandleEx(h, FileStorageInfo, &si, sizeof(si))) {
        ULONG a = si.LogicalBytesPerSector;
        if (usable_sector(si.PhysicalBytesPerSectorForPerformance) &&
            si.PhysicalBytesPerSectorForPerformance > a)
            a = si.PhysicalBytesPerSectorForPerformance;
        if (usable_sector(a))
            return (uint32_t)a;
    }
    /* otherwise ask the volume the file lives on */
    wchar_t path[MAX_PATH + 64], root[MAX_PATH + 64];
    DWORD n = GetFinalPathNameByHandleW(h, path, MAX_PATH + 64, VOLUME_NAME_DOS);
    if (n > 0 && n < MAX_PATH + 64 && GetVolumePathNameW(path, root, MAX_PATH + 64)) {
        DWORD spc, bps, free_clusters, clusters;
        if (GetDiskFreeSpaceW(root, &spc, &bps, &free_clusters, &clusters) && usable_sector(bps))
            return (uint32_t)bps;
    }
    /* a whole page: a multiple of every sector size a disk has */
    return 4096;
}

int32_t nd__os_file_undirect(nd_os_file *f, const char *what)
{
    if (!(*f & ND_WIN_TAG_DIRECT))
        return ND_OK;
    /* FILE_FLAG_NO_BUFFERING is fixed at open: a second handle on the same
     * file, opened without it, takes the old one's place */
    HANDLE h = ReOpenFile(nd__win_handle(*f), GENERIC_READ | GENERIC_WRITE, ND_WIN_SHARE_ALL,
                          FILE_FLAG_OVERLAPPED | FILE_FLAG_SEQUENTIAL_SCAN);
    if (h == INVALID_HANDLE_VALUE)
        return nd__fail_os((int)GetLastError(), "ReOpenFile '%s' buffered", what);
    CloseHandle(nd__win_handle(*f));
    *f = (nd_os_file)(intptr_t)h;
    return ND_OK;
}

uint32_t nd__os_direct_alignment(nd_os_file f)
{
    uint32_t forced = ND_FAULT_ALIGNMENT(); /* test builds only (fault.h); 0 otherwise */
    return forced != 0 ? forced : nd__win_alignment(nd__win_handle(f));
}
