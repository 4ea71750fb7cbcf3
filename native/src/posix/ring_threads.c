/*
 * ring_threads.c - the portable ring backend: a few threads doing pread.
 *
 * Used where io_uring is missing or refused (old kernels, seccomp, macOS)
 * and when ND_RING_FORCE_THREADS asks for it. Ops move through two FIFOs of
 * slot indexes, sized to the ring's depth, so nothing is allocated per read.
 */
/* -std=c11 without extensions declares only ISO C; this file needs
 * clock_gettime, pthread_setname_np. */
#if !defined(_GNU_SOURCE)
#  define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "../ring.h"

/* Reads in flight at once: one per worker, each blocked in pread. Up to the
 * ring's depth, capped: devices gain little past 8 outstanding reads from a
 * fallback that is meant to be correct more than fast. */
#define MAX_WORKERS 8

/* the clock condition variables time out against */
#if defined(__APPLE__)
#  define COND_CLOCK CLOCK_REALTIME /* no pthread_condattr_setclock */
#else
#  define COND_CLOCK CLOCK_MONOTONIC
#endif

static struct timespec deadline(int32_t ms)
{
    struct timespec t;
    clock_gettime(COND_CLOCK, &t);
    t.tv_sec += ms / 1000;
    t.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L)
        t.tv_sec++, t.tv_nsec -= 1000000000L;
    return t;
}

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t work;  /* pending not empty, or stopping */
    pthread_cond_t done;  /* done not empty, idle, or woken */
    nd_ring_fifo pending, finished;
    uint32_t busy; /* ops taken by a worker and not yet finished */
    int stopping, woken;
    pthread_t threads[MAX_WORKERS];
    int started;
} pool;

static void *worker(void *arg)
{
    nd_ring *r = arg;
    pool *p = r->impl;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->pending.count == 0 && !p->stopping)
            pthread_cond_wait(&p->work, &p->mu);
        if (p->pending.count == 0)
            break;
        uint32_t index = nd__fifo_pop(&p->pending);
        p->busy++;
        pthread_mutex_unlock(&p->mu);
        nd_ring_op *op = &r->ops[index];
        if (op->fd != ND_OS_FILE_INVALID) {
            size_t got = 0;
            int32_t rc = nd__os_pread(op->fd, "ring read", op->dst, op->left, op->off, &got);
            op->result = rc != ND_OK       ? rc
                         : got < op->left ? nd__fail(ND_E_IO, "ring read: the file shrank")
                                          : op->len;
        }
        pthread_mutex_lock(&p->mu);
        p->busy--;
        nd__fifo_push(&p->finished, index);
        pthread_cond_broadcast(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static int32_t threads_start(nd_ring *r, uint32_t index)
{
    pool *p = r->impl;
    pthread_mutex_lock(&p->mu);
    if (r->ops[index].fd == ND_OS_FILE_INVALID)
        nd__fifo_push(&p->finished, index), pthread_cond_broadcast(&p->done);
    else
        nd__fifo_push(&p->pending, index), pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->mu);
    return ND_OK;
}

static int32_t threads_reap(nd_ring *r, uint64_t *tags, int64_t *results, int32_t max,
                            int32_t timeout_ms)
{
    pool *p = r->impl;
    struct timespec until = deadline(timeout_ms > 0 ? timeout_ms : 0);
    pthread_mutex_lock(&p->mu);
    while (p->finished.count == 0 && timeout_ms != 0 && !p->woken && !atomic_load(&r->closing)) {
        if (timeout_ms < 0) {
            pthread_cond_wait(&p->done, &p->mu);
        } else if (pthread_cond_timedwait(&p->done, &p->mu, &until) == ETIMEDOUT) {
            break;
        }
    }
    p->woken = 0;
    int32_t n = 0;
    while (n < max && p->finished.count > 0) {
        uint32_t index = nd__fifo_pop(&p->finished);
        /* nd__ring_complete takes the ring's slot lock, never ours: no cycle */
        nd__ring_complete(r, index, tags, results, n++);
    }
    pthread_mutex_unlock(&p->mu);
    return n;
}

static void threads_wake(nd_ring *r)
{
    pool *p = r->impl;
    pthread_mutex_lock(&p->mu);
    p->woken = 1;
    pthread_cond_broadcast(&p->done);
    pthread_mutex_unlock(&p->mu);
}

static void threads_drain(nd_ring *r)
{
    pool *p = r->impl;
    pthread_mutex_lock(&p->mu);
    while (atomic_load(&r->in_flight) > 0) {
        while (p->finished.count > 0)
            nd__ring_discard(r, nd__fifo_pop(&p->finished));
        if (atomic_load(&r->in_flight) == 0)
            break;
        struct timespec until = deadline(10);
        pthread_cond_timedwait(&p->done, &p->mu, &until);
    }
    pthread_mutex_unlock(&p->mu);
}

static void threads_free(nd_ring *r)
{
    pool *p = r->impl;
    pthread_mutex_lock(&p->mu);
    p->stopping = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->started; i++)
        pthread_join(p->threads[i], NULL);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
    free(p->pending.items);
    free(p->finished.items);
    free(p);
}

static const nd_ring_backend_ops threads_ops = {threads_start, threads_reap, threads_wake,
                                                threads_drain, threads_free, NULL};

int32_t nd__ring_threads_init(nd_ring *r)
{
    pool *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return nd__fail(ND_E_NO_MEMORY, "ring: out of memory");
    p->pending.items = calloc(r->depth, sizeof(uint32_t));
    p->finished.items = calloc(r->depth, sizeof(uint32_t));
    p->pending.cap = p->finished.cap = r->depth;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
#if !defined(__APPLE__)
    pthread_condattr_setclock(&ca, COND_CLOCK);
#endif
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, &ca);
    pthread_condattr_destroy(&ca);
    r->impl = p;
    r->vt = &threads_ops;
    r->backend = ND_RING_THREADS;
    if (p->pending.items == NULL || p->finished.items == NULL)
        return nd__fail(ND_E_NO_MEMORY, "ring: out of memory");
    uint32_t workers = r->depth < MAX_WORKERS ? r->depth : MAX_WORKERS;
    for (uint32_t i = 0; i < workers; i++) {
        int e = ND_FAULT(ND_FAULT_THREAD) ? errno : pthread_create(&p->threads[i], NULL, worker, r);
        if (e != 0)
            return nd__fail_os(e, "ring: pthread_create");
        p->started++;
    }
    return ND_OK;
}
