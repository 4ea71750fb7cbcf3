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
 * Calm alone does not always bring the mapping back. Positional reads can be
 * calm at a level where the mapping thrashes (they bring in only what is
 * asked, and inputs opened ND_IO_NOREUSE keep nothing). So when the cache
 * thrashed while this library's mappings were read, the mapping comes back
 * at once if the cache may now hold ROOM_GROWTH times what it could then (the
 * limit rose, the process or its neighbours gave memory back), and otherwise
 * after MAPPED_CALM_NS of calm, doubled, up to RETRY_MAX_NS, each time the
 * mapping thrashes again within PROBE_NS of coming back (a level where it
 * always does). A cache that thrashed while no mapping was read (other
 * readers in the process or its cgroup) asks only for CALM_NS of calm.
 *
 * "What it could then" is the most the cache could hold at the limit of the
 * moment it thrashed, with the least memory the process held for anything
 * else in the HELD_NS before: a heap swings as it fills and is collected (an
 * indexing thread's by a third or more within a second), and the mapping
 * that thrashed had that room at times too. Measured at the thrash alone, the
 * next collection looked like room the mapping never had, brought it back at
 * once, and it thrashed again.
 */
#include "internal.h"

/* How often the statistics are read (a few pseudo-file reads each time). */
#define SAMPLE_NS ((int64_t)250 * 1000 * 1000)
/* A sample this long after the last one says nothing of the library's reads:
 * none asked meanwhile, and the counters moved for the process's other
 * readers (another directory's searches in the same cgroup); it starts
 * afresh, and so does a calm period: a pause in the reads is no calm (a
 * mapping that thrashed before it thrashes after it, if nothing changed;
 * and if the room did, that brings it back at once). */
#define STALE_NS ((int64_t)1000 * 1000 * 1000)
/* Memory in use (the page cache counted) below this share of its limit (a
 * cgroup's, else the machine's: nd__os_memory) is under no pressure: the
 * pages read back in were evicted before (by a lower limit, another reader,
 * a cgroup the process has left), not by what it reads now. */
#define PRESSED 0.8
/* Turnover (pages read in again per second, as a share of the cache) above
 * which the cache thrashes, in TIGHT_SAMPLES samples in a row (three: a
 * cache that a search fills after a cold start is not thrashing): Lucene.NET
 * searching an index ten times its cache through mappings turned 2.7 of it
 * over a second on a disk of 8 MiB read-ahead and 0.25-0.6 on one of 128 KiB
 * (where the mapping served 0.6 times the searches of positional reads); at
 * a tenth of the index beside a merge, whose writer's room not yet used held
 * a cache of a fifth of it, 0.16-0.2 (0.6 times the searches of positional
 * reads there too); one four times its cache 0.0-0.12 while warming (two or
 * three samples), 0.05 once warm, and under 0.05 beside a merge. */
#define TIGHT_TURNOVER 0.15
#define TIGHT_SAMPLES 3
/* ...and below which, for CALM_NS, it no longer does: positional reads of an
 * index four times the cache turn over 0.12 of it a second (that level reads
 * best through the mapping), of one ten times the cache 0.7. A looser bar
 * than TIGHT_TURNOVER's: positional reads bring in less than the mapping
 * would at the same level, and how long the calm must last (below) keeps the
 * two from taking turns. */
#define CALM_TURNOVER 0.2
#define CALM_NS ((int64_t)2 * 1000 * 1000 * 1000)
/* ...see the top of the file: at 10% of the index in cache, Lucene.NET's
 * positional reads are calm and the mapping thrashes every time it comes
 * back, at a second of slow searches each. The limit rising from 10% to 25%
 * gives 2.4 times the room, and from the 10% of a search beside a merge
 * (whose writer was given memory of its own) 1.5 times; a process's own heap
 * moves it by 1.1 times while it searches (the swings of a heap that indexes
 * are left out: HELD_NS). */
#define ROOM_GROWTH 1.25
/* How far back the least memory held besides the page cache is looked for
 * (the top of the file): Lucene.NET indexing beside its searches, at a tenth
 * of the index, held 90 to 200 MiB within two seconds. */
#define HELD_NS ((int64_t)8 * 1000 * 1000 * 1000)
#define HELD_SAMPLES 32 /* HELD_NS of samples SAMPLE_NS apart */
#define PROBE_NS ((int64_t)10 * 1000 * 1000 * 1000)
/* After a thrash while the mapping was read, the first calm period: long
 * enough that a level where the mapping thrashes is not probed every few
 * seconds (each probe costs a second of searches at half the rate). */
#define MAPPED_CALM_NS ((int64_t)16 * 1000 * 1000 * 1000)
#define RETRY_MAX_NS ((int64_t)60 * 1000 * 1000 * 1000)

static _Atomic int32_t forced = ND_MEMORY_AUTO;
static _Atomic int32_t tight;
static _Atomic int32_t roomy = 1;
static _Atomic int32_t mapped_reads; /* a read went through a mapping since the last sample */
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
    int64_t room_then;    /* what the cache could hold when the mapping last thrashed, or -1 */
    int64_t mapped_since; /* when the mapping last came back */
    int64_t calm_needed;  /* the calm period before it comes back */
    struct {
        int64_t at, bytes;
    } held[HELD_SAMPLES]; /* memory held besides the page cache, a ring of the last samples */
    unsigned held_next;
} last = {.calm_needed = CALM_NS};

/* The memory in use for anything but the page cache. */
static int64_t held(const nd_os_memory *m)
{
    return m->used - (int64_t)m->cache_bytes;
}

/* The most page cache the process may hold: its limit less the memory in use
 * for anything else; -1 where no limit is known (the test for calm then needs
 * no more room). */
