/*
 * writer_uring.c - overlapped writes for direct outputs, on io_uring.
 *
 * A direct (O_DIRECT) write blocks until the device has the bytes; with one
 * write in flight the output can checksum and copy the next megabyte
 * meanwhile. A two-entry io_uring per direct output is enough: merges are
 * few and large.
 */
/* -std=c11 without extensions declares only ISO C; this file needs
 * sigset_t and the rest liburing.h expects. */
#if !defined(_GNU_SOURCE)
#  define _GNU_SOURCE
#endif
#include "../internal.h"
#include "posix.h"

#ifdef ND_HAVE_LIBURING

#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>

struct nd_os_writer {
    struct io_uring ring;
    int fd;
    int busy;
    int32_t deferred; /* an injected failure, reported by wait */
    const uint8_t *buf;
    size_t len;
    int64_t off;
    char what[];
};

int32_t nd__os_writer_new(nd_os_file f, const char *what, nd_os_writer **out)
{
    if (getenv("ND_RING_NO_URING") != NULL)
        return ND_E_NOT_SUPPORTED;
    size_t n = strlen(what);
    nd_os_writer *w = calloc(1, sizeof(*w) + n + 1);
    if (w == NULL)
        return ND_E_NOT_SUPPORTED;
    if (io_uring_queue_init(2, &w->ring, 0) < 0) {
        free(w);
        return ND_E_NOT_SUPPORTED; /* old kernel, seccomp, locked-memory limit */
    }
    w->fd = (int)f;
    memcpy(w->what, what, n + 1);
    *out = w;
    return ND_OK;
}

int32_t nd__os_writer_start(nd_os_writer *w, const void *buf, size_t len, int64_t off)
{
    w->buf = buf;
    w->len = len;
    w->off = off;
    w->deferred = ND_OK;
    size_t now = len;
    int fault;
    while ((fault = ND_FAULT_CHECK(ND_FAULT_WRITE)) == 1 && errno == EINTR)
        ; /* an interrupted write is retried, as nd__os_pwrite does */
    if (fault == 1) { /* reported by wait, as a real failure would be */
        w->deferred = nd__fail_os(errno, "pwrite '%s' at %lld", w->what, (long long)off);
        w->busy = 1;
        return ND_OK;
    }
    if (fault == 2 && now >= 8192) /* the rest goes through the short-write path in wait */
        now = (now / 2) & ~(size_t)4095;
    struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);
    if (sqe == NULL) /* cannot happen with one write in flight; stay correct anyway */
        return nd__os_pwrite((nd_os_file)w->fd, w->what, buf, len, off);
    io_uring_prep_write(sqe, w->fd, buf, (unsigned)now, (uint64_t)off);
    int rc;
    do
        rc = io_uring_submit(&w->ring);
    while (rc == -EINTR);
    if (rc < 0)
        return nd__os_pwrite((nd_os_file)w->fd, w->what, buf, len, off);
    w->busy = 1;
    return ND_OK;
}

int32_t nd__os_writer_wait(nd_os_writer *w)
{
    if (!w->busy)
        return ND_OK;
    w->busy = 0;
    if (w->deferred != ND_OK)
        return w->deferred;
    struct io_uring_cqe *cqe;
    int rc;
    do
        rc = io_uring_wait_cqe(&w->ring, &cqe);
    while (rc == -EINTR);
    if (rc < 0)
        return nd__fail_os(-rc, "pwrite '%s' at %lld: waiting for io_uring", w->what,
                           (long long)w->off);
    int res = cqe->res;
    io_uring_cqe_seen(&w->ring, cqe);
    if (res == -EINTR || res == -EAGAIN)
        res = 0; /* nothing written: the synchronous path below does it all */
    if (res < 0)
        return nd__fail_os(-res, "pwrite '%s' at %lld", w->what, (long long)w->off);
    if ((size_t)res < w->len) /* short: finish synchronously (retries inside) */
        return nd__os_pwrite((nd_os_file)w->fd, w->what, w->buf + res, w->len - (size_t)res,
                             w->off + res);
    return ND_OK;
}

void nd__os_writer_free(nd_os_writer *w)
{
    if (w == NULL)
        return;
    (void)nd__os_writer_wait(w);
    io_uring_queue_exit(&w->ring);
    free(w);
}

#else /* !ND_HAVE_LIBURING: direct outputs write synchronously */

int32_t nd__os_writer_new(nd_os_file f, const char *what, nd_os_writer **out)
{
    (void)f, (void)what, (void)out;
    return ND_E_NOT_SUPPORTED;
}

int32_t nd__os_writer_start(nd_os_writer *w, const void *buf, size_t len, int64_t off)
{
    (void)w, (void)buf, (void)len, (void)off;
    return ND_E_NOT_SUPPORTED;
}

int32_t nd__os_writer_wait(nd_os_writer *w)
{
    (void)w;
    return ND_OK;
}

void nd__os_writer_free(nd_os_writer *w)
{
    (void)w;
}

#endif
