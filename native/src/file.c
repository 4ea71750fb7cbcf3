/*
 * file.c - the open file behind an input, its clones and slices: opening it
 * with the strategy its flags ask for (buffered, mapped, direct, drop-behind),
 * the references that keep it (inputs', rings'), and the one positional read
 * every input's read comes down to.
 *
 * Everything here but the counters on their own cache line is fixed at open,
 * so reads of one file from any number of threads share it without locks
 * (direct reads through the bounce buffer take its mutex).
 */
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "ring_files.h"

/* A sequential reader of a mapping populates its page tables this far ahead
 * in one call: one madvise instead of a page fault per fault-around block
 * (docs/design.md, "Mapped sequential reads", which has the measurements of
 * 4 and 16 MiB and of stretches growing from 4 MiB: all slower than one call
 * per 64 MiB). A multiple of every page size. */
#define POPULATE_AHEAD ((int64_t)64 << 20)
#define POPULATE_ALIGN ((int64_t)64 << 10)
/* Copies out of a mapping go in pieces no bigger than this. glibc's memcpy
 * switches from `rep movsb` to a vector loop at the L2 size on AMD CPUs, and
 * from a file mapping (4 KiB pages) that loop was 15-25% slower for 1-16 MiB
 * reads on the Zen 5 development VM; smaller pieces keep every copy on the
 * fast path, and elsewhere they cost one call per 256 KiB (docs/design.md). */
#define MAP_COPY_PIECE ((size_t)256 << 10)
/* Copies out of a mapping at least this big first load one byte per page of
 * each piece: the loads take their TLB misses in parallel, where the copy
 * takes them one page after another. After other work has pushed the mapping's
 * page-table entries out of the caches, 1 MiB copies ran 10-20% faster on the
 * development VM; at 64 KiB it made no difference and below it cost a little. */
#define MAP_TOUCH_MIN ((size_t)256 << 10)

/* nd_file.refs: the references in the low 32 bits, and in the high 32 bits
 * how many of them rings hold (registered descriptors). */
#define RING_HOLD ((uint64_t)1 << 32)
#define REFS_OF(v) ((uint32_t)(v))
#define RINGS_OF(v) ((uint32_t)((v) >> 32))

static void file_destroy(nd_file *f)
{
    if (f->map != NULL)
        nd__os_unmap(f->map, f->size, f->map_token);
    nd__os_close_file(f->fd);
    nd__mutex_free(f->bounce_mu);
    nd__os_aligned_free(f->bounce);
    nd__os_aligned_free(f);
}

/* After a reference is dropped, leaving `left`: closes the file when none
 * is left; when only rings hold it (no input, clone, slice or read of one is
 * left, and none can appear: they all come from an input), makes them let go
 * now (unless `wake_rings` is 0: the caller is that sweep), so the file is
 * closed when this returns, as if no ring had read it. */
static void file_after_drop(nd_file *f, uint64_t left, int wake_rings)
{
    if (REFS_OF(left) == 0)
        file_destroy(f);
    else if (wake_rings && REFS_OF(left) == RINGS_OF(left))
        nd__ring_files_unused();
}

void nd__file_unuse(nd_file *f, int window_left)
{
    if (atomic_fetch_sub(&f->users, 1) != 1 || f->map == NULL)
        return;
    /* no input is left and none can appear (they come from inputs): the
     * references left are this caller's and the pinned windows' */
    if (window_left || REFS_OF(atomic_load(&f->refs)) > 1) {
        nd__os_map_revoke(f->map, f->size, &f->map_token);
        nd__os_close_file(f->fd); /* no input is left to read through it */
        f->fd = ND_OS_FILE_INVALID;
    }
}

void nd__file_release(nd_file *f)
{
    file_after_drop(f, atomic_fetch_sub(&f->refs, 1) - 1, 1);
}

void nd__file_ring_hold(void *file)
{
    atomic_fetch_add(&((nd_file *)file)->refs, RING_HOLD + 1);
}

void nd__file_ring_drop(void *file, int wake_rings)
{
    nd_file *f = file;
    file_after_drop(f, atomic_fetch_sub(&f->refs, RING_HOLD + 1) - (RING_HOLD + 1), wake_rings);
}

int nd__file_ring_only(void *file)
{
    uint64_t v = atomic_load(&((nd_file *)file)->refs);
    return REFS_OF(v) == RINGS_OF(v);
}

