/*
 * fault.c - the switchboard behind ND_FAULT_CHECK in the test variant of the
 * library (built by tests/reliability with ND_FAULT_INJECTION; never part of
 * the shipped libraries).
 *
 * Each point keeps a call counter and an armed window [first, last] of call
 * numbers to hit. Everything is an atomic so that threads racing through one
 * point see each call numbered exactly once and exactly the armed calls fail.
 */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#  define _POSIX_C_SOURCE 200809L /* strdup; ISO C11 alone lacks it */
#endif
#include "fault.h"

#ifdef ND_FAULT_INJECTION

#  include <errno.h>
#  include <limits.h>
#  include <stdatomic.h>

typedef struct {
    _Atomic long calls; /* calls since armed or cleared */
    _Atomic long first; /* first call number to hit; 0 = disarmed */
    _Atomic long last;  /* last call number to hit */
    _Atomic int err;
    _Atomic int mode;
    _Atomic long injected; /* hits since armed or cleared */
} point_state;

static point_state points[ND_FAULT_POINTS];
static _Atomic long injected_total;

static int valid(nd_fault_point p)
{
    return (int)p >= 0 && p < ND_FAULT_POINTS;
}

int nd__fault_hit(nd_fault_point point)
{
    if (!valid(point))
        return 0;
    point_state *s = &points[point];
    long n = atomic_fetch_add(&s->calls, 1) + 1;
    long first = atomic_load_explicit(&s->first, memory_order_acquire);
    if (first == 0 || n < first || n > atomic_load(&s->last))
        return 0;
    atomic_fetch_add(&s->injected, 1);
    atomic_fetch_add(&injected_total, 1);
    if (atomic_load(&s->mode) == ND_FAULT_MODE_SHORT)
        return 2;
    errno = atomic_load(&s->err);
    return 1;
}

void nd__fault_set_times(nd_fault_point point, long nth, long times, int err, int mode)
{
    if (!valid(point) || nth < 1 || times == 0)
        return;
    point_state *s = &points[point];
    /* disarm first so that no call sees half of the new settings */
    atomic_store(&s->first, 0);
    atomic_store(&s->err, err);
    atomic_store(&s->mode, mode);
    atomic_store(&s->last, times < 0 || times > LONG_MAX - nth ? LONG_MAX : nth + times - 1);
    atomic_store(&s->calls, 0);
    atomic_store(&s->injected, 0);
    atomic_store_explicit(&s->first, nth, memory_order_release);
}

void nd__fault_set(nd_fault_point point, long nth, int err, int mode)
{
    nd__fault_set_times(point, nth, 1, err, mode);
}

void nd__fault_clear(void)
{
    for (int i = 0; i < ND_FAULT_POINTS; i++) {
        atomic_store(&points[i].first, 0);
        atomic_store(&points[i].calls, 0);
        atomic_store(&points[i].injected, 0);
    }
}

long nd__fault_calls(nd_fault_point point)
{
    return valid(point) ? atomic_load(&points[point].calls) : 0;
}

long nd__fault_injected(nd_fault_point point)
{
    return valid(point) ? atomic_load(&points[point].injected) : 0;
}

long nd__fault_injected_total(void)
{
    return atomic_load(&injected_total);
}

const char *nd__fault_point_name(nd_fault_point point)
{
    static const char *const names[ND_FAULT_POINTS] = {"open",     "read",  "write",  "fsync",
                                                       "rename",   "alloc", "handle", "thread",
                                                       "register", "submit"};
    return valid(point) ? names[point] : "?";
}

static _Atomic uint32_t forced_alignment;
static _Atomic uint32_t forced_blksize;

void nd__fault_set_alignment(uint32_t align)
{
    atomic_store(&forced_alignment, align);
}

void nd__fault_set_blksize(uint32_t blksize)
{
    atomic_store(&forced_blksize, blksize);
}

uint32_t nd__fault_alignment(void)
{
    return atomic_load(&forced_alignment);
}

uint32_t nd__fault_blksize(void)
{
    return atomic_load(&forced_blksize);
}

static _Atomic uint32_t submit_pause;

void nd__fault_set_submit_pause(uint32_t us)
{
    atomic_store(&submit_pause, us);
}

uint32_t nd__fault_submit_pause(void)
{
    return atomic_load(&submit_pause);
}

/* An injected allocation failure looks like the real one: NULL and ENOMEM.
 * This file does not include internal.h, so the calls below are libc's. */
void *nd__fault_malloc(size_t n)
{
    return nd__fault_hit(ND_FAULT_ALLOC) ? (errno = ENOMEM, NULL) : malloc(n);
}

void *nd__fault_calloc(size_t n, size_t size)
{
    return nd__fault_hit(ND_FAULT_ALLOC) ? (errno = ENOMEM, NULL) : calloc(n, size);
}

void *nd__fault_realloc(void *p, size_t n)
{
    return nd__fault_hit(ND_FAULT_ALLOC) ? (errno = ENOMEM, NULL) : realloc(p, n);
}

char *nd__fault_strdup(const char *s)
{
    return nd__fault_hit(ND_FAULT_ALLOC) ? (errno = ENOMEM, NULL) : strdup(s);
}

#else
/* ISO C wants a translation unit to declare something */
typedef int nd_fault_disabled;
#endif
