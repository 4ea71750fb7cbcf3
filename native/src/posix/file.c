/*
 * file.c - open files on POSIX: open, positional I/O, sync, advice.
 */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#  define _GNU_SOURCE /* O_DIRECT, sync_file_range, statx */
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/file.h> /* flock */
#include <sys/stat.h>
#include <sys/uio.h> /* preadv2 */
#include <unistd.h>

#include "../internal.h"
#include "posix.h"

/* One transfer's cap: Linux moves at most 0x7ffff000 bytes per call anyway. */
#define ND_IO_CHUNK ((size_t)1 << 30)

static int32_t open_exact(nd_os_dir *dir, const char *name, nd_open_mode mode, int direct,
                          nd_os_file *out)
{
    /* O_NONBLOCK: a FIFO planted under this name must not block the open; it is
     * refused below as not a regular file, and the flag is cleared for real
     * files. Neither O_DIRECT nor O_TRUNC is asked for at open: a file system
     * that refuses O_DIRECT would refuse only after creating or truncating the
     * file, so both come after the checks. */
    int oflags = O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
    switch (mode) {
    case ND_OPEN_READ: oflags |= O_RDONLY; break;
    case ND_OPEN_CREATE_NEW: oflags |= O_RDWR | O_CREAT | O_EXCL; break;
    }
    int fd;
    /* the fault point sits inside the loop: an injected EINTR is retried like a real one */
    do
        fd = ND_FAULT(ND_FAULT_OPEN) ? -1 : openat(nd__posix_dir_fd(dir), name, oflags, 0666);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        int e = errno;
        if (e == ELOOP)
            return nd__fail_os(e, "open '%s' in '%s': refusing to follow a symbolic link", name,
                               nd__os_dir_path(dir));
        return nd__fail_os(e, "open '%s' in '%s'", name, nd__os_dir_path(dir));
    }
    /* O_RDONLY opens directories and FIFOs too; only regular files are files here */
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return nd__fail_os(e, "fstat '%s' in '%s'", name, nd__os_dir_path(dir));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return nd__fail_os(S_ISDIR(st.st_mode) ? EISDIR : EACCES,
                           "open '%s' in '%s': not a regular file", name, nd__os_dir_path(dir));
    }
    /* F_SETFL changes only the status flags (O_NONBLOCK, O_DIRECT, ...) and
     * ignores the rest of oflags: no F_GETFL needed */
    int fl = oflags & ~O_NONBLOCK;
    if (fcntl(fd, F_SETFL, fl) != 0) {
        int e = errno;
        close(fd);
        return nd__fail_os(e, "fcntl '%s' in '%s'", name, nd__os_dir_path(dir));
    }
    if (direct) {
#if defined(__APPLE__)
        /* macOS has no O_DIRECT: F_NOCACHE turns the page cache off for this descriptor */
        int rc = fcntl(fd, F_NOCACHE, 1);
#elif defined(O_DIRECT)
        int rc = fcntl(fd, F_SETFL, fl | O_DIRECT);
#else
        int rc = -1;
        errno = ENOTSUP;
#endif
        if (rc != 0) {
            int e = errno;
            if (mode == ND_OPEN_CREATE_NEW)
                unlinkat(nd__posix_dir_fd(dir), name, 0); /* ours, and still empty */
            close(fd);
            nd__fail_os(e, "open '%s' in '%s' with direct I/O: the file system refuses it", name,
                        nd__os_dir_path(dir));
            return ND_E_NOT_SUPPORTED;
        }
    }
    *out = (nd_os_file)fd;
    return ND_OK;
}

/* Replacing creates a new file under a temporary name, renamed over the old
 * one later (os.h): readers that have the old file open or mapped keep
 * reading it (truncating it in place would kill a mapped reader with SIGBUS),
 * and the name never goes missing in between. */