/* ---- reading ---- */

int32_t nd__file_shrank(const nd_file *f, int64_t off, int64_t want, size_t got)
{
    return nd__fail(ND_E_IO, "read '%s': %zu of %lld bytes at %lld; the file shrank after open",
                    f->name, got, (long long)want, (long long)off);
}

/* Before a sequential reader's copy reaches pages it has not populated,
 * populate the next POPULATE_AHEAD bytes in one call. Readers racing here
 * agree through the CAS: one of them populates each stretch. A reader that
 * jumped ahead starts from where it reads, not from the gap before it. */
static void populate_ahead(nd_file *f, int64_t off, int64_t len)
{
    int64_t done = atomic_load_explicit(&f->populated, memory_order_relaxed);
    if (off + len <= done)
        return;
    int64_t from = off > done ? off : done;
    from -= from % POPULATE_ALIGN;
    int64_t to = off + len + POPULATE_AHEAD;
    if (to > f->size)
        to = f->size;
    if (atomic_compare_exchange_strong_explicit(&f->populated, &done, to, memory_order_relaxed,
                                                memory_order_relaxed))
        nd__os_map_populate(f->map + from, to - from);
}

/* A mapping opened without advice is read sequentially if its reads so far
 * follow each other from offset 0 for SEQUENTIAL_AFTER bytes (a reader that
 * opens a new file and scans it, as Lucene checks a segment file's checksum
 * or copies it): from there it is populated ahead as an ND_IO_SEQUENTIAL one
 * is (FreshMapScan: 1.41-1.55x memcpy with a page fault per folio, docs/
 * design.md). Readers that seek about never match the run's end, so they only
 * load it; the run's reader moves it with one CAS per read. */
#define SEQUENTIAL_AFTER ((int64_t)1 << 20)

static void follow_run(nd_file *f, int64_t off, int64_t len)
{
    int64_t end = atomic_load_explicit(&f->run_end, memory_order_relaxed);
    if (off != end || !atomic_compare_exchange_strong_explicit(
                          &f->run_end, &end, off + len, memory_order_relaxed, memory_order_relaxed))
        return;
    if (off + len >= SEQUENTIAL_AFTER)
        populate_ahead(f, off, len);
}

/* One load per page of [p, p+len) (4 KiB apart: every page size is a multiple);
 * volatile, so the compiler keeps loads whose values nobody uses. */
static ND_HOT void touch_pages(const uint8_t *p, size_t len)
{
    for (size_t i = 0; i < len; i += 4096)
        (void)((const volatile uint8_t *)p)[i];
}

/* Exact read of [off, off+len) of the file (the caller checked the range). */
ND_HOT int32_t nd__file_read(nd_file *f, int64_t off, void *dst, size_t len)
{
    size_t got;
    int32_t rc;
    switch (f->strategy) {
    case ND_STRATEGY_MAPPED:
        if (!nd__memory_maps())
            goto positional;
        if (f->ahead == ND_AHEAD_ALWAYS)
            populate_ahead(f, off, (int64_t)len);
        else if (f->ahead == ND_AHEAD_ON_RUN)
            follow_run(f, off, (int64_t)len);
        for (size_t done = 0; done < len; done += MAP_COPY_PIECE) {
            const uint8_t *src = f->map + off + (int64_t)done;
            size_t n = len - done < MAP_COPY_PIECE ? len - done : MAP_COPY_PIECE;
            if (len >= MAP_TOUCH_MIN)
                touch_pages(src, n);
            memcpy((uint8_t *)dst + done, src, n);
        }
        return ND_OK;
    case ND_STRATEGY_DIRECT: {
        uint64_t a = f->align;
        if (((uintptr_t)dst % a) == 0 && ((uint64_t)off % a) == 0 && (len % a) == 0) {
            rc = nd__os_pread(f->fd, f->name, dst, len, off, &got);
            return rc != ND_OK  ? rc
                   : got == len ? ND_OK
                                : nd__file_shrank(f, off, (int64_t)len, got);
        }
        /* unaligned: through the shared bounce buffer, one aligned chunk at a
         * time. skip < a <= bounce_cap, and bounce_cap is a multiple of a, so
         * each chunk holds at least one byte and its span fits the buffer. */
        size_t cap = f->bounce_cap;
        nd__mutex_lock(f->bounce_mu);
        size_t done = 0;
        rc = ND_OK;
        while (done < len && rc == ND_OK) {
            int64_t at = off + (int64_t)done;
            int64_t from = at - (int64_t)((uint64_t)at % a);
            size_t skip = (size_t)(at - from);
            size_t n = cap - skip < len - done ? cap - skip : len - done;
            size_t span = (skip + n + a - 1) / a * a;
            rc = nd__os_pread(f->fd, f->name, f->bounce, span, from, &got);
            if (rc == ND_OK && got < skip + n)
                rc = nd__file_shrank(f, at, (int64_t)n, got > skip ? got - skip : 0);
            if (rc == ND_OK)
                memcpy((uint8_t *)dst + done, f->bounce + skip, n);
            done += n;
        }
        nd__mutex_unlock(f->bounce_mu);
        return rc;
    }
    default:
    positional:
        rc = nd__os_pread(f->fd, f->name, dst, len, off, &got);
        if (rc != ND_OK)
            return rc;
        if (got != len)
            return nd__file_shrank(f, off, (int64_t)len, got);
        nd__file_after_read(f, off, len);
        return ND_OK;
    }
}

