/*
 * ring_uring.c - the io_uring backend (Linux, through liburing).
 *
 * Submissions are serialised by sq_mu, completions by cq_mu, so one thread
 * can reap while others submit. Short reads are resubmitted for the rest, so
 * a completion always covers the whole read. Requires IORING_FEAT_EXT_ARG
 * (Linux 5.11): without it liburing's timed wait would submit on the reaper's
 * thread, racing the submitters, so older kernels get the thread pool.
 */
#include "../ring.h"

#ifdef ND_HAVE_LIBURING

#include <errno.h>
#include <liburing.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#define WAKE_TAG UINT64_MAX /* user_data of the NOP that wakes a reaper */

typedef struct {
    struct io_uring ring;
    nd_mutex *sq_mu;
    nd_mutex *cq_mu;
} uring_state;

/* with sq_mu held */
static int32_t queue(uring_state *u, nd_ring_op *op, uint64_t user_data)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
    if (sqe == NULL)
        return nd__fail(ND_E_BUSY, "io_uring submission queue is full");
    if (op == NULL)
        io_uring_prep_nop(sqe);
    else if (op->fd == ND_OS_FILE_INVALID)
        io_uring_prep_nop(sqe); /* done at submit: the NOP carries its completion */
    else
        io_uring_prep_read(sqe, (int)op->fd, op->dst, (unsigned)(op->left > 0x7ffff000u ? 0x7ffff000u : op->left),
                           (uint64_t)op->off);
    io_uring_sqe_set_data64(sqe, user_data);
    if (op != NULL) /* every read of op's fields is above: publish before the kernel sees it */
        atomic_fetch_add_explicit(&op->published, 1, memory_order_release);
    int n;
    int tries = 0;
    do
        n = io_uring_submit(&u->ring);
    while ((n == -EINTR || ((n == -EAGAIN || n == -EBUSY) && ++tries < 100 && sched_yield() == 0)));
    if (n < 0) {
        /* Nothing was consumed (one SQE per submit, under sq_mu), so the SQE
         * still sits in the ring and would go with the next submit after the
         * caller freed its slot: turn it into a NOP whose completion is
         * ignored. */
        int e = -n;
        io_uring_prep_nop(sqe);
        io_uring_sqe_set_data64(sqe, WAKE_TAG);
        return nd__fail_os(e, "io_uring_submit");
    }
    return ND_OK;
}

static int32_t uring_start(nd_ring *r, uint32_t index)
{
    uring_state *u = r->impl;
    nd__mutex_lock(u->sq_mu);
    int32_t rc = queue(u, &r->ops[index], index);
    nd__mutex_unlock(u->sq_mu);
    return rc;
}

/* A CQE for op `index`: 1 if the op is finished (result set), 0 if resubmitted. */
static int settle(nd_ring *r, uring_state *u, uint32_t index, int res)
{
    nd_ring_op *op = &r->ops[index];
    (void)atomic_load_explicit(&op->published, memory_order_acquire);
    if (op->fd == ND_OS_FILE_INVALID)
        return 1;
    if (res == -EINTR || res == -EAGAIN) {
        res = 0; /* retry the same range */
    } else if (res < 0) {
        op->result = nd__fail_os(-res, "nd_ring_reap: read at %lld", (long long)op->off);
        return 1;
    } else if (res == 0) {
        op->result = nd__fail(ND_E_IO, "nd_ring_reap: the file ended at %lld; it shrank after open",
                              (long long)op->off);
        return 1;
    }
    op->off += res;
    op->dst += res;
    op->left -= (size_t)res;
    if (op->left == 0) {
        op->result = op->len;
        return 1;
    }
    nd__mutex_lock(u->sq_mu);
    int32_t rc = queue(u, op, index);
    nd__mutex_unlock(u->sq_mu);
    if (rc != ND_OK) {
        op->result = rc;
        return 1;
    }
    return 0;
}