int32_t nd__os_create_aside(nd_os_dir *dir, const char *name, int direct, nd_os_file *out,
                            char tmp[ND_OS_TMP_NAME_CAP])
{
    /* only a regular file is replaced: a planted symlink, FIFO or directory is
     * refused as an open of it would be (a swap after this check can only make
     * the rename replace a link itself, never touch what it points to) */
    struct stat st;
    if (fstatat(nd__posix_dir_fd(dir), name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
        return nd__fail_os(S_ISLNK(st.st_mode)   ? ELOOP
                           : S_ISDIR(st.st_mode) ? EISDIR
                                                 : EACCES,
                           "replace '%s' in '%s': not a regular file%s", name, nd__os_dir_path(dir),
                           S_ISLNK(st.st_mode) ? " (refusing a symbolic link)" : "");
    static _Atomic unsigned counter;
    int32_t rc = ND_E_EXISTS;
    for (int attempt = 0; attempt < 16 && rc == ND_E_EXISTS; attempt++)
        snprintf(tmp, ND_OS_TMP_NAME_CAP, ".nd-%ld-%u.tmp", (long)getpid(),
                 atomic_fetch_add(&counter, 1)),
            rc = open_exact(dir, tmp, ND_OPEN_CREATE_NEW, direct, out);
    if (rc != ND_OK) /* the caller asked for `name`: say so, keeping the OS's reason */
        return nd__fail_again(rc, "replace '%s' in '%s' (through '%s')", name, nd__os_dir_path(dir),
                              tmp);
    return ND_OK;
}

int32_t nd__os_open_file(nd_os_dir *dir, const char *name, nd_open_mode mode, int direct,
                         nd_os_file *out)
{
    return open_exact(dir, name, mode, direct, out);
}

void nd__os_close_file(nd_os_file f)
{
    /* close is not retried on EINTR: on Linux the descriptor is gone either way */
    if (f != ND_OS_FILE_INVALID)
        close((int)f);
}

int32_t nd__os_lock(nd_os_dir *dir, const char *name, nd_os_file *out)
{
    int fd;
    /* O_NONBLOCK and the S_ISREG check: a FIFO or device planted under the
     * lock's name must neither block us nor be "locked" */
    do
        fd = openat(nd__posix_dir_fd(dir), name,
                    O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return nd__fail_os(errno, "open '%s' in '%s'", name, nd__os_dir_path(dir));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return nd__fail_os(e, "fstat '%s' in '%s'", name, nd__os_dir_path(dir));
    }
    if (!S_ISREG(st.st_mode)) { /* errno says nothing here: fstat succeeded */
        close(fd);
        return nd__fail_os(S_ISDIR(st.st_mode) ? EISDIR : EACCES,
                           "'%s' in '%s' is not a regular file", name, nd__os_dir_path(dir));
    }
#ifdef F_OFD_SETLK
    /* open-file-description locks belong to this open, not to the process, so
     * two handles in one process exclude each other as two processes do */
    struct flock fl = {0};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    int rc;
    do
        rc = fcntl(fd, F_OFD_SETLK, &fl);
    while (rc != 0 && errno == EINTR);
#else
    /* macOS has no OFD locks, and classic fcntl locks are per process (and
     * dropped by closing any descriptor of the file). flock locks belong to
     * the open file description, which is the semantics we need. */
    int rc;
    do
        rc = flock(fd, LOCK_EX | LOCK_NB);
    while (rc != 0 && errno == EINTR);
#endif
    if (rc != 0) {
        int e = errno;
        close(fd);
        if (e == EACCES || e == EAGAIN) { /* POSIX allows either for "held" */
            nd__fail_os(e, "'%s' in '%s' is held", name, nd__os_dir_path(dir));
            return ND_E_LOCKED;
        }
        return nd__fail_os(e, "fcntl '%s' in '%s'", name, nd__os_dir_path(dir));
    }
    *out = (nd_os_file)fd;
    return ND_OK;
}

int32_t nd__os_file_size(nd_os_file f, const char *what, int64_t *out)
{
    struct stat st;
    if (fstat((int)f, &st) != 0)
        return nd__fail_os(errno, "fstat '%s'", what);
    *out = (int64_t)st.st_size;
    return ND_OK;
}

ND_HOT int32_t nd__os_pread(nd_os_file f, const char *what, void *dst, size_t len, int64_t off,
                            size_t *got)
{
    size_t done = 0;
    while (done < len) {
        size_t want = len - done < ND_IO_CHUNK ? len - done : ND_IO_CHUNK;
        ssize_t n;
        int fault = ND_FAULT_CHECK(ND_FAULT_READ);
        if (fault == 1) {
            n = -1;
        } else {
            if (fault == 2 && want >= 8192) /* short, as a kernel is: page-aligned */
                want = (want / 2) & ~(size_t)4095;
            n = pread((int)f, (char *)dst + done, want, (off_t)(off + (int64_t)done));
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            *got = done;
            return nd__fail_os(errno, "pread '%s' at %lld", what, (long long)(off + (int64_t)done));
        }
        if (n == 0)
            break;
        done += (size_t)n;
    }
    *got = done;
    return ND_OK;
}

ND_HOT size_t nd__os_pread_cached(nd_os_file f, void *dst, size_t len, int64_t off)
{
#if defined(RWF_NOWAIT)
    /* kernels before 4.14 refuse the flag: stop asking after the first refusal */
    static _Atomic int refused;
    size_t done = 0;
    while (done < len && !atomic_load_explicit(&refused, memory_order_relaxed)) {
        size_t want = len - done < ND_IO_CHUNK ? len - done : ND_IO_CHUNK;
        struct iovec iov = {(char *)dst + done, want};
        ssize_t n = preadv2((int)f, &iov, 1, (off_t)(off + (int64_t)done), RWF_NOWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EOPNOTSUPP || errno == ENOSYS || errno == EINVAL))
            atomic_store_explicit(&refused, 1, memory_order_relaxed);
        if (n <= 0)
            break; /* EAGAIN: the rest is not cached; EOF or an error: the blocking read says */
        done += (size_t)n;
    }
    return done;
#else
    (void)f, (void)dst, (void)len, (void)off;
    return 0;
#endif
}

int32_t nd__os_pwrite(nd_os_file f, const char *what, const void *src, size_t len, int64_t off)
{
    size_t done = 0;
    while (done < len) {
        size_t want = len - done < ND_IO_CHUNK ? len - done : ND_IO_CHUNK;
        ssize_t n;
        int fault = ND_FAULT_CHECK(ND_FAULT_WRITE);
        if (fault == 1) {
            n = -1;
        } else {
            if (fault == 2 && want >= 8192) /* short, as a kernel is: page-aligned */
                want = (want / 2) & ~(size_t)4095;
            n = pwrite((int)f, (const char *)src + done, want, (off_t)(off + (int64_t)done));
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return nd__fail_os(errno, "pwrite '%s' at %lld", what,
                               (long long)(off + (int64_t)done));
        }
        if (n == 0) /* no progress and no errno: treat as a full device */
            return nd__fail_os(ENOSPC, "pwrite '%s' at %lld wrote nothing", what,
                               (long long)(off + (int64_t)done));
        done += (size_t)n;
    }
    return ND_OK;
}

int32_t nd__os_truncate(nd_os_file f, const char *what, int64_t len)
{
    int rc;
    do
        rc = ftruncate((int)f, (off_t)len);
    while (rc != 0 && errno == EINTR);
    if (rc != 0)
        return nd__fail_os(errno, "ftruncate '%s' to %lld", what, (long long)len);
    return ND_OK;
}

int32_t nd__os_fsync(nd_os_file f, const char *what)
{
    int e = nd__posix_full_fsync((int)f);
    if (e != 0)
        return nd__fail_os(e, "fsync '%s'", what);
    return ND_OK;
}

void nd__os_writeback(nd_os_file f, int64_t off, int64_t len)
{
#if defined(__linux__)
    sync_file_range((int)f, (off_t)off, (off_t)len, SYNC_FILE_RANGE_WRITE);
#else
    (void)f, (void)off, (void)len;
#endif
}

void nd__os_advise(nd_os_file f, int64_t off, int64_t len, nd_advice advice)
{
#if defined(POSIX_FADV_NORMAL) && !defined(__APPLE__)
    int a = POSIX_FADV_NORMAL;
    switch (advice) {
    case ND_ADVICE_NORMAL: a = POSIX_FADV_NORMAL; break;
    case ND_ADVICE_RANDOM: a = POSIX_FADV_RANDOM; break;
    case ND_ADVICE_SEQUENTIAL: a = POSIX_FADV_SEQUENTIAL; break;
    case ND_ADVICE_WILLNEED: a = POSIX_FADV_WILLNEED; break;
    case ND_ADVICE_DONTNEED: a = POSIX_FADV_DONTNEED; break;
    }
    (void)posix_fadvise((int)f, (off_t)off, (off_t)len, a); /* advice: failure changes nothing */
#elif defined(__APPLE__)
    /* macOS has no posix_fadvise: F_RDADVISE reads ahead, F_RDAHEAD toggles read-ahead */
    if (advice == ND_ADVICE_WILLNEED) {
        struct radvisory ra;
        ra.ra_offset = (off_t)off;
        ra.ra_count = len > INT_MAX ? INT_MAX : (int)len;
        (void)fcntl((int)f, F_RDADVISE, &ra);
    } else if (advice == ND_ADVICE_RANDOM || advice == ND_ADVICE_SEQUENTIAL) {
        (void)fcntl((int)f, F_RDAHEAD, advice == ND_ADVICE_SEQUENTIAL ? 1 : 0);
    }
#else
    (void)f, (void)off, (void)len, (void)advice;
#endif
}

int32_t nd__os_file_undirect(nd_os_file *f, const char *what)
{
    int fd = (int)*f;
#if defined(__APPLE__)
    if (fcntl(fd, F_NOCACHE, 0) != 0)
        return nd__fail_os(errno, "fcntl F_NOCACHE off '%s'", what);
#elif defined(O_DIRECT)
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_DIRECT) != 0)
        return nd__fail_os(errno, "fcntl O_DIRECT off '%s'", what);