void nd__file_after_read(nd_file *f, int64_t off, size_t len)
{
    if (f->strategy == ND_STRATEGY_DROP_BEHIND) {
        nd__os_advise(f->fd, off, (int64_t)len, ND_ADVICE_DONTNEED);
    } else if (f->noreuse && len > 0 && nd__memory_tight()) {
        /* 4 KiB: every page size is a multiple, and the kernel widens to its own */
        int64_t from = off & ~(int64_t)4095, to = (off + (int64_t)len + 4095) & ~(int64_t)4095;
        nd__os_advise(f->fd, from, to - from, ND_ADVICE_DONTNEED);
    }
}

/* ---- opening ---- */

/* A WILLNEED asks the kernel for this much at most: Linux reads no more per
 * call than the device's read-ahead (read_ahead_kb), 128 KiB on most NVMe and
 * SATA disks, so a larger range would come in only at its start. */
#define READ_IN_CHUNK ((int64_t)128 << 10)

/* Whether an input opened with `flags` in `d` reads its file in at open
 * (ND_IO_WARM): a file read once per use, in order, or for a merge is not
 * kept; nor is anything where the directory does not fit (fits.c), or while
 * the cache thrashes. Fits first: the room it reads brings a mapping that
 * thrashed back at once if the limit has risen since (memory.c). */
static int warm(nd_dir *d, uint32_t flags)
{
    return (flags & ND_IO_WARM) &&
           !(flags & (ND_IO_PRELOAD | ND_IO_NOREUSE | ND_IO_SEQUENTIAL | ND_IO_MERGE)) &&
           nd__dir_fits(d) && !nd__memory_tight();
}

/* Starts reading the whole file into the page cache, without waiting for
 * it. Each chunk is one device read, queued at once, where faults or reads
 * as asked would wait for one after another. Blocks the caller only while
 * the device's queue is full. Through the mapping where there is one
 * (Windows has no advice on a descriptor, but prefetches a view). */
static void read_in(nd_file *f)
{
    for (int64_t off = 0; off < f->size; off += READ_IN_CHUNK) {
        int64_t len = f->size - off < READ_IN_CHUNK ? f->size - off : READ_IN_CHUNK;
        if (f->map != NULL)
            nd__os_map_advise(f->map + off, len, ND_ADVICE_WILLNEED);
        else
            nd__os_advise(f->fd, off, len, ND_ADVICE_WILLNEED);
    }
}

static nd_advice advice_for(uint32_t flags)
{
    if (flags & (ND_IO_SEQUENTIAL | ND_IO_MERGE))
        return ND_ADVICE_SEQUENTIAL;
    if (flags & ND_IO_RANDOM)
        return ND_ADVICE_RANDOM;
    return ND_ADVICE_NORMAL;
}

