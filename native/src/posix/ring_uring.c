/*
 * ring_uring.c - the io_uring backend (Linux, through liburing).
 *
 * Submissions are serialised by sq_mu, completions by cq_mu, so one thread
 * can reap while others submit. Short reads are resubmitted for the rest, so
 * a completion always covers the whole read. Requires IORING_FEAT_EXT_ARG
 * (Linux 5.11): without it liburing's timed wait would submit on the reaper's
 * thread, racing the submitters, so older kernels get the thread pool.
 *
 * Reads reach the kernel from one thread the ring owns, never from the
 * caller's: io_uring ties a read it cannot finish at once (handed to its
 * io-wq workers, or retried from task work) to the thread that submitted it,
 * and cancels it (ECANCELED, or EFAULT mid-copy) when that thread exits.
 * Managed runtimes retire thread-pool threads at will, so a read submitted
 * from one would fail at random. The hand-off costs a wake-up per burst of
 * submissions; the cached part of a read never comes here (nd_read_cached).
 */
/* -std=c11 without extensions declares only ISO C; this file needs
 * sigset_t and the rest liburing.h expects. */
#if !defined(_GNU_SOURCE)
#  define _GNU_SOURCE
#endif
#include "../file.h"
#include "../ring.h"

#ifdef ND_HAVE_LIBURING

#  include <errno.h>
#  include <liburing.h>
#  include <pthread.h>
#  include <sched.h>
#  include <stdlib.h>
#  include <string.h>
#  include <sys/eventfd.h>
#  include <sys/resource.h>
#  include <time.h>
#  include <unistd.h>

#  define WAKE_TAG UINT64_MAX /* user_data of the NOP that wakes a reaper */
#  define SUBMIT_BATCH 64     /* reads the submitter takes from the hand-off at once */
/* Registered descriptors per ring. Enough for the files a search reads at once
 * (a segment's few files, a handful of segments); more are served by replacing
 * the least recently used one, which costs one io_uring_register call. */
#  define FILE_SLOTS 64
/* A registered descriptor keeps its file open (and a deleted file's space in
 * use) after the library closes its own descriptor, so the ring must let go
 * the moment no input uses a file any more: the thread that drops the last
 * other reference (nd_close of the last input, or the reap that finishes its
 * last read) sweeps every ring's table itself (nd__ring_files_unused), so
 * the file is closed when nd_close returns, as if no ring had read it. No
 * timer: an idle ring sleeps until work comes. */

/* One registered descriptor: the ring holds `file` (nd__file_ring_hold) while
 * its descriptor sits in the kernel's table, so the key stays unique. */
typedef struct {
    void *file;    /* NULL: the slot is empty */
    uint64_t used; /* the batch that last used it: the oldest is replaced first */
} file_slot;

typedef struct {
    struct io_uring ring;
    nd_mutex *sq_mu;
    nd_mutex *cq_mu;
    /* reads waiting for the submitter thread */
    pthread_mutex_t hand_mu;
    pthread_cond_t hand_cv;
    nd_ring_fifo hand;
    int stopping;
    int waiting; /* the submitter sleeps on hand_cv and no hand-off has woken it yet */
    int started;
    pthread_t submitter;
    /* registered files: under sq_mu (the submitter registers while it
     * prepares a batch; any thread may sweep), or in uring_free once the
     * submitter has stopped and no thread can reach the ring */
    int files_on;        /* the table is registered and registering has not failed */
    uint32_t files_top;  /* slots [files_top, FILE_SLOTS) were never filled */
    uint32_t files_held; /* slots holding a file */
    uint32_t last;       /* the slot found last (runs of reads of one file) */
    uint64_t batch;      /* batches sent so far */
    file_slot files[FILE_SLOTS];
    int efd; /* nd_ring_event_fd's eventfd, registered with the kernel; -1: none yet (sq_mu) */
} uring_state;

/* Submitter thread, with sq_mu held: the registered slot of op's file,
 * registering it on first use (an empty slot, else the least recently used
 * one that no read of the batch being prepared refers to); -1: this read
 * uses the plain descriptor. */
