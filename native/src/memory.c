/*
 * memory.c - whether the files being read fit the page cache the process may
 * use, and so whether mapped inputs are read through their mappings or with
 * positional reads (nd__memory_tight, nd_memory_mode).
 *
 * A mapping is the fastest way to read a file whose pages stay in memory: a
 * read is a load. Once the files a process searches no longer fit the page
 * cache it may use (a memory cgroup's limit, or the machine's memory), a
 * mapping is the slowest: every fault on a missing page reads around it (up
 * to the device's read_ahead_kb, 8 MiB on some virtual disks), evicting
 * pages the next reads need, and even with random advice a block faults in
 * one page at a time, one device read after another, where a positional read
 * asks for the whole block at once. Lucene's own measurements show the same
 * (pread beats a mapping under memory pressure). So mapped inputs switch to
 * positional reads through their descriptor while the page cache thrashes,
 * and back once it is calm (docs/strategies.md has the figures).
 *
 * "Thrashes" is measured, not guessed from sizes: the pages the kernel reads
 * back in soon after evicting them (workingset refaults), per second, as a
 * share of the page cache held (the cache's turnover); and, while the memory
 * in use is at its limit, mapped pages faulted in from the device (with
 * random advice the kernel keeps no refault history for them; below the limit
 * such faults are a cache still filling, not thrashing). Sampled at most every
 * SAMPLE_NS by whichever thread asks, so asking costs a clock read and a load;
 * with hysteresis, so that a level where positional reads thrash less than
 * the mapping did does not flip back and forth.
 *
 * Calm alone does not bring the mapping back. Positional reads can be calm at
 * a level where the mapping thrashed (they bring in only what is asked, and
 * inputs opened ND_IO_NOREUSE keep nothing), so the mapping comes back only
 * once the page cache may hold more than it could when the mapping thrashed
 * (the limit rose, or the process or its neighbours gave memory back), or
 * after RETRY_NS in case what is read has changed.
 */
#include "internal.h"

/* How often the statistics are read (a few pseudo-file reads each time). */
#define SAMPLE_NS ((int64_t)250 * 1000 * 1000)
/* Turnover (pages read in again per second, as a share of the cache) above
 * which the cache thrashes, in TIGHT_SAMPLES samples in a row (a cache that
 * a search fills after a cold start is not thrashing): Lucene.NET searching
 * an index ten times its cache through mappings turned 2.7 of it over a
 * second, one four times its cache 0.05 once warm. */
#define TIGHT_TURNOVER 0.5
#define TIGHT_SAMPLES 2
/* ...and below which, for CALM_NS, it no longer does: positional reads of an
 * index four times the cache turn over 0.12 of it a second (that level reads
 * best through the mapping), of one ten times the cache 0.7. */
#define CALM_TURNOVER 0.2
#define CALM_NS ((int64_t)2 * 1000 * 1000 * 1000)
/* ...once the cache may hold this much more than when the mapping thrashed,
 * or this long after: a mapping that thrashes again costs about a second of
 * slow reads, so at a level where it always does that is a few per cent of
 * the time. */
#define ROOM_GROWTH 1.25
#define RETRY_NS ((int64_t)60 * 1000 * 1000 * 1000)

static _Atomic int32_t forced = ND_MEMORY_AUTO;
static _Atomic int32_t tight;
static _Atomic int32_t roomy = 1;
static _Atomic int64_t next_sample_ns;
static nd_mutex *_Atomic sampler; /* held while a sample runs (a slow one may meet the next) */

/* Memory in use at or above this share of its limit is full. */
#define FULL 0.95
/* ...and below this one it has room to spare: for the bytes around a block
 * that a prefetch brings in with it. With the index four times its cache,
 * Lucene.NET's stored-field chunks prefetched into a full cache crowded out
 * the pages searches read again (0.6x the searches a second); prefetched only
 * below this, they sped the cold cache of every level up. */
#define ROOMY 0.7

/* The sampler's own state, under `sampler`. */
static struct {
    int64_t at, calm_since;
    uint64_t refaults, major_faults; /* at `at` */
    int valid, hot;                  /* hot: samples in a row above TIGHT_TURNOVER */
    int64_t tight_since, room_then;  /* when the mapping last thrashed, and the room then */
} last;

