/*
 * thread.c - mutexes and aligned memory on POSIX.
 */
/* -std=c11 without extensions declares only ISO C; this file needs
 * posix_memalign, pthread_setname_np. */
#if !defined(_GNU_SOURCE)
#  define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "../internal.h"

struct nd_mutex {
    pthread_mutex_t m;
};

nd_mutex *nd__mutex_new(void)
{
    nd_mutex *m = malloc(sizeof(*m));
    if (m != NULL && pthread_mutex_init(&m->m, NULL) != 0) {
        free(m);
        return NULL;
    }
    return m;
}

void nd__mutex_free(nd_mutex *m)
{
    if (m != NULL) {
        pthread_mutex_destroy(&m->m);
        free(m);
    }
}

void nd__mutex_lock(nd_mutex *m)
{
    pthread_mutex_lock(&m->m);
}

void nd__mutex_unlock(nd_mutex *m)
{
    pthread_mutex_unlock(&m->m);
}

void *nd__os_aligned_alloc(size_t align, size_t size)
{
    void *p = NULL;
    if (ND_FAULT(ND_FAULT_ALLOC))
        return NULL;
    if (align < sizeof(void *))
        align = sizeof(void *);
    /* Direct I/O from a buffer that straddles pages is accepted but split by
     * the block layer: measured ~20x slower than from a page-aligned one. */
    long ps = sysconf(_SC_PAGESIZE);
    size_t page = ps > 0 ? (size_t)ps : 4096;
    if (size >= page && align < page)
        align = page;
    return posix_memalign(&p, align, size) == 0 ? p : NULL;
}

void nd__os_aligned_free(void *p)
{
    free(p);
}