/* with cq_mu held: handles the ready CQEs; stores finished ops if tags != NULL */
static int32_t harvest(nd_ring *r, uring_state *u, uint64_t *tags, int64_t *results, int32_t max)
{
    int32_t n = 0;
    struct io_uring_cqe *cqe;
    while ((tags == NULL || n < max) && io_uring_peek_cqe(&u->ring, &cqe) == 0) {
        uint64_t data = io_uring_cqe_get_data64(cqe);
        int res = cqe->res;
        io_uring_cqe_seen(&u->ring, cqe);
        if (data == WAKE_TAG)
            continue;
        uint32_t index = (uint32_t)data;
        if (!settle(r, u, index, res))
            continue;
        if (tags != NULL)
            nd__ring_complete(r, index, tags, results, n++);
        else
            nd__ring_discard(r, index);
    }
    return n;
}

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int32_t uring_reap(nd_ring *r, uint64_t *tags, int64_t *results, int32_t max,
                          int32_t timeout_ms)
{
    uring_state *u = r->impl;
    /* a deadline, not a single wait: a signal (managed runtimes send them to
     * suspend threads), a wake or a resubmitted short read must not end the
     * wait early with "nothing arrived" */
    int64_t deadline = timeout_ms > 0 ? now_ms() + timeout_ms : 0;
    nd__mutex_lock(u->cq_mu);
    int32_t n = harvest(r, u, tags, results, max);
    while (n == 0 && timeout_ms != 0 && !atomic_load(&r->closing)) {
        struct io_uring_cqe *cqe;
        int rc;
        if (timeout_ms < 0) {
            rc = io_uring_wait_cqe(&u->ring, &cqe);
        } else {
            int64_t left = deadline - now_ms();
            if (left <= 0)
                break;
            struct __kernel_timespec ts = {left / 1000, (left % 1000) * 1000000L};
            rc = io_uring_wait_cqe_timeout(&u->ring, &cqe, &ts);
        }
        if (rc < 0 && rc != -EINTR && rc != -ETIME) {
            n = nd__fail_os(-rc, "nd_ring_reap: io_uring_wait_cqe");
            break;
        }
        n = harvest(r, u, tags, results, max);
    }
    nd__mutex_unlock(u->cq_mu);
    return n;
}

static void uring_wake(nd_ring *r)
{
    uring_state *u = r->impl;
    nd__mutex_lock(u->sq_mu);
    (void)queue(u, NULL, WAKE_TAG);
    nd__mutex_unlock(u->sq_mu);
}

static void uring_drain(nd_ring *r)
{
    uring_state *u = r->impl;
    nd__mutex_lock(u->cq_mu);
    while (atomic_load(&r->in_flight) > 0) {
        struct io_uring_cqe *cqe;
        struct __kernel_timespec ts = {0, 10 * 1000000L};
        (void)io_uring_wait_cqe_timeout(&u->ring, &cqe, &ts);
        harvest(r, u, NULL, NULL, 0);
    }
    nd__mutex_unlock(u->cq_mu);
}

static void uring_free(nd_ring *r)
{
    uring_state *u = r->impl;
    io_uring_queue_exit(&u->ring);
    nd__mutex_free(u->sq_mu);
    nd__mutex_free(u->cq_mu);
    free(u);
}

static const nd_ring_backend_ops uring_ops = {uring_start, uring_reap, uring_wake, uring_drain,
                                              uring_free};

int32_t nd__ring_native_init(nd_ring *r)
{
    if (getenv("ND_RING_NO_URING") != NULL) /* lets a deployment opt out without a rebuild */
        return ND_E_NOT_SUPPORTED;
    uring_state *u = calloc(1, sizeof(*u));
    if (u == NULL)
        return nd__fail(ND_E_NO_MEMORY, "nd_ring_open: out of memory");
    struct io_uring_params p = {0};
    /* room for every op, its resubmission and a wake NOP */
    int rc = io_uring_queue_init_params(r->depth * 2 + 2, &u->ring, &p);
    if (rc < 0) {
        free(u);
        return ND_E_NOT_SUPPORTED; /* ENOSYS, EPERM (seccomp), ENOMEM (locked memory) */
    }
    if (!(p.features & IORING_FEAT_EXT_ARG)) {
        io_uring_queue_exit(&u->ring);
        free(u);
        return ND_E_NOT_SUPPORTED;
    }
    u->sq_mu = nd__mutex_new();
    u->cq_mu = nd__mutex_new();
    if (u->sq_mu == NULL || u->cq_mu == NULL) {
        nd__mutex_free(u->sq_mu);
        nd__mutex_free(u->cq_mu);
        io_uring_queue_exit(&u->ring);
        free(u);
        return nd__fail(ND_E_NO_MEMORY, "nd_ring_open: out of memory");
    }
    r->impl = u;
    r->vt = &uring_ops;
    r->backend = ND_RING_IO_URING;
    return ND_OK;
}

#else /* !ND_HAVE_LIBURING */

int32_t nd__ring_native_init(nd_ring *r)
{
    (void)r;
    return ND_E_NOT_SUPPORTED;
}

#endif
