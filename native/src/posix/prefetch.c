/*
 * prefetch.c - residency checks on POSIX, for the prefetch back-off: a look
 * that costs one system call tells whether a WILLNEED (which walks the page
 * cache and costs more) is needed at all.
 */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#  define _GNU_SOURCE /* preadv2, RWF_NOWAIT */
#endif
#include <errno.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>
#if defined(__linux__)
#  include <sys/syscall.h>
#endif

#include "../internal.h"
#include "posix.h"

/* mincore's vector is filled this many pages per call: 1 MiB of 4 KiB pages */
#define MINCORE_PAGES 256

int64_t nd__os_page_size(void)
{
    static _Atomic int64_t cached;
    int64_t ps = atomic_load_explicit(&cached, memory_order_relaxed);
    if (ps == 0) {
        long v = sysconf(_SC_PAGESIZE);
        ps = v > 0 ? (int64_t)v : 4096;
        atomic_store_explicit(&cached, ps, memory_order_relaxed);
    }
    return ps;
}

int nd__os_map_resident(const void *addr, int64_t len)
{
    int64_t ps = nd__os_page_size();
    const uint8_t *p = addr;
#if defined(__APPLE__)
    char vec[MINCORE_PAGES];
#else
    unsigned char vec[MINCORE_PAGES];
#endif
    while (len > 0) {
        int64_t pages = (len + ps - 1) / ps;
        if (pages > MINCORE_PAGES)
            pages = MINCORE_PAGES;
        if (mincore((void *)p, (size_t)(pages * ps), vec) != 0)
            return -1;
        for (int64_t i = 0; i < pages; i++)
            if (!(vec[i] & 1))
                return 0;
        p += pages * ps;
        len -= pages * ps;
    }
    return 1;
}

#if defined(__linux__)
/* cachestat(2), Linux 6.5: the cached pages of a range in one call. The
 * structures are the kernel's ABI; glibc has no wrapper yet. New system calls
 * have one number on every architecture since 5.1 (alpha adds 110). */
#  if defined(__NR_cachestat)
#    define ND_NR_CACHESTAT __NR_cachestat
#  elif !defined(__alpha__)
#    define ND_NR_CACHESTAT 451
#  endif
struct nd_cachestat_range {
    uint64_t off, len;
};
struct nd_cachestat {
    uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};
#endif

#if defined(RWF_NOWAIT)
/* 1 if the byte at off is in the page cache, 0 if not, -1 if the OS refuses
 * to say (kernels before 4.14) */
static int nowait_probe(int fd, int64_t off)
{
    char b;
    struct iovec iov = {&b, 1};
    ssize_t n;
    do
        n = preadv2(fd, &iov, 1, (off_t)off, RWF_NOWAIT);
    while (n < 0 && errno == EINTR);
    if (n == 1)
        return 1;
    return n < 0 && errno == EAGAIN ? 0 : -1;
}
#endif

int nd__os_file_resident(nd_os_file f, int64_t off, int64_t len)
{
    if (len <= 0)
        return 1;
#if defined(ND_NR_CACHESTAT)
    static _Atomic int no_cachestat; /* ENOSYS, or a seccomp filter's EPERM */
    if (!atomic_load_explicit(&no_cachestat, memory_order_relaxed)) {
        int64_t ps = nd__os_page_size();
        struct nd_cachestat_range r = {(uint64_t)off,
                                       (uint64_t)len}; /* len 0 would mean "to EOF" */
        struct nd_cachestat cs;
        if (syscall(ND_NR_CACHESTAT, (int)f, &r, &cs, 0) == 0) {
            uint64_t pages = (uint64_t)((off + len + ps - 1) / ps - off / ps);
            return cs.nr_cache >= pages;
        }
        if (errno == ENOSYS || errno == EPERM)
            atomic_store_explicit(&no_cachestat, 1, memory_order_relaxed);
        else
            return -1;
    }
#endif
#if defined(RWF_NOWAIT)
    /* one byte at each end: the pages between are most likely alike, and the
     * back-off looks again soon when they are not */
    int r = nowait_probe((int)f, off);
    if (r == 1 && len > 1)
        r = nowait_probe((int)f, off + len - 1);
    return r;
#else
    (void)f, (void)off;
    return -1;
#endif
}
