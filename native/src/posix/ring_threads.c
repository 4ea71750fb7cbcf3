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
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#  include <sys/eventfd.h>
#endif

#include "../ring.h"

#if defined(__linux__)
#  define ND_EVENT_KIND "eventfd"
#else
#  define ND_EVENT_KIND "pipe"
#endif

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
    pthread_cond_t work; /* pending not empty, or stopping */
    pthread_cond_t done; /* done not empty, idle, or woken */
    nd_ring_fifo pending, finished;
    uint32_t busy; /* ops taken by a worker and not yet finished */
    int stopping, woken;
    pthread_t threads[MAX_WORKERS];
    int started;
    /* nd_ring_event_fd: the descriptor handed out and the one written to
     * signal it (an eventfd: the same; a pipe elsewhere: its two ends); -1
     * until the first call. Set under mu, never changed afterwards. */
    int event_fd, signal_fd;
} pool;

/* Makes the event descriptor readable. An eventfd adds 1 to its counter; a
 * full pipe is readable already, so EAGAIN loses nothing. */
static void signal_event(int fd)
{
#if defined(__linux__)
    uint64_t one = 1;
    ssize_t n = write(fd, &one, sizeof(one));
#else
    ssize_t n = write(fd, "", 1);
#endif
    (void)n;
}

/* With mu held: queues a finished op for the reaper. Returns the descriptor
 * to signal once mu is released, or -1. Only a FIFO that was empty needs a
 * signal: a waiter that read the descriptor reaps until the FIFO is empty
 * (nativedir.h), so whatever joins a non-empty FIFO is reaped with what is
 * there, and the next op into an emptied one signals again. */
static int push_finished(pool *p, uint32_t index)
{
    int was_empty = p->finished.count == 0;
    nd__fifo_push(&p->finished, index);
    pthread_cond_broadcast(&p->done);
    return was_empty ? p->signal_fd : -1;
}

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
            op->result = rc != ND_OK      ? rc
                         : got < op->left ? nd__fail(ND_E_IO, "ring read: the file shrank")
                                          : op->len;
        }
        pthread_mutex_lock(&p->mu);
        p->busy--;
        int fd = push_finished(p, index);
        if (fd >= 0) {
            pthread_mutex_unlock(&p->mu);
            signal_event(fd);
            pthread_mutex_lock(&p->mu);
        }
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static int32_t threads_start(nd_ring *r, uint32_t index)
{
    pool *p = r->impl;
    int fd = -1;
    pthread_mutex_lock(&p->mu);
    if (r->ops[index].fd == ND_OS_FILE_INVALID)
        fd = push_finished(p, index);
    else
        nd__fifo_push(&p->pending, index), pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->mu);
    if (fd >= 0)
        signal_event(fd);
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
    if (p->event_fd >= 0)
        close(p->event_fd);
    if (p->signal_fd >= 0 && p->signal_fd != p->event_fd)
        close(p->signal_fd);
    free(p->pending.items);
    free(p->finished.items);
    free(p);
}

/* An eventfd on Linux; elsewhere a pipe, both ends non-blocking and
 * close-on-exec. Returns 0, or -1 with errno set. */
static int open_event(int *read_end, int *write_end)
{
    if (ND_FAULT(ND_FAULT_OPEN))
        return -1;
#if defined(__linux__)
    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0)
        return -1;
    *read_end = *write_end = fd;
    return 0;
#else
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    for (int i = 0; i < 2; i++) {
        if (fcntl(fds[i], F_SETFD, FD_CLOEXEC) != 0 ||
            fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK) != 0) {
            int e = errno;
            close(fds[0]);
            close(fds[1]);
            errno = e;
            return -1;
        }
    }
    *read_end = fds[0];
    *write_end = fds[1];
    return 0;
#endif
}

static int32_t threads_event_fd(nd_ring *r)
{
    pool *p = r->impl;
    int32_t rc = ND_OK;
    int fd = -1;
    pthread_mutex_lock(&p->mu);
    if (p->event_fd < 0) {
        if (open_event(&p->event_fd, &p->signal_fd) != 0)
            rc = nd__fail_os(errno, "ring: %s", ND_EVENT_KIND);
        else /* ops that finished before there was a descriptor: one signal for them */
            fd = p->signal_fd;
    }
    if (rc == ND_OK)
        rc = p->event_fd;
    pthread_mutex_unlock(&p->mu);
    if (fd >= 0)
        signal_event(fd);
    return rc;
}

static const nd_ring_backend_ops threads_ops = {
    threads_start, threads_reap, threads_wake, threads_drain, threads_free, NULL, threads_event_fd};

int32_t nd__ring_threads_init(nd_ring *r)
{
    pool *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return nd__fail(ND_E_NO_MEMORY, "ring: out of memory");
    p->pending.items = calloc(r->depth, sizeof(uint32_t));
    p->finished.items = calloc(r->depth, sizeof(uint32_t));
    p->pending.cap = p->finished.cap = r->depth;
    p->event_fd = p->signal_fd = -1;
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
