/*
 * ring_files.c - the list of rings whose backend holds files, so that the
 * thread dropping a file's last reference that is not a ring's (file.c) can
 * make them let it go.
 *
 * Rings join when they open and leave before their backend is freed.
 * Lock order: live_lock, then a ring's own locks (io_uring's sq_mu); a thread
 * holding a ring's lock drops files only with wake_rings 0 (the sweep itself,
 * and the submitter letting go of a file whose slot it gave to another), so
 * the order is never reversed.
 */
#include "ring_files.h"

static nd_mutex *_Atomic live_lock;
static nd_ring *live_rings;

int32_t nd__ring_files_join(nd_ring *r)
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

void nd__ring_files_leave(nd_ring *r)
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
