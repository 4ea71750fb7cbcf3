/*
 * ring.c - asynchronous positional reads: the public calls and the ring's
 * handle; ring_slots.c keeps the slots, the backends do the waiting.
 */
#include <stdlib.h>

#include "ring.h"
#include "ring_files.h"

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
    nd__ring_files_leave(r); /* before the backend goes: no one asks it to let go any more */
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
        rc = nd__ring_files_join(r);
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

/* Hands op `index` (its input already held by nd__input_begin_async) to the
 * backend; on failure drops the input and the slot. */
static int32_t start_op(nd_ring *r, uint32_t index, nd_handle input, uint8_t *dst, int64_t len,
                        uint64_t tag, nd_os_file fd, void *file, int64_t file_off, int64_t result)
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
        nd__ring_slot_free(r, index);
    }
    return rc;
}

static int32_t nd_ring_submit_read_impl(nd_handle ring, nd_handle input, int64_t offset, void *dst,
                                        int64_t len, uint64_t tag)
{
    nd_ring *r;
    uint32_t index = 0;
    int32_t rc = ring_get(ring, &r);
    if (rc != ND_OK)
        return rc;
    /* the slot first: a full ring must refuse before a mapped read copies anything */
    rc = nd__ring_slot_take(r, &index);
    if (rc == ND_OK) {
        nd_os_file fd;
        int64_t file_off = 0, result = 0;
        void *file = NULL;
        rc = nd__input_begin_async(input, offset, dst, len, &fd, &file_off, &result, &file);
        if (rc != ND_OK)
            nd__ring_slot_free(r, index);
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
                        max <= 0          ? "max must be positive"
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

int32_t nd_ring_submit_read(nd_handle ring, nd_handle input, int64_t offset, void *dst, int64_t len,
                            uint64_t tag)
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
