/*
 * handle.c - the handle table.
 *
 * A handle is an integer, never a pointer, so a forged or stale value can
 * only miss: bits 0-23 are a slot index + 1 (0 is never valid), bits 24-27
 * the kind, bits 28-58 the slot's generation when the handle was made.
 *
 * Slots live in chunks that are never freed, so a lookup can read a slot
 * without a lock. Each slot's state word packs its generation (high 32 bits),
 * a closed bit and a reference count; the handle itself owns one reference.
 * A lookup is one CAS that succeeds only while the generation matches and
 * the closed bit is clear. nd_close sets the closed bit (only one caller can)
 * and drops the owner's reference; whoever drops the last reference destroys
 * the object and frees the slot with a new generation. So closing a handle
 * while another thread reads through it is memory-safe, and every later call
 * with it gets ND_E_BAD_HANDLE.
 *
 * One of the references may be the handle's pin (an input's window: cursor.c),
 * owned by no call and kept past the close until nd__handle_unpin. Its bit
 * lives in the state word so that "closed, and the pin is all that holds it"
 * is one value: the thread whose change makes it so (the last call's put, the
 * close's, or a window call pinning an already closed handle) tells the
 * object (ops->pinned_only) while holding a reference of its own, once, so it
 * can let go at once of what the pin does not need (an input's descriptor),
 * never under a call still using it.
 */
#include <stdlib.h>

#include "internal.h"

#define SLOT_BITS 24
#define KIND_SHIFT 24
#define KIND_MASK 0xFULL
#define GEN_SHIFT 28
#define GEN_MASK 0x7FFFFFFFULL
#define CHUNK_SLOTS 1024
#define MAX_CHUNKS 4096 /* 4M handles open at once */

#define ST_GEN(s) ((uint32_t)((s) >> 32))
#define ST_CLOSED 0x80000000ULL
#define ST_PINNED 0x40000000ULL   /* one of the references is the pin */
#define ST_PIN_ONLY 0x20000000ULL /* ops->pinned_only has been called (or is running) */
#define ST_REFS(s) ((s)&0x1FFFFFFFULL)

typedef struct {
    _Atomic uint64_t state; /* generation << 32 | closed | pinned | pin_only | refs */
    nd_object *_Atomic obj;
    _Atomic uint32_t kind;
    uint32_t next_free; /* index + 1, under the table lock */
    char pad[ND_CACHE_LINE - 8 - sizeof(void *) - 8];
} slot;
/* One slot per cache line (the chunks start on one: nd__buffer_lines), so a
 * thread's calls on its handle never touch the line of another's. */
_Static_assert(sizeof(slot) == ND_CACHE_LINE, "a slot is one cache line");

static slot *_Atomic chunks[MAX_CHUNKS];
static nd_mutex *_Atomic table_lock;
static uint32_t free_head; /* index + 1 of the first free slot, 0 if none */
static uint32_t slots_made;

static nd_mutex *lock_table(void)
{
    nd_mutex *m = nd__mutex_once(&table_lock);
    if (m != NULL)
        nd__mutex_lock(m);
    return m;
}

static ND_HOT slot *slot_at(uint32_t index)
{
    slot *c = atomic_load_explicit(&chunks[index / CHUNK_SLOTS], memory_order_acquire);
    return c == NULL ? NULL : &c[index % CHUNK_SLOTS];
}

int32_t nd__handle_reserve(uint32_t *out_index)
{
    if (ND_FAULT(ND_FAULT_HANDLE))
        return nd__fail(ND_E_TOO_MANY_OPEN, "handle table: no free slot (injected)");
    nd_mutex *m = lock_table();
    if (m == NULL)
        return nd__fail(ND_E_NO_MEMORY, "handle table: cannot create its lock");
    uint32_t index;
    if (free_head != 0) {
        index = free_head - 1;
        free_head = slot_at(index)->next_free;
    } else {
        if (slots_made >= (uint32_t)CHUNK_SLOTS * MAX_CHUNKS) {
            nd__mutex_unlock(m);
            return nd__fail(ND_E_TOO_MANY_OPEN, "handle table: %u handles are open",
                            (unsigned)slots_made);
        }
        index = slots_made;
        if (index % CHUNK_SLOTS == 0) {
            slot *c = nd__buffer_lines(CHUNK_SLOTS * sizeof(slot));
            if (c == NULL) {
                nd__mutex_unlock(m);
                return nd__fail(ND_E_NO_MEMORY, "handle table: out of memory");
            }
            atomic_store_explicit(&chunks[index / CHUNK_SLOTS], c, memory_order_release);
        }
        slots_made++;
    }
    nd__mutex_unlock(m);
    *out_index = index;
    return ND_OK;
}

void nd__handle_unreserve(uint32_t index)
{
    /* the table's lock exists: the reservation made it */
    nd_mutex *m = lock_table();
    slot_at(index)->next_free = free_head;
    free_head = index + 1;
    nd__mutex_unlock(m);
}

