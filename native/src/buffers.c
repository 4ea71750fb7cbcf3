/*
 * buffers.c - the few large I/O buffers the library keeps between outputs.
 *
 * A direct output writes from two aligned 1 MiB buffers, and a buffered one
 * grows to 2 MiB (large folios, output.c). Fresh memory costs a page fault
 * per 4 KiB page on first touch, and the C library hands blocks this large
 * back to the OS when they are freed, so every new output paid those faults
 * again: about 5 ms per MiB on the development VM, where a fault is slow,
 * which was 6% of a 64 MiB durable merge write. Lucene opens outputs one
 * after another (each flush, each merge), so keeping the last few buffers
 * lets the next output start with memory that is already mapped. At most
 * CACHED buffers are kept (a direct output's three 1 MiB buffers and a
 * buffered one's 256 KiB-2 MiB steps), for as long as the process lives; with the cache
 * full, the buffer given back longest ago is freed, never the one just given:
 * outputs alternate between kinds (a direct output's third buffer, then a
 * buffered output's 2 MiB one), and each must find its own still here.
 *
 * Also here: blocks of whole cache lines (nd__buffer_lines), for the small
 * objects threads write on every call.
 */
#include <string.h>

#include "internal.h"

#define CACHED ND_BUFFERS_CACHED
#define CACHE_MIN ND_BUFFERS_CACHE_MIN

typedef struct {
    void *p;
    size_t align, size;
    uint64_t given; /* when it was given back: the least goes first */
} cached_buffer;

static nd_mutex *_Atomic cache_lock;
static cached_buffer cache[CACHED];
static uint64_t gives; /* buffers given back so far: the clock of `given` */

void *nd__buffer_take(size_t align, size_t size)
{
    nd_mutex *m = size >= CACHE_MIN ? nd__mutex_once(&cache_lock) : NULL;
    if (m != NULL) {
        void *p = NULL;
        nd__mutex_lock(m);
        for (int i = 0; i < CACHED && p == NULL; i++) {
            /* a buffer aligned to a multiple of `align` is aligned to `align` */
            if (cache[i].p != NULL && cache[i].size == size && cache[i].align % align == 0) {
                p = cache[i].p;
                cache[i].p = NULL;
            }
        }
        nd__mutex_unlock(m);
        if (p != NULL)
            return p;
        /* page-aligned, so that any later taker of this size can use it */
        if (align < 4096)
            align = 4096;
    }
    return nd__os_aligned_alloc(align, size);
}

void nd__buffer_give(void *p, size_t align, size_t size)
{
    if (p == NULL)
        return;
    nd_mutex *m = size >= CACHE_MIN ? nd__mutex_once(&cache_lock) : NULL;
    if (m != NULL) {
        /* an empty slot, else the oldest buffer's: the newest sizes are the likeliest next */
        int slot = -1;
        nd__mutex_lock(m);
        for (int i = 0; i < CACHED && slot < 0; i++)
            if (cache[i].p == NULL)
                slot = i;
        if (slot < 0) { /* full: the one given back longest ago goes */
            slot = 0;
            for (int i = 1; i < CACHED; i++)
                if (cache[i].given < cache[slot].given)
                    slot = i;
        }
        void *old = cache[slot].p;
        cache[slot] = (cached_buffer){p, align, size, ++gives};
        nd__mutex_unlock(m);
        p = old;
    }
    nd__os_aligned_free(p);
}

void *nd__buffer_lines(size_t size)
{
    size_t lines = (size + ND_CACHE_LINE - 1) / ND_CACHE_LINE;
    void *p = nd__os_aligned_alloc(ND_CACHE_LINE, lines * ND_CACHE_LINE);
    if (p != NULL)
        memset(p, 0, lines * ND_CACHE_LINE);
    return p;
}