int32_t nd__file_open(nd_dir *d, const char *name, uint32_t flags, nd_file **out)
{
    size_t nlen = strlen(name);
    nd_file *f = nd__buffer_lines(sizeof(*f) + nlen + 1);
    if (f == NULL)
        return nd__fail(ND_E_NO_MEMORY, "out of memory");
    memcpy(f->name, name, nlen + 1);
    f->fd = ND_OS_FILE_INVALID;
    atomic_init(&f->refs, 1);
    atomic_init(&f->users, 0);
    f->noreuse = (flags & ND_IO_NOREUSE) != 0;
    int want_direct = (flags & ND_IO_MERGE) && !(flags & ND_IO_MMAP);
    int32_t rc = ND_E_NOT_SUPPORTED;
    if (want_direct) {
        rc = nd__os_open_file(d->os, name, ND_OPEN_READ, 1, &f->fd);
        if (rc == ND_OK)
            f->strategy = ND_STRATEGY_DIRECT;
        else if ((rc == ND_E_INVALID_ARGUMENT || rc == ND_E_NOT_SUPPORTED) &&
                 !(flags & ND_IO_REQUIRE_DIRECT))
            rc = ND_E_NOT_SUPPORTED; /* fall back below */
        else if (rc == ND_E_INVALID_ARGUMENT)
            rc = nd__fail(ND_E_NOT_SUPPORTED, "'%s' in '%s': the file system refuses direct I/O",
                          name, nd__os_dir_path(d->os));
        if (rc != ND_OK && rc != ND_E_NOT_SUPPORTED)
            goto fail;
        if (rc == ND_E_NOT_SUPPORTED && (flags & ND_IO_REQUIRE_DIRECT))
            goto fail;
    }
    if (f->fd == ND_OS_FILE_INVALID) {
        rc = nd__os_open_file(d->os, name, ND_OPEN_READ, 0, &f->fd);
        if (rc != ND_OK)
            goto fail;
        f->strategy = (flags & ND_IO_MMAP) ? ND_STRATEGY_MAPPED
                      : want_direct        ? ND_STRATEGY_DROP_BEHIND
                                           : ND_STRATEGY_BUFFERED;
    }
    rc = nd__os_file_size(f->fd, name, &f->size);
    if (rc != ND_OK)
        goto fail;
    if (f->strategy == ND_STRATEGY_DIRECT) {
        f->align = nd__os_direct_alignment(f->fd);
        f->bounce_mu = nd__mutex_new();
        f->bounce_cap = nd__direct_size(ND_BOUNCE_DIRECT, f->align);
        f->bounce = nd__os_aligned_alloc(f->align, f->bounce_cap);
        if (f->bounce_mu == NULL || f->bounce == NULL) {
            rc = nd__fail(ND_E_NO_MEMORY, "out of memory");
            goto fail;
        }
    } else if (f->strategy == ND_STRATEGY_MAPPED) {
        if (f->size > 0) {
            rc = nd__os_map(f->fd, name, f->size, (void **)&f->map, &f->map_token);
            if (rc != ND_OK)
                goto fail;
            nd__os_map_advise(f->map, f->size, advice_for(flags));
            if (flags & ND_IO_PRELOAD)
                nd__os_map_populate(f->map, f->size);
            else if (flags & ND_IO_SEQUENTIAL)
                f->ahead = ND_AHEAD_ALWAYS;
            else if (!(flags & ND_IO_RANDOM))
                f->ahead = ND_AHEAD_ON_RUN;
            if (warm(d, flags))
                read_in(f);
        }
        /* the descriptor stays, for the positional reads of a thrashing cache
         * (memory.c). Random advice on it whatever the mapping's: there a read
         * brings in exactly what is asked, where the kernel's read-ahead (up
         * to the device's read_ahead_kb) would evict what the next queries
         * need (measured: docs/strategies.md) */
        nd__os_advise(f->fd, 0, 0, ND_ADVICE_RANDOM);
    } else {
        if (f->size > 0 && warm(d, flags))
            read_in(f); /* before the advice: random advice on a descriptor reads nothing ahead */
        if (advice_for(flags) != ND_ADVICE_NORMAL) /* a fresh descriptor has it already */
            nd__os_advise(f->fd, 0, 0, advice_for(flags));
        if (flags & ND_IO_PRELOAD)
            nd__os_advise(f->fd, 0, 0, ND_ADVICE_WILLNEED);
    }
    *out = f;
    return ND_OK;
fail:
    nd__os_close_file(f->fd);
    nd__mutex_free(f->bounce_mu);
    nd__os_aligned_free(f->bounce);
    nd__os_aligned_free(f);
    return rc;
}
