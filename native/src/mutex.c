/*
 * mutex.c - process-wide mutexes made on first use.
 *
 * The library has no init call, so a lock that guards process-wide state (the
 * handle table, the list of live rings) is made by whichever thread needs it
 * first; the OS layer (thread.c) provides the mutex itself.
 */
#include "internal.h"

nd_mutex *nd__mutex_once(nd_mutex *_Atomic *slot)
{
    nd_mutex *m = atomic_load_explicit(slot, memory_order_acquire);
    if (ND_UNLIKELY(m == NULL)) {
        nd_mutex *fresh = nd__mutex_new();
        if (fresh == NULL)
            return NULL;
        if (!atomic_compare_exchange_strong(slot, &m, fresh))
            nd__mutex_free(fresh); /* another thread won; m holds its mutex */
        else
            m = fresh;
    }
    return m;
}