static int64_t room(const nd_os_memory *m)
{
    return m->limit > 0 ? m->limit - held(m) : -1;
}

/* Keeps this sample's memory held besides the page cache (under `sampler`). */
static void remember_held(const nd_os_memory *m, int64_t now)
{
    last.held[last.held_next].at = now;
    last.held[last.held_next].bytes = held(m);
    last.held_next = (last.held_next + 1) % HELD_SAMPLES;
}

/* What the cache could hold when the mapping thrashed (the top of the file):
 * the limit now, less the least memory held besides the cache in the last
 * HELD_NS (this sample's included: remember_held ran first). */
static int64_t room_at_thrash(const nd_os_memory *m, int64_t now)
{
    if (m->limit <= 0)
        return -1;
    int64_t least = held(m);
    for (unsigned i = 0; i < HELD_SAMPLES; i++)
        if (last.held[i].at != 0 && now - last.held[i].at <= HELD_NS && last.held[i].bytes < least)
            least = last.held[i].bytes;
    return m->limit - least;
}

/* Whether the cache may now hold ROOM_GROWTH times what it could when the
 * mapping last thrashed while it was read (under `sampler`); never where
 * either is unknown. */
static int room_grew(const nd_os_memory *m)
{
    int64_t r = room(m);
    return last.room_then >= 0 && r >= 0 && (double)r >= ROOM_GROWTH * (double)last.room_then;
}

/* Brings a mapping that thrashed back at once if the cache may now hold
 * ROOM_GROWTH times what it could then (under `sampler`). Room needs no
 * turnover to be seen: after a pause in the reads (a stale sample), or when a
 * directory opens (nd__memory_room), the limit may have risen meanwhile, and
 * an index opened then reads its files in at open (ND_IO_WARM) only while
 * mapped: waiting for the next sample's calm, its inputs opened positional
 * and came in by faults instead. */
static void back_for_room(const nd_os_memory *m, int64_t now)
{
    if (atomic_load_explicit(&tight, memory_order_relaxed) && room_grew(m)) {
        atomic_store_explicit(&tight, 0, memory_order_relaxed);
        last.mapped_since = now;
    }
}

int64_t nd__memory_room(void)
{
    nd_os_memory m;
    if (nd__os_memory(&m) != ND_OK)
        return -1;
    if (atomic_load_explicit(&forced, memory_order_relaxed) == ND_MEMORY_AUTO &&
        atomic_load_explicit(&tight, memory_order_relaxed)) {
        nd_mutex *mu = nd__mutex_once(&sampler);
        if (mu != NULL) {
            nd__mutex_lock(mu);
            back_for_room(&m, nd__os_clock_ns());
            nd__mutex_unlock(mu);
        }
    }
    return room(&m);
}

/* Whether the mapping may come back after `calm` ns of calm (the top of the file). */
static int may_map(const nd_os_memory *m, int64_t calm)
{
    if (last.room_then < 0 || room(m) < 0)
        return calm >= CALM_NS;
    return room_grew(m) || calm >= last.calm_needed;
}

static void sample(int64_t now)
{
    nd_os_memory m;
    if (nd__os_memory(&m) != ND_OK) {
        atomic_store_explicit(&tight, 0, memory_order_relaxed); /* no signal: mapped */
        return;
    }
    int is_full = m.limit > 0 && (double)m.used >= FULL * (double)m.limit;
    int ours = atomic_exchange_explicit(&mapped_reads, 0, memory_order_relaxed);
    atomic_store_explicit(&roomy, m.limit <= 0 || (double)m.used < ROOMY * (double)m.limit,
                          memory_order_relaxed);
    int pressed = m.limit <= 0 || (double)m.used >= PRESSED * (double)m.limit;
    remember_held(&m, now);
    if (last.valid && now - last.at > STALE_NS) {
        last.hot = 0;
        last.calm_since = 0; /* calm is seen, not assumed: nothing was read meanwhile */
        /* room is seen at once, though */
        back_for_room(&m, now);
    } else if (last.valid && now > last.at && m.cache_bytes > 0) {
        double per_byte = 4096.0 * 1e9 / (double)(now - last.at) / (double)m.cache_bytes;
        double turnover = pressed ? (double)(m.refaults - last.refaults) * per_byte : 0;
        if (is_full)
            turnover += (double)(m.major_faults - last.major_faults) * per_byte;
        last.hot = turnover > TIGHT_TURNOVER ? last.hot + 1 : 0;
        if (!atomic_load_explicit(&tight, memory_order_relaxed)) {
            if (last.hot >= TIGHT_SAMPLES) {
                atomic_store_explicit(&tight, 1, memory_order_relaxed);
                last.calm_since = 0;
                if (ours && last.mapped_since != 0 && now - last.mapped_since < PROBE_NS)
                    last.calm_needed =
                        2 * last.calm_needed < RETRY_MAX_NS ? 2 * last.calm_needed : RETRY_MAX_NS;
                else
                    last.calm_needed = ours ? MAPPED_CALM_NS : CALM_NS;
                last.room_then = ours ? room_at_thrash(&m, now) : -1;
            }
        } else if (turnover >= CALM_TURNOVER) {
            last.calm_since = 0;
        } else {
            if (last.calm_since == 0)
                last.calm_since = now;
            if (may_map(&m, now - last.calm_since)) {
                atomic_store_explicit(&tight, 0, memory_order_relaxed);
                last.mapped_since = now;
            }
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

int nd__memory_maps(void)
{
    if (nd__memory_tight())
        return 0;
    /* a load, and a store only the first time after each sample: the line stays shared */
    if (!atomic_load_explicit(&mapped_reads, memory_order_relaxed))
        atomic_store_explicit(&mapped_reads, 1, memory_order_relaxed);
    return 1;
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
