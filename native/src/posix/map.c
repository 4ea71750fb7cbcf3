/*
 * map.c - read-only mappings on POSIX.
 */
/* -std=c11 without extensions declares only ISO C; this file needs
 * MADV_* advice, MADV_POPULATE_READ. */
#if !defined(_GNU_SOURCE)
#  define _GNU_SOURCE
#endif
#include <errno.h>
#include <sys/mman.h>

#include "../internal.h"
#include "posix.h"

int32_t nd__os_map(nd_os_file f, const char *what, int64_t len, void **addr, void **token)
{
    void *p = mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, (int)f, 0);
    if (p == MAP_FAILED) {
        int e = errno;
        return nd__fail_os(e, "mmap '%s' (%lld bytes)", what, (long long)len);
    }
    *addr = p;
    *token = NULL;
    return ND_OK;
}

void nd__os_unmap(void *addr, int64_t len, void *token)
{
    (void)token;
    munmap(addr, (size_t)len);
}

void nd__os_map_revoke(void *addr, int64_t len, void **token)
{
    (void)token;
    /* MAP_FIXED replaces the file's pages with anonymous ones in one step,
     * under the process's mapping lock: a reader faults into one or the
     * other, never into a hole. Read-only private memory costs nothing until
     * read (the shared zero page then). Should the call fail, the file stays
     * mapped until the last reference unmaps it, as before revocation. */
    (void)mmap(addr, (size_t)len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
}

void nd__os_map_advise(void *addr, int64_t len, nd_advice advice)
{
    int a = MADV_NORMAL;
    switch (advice) {
    case ND_ADVICE_NORMAL: a = MADV_NORMAL; break;
    case ND_ADVICE_RANDOM: a = MADV_RANDOM; break;
    case ND_ADVICE_SEQUENTIAL: a = MADV_SEQUENTIAL; break;
    case ND_ADVICE_WILLNEED: a = MADV_WILLNEED; break;
    case ND_ADVICE_DONTNEED: a = MADV_DONTNEED; break;
    }
    (void)madvise(addr, (size_t)len, a);
}

void nd__os_map_populate(void *addr, int64_t len)
{
#if defined(MADV_POPULATE_READ)
    /* Linux 5.14+: fault every page in now, without touching them one by one */
    if (madvise(addr, (size_t)len, MADV_POPULATE_READ) == 0)
        return;
#endif
    (void)madvise(addr, (size_t)len, MADV_WILLNEED);
    /* touch one byte per page so the preload is real where WILLNEED is only a hint */
    volatile const unsigned char *p = addr;
    unsigned char sink = 0;
    for (int64_t i = 0; i < len; i += 4096)
        sink ^= p[i];
    (void)sink;
}