#else
    (void)fd, (void)what;
#endif
    return ND_OK;
}

/* Where the file system does not say what O_DIRECT needs, st_blksize stands
 * in, but only up to this. st_blksize is the preferred I/O size, not a
 * requirement: NFS and CephFS report 1-4 MiB and take O_DIRECT at any
 * alignment, as FUSE and SMB do. Local block file systems need the device's
 * logical block, which the kernels that do not report STATX_DIOALIGN (before
 * 6.1) keep within a page, 64 KiB at most on any architecture; and from 6.1
 * they report it. So 64 KiB is a multiple of every real requirement met here,
 * and it is the cap the Windows side has too (windows/file.c). The buffers
 * follow whatever the alignment is (file.c, cursor.c, output.c); the cap keeps them,
 * and every read that rounds out to it, small. */
#define ND_GUESSED_ALIGN_MAX ((uint32_t)64 << 10)

uint32_t nd__os_direct_alignment(nd_os_file f)
{
    uint32_t forced = ND_FAULT_ALIGNMENT(); /* test builds only; 0 otherwise */
    if (forced != 0)
        return forced;
    uint32_t blksize = ND_FAULT_BLKSIZE(); /* the same: "no STATX_DIOALIGN, this st_blksize" */
#if defined(__linux__) && defined(STATX_DIOALIGN)
    /* Linux 6.1+ says exactly what O_DIRECT needs on this file: taken as it is */
    struct statx sx;
    if (blksize == 0 && statx((int)f, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 &&
        (sx.stx_mask & STATX_DIOALIGN) && sx.stx_dio_offset_align != 0) {
        uint32_t a = sx.stx_dio_offset_align;
        if (sx.stx_dio_mem_align > a)
            a = sx.stx_dio_mem_align;
        return a;
    }
#endif
    struct stat st;
    if (blksize == 0 && fstat((int)f, &st) == 0 && st.st_blksize > 0 &&
        (unsigned long long)st.st_blksize <= UINT32_MAX)
        blksize = (uint32_t)st.st_blksize;
    if (blksize < 512 || (blksize & (blksize - 1)) != 0)
        return 4096; /* a page: a multiple of every logical block a disk has */
    return blksize < ND_GUESSED_ALIGN_MAX ? blksize : ND_GUESSED_ALIGN_MAX;
}
