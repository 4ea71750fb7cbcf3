/*
 * ring.h - what ring.c, its slots (ring_slots.c) and its list of rings that
 * hold files (ring_files.c) share with the asynchronous backends
 * (posix/ring_uring.c, posix/ring_threads.c, windows/ring_iocp.c).
 */
#ifndef ND_RING_H
#define ND_RING_H

#include "internal.h"

/* One read in flight. The slots are allocated with the ring: nothing is
 * allocated per read. */
typedef struct {
    nd_handle input; /* held from submit to completion */
    nd_os_file fd;   /* ND_OS_FILE_INVALID: already done at submit */
    void *file;      /* the open file behind input (its key in registered-file tables) */
    int64_t off;     /* file offset of the first byte still to read */
    uint8_t *dst;    /* where that byte goes */
    size_t left;     /* bytes still to read */
    int64_t len;     /* the whole read, for the result */
    uint64_t tag;
    int64_t result; /* set when done */
    uint32_t next;  /* free list link (index + 1) */
    /* io_uring hands an op from the submitting thread to the reaping one
     * through the kernel, which orders them but which ThreadSanitizer (and a
     * reader of the code) cannot see: ring_uring.c bumps this with release
     * order before submitting and reads it with acquire order on completion.
     * The thread pool hands ops over under its mutex and needs nothing. */
    _Atomic uint32_t published;
} nd_ring_op;

typedef struct nd_ring nd_ring;

/* A FIFO of slot indexes, sized to the ring's depth (each op is in at most
 * one FIFO at a time, so it never overflows); the backends' hand-offs. */
typedef struct {
    uint32_t *items;
    uint32_t head, count, cap;
} nd_ring_fifo;

static inline void nd__fifo_push(nd_ring_fifo *f, uint32_t v)
{
    f->items[(f->head + f->count++) % f->cap] = v;
}

static inline uint32_t nd__fifo_pop(nd_ring_fifo *f)
{
    uint32_t v = f->items[f->head];
    f->head = (f->head + 1) % f->cap;
    f->count--;
    return v;
}

typedef struct {
    /* Starts op `index` (its fd may be ND_OS_FILE_INVALID: then only its
     * completion is to be reported). */
    int32_t (*start)(nd_ring *r, uint32_t index);
    /* Waits up to timeout_ms for completions; for each finished op calls
     * nd__ring_complete(); returns how many it stored, 0 on timeout, < 0. */
    int32_t (*reap)(nd_ring *r, uint64_t *tags, int64_t *results, int32_t max, int32_t timeout_ms);
    /* Makes a blocked reap return now. */
    void (*wake)(nd_ring *r);
    /* Waits until no op is in flight, dropping completions (ring close). */
    void (*drain)(nd_ring *r);
    /* Frees the backend's state (the last user of the ring is gone). */
    void (*free)(nd_ring *r);
    /* Optional (backends that hold files: io_uring's registered descriptors):
     * some file is held by rings only now; let go of every such file, now, on
     * the calling thread, dropping them with nd__file_ring_drop(file, 0).
     * Called with the list of live rings locked: one pass over the rings lets
     * go of every ring's hold, and the last closes the file. */
    void (*files_unused)(nd_ring *r);
    /* Optional (NULL: ND_E_NOT_SUPPORTED): the descriptor nd_ring_event_fd
     * returns, made on the first call and the same one afterwards; the
     * backend signals it whenever a completion becomes reapable and closes it
     * in free(). */
    int32_t (*event_fd)(nd_ring *r);
} nd_ring_backend_ops;

struct nd_ring {
    nd_object base;
    int backend;
    uint32_t depth;
    nd_ring_op *ops;
    nd_mutex *mu; /* free list */
    uint32_t free_head;
    _Atomic int32_t in_flight;
    _Atomic int closing;
    const nd_ring_backend_ops *vt;
    void *impl;
    /* the list of live rings with vt->files_unused (ring_files.c) */
    nd_ring *live_next;
    int live;
};

/* ring_slots.c. Takes a free slot for a read: ND_E_BUSY when all are in
 * flight, ND_E_BAD_HANDLE when the ring is closing. */
int32_t nd__ring_slot_take(nd_ring *r, uint32_t *out_index);
/* Gives a slot back (its read reported or dropped, or never started). */
void nd__ring_slot_free(nd_ring *r, uint32_t index);
/* Reports op `index` as done with op->result: stores it in tags/results at
 * position n, drops the input, frees the slot. */
void nd__ring_complete(nd_ring *r, uint32_t index, uint64_t *tags, int64_t *results, int32_t n);
/* Drops an op without reporting it (ring shutdown). */
void nd__ring_discard(nd_ring *r, uint32_t index);

/* The OS's own asynchronous I/O (io_uring, IOCP): ND_E_NOT_SUPPORTED where
 * it is missing or refused, and the ring falls back to nd__ring_threads_init. */
int32_t nd__ring_native_init(nd_ring *r);
int32_t nd__ring_threads_init(nd_ring *r);

#endif /* ND_RING_H */