static int file_index(uring_state *u, const nd_ring_op *op)
{
    if (!u->files_on || op->file == NULL)
        return -1;
    file_slot *fs = u->files;
    if (fs[u->last].file == op->file) {
        fs[u->last].used = u->batch;
        return (int)u->last;
    }
    int empty = -1, old = -1;
    for (uint32_t i = 0; i < u->files_top; i++) {
        if (fs[i].file == op->file) {
            fs[i].used = u->batch;
            u->last = i;
            return (int)i;
        }
        if (fs[i].file == NULL)
            empty = empty < 0 ? (int)i : empty;
        else if (fs[i].used < u->batch && (old < 0 || fs[i].used < fs[old].used))
            old = (int)i;
    }
    int pick = empty >= 0 ? empty : u->files_top < FILE_SLOTS ? (int)u->files_top : old;
    if (pick < 0)
        return -1;
    int fd = (int)op->fd;
    /* replacing a descriptor is safe with reads of the old one in flight: each
     * read took its own reference to the file when it was submitted */
    int rc = ND_FAULT(ND_FAULT_REGISTER)
                 ? -errno
                 : io_uring_register_files_update(&u->ring, (unsigned)pick, &fd, 1);
    if (rc != 1) {
        /* whatever refused it (memory, a seccomp filter, an emulator) would
         * refuse the next one too: plain descriptors from now on */
        u->files_on = 0;
        return -1;
    }
    nd__file_ring_hold(op->file);
    /* The update took the old descriptor out of the kernel's table: let go of
     * its file now, before any read of this batch can complete. Its reads in
     * flight hold their own references, so this closes it only when this ring
     * was its last holder. Not later: a caller that reaps the batch and closes
     * the file's last input must find it closed when nd_close returns, and its
     * sweep cannot see a hold that sits in no slot. No sweep of the rings
     * here (sq_mu is held): a ring's drop leaves the count of other holders
     * as it was, so whoever dropped the last of those has swept already. */
    if (fs[pick].file != NULL)
        nd__file_ring_drop(fs[pick].file, 0);
    else
        u->files_held++;
    fs[pick].file = op->file;
    fs[pick].used = u->batch;
    if ((uint32_t)pick == u->files_top)
        u->files_top++;
    u->last = (uint32_t)pick;
    return pick;
}

/* With sq_mu held, after a flush: the slots the reads just sent name may be
 * replaced from now on, once the kernel has taken every SQE (it resolves a
 * fixed file when it takes the SQE; one it left in the ring, after failing an
 * earlier one, still names its slot and keeps it from being replaced). */
static void next_batch(uring_state *u)
{
    if (io_uring_sq_ready(&u->ring) == 0)
        u->batch++;
}

/* nd__ring_files_unused, on whichever thread dropped a file's last other
 * reference, with the list of live rings locked: lets go of the files only
 * rings hold (no input uses them, and none can again, so no read in flight or
 * SQE of a batch names their slots) and empties their slots. The slot is
 * emptied in the kernel first: with no read of the file in flight, the kernel
 * drops its reference before the update returns (Linux 6.x; 5.x kernels drop
 * it from a work queue up to a second later). The last ring to let go closes
 * the file. */
static void uring_files_unused(nd_ring *r)
{
    uring_state *u = r->impl;
    nd__mutex_lock(u->sq_mu);
    for (uint32_t i = 0; i < u->files_top; i++) {
        void *file = u->files[i].file;
        if (file == NULL || !nd__file_ring_only(file))
            continue;
        int none = -1;
        /* if this fails the kernel keeps the file open until the slot is reused */
        (void)io_uring_register_files_update(&u->ring, i, &none, 1);
        u->files[i].file = NULL;
        u->files_held--;
        nd__file_ring_drop(file, 0);
    }
    nd__mutex_unlock(u->sq_mu);
}

/* With sq_mu held: fills an SQE for op (NULL: a NOP that only wakes a
 * reaper; an op done at submit: a NOP carrying its completion), or returns
 * NULL when the submission queue is full. */
