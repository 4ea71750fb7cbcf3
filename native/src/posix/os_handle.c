/*
 * os_handle.c - nd_os_* on POSIX: pread, pwrite, fstat, fcntl, posix_fadvise
 * and madvise on a descriptor or memory the caller owns, compiled against
 * this system's headers (O_DIRECT is 0x4000 on x86-64 Linux and 0x10000 on
 * arm64; the advice codes differ between systems).
 */
#if !defined(_GNU_SOURCE)
#  define _GNU_SOURCE /* O_DIRECT, MADV_* under -std=c11 */
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../internal.h"
#include "../os_handle.h"

/* A descriptor is an int: anything else is no open file. */
static int32_t to_fd(int64_t f, int *fd)
{
    if (f < 0 || f > INT_MAX) {
        *fd = -1;
        return nd__fail_os(EBADF, "%lld is not a file descriptor", (long long)f);
    }
    *fd = (int)f;
    return ND_OK;
}

/* What a transfer's errno means for a descriptor the caller chose: EBADF on
 * a descriptor that is open is one opened without this access; ESPIPE one
 * that cannot seek. Returns the status recorded. */
static int32_t transfer_failed(int e, int fd, int write, int64_t off)
{
    const char *op = write ? "pwrite" : "pread";
    nd__fail_os(e, "%s of descriptor %d at %lld", op, fd, (long long)off);
    if (e == EBADF) {
        int fl = fcntl(fd, F_GETFL);
        if (fl != -1 && (fl & O_ACCMODE) == (write ? O_RDONLY : O_WRONLY))
            return nd__fail_again(ND_E_ACCESS, "not open for %s", write ? "writing" : "reading");
    }
    if (e == ESPIPE)
        return nd__fail_again(ND_E_NOT_SUPPORTED, "cannot seek (a pipe, a socket or a terminal)");
    return nd__status_from_os(e);
}

int64_t nd__os_handle_read(int64_t f, int64_t off, void *dst, int64_t len)
{
    int fd;
    int32_t rc = to_fd(f, &fd);
    if (rc != ND_OK)
        return rc;
    int64_t done = 0;
    do {
        int64_t want = len - done;
        if (want > (int64_t)1 << 30)
            want = (int64_t)1 << 30; /* a multiple of every block: direct reads stay aligned */
        ssize_t n = pread(fd, (char *)dst + done, (size_t)want, (off_t)(off + done));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (done > 0)
                return done; /* the next call, at the offset after these bytes, reports it */
            return transfer_failed(errno, fd, 0, off);
        }
        if (n == 0)
            break; /* the end */
        done += n;
    } while (done < len);
    return done;
}

int64_t nd__os_handle_write(int64_t f, int64_t off, const void *src, int64_t len)
{
    int fd;
    int32_t rc = to_fd(f, &fd);
    if (rc != ND_OK)
        return rc;
    int64_t done = 0;
    do {
        int64_t want = len - done;
        if (want > (int64_t)1 << 30)
            want = (int64_t)1 << 30;
        ssize_t n = pwrite(fd, (const char *)src + done, (size_t)want, (off_t)(off + done));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return transfer_failed(errno, fd, 1, off + done);
        }
        if (n == 0) /* a device that takes nothing and says nothing: it is full */
            return transfer_failed(ENOSPC, fd, 1, off + done);
        done += n;
    } while (done < len);
    return done;
}

int32_t nd__os_handle_length(int64_t f, int64_t *out_len)
{
    int fd;
    int32_t rc = to_fd(f, &fd);
    if (rc != ND_OK)
        return rc;
    struct stat st;
    if (fstat(fd, &st) != 0)
        return nd__fail_os(errno, "fstat of descriptor %d", fd);
    if (S_ISDIR(st.st_mode))
        return nd__fail_os(EISDIR, "descriptor %d is a directory", fd);
    if (!S_ISREG(st.st_mode) && lseek(fd, 0, SEEK_CUR) < 0) {
        int e = errno;
        nd__fail_os(e, "lseek of descriptor %d", fd);
        if (e == ESPIPE)
            return nd__fail_again(ND_E_NOT_SUPPORTED,
                                  "cannot seek (a pipe, a socket or a terminal)");
        return nd__status_from_os(e);
    }
    *out_len = (int64_t)st.st_size;
    return ND_OK;
}

