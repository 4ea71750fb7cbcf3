/*
 * ring_slots.c - a ring's slots: one per read in flight, allocated with the
 * ring, taken at submit (ring.c) and given back when the read is reported
 * done or dropped (the backends), so nothing is allocated per read.
 */
#include "ring.h"

void nd__ring_slot_free(nd_ring *r, uint32_t index)
{
    nd__mutex_lock(r->mu);
    r->ops[index].next = r->free_head;
    r->free_head = index + 1;
    nd__mutex_unlock(r->mu);
    atomic_fetch_sub(&r->in_flight, 1);
}

int32_t nd__ring_slot_take(nd_ring *r, uint32_t *out_index)
{
    nd__mutex_lock(r->mu);
    uint32_t index = r->free_head;
    if (index != 0) {
        r->free_head = r->ops[index - 1].next;
        atomic_fetch_add(&r->in_flight, 1);
    }
    nd__mutex_unlock(r->mu);
    if (index == 0)
        return nd__fail(ND_E_BUSY, "all %u slots are in flight; reap first", r->depth);
    if (atomic_load(&r->closing)) { /* lost a race with nd_close */
        nd__ring_slot_free(r, index - 1);
        return nd__fail(ND_E_BAD_HANDLE, "the ring is closing");
    }
    *out_index = index - 1;
    return ND_OK;
}

void nd__ring_complete(nd_ring *r, uint32_t index, uint64_t *tags, int64_t *results, int32_t n)
{
    nd_ring_op *op = &r->ops[index];
    tags[n] = op->tag;
    results[n] = op->result;
    nd__handle_put(op->input);
    nd__ring_slot_free(r, index);
}

void nd__ring_discard(nd_ring *r, uint32_t index)
{
    nd__handle_put(r->ops[index].input);
    nd__ring_slot_free(r, index);
}
