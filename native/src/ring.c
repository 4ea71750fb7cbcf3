/*
 * ring.c - asynchronous positional reads: slots, handles and the public
 * calls; the backends do the waiting.
 */
#include <stdlib.h>

#include "ring.h"

/* Rings whose backend holds files (vt->files_unused), so that the thread
 * dropping a file's last reference that is not a ring's can make them let it
 * go. Rings join when they open and leave before their backend is freed.
 * Lock order: live_lock, then a ring's own locks (io_uring's sq_mu); a thread
 * holding a ring's lock drops files only with wake_rings 0 (the sweep itself,
 * and the submitter letting go of a file whose slot it gave to another), so
 * the order is never reversed. */
static nd_mutex *_Atomic live_lock;
static nd_ring *live_rings;

static int32_t live_join(nd_ring *r)
{
    if (r->vt->files_unused == NULL)
        return ND_OK;
    nd_mutex *m = nd__mutex_once(&live_lock);
    if (m == NULL)
        return nd__fail(ND_E_NO_MEMORY, "ring: out of memory");
    nd__mutex_lock(m);
    r->live_next = live_rings;
    live_rings = r;
    r->live = 1;
    nd__mutex_unlock(m);
    return ND_OK;
}

static void live_leave(nd_ring *r)
{
    if (!r->live)
        return;
    nd_mutex *m = atomic_load_explicit(&live_lock, memory_order_acquire);
    nd__mutex_lock(m);
    for (nd_ring **p = &live_rings; *p != NULL; p = &(*p)->live_next) {
        if (*p == r) {
            *p = r->live_next;
            break;
        }
    }
    r->live = 0;
    nd__mutex_unlock(m);
}

void nd__ring_files_unused(void)
{
    /* no lock yet: no ring that holds files was ever opened */
    nd_mutex *m = atomic_load_explicit(&live_lock, memory_order_acquire);
    if (m == NULL)
        return;
    nd__mutex_lock(m);
    for (nd_ring *r = live_rings; r != NULL; r = r->live_next)
        r->vt->files_unused(r);
    nd__mutex_unlock(m);
}

static int32_t ring_close(nd_object *obj)
{
    nd_ring *r = (nd_ring *)obj;
    atomic_store(&r->closing, 1);
    r->vt->wake(r);
    /* reads in flight write into callers' buffers: finish them before returning */
    r->vt->drain(r);
    return ND_OK;
}

static void ring_destroy(nd_object *obj)
{
    nd_ring *r = (nd_ring *)obj;
    live_leave(r); /* before the backend goes: no one asks it to let go any more */
    if (r->vt != NULL)
        r->vt->free(r);
    nd__mutex_free(r->mu);
    free(r->ops);
    free(r);
}

static const nd_object_ops ring_ops = {ring_close, ring_destroy, NULL};

static int32_t ring_get(nd_handle h, nd_ring **out)
{
    nd_object *obj;
    int32_t rc = nd__handle_get(h, ND_KIND_RING, &obj);
    if (rc == ND_OK)
        *out = (nd_ring *)obj;
    return rc;
}

static int32_t nd_ring_open_impl(uint32_t depth, uint32_t flags, nd_handle *out_ring)
{
    if (out_ring == NULL)
        return nd__fail(ND_E_INVALID_ARGUMENT, "out_ring is NULL");
    *out_ring = 0;
    if (depth == 0 || depth > 4096)
        return nd__fail(ND_E_INVALID_ARGUMENT, "depth %u is not in 1..4096", depth);
    if (flags & ~ND_RING_FORCE_THREADS)
        return nd__fail(ND_E_INVALID_ARGUMENT, "unknown flags 0x%x", flags);
    nd_ring *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return nd__fail(ND_E_NO_MEMORY, "ring: out of memory");
    r->base.ops = &ring_ops;
    r->depth = depth;
    r->ops = calloc(depth, sizeof(nd_ring_op));
    r->mu = nd__mutex_new();
    if (r->ops == NULL || r->mu == NULL) {
        nd__mutex_free(r->mu);
        free(r->ops);
        free(r);
        return nd__fail(ND_E_NO_MEMORY, "ring: out of memory");
    }
    for (uint32_t i = 0; i < depth; i++)
        r->ops[i].next = i + 2 <= depth ? i + 2 : 0;
    r->free_head = 1;
    int32_t rc = ND_E_NOT_SUPPORTED;
    if (!(flags & ND_RING_FORCE_THREADS))
        rc = nd__ring_native_init(r);
    if (rc == ND_E_NOT_SUPPORTED)
        rc = nd__ring_threads_init(r);
    if (rc == ND_OK)
        rc = live_join(r);
    if (rc == ND_OK)
        rc = nd__handle_new(ND_KIND_RING, &r->base, out_ring);
    if (rc != ND_OK)
        ring_destroy(&r->base);
    return rc;
}

static int32_t nd_ring_backend_impl(nd_handle ring)
{
    nd_ring *r;
    int32_t rc = ring_get(ring, &r);
    if (rc != ND_OK)
        return rc;
    rc = r->backend;
    nd__handle_put(ring);
    return rc;
}

static int32_t nd_ring_in_flight_impl(nd_handle ring)
{
    nd_ring *r;
    int32_t rc = ring_get(ring, &r);
    if (rc != ND_OK)
        return rc;
    rc = atomic_load(&r->in_flight);
    nd__handle_put(ring);
    return rc;
}

static void free_slot(nd_ring *r, uint32_t index)
{
    nd__mutex_lock(r->mu);
    r->ops[index].next = r->free_head;
    r->free_head = index + 1;
    nd__mutex_unlock(r->mu);
    atomic_fetch_sub(&r->in_flight, 1);
}

