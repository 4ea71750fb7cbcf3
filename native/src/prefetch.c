/*
 * prefetch.c - nd_input_prefetch and nd_input_advise: read-ahead the caller
 * asks for, and access advice changed on an open input.
 *
 * A WILLNEED hint walks the page cache even when every page is there, about a
 * microsecond a call, which an index that fits in memory pays on every block
 * it reads. So prefetch first looks whether the pages are resident (one cheap
 * system call) and, after it has found them resident several times running,
 * looks only now and then: the count of consecutive resident findings is kept
 * per file and prefetch looks at calls 0, 1, 2, 4, ... 64 of a run and then at
 * every 64th. A look that finds a page missing restarts the run and issues the
 * hint. On a cached index a prefetch then costs one handle look-up and a
 * counter; on a cold one every call looks and hints. The cost: after a long
 * run of hits, up to 63 prefetches of ranges that are not resident do nothing.
 */
#include "internal.h"

/* Once a run of resident findings is this long, look once per this many calls. */
#define LOOK_EVERY 64u

static int should_look(uint32_t run)
{
    return run < LOOK_EVERY ? (run & (run - 1)) == 0 : run % LOOK_EVERY == 0;
}

static int32_t prefetch_impl(nd_handle input, int64_t offset, int64_t len)
{
    nd_input_view v;
    int32_t rc = nd__input_view(input, offset, len, &v);
    if (ND_UNLIKELY(rc != ND_OK))
        return rc;
    /* a block read once per use, and the bytes around it, prefetched into a
     * cache without room to spare would evict pages that are read again: it is
     * read when asked for, and no sooner */
    if (len > 0 && v.strategy != ND_STRATEGY_DIRECT && (!v.noreuse || nd__memory_roomy())) {
        /* racing callers may lose an increment or a reset: the count is a
         * heuristic, and plain loads and stores keep it off the bus lock */
        uint32_t run = atomic_load_explicit(v.hits, memory_order_relaxed);
        atomic_store_explicit(v.hits, run + 1, memory_order_relaxed);
        if (should_look(run)) {
            int64_t at = v.start + offset;
            int resident;
            if (v.strategy == ND_STRATEGY_MAPPED && !nd__memory_tight()) {
                int64_t from = at - at % nd__os_page_size(); /* madvise wants page-aligned */
                resident = nd__os_map_resident(v.map + from, at + len - from);
                if (resident != 1)
                    nd__os_map_advise(v.map + from, at + len - from, ND_ADVICE_WILLNEED);
            } else {
                resident = nd__os_file_resident(v.fd, at, len);
                if (resident != 1)
                    nd__os_advise(v.fd, at, len, ND_ADVICE_WILLNEED);
            }
            if (resident != 1) /* a miss, or no way to tell: look every time */
                atomic_store_explicit(v.hits, 0, memory_order_relaxed);
        }
    }
    nd__handle_put(input);
    return rc;
}

static int32_t advise_impl(nd_handle input, uint32_t flags)
{
    nd_advice advice;
    switch (flags) {
    case 0: advice = ND_ADVICE_NORMAL; break;
    case ND_IO_RANDOM: advice = ND_ADVICE_RANDOM; break;
    case ND_IO_SEQUENTIAL: advice = ND_ADVICE_SEQUENTIAL; break;
    default:
        return nd__fail(ND_E_INVALID_ARGUMENT,
                        "flags 0x%x are not one advice (ND_IO_RANDOM, ND_IO_SEQUENTIAL or 0)",
                        flags);
    }
    nd_input_view v;
    int32_t rc = nd__input_view(input, 0, 0, &v);
    if (rc != ND_OK)
        return rc;
    if (v.length > 0 && v.strategy == ND_STRATEGY_MAPPED) {
        int64_t from = v.start - v.start % nd__os_page_size();
        nd__os_map_advise(v.map + from, v.start + v.length - from, advice);
    }
    /* a mapped file's descriptor too: its positional reads while the cache thrashes */
    if (v.length > 0 && v.strategy != ND_STRATEGY_DIRECT)
        nd__os_advise(v.fd, v.start, v.length, advice);
    nd__handle_put(input);
    return ND_OK;
}

int32_t nd_input_prefetch(nd_handle input, int64_t offset, int64_t len)
{
    return (int32_t)nd__in_call("nd_input_prefetch", prefetch_impl(input, offset, len));
}

int32_t nd_input_advise(nd_handle input, uint32_t flags)
{
    return (int32_t)nd__in_call("nd_input_advise", advise_impl(input, flags));
}