/* The most page cache the process may hold: its limit less the memory it
 * uses for anything else; -1 without a limit (the test for calm then needs
 * no more room). */
static int64_t room(const nd_os_memory *m)
{
    return m->limit > 0 ? m->limit - (m->used - (int64_t)m->cache_bytes) : -1;
}

/* Whether the mapping may come back (see the top of the file). */
static int room_grew(const nd_os_memory *m, int64_t now)
{
    int64_t r = room(m);
    return r < 0 || last.room_then < 0 || (double)r >= ROOM_GROWTH * (double)last.room_then ||
           now - last.tight_since >= RETRY_NS;
}

static void sample(int64_t now)
{
    nd_os_memory m;
    if (nd__os_memory(&m) != ND_OK) {
        atomic_store_explicit(&tight, 0, memory_order_relaxed); /* no signal: mapped */
        return;
    }
    int is_full = m.limit > 0 && (double)m.used >= FULL * (double)m.limit;
    atomic_store_explicit(&roomy, m.limit <= 0 || (double)m.used < ROOMY * (double)m.limit,
                          memory_order_relaxed);
    if (last.valid && now > last.at && m.cache_bytes > 0) {
        double per_byte = 4096.0 * 1e9 / (double)(now - last.at) / (double)m.cache_bytes;
        double turnover = (double)(m.refaults - last.refaults) * per_byte;
        if (is_full)
            turnover += (double)(m.major_faults - last.major_faults) * per_byte;
        last.hot = turnover > TIGHT_TURNOVER ? last.hot + 1 : 0;
        if (!atomic_load_explicit(&tight, memory_order_relaxed)) {
            if (last.hot >= TIGHT_SAMPLES) {
                atomic_store_explicit(&tight, 1, memory_order_relaxed);
                last.calm_since = 0;
                last.tight_since = now;
                last.room_then = room(&m);
            }
        } else if (turnover >= CALM_TURNOVER) {
            last.calm_since = 0;
        } else if (last.calm_since == 0) {
            last.calm_since = now;
        } else if (now - last.calm_since >= CALM_NS && room_grew(&m, now)) {
            atomic_store_explicit(&tight, 0, memory_order_relaxed);
        }
    }
    last.at = now;
    last.refaults = m.refaults;
    last.major_faults = m.major_faults;
    last.valid = 1;
}

/* Samples if one is due (by whichever thread gets there first). */
static void maybe_sample(void)
{
    int64_t now = nd__os_clock_ns();
    int64_t due = atomic_load_explicit(&next_sample_ns, memory_order_relaxed);
    if (ND_UNLIKELY(now >= due) &&
        atomic_compare_exchange_strong_explicit(&next_sample_ns, &due, now + SAMPLE_NS,
                                                memory_order_relaxed, memory_order_relaxed)) {
        nd_mutex *m = nd__mutex_once(&sampler);
        if (m != NULL) {
            nd__mutex_lock(m);
            sample(now);
            nd__mutex_unlock(m);
        }
    }
}

int nd__memory_tight(void)
{
    int32_t mode = atomic_load_explicit(&forced, memory_order_relaxed);
    if (mode != ND_MEMORY_AUTO)
        return mode == ND_MEMORY_POSITIONAL;
    maybe_sample();
    return atomic_load_explicit(&tight, memory_order_relaxed);
}

int nd__memory_roomy(void)
{
    maybe_sample();
    return atomic_load_explicit(&roomy, memory_order_relaxed);
}

static int32_t nd_memory_mode_impl(int32_t mode)
{
    if (mode < -1 || mode > ND_MEMORY_POSITIONAL)
        return nd__fail(ND_E_INVALID_ARGUMENT,
                        "mode %d is not ND_MEMORY_AUTO, _MAPPED or _POSITIONAL (or -1 to ask)",
                        (int)mode);
    if (mode == -1)
        return atomic_load(&forced);
    return atomic_exchange(&forced, mode);
}

int32_t nd_memory_mode(int32_t mode)
{
    return (int32_t)nd__in_call("nd_memory_mode", nd_memory_mode_impl(mode));
}
