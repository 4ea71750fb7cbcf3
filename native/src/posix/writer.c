/*
 * writer.c - overlapped writes for direct (merge) outputs, on a thread of the
 * output's own: pwrites in flight while output.c checksums and copies the
 * next buffer.
 *
 * Why a thread and not io_uring: ext4, xfs and btrfs cannot start an
 * O_DIRECT write that extends the file without blocking, so io_uring hands
 * every such write to its io-wq worker, and the output's CPU work does not
 * overlap the device at all: 64 MiB in 1 MiB writes with ~0.5 ms of CPU per
 * write take 1.24-1.35x a plain pwrite loop through io_uring, 1.18-1.30x with
 * no overlap, and 1.05-1.10x with the write on a thread (bench/probes,
 * nd_probe_writer). A thread also gives macOS (F_NOCACHE writes block) the
 * same overlap.
 *
 * Two writes may be queued (ND_OS_WRITER_DEPTH): the thread then goes from
 * one pwrite straight to the next. With one, it would sleep until the caller
 * had reaped the last and handed over the next: two cross-CPU wake-ups per
 * write during which the device has nothing to do, ~0.6 ms per 1 MiB write on
 * a fast disk. The price: a third 1 MiB buffer per direct output.
 *
 * The thread starts with the first full buffer (an output that never fills
 * one never has a thread) and ends at close. Failures are reported on the
 * caller's thread: the worker keeps only errno, wait() formats the message.
 * Injected faults (tests) hit the write on the writer's thread, as a real
 * failure would.
 */
/* -std=c11 without extensions declares only ISO C; this file needs
 * pthread_sigmask and pthread_setname_np. */
#if !defined(_GNU_SOURCE)
#  define _GNU_SOURCE
#endif
#include "../internal.h"
#include "posix.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One queued write; the thread fills in its result. */
typedef struct {
    const uint8_t *buf;
    size_t len;
    int64_t off;
    ssize_t got; /* bytes written, or -1 and err */
    int err;
} write_op;

struct nd_os_writer {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* queued, done or stopping moved */
    pthread_t thread;
    int running; /* the thread runs (joined by free) */
    /* writes numbered from 0: ops[n % DEPTH] holds write n */
    uint64_t queued; /* handed to the thread: under mu */
    uint64_t done;   /* finished by the thread: under mu */
    uint64_t reaped; /* results taken by wait: the caller's only */
    int stopping;    /* under mu */
    int fd;
    write_op ops[ND_OS_WRITER_DEPTH];
    char what[];
};

static void *write_loop(void *arg)
{
    nd_os_writer *w = arg;
#if defined(__APPLE__)
    pthread_setname_np("nd-writer");
#elif defined(__linux__)
    pthread_setname_np(pthread_self(), "nd-writer"); /* what perf and top show */
#endif
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (w->done == w->queued && !w->stopping)
            pthread_cond_wait(&w->cv, &w->mu);
        if (w->done == w->queued)
            break;
        write_op *op = &w->ops[w->done % ND_OS_WRITER_DEPTH];
        pthread_mutex_unlock(&w->mu);
        ssize_t n = -1;
        size_t now = op->len;
        int fault = ND_FAULT_CHECK(ND_FAULT_WRITE);
        if (fault == 2 && now >= 8192) /* the rest goes through the short-write path in wait */
            now = (now / 2) & ~(size_t)4095;
        if (fault != 1)
            n = pwrite(w->fd, op->buf, now, (off_t)op->off);
        int e = n < 0 ? errno : 0;
        pthread_mutex_lock(&w->mu);
        op->got = n;
        op->err = e;
        w->done++;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* The thread takes no signals: they stay with the application's threads, as
 * libuv's pool threads do. */
static int start_thread(nd_os_writer *w)
{
    if (ND_FAULT(ND_FAULT_THREAD))
        return errno;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int e = pthread_create(&w->thread, NULL, write_loop, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    w->running = e == 0;
    return e;
}

int32_t nd__os_writer_new(nd_os_file f, const char *what, nd_os_writer **out)
{
    size_t n = strlen(what);
    nd_os_writer *w = calloc(1, sizeof(*w) + n + 1);
    if (w == NULL)
        return ND_E_NOT_SUPPORTED; /* output.c then writes synchronously */
    if (pthread_mutex_init(&w->mu, NULL) != 0) {
        free(w);
        return ND_E_NOT_SUPPORTED;
    }
    if (pthread_cond_init(&w->cv, NULL) != 0) {
        pthread_mutex_destroy(&w->mu);
        free(w);
        return ND_E_NOT_SUPPORTED;
    }
    w->fd = (int)f;
    memcpy(w->what, what, n + 1);
    *out = w;
    return ND_OK;
}

int32_t nd__os_writer_start(nd_os_writer *w, const void *buf, size_t len, int64_t off)
{
    if (!w->running && start_thread(w) != 0) /* no thread: this write, synchronously */
        return nd__os_pwrite((nd_os_file)w->fd, w->what, buf, len, off);
    pthread_mutex_lock(&w->mu);
    /* the caller keeps fewer than DEPTH unreaped, so this slot's write was reaped */
    w->ops[w->queued % ND_OS_WRITER_DEPTH] = (write_op){buf, len, off, 0, 0};
    w->queued++;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return ND_OK;
}

/* The status of a finished write; a short one is finished here, synchronously. */
static int32_t result_of(nd_os_writer *w, const write_op *op)
{
    ssize_t got = op->got;
    if (got < 0 && (op->err == EINTR || op->err == EAGAIN))
        got = 0; /* nothing written: the synchronous path below does it all (and retries) */
    if (got < 0)
        return nd__fail_os(op->err, "pwrite '%s' at %lld", w->what, (long long)op->off);
    if ((size_t)got < op->len) /* short: finish synchronously (retries inside) */
        return nd__os_pwrite((nd_os_file)w->fd, w->what, op->buf + got, op->len - (size_t)got,
                             op->off + got);
    return ND_OK;
}

int32_t nd__os_writer_wait(nd_os_writer *w, int keep)
{
    int32_t first = ND_OK;
    while (w->reaped + (uint64_t)(keep > 0 ? keep : 0) < w->queued) {
        pthread_mutex_lock(&w->mu);
        while (w->done <= w->reaped)
            pthread_cond_wait(&w->cv, &w->mu);
        write_op op = w->ops[w->reaped % ND_OS_WRITER_DEPTH];
        pthread_mutex_unlock(&w->mu);
        w->reaped++;
        if (first == ND_OK) /* after a failure the output is dead: the rest is only reaped */
            first = result_of(w, &op);
    }
    return first;
}

void nd__os_writer_free(nd_os_writer *w)
{
    if (w == NULL)
        return;
    (void)nd__os_writer_wait(w, 0); /* the buffers must outlive their writes */
    if (w->running) {
        pthread_mutex_lock(&w->mu);
        w->stopping = 1;
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->mu);
        pthread_join(w->thread, NULL);
    }
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