nd_handle nd__handle_publish(uint32_t index, nd_kind kind, nd_object *obj)
{
    /* the slot is ours alone (off the free list, refs 0: no lookup matches it) */
    slot *s = slot_at(index);
    uint64_t st = atomic_load_explicit(&s->state, memory_order_relaxed);
    uint32_t gen = (uint32_t)((ST_GEN(st) + 1) & GEN_MASK);
    if (gen == 0)
        gen = 1;
    atomic_store_explicit(&s->obj, obj, memory_order_relaxed);
    atomic_store_explicit(&s->kind, (uint32_t)kind, memory_order_relaxed);
    /* publishes obj and kind to lookups */
    atomic_store_explicit(&s->state, ((uint64_t)gen << 32) | 1u, memory_order_release);
    return (nd_handle)(((uint64_t)gen << GEN_SHIFT) | ((uint64_t)kind << KIND_SHIFT) |
                       (uint64_t)(index + 1));
}

int32_t nd__handle_new(nd_kind kind, nd_object *obj, nd_handle *out)
{
    uint32_t index = 0;
    int32_t rc = nd__handle_reserve(&index);
    if (rc == ND_OK)
        *out = nd__handle_publish(index, kind, obj);
    return rc;
}

static ND_HOT slot *decode(nd_handle h, uint32_t *gen, uint32_t *kind)
{
    uint64_t u = (uint64_t)h;
    if (h <= 0 || (u >> (GEN_SHIFT + 31)) != 0)
        return NULL;
    uint32_t index1 = (uint32_t)(u & ((1u << SLOT_BITS) - 1));
    if (index1 == 0 || index1 > (uint32_t)CHUNK_SLOTS * MAX_CHUNKS)
        return NULL;
    *gen = (uint32_t)((u >> GEN_SHIFT) & GEN_MASK);
    *kind = (uint32_t)((u >> KIND_SHIFT) & KIND_MASK);
    return slot_at(index1 - 1);
}

/* The slot of a handle its caller holds a reference to: nd__handle_get
 * decoded it once, so it is well formed and its chunk exists (chunks are never
 * freed while the library is loaded). */
static ND_HOT slot *held_slot(nd_handle h, uint32_t *index)
{
    *index = (uint32_t)((uint64_t)h & ((1u << SLOT_BITS) - 1)) - 1;
    slot *c = atomic_load_explicit(&chunks[*index / CHUNK_SLOTS], memory_order_acquire);
    return &c[*index % CHUNK_SLOTS];
}

/* A kind with its article, for "handle 5 is an input, not a directory". */
static const char *kind_phrase(uint32_t kind)
{
    switch (kind) {
    case ND_KIND_DIR: return "a directory";
    case ND_KIND_INPUT: return "an input";
    case ND_KIND_OUTPUT: return "an output";
    case ND_KIND_LOCK: return "a lock";
    case ND_KIND_RING: return "a ring";
    default: return "of no known kind"; /* a slot's kind is always one of the above */
    }
}

ND_HOT int32_t nd__handle_get(nd_handle h, nd_kind kind, nd_object **out)
{
    uint32_t gen, hkind;
    slot *s = decode(h, &gen, &hkind);
    if (ND_LIKELY(s != NULL)) {
        uint64_t st = atomic_load_explicit(&s->state, memory_order_relaxed);
        while (ST_GEN(st) == gen && !(st & ST_CLOSED) && ST_REFS(st) != 0) {
            if (atomic_compare_exchange_weak_explicit(&s->state, &st, st + 1, memory_order_acquire,
                                                      memory_order_relaxed)) {
                if (ND_LIKELY(hkind == (uint32_t)kind &&
                              atomic_load_explicit(&s->kind, memory_order_relaxed) == hkind)) {
                    *out = atomic_load_explicit(&s->obj, memory_order_relaxed);
                    return ND_OK;
                }
                nd__handle_put(h);
                return nd__fail(ND_E_BAD_HANDLE, "handle %lld is %s, not %s", (long long)h,
                                kind_phrase(hkind), kind_phrase((uint32_t)kind));
            }
        }
    }
    return nd__fail(ND_E_BAD_HANDLE, "handle %lld is closed, stale or not a handle", (long long)h);
}

/* Like nd__handle_get, but also finds a closed handle whose object is still
 * alive (a window pin holds it: cursor.c). Records nothing on a miss. */
int32_t nd__handle_get_closed(nd_handle h, nd_kind kind, nd_object **out)
{
    uint32_t gen, hkind;
    slot *s = decode(h, &gen, &hkind);
    if (s == NULL || hkind != (uint32_t)kind)
        return ND_E_BAD_HANDLE;
    uint64_t st = atomic_load_explicit(&s->state, memory_order_relaxed);
    while (ST_GEN(st) == gen && ST_REFS(st) != 0) {
        if (atomic_compare_exchange_weak_explicit(&s->state, &st, st + 1, memory_order_acquire,
                                                  memory_order_relaxed)) {
            if (atomic_load_explicit(&s->kind, memory_order_relaxed) == hkind) {
                *out = atomic_load_explicit(&s->obj, memory_order_relaxed);
                return ND_OK;
            }
            nd__handle_put(h);
            return ND_E_BAD_HANDLE;
        }
    }
    return ND_E_BAD_HANDLE;
}