int32_t nd__os_handle_set_direct(int64_t f, int direct)
{
    int fd;
    int32_t rc = to_fd(f, &fd);
    if (rc != ND_OK)
        return rc;
#if defined(__APPLE__)
    if (fcntl(fd, F_NOCACHE, direct) == -1)
        return nd__fail_os(errno, "fcntl(F_NOCACHE) of descriptor %d", fd);
    return ND_OK;
#elif defined(O_DIRECT)
    int fl = fcntl(fd, F_GETFL);
    if (fl == -1)
        return nd__fail_os(errno, "fcntl(F_GETFL) of descriptor %d", fd);
    int want = direct ? (fl | O_DIRECT) : (fl & ~O_DIRECT);
    if (want != fl && fcntl(fd, F_SETFL, want) == -1) {
        int e = errno;
        nd__fail_os(e, "fcntl(F_SETFL, %s O_DIRECT) of descriptor %d", direct ? "with" : "without",
                    fd);
        /* the file system has no direct I/O (tmpfs before Linux 6.6, some FUSE) */
        if (e == EINVAL)
            return nd__fail_again(ND_E_NOT_SUPPORTED, "no direct I/O on this file system");
        return nd__status_from_os(e);
    }
    return ND_OK;
#else
    (void)direct;
    return nd__fail(ND_E_NOT_SUPPORTED, "no direct I/O on this system (descriptor %d)", fd);
#endif
}

int32_t nd__os_handle_advise(int64_t f, int64_t off, int64_t len, int32_t advice)
{
    int fd;
    int32_t rc = to_fd(f, &fd);
    if (rc != ND_OK)
        return rc;
#if defined(__APPLE__)
    /* no posix_fadvise: read-ahead on request is the one advice macOS takes */
    if (advice == ND_OS_ADVICE_WILLNEED) {
        struct radvisory ra;
        ra.ra_offset = (off_t)off;
        ra.ra_count = len > INT_MAX ? INT_MAX : (int)len;
        if (len == 0) {
            struct stat st;
            if (fstat(fd, &st) != 0)
                return nd__fail_os(errno, "fstat of descriptor %d", fd);
            int64_t rest = (int64_t)st.st_size - off;
            ra.ra_count = rest <= 0 ? 0 : rest > INT_MAX ? INT_MAX : (int)rest;
        }
        if (ra.ra_count > 0 && fcntl(fd, F_RDADVISE, &ra) == -1)
            return nd__fail_os(errno, "fcntl(F_RDADVISE) of descriptor %d at %lld", fd,
                               (long long)off);
        return ND_OK;
    }
    if (fcntl(fd, F_GETFL) == -1) /* still tell a bad descriptor */
        return nd__fail_os(errno, "fcntl(F_GETFL) of descriptor %d", fd);
    return ND_OK;
#else
    static const int os_advice[] = {POSIX_FADV_NORMAL,   POSIX_FADV_SEQUENTIAL, POSIX_FADV_RANDOM,
                                    POSIX_FADV_WILLNEED, POSIX_FADV_DONTNEED,   POSIX_FADV_NOREUSE};
    int e = posix_fadvise(fd, (off_t)off, (off_t)len, os_advice[advice]);
    if (e != 0) /* returned, not in errno */
        return nd__fail_os(e, "posix_fadvise of descriptor %d at %lld", fd, (long long)off);
    return ND_OK;
#endif
}

int32_t nd__os_memory_advise(void *addr, int64_t len, int32_t advice, int posix)
{
    if ((uint64_t)len > (uint64_t)SIZE_MAX)
        return nd__fail(ND_E_INVALID_ARGUMENT, "length %lld does not fit in memory",
                        (long long)len);
    if (posix) {
        static const int os_advice[] = {POSIX_MADV_NORMAL, POSIX_MADV_SEQUENTIAL, POSIX_MADV_RANDOM,
                                        POSIX_MADV_WILLNEED, POSIX_MADV_DONTNEED};
        int e = posix_madvise(addr, (size_t)len, os_advice[advice]);
        if (e != 0) /* returned, not in errno */
            return nd__fail_os(e, "posix_madvise of %lld bytes at %p", (long long)len, addr);
        return ND_OK;
    }
    static const int os_advice[] = {MADV_NORMAL, MADV_SEQUENTIAL, MADV_RANDOM, MADV_WILLNEED,
                                    MADV_DONTNEED};
    if (madvise(addr, (size_t)len, os_advice[advice]) != 0)
        return nd__fail_os(errno, "madvise of %lld bytes at %p", (long long)len, addr);
    return ND_OK;
}