static struct io_uring_sqe *prep(uring_state *u, nd_ring_op *op, uint64_t user_data)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
    if (sqe == NULL)
        return NULL;
    if (op == NULL || op->fd == ND_OS_FILE_INVALID) {
        io_uring_prep_nop(sqe);
    } else {
        int slot = file_index(u, op);
        io_uring_prep_read(sqe, slot >= 0 ? slot : (int)op->fd, op->dst,
                           (unsigned)(op->left > 0x7ffff000u ? 0x7ffff000u : op->left),
                           (uint64_t)op->off);
        if (slot >= 0) /* no fget/fput of the descriptor per read */
            sqe->flags |= IOSQE_FIXED_FILE;
    }
    io_uring_sqe_set_data64(sqe, user_data);
    if (op != NULL) /* every read of op's fields is above: publish before the kernel sees it */
        atomic_fetch_add_explicit(&op->published, 1, memory_order_release);
    return sqe;
}

/* With sq_mu held: submits the n SQEs just prepared. */
static int32_t flush(uring_state *u, struct io_uring_sqe **sqes, int n)
{
    int rc;
    int tries = 0;
    do
        rc = ND_FAULT(ND_FAULT_SUBMIT) ? -errno : io_uring_submit(&u->ring);
    while (
        (rc == -EINTR || ((rc == -EAGAIN || rc == -EBUSY) && ++tries < 100 && sched_yield() == 0)));
    if (rc < 0) {
        /* Nothing was consumed, so the SQEs still sit in the ring and would go
         * with the next submit after their callers were told of the failure:
         * turn them into NOPs whose completions are ignored. */
        for (int i = 0; i < n; i++) {
            io_uring_prep_nop(sqes[i]);
            io_uring_sqe_set_data64(sqes[i], WAKE_TAG);
        }
        return nd__fail_os(-rc, "io_uring_submit");
    }
    return ND_OK;
}

/* With sq_mu held: one SQE, submitted at once. */
static int32_t queue(uring_state *u, nd_ring_op *op, uint64_t user_data)
{
    struct io_uring_sqe *sqe = prep(u, op, user_data);
    if (sqe == NULL)
        return nd__fail(ND_E_BUSY, "io_uring submission queue is full");
    return flush(u, &sqe, 1);
}

/* Gives op `index` to the submitter thread, waking it only if it sleeps and
 * no hand-off since it went to sleep has woken it yet: a caller refilling a
 * burst of slots makes one futex call for the burst, not one per read. */
static void hand_off(uring_state *u, uint32_t index)
{
    pthread_mutex_lock(&u->hand_mu);
    nd__fifo_push(&u->hand, index);
    if (u->waiting) {
        u->waiting = 0; /* woken: it takes everything in the FIFO before it sleeps again */
        pthread_cond_signal(&u->hand_cv);
    }
    pthread_mutex_unlock(&u->hand_mu);
}

/* With sq_mu held: submits the k SQEs just prepared, counting them into *sent. */
static int32_t send_prepared(uring_state *u, struct io_uring_sqe **sqes, int *k, int *sent)
{
    int32_t rc = flush(u, sqes, *k);
    if (rc == ND_OK) {
        *sent += *k;
        *k = 0;
        next_batch(u);
    }
    return rc;
}

/* Submits a batch of handed-off reads in chunks of 1, 2, 4, ... SQEs, one
 * system call each; a read the kernel never got is reported failed through a
 * NOP that completes at once.
 *
 * Why chunks: sent as one call, a burst reaches the device only once the last
 * SQE is prepared, and its reads then finish together, so the device idles
 * while they are reaped and the next burst is prepared; the bursts feed each
 * other and the queue never stays full. The first read alone starts the
 * device at once, and each call runs while the device works on the chunk
 * before it; doubling keeps a burst of n to about log2(n) calls. Measured on
 * the development VM (virtio disk, 32 random 4 KiB direct reads in flight):
 * one call per burst 64-85K reads/s with caller and ring on one CPU and
 * 129-135K on two; in doubling chunks 76-104K and 131-167K, where fio
 * (one call per read) made 52-96K. */