static void release_slot(slot *s, uint32_t index)
{
    nd_object *obj = atomic_load_explicit(&s->obj, memory_order_relaxed);
    atomic_store_explicit(&s->obj, NULL, memory_order_relaxed);
    obj->ops->destroy(obj);
    nd_mutex *m = lock_table();
    /* state keeps the generation with refs 0: no lookup can match it again */
    uint64_t st = atomic_load_explicit(&s->state, memory_order_relaxed);
    atomic_store_explicit(&s->state, (uint64_t)ST_GEN(st) << 32, memory_order_release);
    if (m != NULL) {
        s->next_free = free_head;
        free_head = index + 1;
        nd__mutex_unlock(m);
    }
}

static void pin_only(nd_handle h, slot *s, uint64_t st);

ND_HOT void nd__handle_put(nd_handle h)
{
    uint32_t index;
    slot *s = held_slot(h, &index);
    uint64_t prev = atomic_fetch_sub_explicit(&s->state, 1, memory_order_acq_rel);
    if (ST_REFS(prev) == 1)
        release_slot(s, index);
    else if (ND_UNLIKELY(ST_REFS(prev) == 2 &&
                         (prev & (ST_CLOSED | ST_PINNED | ST_PIN_ONLY)) == (ST_CLOSED | ST_PINNED)))
        pin_only(h, s, prev - 1); /* this put left the pin alone on a closed handle */
}

/* The handle's state was `st`: closed, and only the pin holds the object.
 * Takes a reference back for the callback, so that an unpin on another
 * thread cannot destroy the object under it; if the state moved first, the
 * thread that moved it holds a reference and its own put (or its unpin, and
 * then the destroy) sees to the object instead. */
static void pin_only(nd_handle h, slot *s, uint64_t st)
{
    if (!atomic_compare_exchange_strong_explicit(&s->state, &st, (st | ST_PIN_ONLY) + 1,
                                                 memory_order_acq_rel, memory_order_relaxed))
        return;
    nd_object *obj = atomic_load_explicit(&s->obj, memory_order_relaxed);
    if (obj->ops->pinned_only != NULL)
        obj->ops->pinned_only(obj);
    nd__handle_put(h); /* ST_PIN_ONLY is set: this put cannot come back here */
}

void nd__handle_pin(nd_handle h)
{
    uint32_t index;
    slot *s = held_slot(h, &index);
    uint64_t st = atomic_load_explicit(&s->state, memory_order_relaxed);
    for (;;) {
        if (st & ST_PINNED) { /* the last window's pin: its reader moved on */
            nd__handle_put(h);
            return;
        }
        /* closed while this call ran, and no other call is left: the pin alone
         * will hold it, so tell the object now (with a reference for that) */
        int alone = (st & (ST_CLOSED | ST_PIN_ONLY)) == ST_CLOSED && ST_REFS(st) == 1;
        uint64_t next = alone ? (st | ST_PINNED | ST_PIN_ONLY) + 1 : st | ST_PINNED;
        if (atomic_compare_exchange_weak_explicit(&s->state, &st, next, memory_order_acq_rel,
                                                  memory_order_relaxed)) {
            if (alone) {
                nd_object *obj = atomic_load_explicit(&s->obj, memory_order_relaxed);
                if (obj->ops->pinned_only != NULL)
                    obj->ops->pinned_only(obj);
                nd__handle_put(h);
            }
            return;
        }
    }
}

int nd__handle_unpin(nd_handle h)
{
    uint32_t index;
    slot *s = held_slot(h, &index);
    uint64_t prev = atomic_fetch_and_explicit(&s->state, ~ST_PINNED, memory_order_acq_rel);
    if (!(prev & ST_PINNED))
        return 0;
    nd__handle_put(h); /* the pin's reference; the caller's keeps the object */
    return 1;
}

static int32_t nd_close_impl(nd_handle h)
{
    uint32_t gen, kind;
    slot *s = decode(h, &gen, &kind);
    if (s != NULL) {
        uint64_t st = atomic_load_explicit(&s->state, memory_order_relaxed);
        while (ST_GEN(st) == gen && !(st & ST_CLOSED) && ST_REFS(st) != 0 &&
               atomic_load_explicit(&s->kind, memory_order_relaxed) == kind) {
            /* the closer takes a reference of its own so the object outlives close() */
            if (atomic_compare_exchange_weak_explicit(&s->state, &st, (st | ST_CLOSED) + 1,
                                                      memory_order_acq_rel, memory_order_relaxed)) {
                nd_object *obj = atomic_load_explicit(&s->obj, memory_order_relaxed);
                int32_t rc = obj->ops->close != NULL ? obj->ops->close(obj) : ND_OK;
                nd__handle_put(h); /* the closer's reference */
                nd__handle_put(h); /* the handle's own reference */
                return rc;
            }
        }
    }
    return nd__fail(ND_E_BAD_HANDLE, "handle %lld is closed, stale or not a handle", (long long)h);
}

int32_t nd_close(nd_handle h)
{
    return (int32_t)nd__in_call("nd_close", nd_close_impl(h));
}