/* Takes a free slot for a read: ND_E_BUSY when all are in flight,
 * ND_E_BAD_HANDLE when the ring is closing. */
static int32_t take_slot(nd_ring *r, uint32_t *out_index)
{
    nd__mutex_lock(r->mu);
    uint32_t index = r->free_head;
    if (index != 0) {
        r->free_head = r->ops[index - 1].next;
        atomic_fetch_add(&r->in_flight, 1);
    }
    nd__mutex_unlock(r->mu);
    if (index == 0)
        return nd__fail(ND_E_BUSY, "all %u slots are in flight; reap first",
                        r->depth);
    if (atomic_load(&r->closing)) { /* lost a race with nd_close */
        free_slot(r, index - 1);
        return nd__fail(ND_E_BAD_HANDLE, "the ring is closing");
    }
    *out_index = index - 1;
    return ND_OK;
}

/* Hands op `index` (its input already held by nd__input_begin_async) to the
 * backend; on failure drops the input and the slot. */
static int32_t start_op(nd_ring *r, uint32_t index, nd_handle input, uint8_t *dst, int64_t len,
                        uint64_t tag, nd_os_file fd, void *file, int64_t file_off,
                        int64_t result)
{
    nd_ring_op *op = &r->ops[index];
    op->input = input;
    op->fd = fd;
    op->file = file;
    op->off = file_off;
    op->dst = dst;
    op->left = (size_t)(len > 0 ? len : 0);
    op->len = len;
    op->tag = tag;
    op->result = result;
    int32_t rc = r->vt->start(r, index);
    if (rc != ND_OK) {
        nd__handle_put(input);
        free_slot(r, index);
    }
    return rc;
}

static int32_t nd_ring_submit_read_impl(nd_handle ring, nd_handle input, int64_t offset,
                                        void *dst, int64_t len, uint64_t tag)
{
    nd_ring *r;
    uint32_t index = 0;
    int32_t rc = ring_get(ring, &r);
    if (rc != ND_OK)
        return rc;
    /* the slot first: a full ring must refuse before a mapped read copies anything */
    rc = take_slot(r, &index);
    if (rc == ND_OK) {
        nd_os_file fd;
        int64_t file_off = 0, result = 0;
        void *file = NULL;
        rc = nd__input_begin_async(input, offset, dst, len, &fd, &file_off, &result, &file);
        if (rc != ND_OK)
            free_slot(r, index);
        else
            rc = start_op(r, index, input, dst, len, tag, fd, file, file_off, result);
    }
    nd__handle_put(ring);
    return rc;
}

static int32_t nd_ring_reap_impl(nd_handle ring, uint64_t *tags, int64_t *results, int32_t max,
                                 int32_t timeout_ms)
{
    if (tags == NULL || results == NULL || max <= 0 || timeout_ms < -1)
        return nd__fail(ND_E_INVALID_ARGUMENT, "%s",
                        max <= 0 ? "max must be positive"
                        : timeout_ms < -1 ? "timeout must be -1, 0 or positive"
                                          : "tags or results is NULL");
    nd_ring *r;
    int32_t rc = ring_get(ring, &r);
    if (rc != ND_OK)
        return rc;
    rc = atomic_load(&r->closing) ? 0 : r->vt->reap(r, tags, results, max, timeout_ms);
    nd__handle_put(ring);
    return rc;
}

static int32_t nd_ring_event_fd_impl(nd_handle ring)
{
    nd_ring *r;
    int32_t rc = ring_get(ring, &r);
    if (rc != ND_OK)
        return rc;
    if (atomic_load(&r->closing))
        rc = nd__fail(ND_E_BAD_HANDLE, "the ring is closing");
    else if (r->vt->event_fd == NULL)
        rc = nd__fail(ND_E_NOT_SUPPORTED, "this ring has no descriptor an event loop can watch; "
                                          "reap it on a thread of its own");
    else
        rc = r->vt->event_fd(r);
    nd__handle_put(ring);
    return rc;
}

void nd__ring_complete(nd_ring *r, uint32_t index, uint64_t *tags, int64_t *results, int32_t n)
{
    nd_ring_op *op = &r->ops[index];
    tags[n] = op->tag;
    results[n] = op->result;
    nd__handle_put(op->input);
    free_slot(r, index);
}

void nd__ring_discard(nd_ring *r, uint32_t index)
{
    nd__handle_put(r->ops[index].input);
    free_slot(r, index);
}

int32_t nd_ring_open(uint32_t depth, uint32_t flags, nd_handle *out_ring)
{
    return (int32_t)nd__in_call("nd_ring_open", nd_ring_open_impl(depth, flags, out_ring));
}

int32_t nd_ring_backend(nd_handle ring)
{
    return (int32_t)nd__in_call("nd_ring_backend", nd_ring_backend_impl(ring));
}

int32_t nd_ring_event_fd(nd_handle ring)
{
    return (int32_t)nd__in_call("nd_ring_event_fd", nd_ring_event_fd_impl(ring));
}

int32_t nd_ring_in_flight(nd_handle ring)
{
    return (int32_t)nd__in_call("nd_ring_in_flight", nd_ring_in_flight_impl(ring));
}

int32_t nd_ring_submit_read(nd_handle ring, nd_handle input, int64_t offset, void *dst,
                            int64_t len, uint64_t tag)
{
    return (int32_t)nd__in_call("nd_ring_submit_read",
                                nd_ring_submit_read_impl(ring, input, offset, dst, len, tag));
}

int32_t nd_ring_reap(nd_handle ring, uint64_t *tags, int64_t *results, int32_t max,
                     int32_t timeout_ms)
{
    return (int32_t)nd__in_call("nd_ring_reap",
                                nd_ring_reap_impl(ring, tags, results, max, timeout_ms));
}
