/*
 * thread.c - mutexes and aligned memory on Win32.
 */
#include <malloc.h>
#include <stdlib.h>

#include "win.h"

/* A slim reader/writer lock used exclusively: no kernel object, no
 * initialisation that can fail, and it never needs destroying. */
struct nd_mutex {
    SRWLOCK lock;
};

nd_mutex *nd__mutex_new(void)
{
    nd_mutex *m = malloc(sizeof(*m));
    if (m != NULL)
        InitializeSRWLock(&m->lock);
    return m;
}

void nd__mutex_free(nd_mutex *m)
{
    free(m);
}

void nd__mutex_lock(nd_mutex *m)
{
    AcquireSRWLockExclusive(&m->lock);
}

void nd__mutex_unlock(nd_mutex *m)
{
    ReleaseSRWLockExclusive(&m->lock);
}

void *nd__os_aligned_alloc(size_t align, size_t size)
{
    if (ND_FAULT(ND_FAULT_ALLOC))
        return NULL;
    if (align < sizeof(void *))
        align = sizeof(void *);
    return _aligned_malloc(size, align);
}

void nd__os_aligned_free(void *p)
{
    _aligned_free(p); /* like free, it accepts NULL */
}