static void submit_batch(nd_ring *r, uring_state *u, const uint32_t *batch, int n)
{
    struct io_uring_sqe *sqes[SUBMIT_BATCH];
    int sent = 0;  /* batch[0, sent) reached the kernel */
    int k = 0;     /* batch[sent, sent + k) are prepared */
    int chunk = 1; /* SQEs the next call sends */
    int32_t rc = ND_OK;
    nd__mutex_lock(u->sq_mu);
    for (int i = 0; i < n; i++) {
        struct io_uring_sqe *sqe = prep(u, &r->ops[batch[i]], batch[i]);
        if (sqe == NULL && k > 0) { /* full: send what is prepared, then try again */
            if ((rc = send_prepared(u, sqes, &k, &sent)) != ND_OK)
                break;
            sqe = prep(u, &r->ops[batch[i]], batch[i]);
        }
        if (sqe == NULL) {
            rc = nd__fail(ND_E_BUSY, "io_uring submission queue is full");
            break;
        }
        sqes[k++] = sqe;
        if (k == chunk && i + 1 < n) {
            if ((rc = send_prepared(u, sqes, &k, &sent)) != ND_OK)
                break;
            chunk *= 2;
        }
    }
    if (rc == ND_OK && k > 0)
        rc = send_prepared(u, sqes, &k, &sent);
    /* a failed flush turned its SQEs into ignored NOPs: none of them went */
    for (int i = sent; i < n; i++) {
        nd_ring_op *op = &r->ops[batch[i]];
        op->result = rc;
        op->fd = ND_OS_FILE_INVALID;
        while (queue(u, op, batch[i]) != ND_OK) {
            nd__mutex_unlock(u->sq_mu);
            sched_yield();
            nd__mutex_lock(u->sq_mu);
        }
    }
    nd__mutex_unlock(u->sq_mu);
    uint32_t pause = ND_FAULT_SUBMIT_PAUSE(); /* tests: callers overtake the rest */
    if (pause > 0)
        nanosleep(&(struct timespec){pause / 1000000, (long)(pause % 1000000) * 1000}, NULL);
}

static void *submitter(void *arg)
{
    nd_ring *r = arg;
    uring_state *u = r->impl;
    uint32_t batch[SUBMIT_BATCH];
    pthread_mutex_lock(&u->hand_mu);
    for (;;) {
        while (u->hand.count == 0 && !u->stopping) {
            u->waiting = 1;
            pthread_cond_wait(&u->hand_cv, &u->hand_mu);
            u->waiting = 0;
        }
        if (u->hand.count == 0)
            break;
        int n = 0;
        while (n < SUBMIT_BATCH && u->hand.count > 0)
            batch[n++] = nd__fifo_pop(&u->hand);
        pthread_mutex_unlock(&u->hand_mu);
        submit_batch(r, u, batch, n);
        pthread_mutex_lock(&u->hand_mu);
    }
    pthread_mutex_unlock(&u->hand_mu);
    return NULL;
}

static int32_t uring_start(nd_ring *r, uint32_t index)
{
    uring_state *u = r->impl;
    nd_ring_op *op = &r->ops[index];
    if (op->fd != ND_OS_FILE_INVALID) {
        hand_off(u, index);
        return ND_OK;
    }
    /* done at submit: a NOP carries its completion, and a NOP finishes
     * inside the submitting call, so any thread may send it */
    nd__mutex_lock(u->sq_mu);
    int32_t rc = queue(u, op, index);
    nd__mutex_unlock(u->sq_mu);
    return rc;
}

static void hand_off(uring_state *u, uint32_t index);

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
        op->result = nd__fail_os(-res, "ring read at %lld", (long long)op->off);
        return 1;
    } else if (res == 0) {
        op->result = nd__fail(ND_E_IO, "ring read: the file ended at %lld; it shrank after open",
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
    hand_off(u, index); /* the rest, from the ring's own thread like the start */
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
            n = nd__fail_os(-rc, "ring: io_uring_wait_cqe");
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
    /* nothing is in flight any more (the ring was drained), so nothing is
     * handed off: the submitter only has to be told to stop */
    pthread_mutex_lock(&u->hand_mu);
    u->stopping = 1;
    pthread_cond_signal(&u->hand_cv);
    pthread_mutex_unlock(&u->hand_mu);
    if (u->started)
        pthread_join(u->submitter, NULL);
    /* the kernel lets go of the table now, not when its asynchronous teardown
     * of the ring gets to it: a file the ring held closes when its last user
     * (perhaps this ring) lets go */
    if (u->files_held > 0)
        (void)io_uring_unregister_files(&u->ring);
    for (uint32_t i = 0; i < u->files_top; i++)
        if (u->files[i].file != NULL)
            nd__file_ring_drop(u->files[i].file, 1);
    pthread_cond_destroy(&u->hand_cv);
    pthread_mutex_destroy(&u->hand_mu);
    free(u->hand.items);
    io_uring_queue_exit(&u->ring);
    if (u->efd >= 0) /* after the ring: the kernel signals it no more */
        close(u->efd);
    nd__mutex_free(u->sq_mu);
    nd__mutex_free(u->cq_mu);
    free(u);
}

/* An empty table of FILE_SLOTS registered descriptors: 1, or 0 where it is
 * refused (the ring then reads through plain descriptors). */
static int register_file_table(uring_state *u)
{
    if (getenv("ND_RING_NO_REGISTER") != NULL) /* an opt-out, and the tests' comparison */
        return 0;
    /* liburing raises RLIMIT_NOFILE itself when the table is larger than it: a
     * library must not change its process's limits */
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur < FILE_SLOTS * 2)
        return 0;
    if (ND_FAULT(ND_FAULT_REGISTER))
        return 0;
    if (io_uring_register_files_sparse(&u->ring, FILE_SLOTS) == 0)
        return 1;
    /* before Linux 5.19: a table of empty (-1) entries */
    int empty[FILE_SLOTS];
    for (int i = 0; i < FILE_SLOTS; i++)
        empty[i] = -1;
    return io_uring_register_files(&u->ring, empty, FILE_SLOTS) == 0;
}

/* The kernel itself signals a registered eventfd for every CQE it posts
 * (reads, their resubmissions, wake-ups and the NOPs of reads done at
 * submit), so a completion can never be posted without a signal after it. */
static int32_t uring_event_fd(nd_ring *r)
{
    uring_state *u = r->impl;
    int32_t rc = ND_OK;
    nd__mutex_lock(u->sq_mu);
    if (u->efd < 0) {
        int fd = ND_FAULT(ND_FAULT_OPEN) ? -1 : eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (fd < 0) {
            rc = nd__fail_os(errno, "ring: eventfd");
        } else {
            int e = ND_FAULT(ND_FAULT_REGISTER) ? -errno : io_uring_register_eventfd(&u->ring, fd);
            if (e < 0) {
                close(fd);
                rc = nd__fail_os(-e, "ring: io_uring_register_eventfd");
            } else {
                /* CQEs posted before the registration signalled nothing: one signal for them */
                uint64_t one = 1;
                ssize_t n = write(fd, &one, sizeof(one));
                (void)n;
                u->efd = fd;
            }
        }
    }
    if (rc == ND_OK)
        rc = u->efd;
    nd__mutex_unlock(u->sq_mu);
    return rc;
}

static const nd_ring_backend_ops uring_ops = {uring_start,   uring_reap, uring_wake,
                                              uring_drain,   uring_free, uring_files_unused,
                                              uring_event_fd};

int32_t nd__ring_native_init(nd_ring *r)
{
    if (getenv("ND_RING_NO_URING") != NULL) /* lets a deployment opt out without a rebuild */
        return ND_E_NOT_SUPPORTED;
    uring_state *u = calloc(1, sizeof(*u));
    if (u == NULL)
        return nd__fail(ND_E_NO_MEMORY, "ring: out of memory");
    u->efd = -1;
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
    u->hand.items = calloc(r->depth, sizeof(uint32_t));
    u->hand.cap = r->depth;
    if (u->sq_mu == NULL || u->cq_mu == NULL || u->hand.items == NULL) {
        nd__mutex_free(u->sq_mu);
        nd__mutex_free(u->cq_mu);
        free(u->hand.items);
        io_uring_queue_exit(&u->ring);
        free(u);
        return nd__fail(ND_E_NO_MEMORY, "ring: out of memory");
    }
    pthread_mutex_init(&u->hand_mu, NULL);
    pthread_cond_init(&u->hand_cv, NULL);
    u->files_on = register_file_table(u);
    r->impl = u;
    r->vt = &uring_ops;
    r->backend = ND_RING_IO_URING;
    int e = pthread_create(&u->submitter, NULL, submitter, r);
    if (e != 0)
        return nd__fail_os(e, "ring: pthread_create");
    u->started = 1;
    return ND_OK;
}

#else /* !ND_HAVE_LIBURING */

int32_t nd__ring_native_init(nd_ring *r)
{
    (void)r;
    return ND_E_NOT_SUPPORTED;
}

#endif
