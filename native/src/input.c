/*
 * input.c - inputs: one open file shared by an input, its clones and slices,
 * read with one of three strategies (buffered, mapped, direct).
 *
 * Positional reads touch only immutable state, so they are thread-safe on one
 * handle. Cursor calls use the handle's own buffer and are guarded by a flag:
 * two threads using one cursor at once get an error instead of torn memory.
 *
 * Windows are pinned: the handle keeps one reference on the input from a
 * window call until the next window call on it (from any thread: the cursor
 * has one user at a time, and a caller moving it is done with the last
 * window) or nd_input_unpin. nd_close never releases a pinned window, on any
 * thread: the library cannot see who reads a window (a binding hands its
 * input, window and all, to another thread without a call), so only the
 * reader can say it is done. The close keeps only what the window points
 * into alive under the pin: the cursor buffer, or the mapping. The file of a
 * buffered, direct or drop-behind input (its descriptor) goes as soon as no
 * call is in flight on the closed handle (input_pinned_only, from the handle
 * table, which sees "closed and only the pin holds it" in one word), as
 * POSIX close() would give it back; the reader's next window call gets
 * ND_E_BAD_HANDLE and drops the rest. The pin is the reference the window
 * call took anyway, so it costs no atomic beyond the handle lookup's (and a
 * compare-and-swap on the same line).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Cursor buffer sizes, chosen with bench/nd_bench (see docs/design.md): a
 * sequential scan wants few large preads; a random reader pays for every byte
 * it pulls in but does not use. */
#define BUF_DEFAULT (16u << 10)
#define BUF_SEQUENTIAL (256u << 10)
#define BUF_RANDOM (4u << 10)
/* Direct reads skip the cache: make each one count. Both direct buffers are
 * at least this and at least one alignment unit, a multiple of it either way
 * (direct_size): an aligned read rounded up to the alignment must fit. */
#define BUF_DIRECT (256u << 10)
#define BOUNCE_DIRECT (256u << 10)
#define BYPASS_MAX ((size_t)64 << 10) /* cursor reads at least this big skip the buffer */
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
 * how many of them rings hold (registered descriptors). One word, so "only
 * rings hold the file" is a single load, never a torn pair of counts. */
#define RING_HOLD ((uint64_t)1 << 32)
#define REFS_OF(v) ((uint32_t)(v))
#define RINGS_OF(v) ((uint32_t)((v) >> 32))

/* When a mapped file populates its page tables ahead of its readers. */
typedef enum {
    AHEAD_NEVER,   /* not mapped, opened ND_IO_RANDOM, or ND_IO_PRELOAD (all populated at open) */
    AHEAD_ALWAYS,  /* opened ND_IO_SEQUENTIAL */
    AHEAD_ON_RUN   /* opened without advice: once its reads run in order (follow_run) */
} ahead_mode;

typedef struct {
    _Atomic uint64_t refs;
    nd_os_file fd;
    int strategy;
    int64_t size;
    uint8_t *map;
    void *map_token;
    ahead_mode ahead;
    uint32_t align;       /* direct I/O alignment */
    nd_mutex *bounce_mu;  /* direct: serialises positional reads through bounce */
    uint8_t *bounce;
    size_t bounce_cap;    /* direct_size(BOUNCE_DIRECT, align) */
    /* What reads and prefetches write, on a cache line of its own (the file is
     * allocated with nd__buffer_lines): every read of every clone reads the
     * fields above, and a sequential reader moving run_end, or prefetches
     * counting hits, must not take their line from the others. */
    _Alignas(ND_CACHE_LINE) _Atomic int64_t populated; /* [0, populated) populated ahead */
    _Atomic int64_t run_end;     /* AHEAD_ON_RUN: the end of the reads run from 0 */
    _Atomic uint32_t prefetch_hits; /* prefetch.c's back-off */
    char name[];
} nd_file;

typedef struct {
    nd_object base;
    nd_file *file;
    int64_t start, length; /* the readable range, in file offsets */
    int64_t pos;           /* cursor, relative to start */
    uint8_t *buf;
    size_t buf_cap;
    int64_t buf_start; /* file offset of buf[0] */
    size_t buf_len;
    uint32_t flags;
    _Atomic int busy;
} nd_input;

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

static void file_release(nd_file *f)
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

/* Drops the window pin of `h`, open or already closed; ND_E_BAD_HANDLE once
 * the object is gone (nothing recorded). */
static int32_t unpin(nd_handle h)
{
    nd_object *obj; /* not used: the file may be gone (input_pinned_only) */
    if (nd__handle_get_closed(h, ND_KIND_INPUT, &obj) != ND_OK)
        return ND_E_BAD_HANDLE;
    (void)nd__handle_unpin(h);
    nd__handle_put(h);
    return ND_OK;
}

/* Closed, pinned, and no call in flight (none can start): a window points
 * into the cursor buffer or the mapping, never at the descriptor, so a file
 * that is not mapped is let go of now, as if the input had been unpinned (a
 * clone or slice still open keeps it open). A mapped file keeps its mapping
 * (its descriptor went at open; on Windows the view holds the file). */
static void input_pinned_only(nd_object *obj)
{
    nd_input *in = (nd_input *)obj;
    if (in->file->strategy != ND_STRATEGY_MAPPED) {
        file_release(in->file);
        in->file = NULL;
    }
}

static void input_destroy(nd_object *obj)
{
    nd_input *in = (nd_input *)obj;
    nd__os_aligned_free(in->buf);
    if (in->file != NULL)
        file_release(in->file);
    nd__os_aligned_free(in);
}

/* no close step: a close leaves a pinned window to its reader (top of file) */
static const nd_object_ops input_ops = {NULL, input_destroy, input_pinned_only};

static ND_HOT int32_t input_get(nd_handle h, nd_input **out)
{
    nd_object *obj;
    int32_t rc = nd__handle_get(h, ND_KIND_INPUT, &obj);
    if (rc == ND_OK)
        *out = (nd_input *)obj;
    return rc;
}

static ND_HOT int32_t cursor_enter(nd_input *in)
{
    if (ND_UNLIKELY(atomic_exchange_explicit(&in->busy, 1, memory_order_acquire)))
        return nd__fail(ND_E_INVALID_ARGUMENT,
                        "another thread is using this handle's cursor; clone per thread");
    return ND_OK;
}

static ND_HOT void cursor_leave(nd_input *in)
{
    atomic_store_explicit(&in->busy, 0, memory_order_release);
}

/* ---- reading ---- */

/* A direct buffer's size: `want` rounded up to a multiple of the alignment.
 * File systems ask for anything from 512 B to several MiB (st_blksize stands
 * in where they do not say: docs/design.md), so a buffer may grow past its
 * default but never holds less than one aligned unit. */
static size_t direct_size(size_t want, uint32_t align)
{
    return (want + align - 1) / align * align;
}

static int32_t short_file(nd_file *f, int64_t off, int64_t want, size_t got)
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
    if (off != end || !atomic_compare_exchange_strong_explicit(&f->run_end, &end, off + len,
                                                               memory_order_relaxed,
                                                               memory_order_relaxed))
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
static ND_HOT int32_t file_read(nd_file *f, int64_t off, void *dst, size_t len)
{
    size_t got;
    int32_t rc;
    switch (f->strategy) {
    case ND_STRATEGY_MAPPED:
        if (f->ahead == AHEAD_ALWAYS)
            populate_ahead(f, off, (int64_t)len);
        else if (f->ahead == AHEAD_ON_RUN)
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
            return rc != ND_OK ? rc : got == len ? ND_OK : short_file(f, off, (int64_t)len, got);
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
                rc = short_file(f, at, (int64_t)n, got > skip ? got - skip : 0);
            if (rc == ND_OK)
                memcpy((uint8_t *)dst + done, f->bounce + skip, n);
            done += n;
        }
        nd__mutex_unlock(f->bounce_mu);
        return rc;
    }
    default:
        rc = nd__os_pread(f->fd, f->name, dst, len, off, &got);
        if (rc != ND_OK)
            return rc;
        if (got != len)
            return short_file(f, off, (int64_t)len, got);
        if (f->strategy == ND_STRATEGY_DROP_BEHIND)
            nd__os_advise(f->fd, off, (int64_t)len, ND_ADVICE_DONTNEED);
        return ND_OK;
    }
}

static ND_HOT int32_t range_check(nd_input *in, int64_t off, int64_t len)
{
    if (off < 0 || len < 0)
        return nd__fail(ND_E_INVALID_ARGUMENT, "negative %s on '%s'",
                        off < 0 ? "offset" : "length", in->file->name);
    if (off > in->length || len > in->length - off)
        return nd__fail(ND_E_EOF, "%lld bytes at %lld end past the end of '%s' (%lld bytes)",
                        (long long)len, (long long)off, in->file->name, (long long)in->length);
    return ND_OK;
}

/* range_check plus the destination: what every read of [off, off+len) needs */
static ND_HOT int32_t read_check(nd_input *in, int64_t off, const void *dst, int64_t len)
{
    int32_t rc = range_check(in, off, len);
    if (rc == ND_OK && dst == NULL && len > 0)
        rc = nd__fail(ND_E_INVALID_ARGUMENT, "dst is NULL");
    return rc;
}

/* What every positional read starts with: the input, held, and its range
 * checked. On failure nothing is held. */
static ND_HOT int32_t positional_get(nd_handle h, int64_t off, const void *dst, int64_t len,
                                     nd_input **out)
{
    int32_t rc = input_get(h, out);
    if (ND_UNLIKELY(rc != ND_OK))
        return rc;
    rc = read_check(*out, off, dst, len);
    if (rc != ND_OK)
        nd__handle_put(h);
    return rc;
}

static ND_HOT int64_t nd_read_bytes_impl(nd_handle input, int64_t offset, void *dst, int64_t len)
{
    nd_input *in;
    int32_t rc = positional_get(input, offset, dst, len, &in);
    if (rc != ND_OK)
        return rc;
    if (len > 0)
        rc = file_read(in->file, in->start + offset, dst, (size_t)len);
    nd__handle_put(input);
    return rc == ND_OK ? len : rc;
}

static ND_HOT int64_t nd_read_cached_impl(nd_handle input, int64_t offset, void *dst, int64_t len)
{
    nd_input *in;
    int32_t rc = positional_get(input, offset, dst, len, &in);
    if (rc != ND_OK)
        return rc;
    int64_t got = 0;
    nd_file *f = in->file;
    if (len > 0 && f->strategy == ND_STRATEGY_MAPPED) {
        rc = file_read(f, in->start + offset, dst, (size_t)len); /* a mapping reads whole */
        got = len;
    } else if (len > 0 && f->strategy == ND_STRATEGY_BUFFERED) {
        /* drop-behind reads are meant to leave the cache alone, and a direct
         * read never asks it */
        got = (int64_t)nd__os_pread_cached(f->fd, dst, (size_t)len, in->start + offset);
    }
    nd__handle_put(input);
    return rc == ND_OK ? got : rc;
}

int32_t nd__input_begin_async(nd_handle h, int64_t off, void *dst, int64_t len, nd_os_file *fd,
                              int64_t *file_off, int64_t *result, void **file)
{
    nd_input *in;
    int32_t rc = positional_get(h, off, dst, len, &in);
    if (rc != ND_OK)
        return rc;
    nd_file *f = in->file;
    int64_t at = in->start + off;
    uint64_t a = f->align;
    int async = f->strategy == ND_STRATEGY_BUFFERED || f->strategy == ND_STRATEGY_DROP_BEHIND ||
                (f->strategy == ND_STRATEGY_DIRECT && (uintptr_t)dst % a == 0 &&
                 (uint64_t)at % a == 0 && (uint64_t)len % a == 0);
    *file = f;
    if (async && len > 0) {
        *fd = f->fd;
        *file_off = at;
    } else {
        *fd = ND_OS_FILE_INVALID;
        rc = len > 0 ? file_read(f, at, dst, (size_t)len) : ND_OK;
        *result = rc == ND_OK ? len : rc;
    }
    return ND_OK;
}

int32_t nd__input_view(nd_handle h, int64_t off, int64_t len, nd_input_view *out)
{
    nd_input *in;
    int32_t rc = input_get(h, &in);
    if (rc != ND_OK)
        return rc;
    if ((rc = range_check(in, off, len)) != ND_OK) {
        nd__handle_put(h);
        return rc;
    }
    nd_file *f = in->file;
    out->strategy = f->strategy;
    out->fd = f->fd;
    out->map = f->map;
    out->start = in->start;
    out->length = in->length;
    out->hits = &f->prefetch_hits;
    return ND_OK;
}

static int32_t nd_input_length_impl(nd_handle input, int64_t *out_len)
{
    if (out_len == NULL)
        return nd__fail(ND_E_INVALID_ARGUMENT, "out_len is NULL");
    nd_input *in;
    int32_t rc = input_get(input, &in);
    if (rc != ND_OK)
        return rc;
    *out_len = in->length;
    nd__handle_put(input);
    return ND_OK;
}

static int32_t nd_input_strategy_impl(nd_handle input)
{
    nd_input *in;
    int32_t rc = input_get(input, &in);
    if (rc != ND_OK)
        return rc;
    rc = in->file->strategy;
    nd__handle_put(input);
    return rc;
}

/* The cursor buffer's size for this input (allocated on first use). */
static size_t buffer_cap(const nd_input *in)
{
    const nd_file *f = in->file;
    size_t cap = BUF_DEFAULT;
    if (f->strategy == ND_STRATEGY_DIRECT)
        return direct_size(BUF_DIRECT, f->align); /* whole aligned units, the last past EOF */
    if (in->flags & (ND_IO_SEQUENTIAL | ND_IO_MERGE))
        cap = BUF_SEQUENTIAL;
    else if (in->flags & ND_IO_RANDOM)
        cap = BUF_RANDOM;
    /* never more than the input needs (small files, small slices) */
    if ((int64_t)cap > in->length)
        cap = (size_t)(in->length > 0 ? in->length : 1);
    return cap;
}

static int64_t nd_input_buffer_size_impl(nd_handle input)
{
    nd_input *in;
    int32_t rc = input_get(input, &in);
    if (rc != ND_OK)
        return rc;
    int64_t cap = (int64_t)buffer_cap(in);
    nd__handle_put(input);
    return cap;
}

/* Makes the buffer hold the byte at file offset `at` (inside the input).
 * Returns how many bytes from `at` are in the buffer and inside the input. */
static int32_t buffer_fill(nd_input *in, int64_t at, size_t *avail)
{
    nd_file *f = in->file;
    int64_t end = in->start + in->length;
    if (in->buf_len > 0 && at >= in->buf_start && at < in->buf_start + (int64_t)in->buf_len) {
        int64_t stop = in->buf_start + (int64_t)in->buf_len;
        *avail = (size_t)((stop < end ? stop : end) - at);
        return ND_OK;
    }
    if (in->buf == NULL) {
        size_t cap = buffer_cap(in);
        in->buf = nd__os_aligned_alloc(f->strategy == ND_STRATEGY_DIRECT ? f->align : 64, cap);
        if (in->buf == NULL)
            return nd__fail(ND_E_NO_MEMORY, "read '%s': no memory for a %zu-byte buffer",
                            f->name, cap);
        in->buf_cap = cap;
    }
    int64_t from = at;
    size_t want;
    size_t got = 0;
    int32_t rc;
    if (f->strategy == ND_STRATEGY_DIRECT) {
        from = at - (int64_t)((uint64_t)at % f->align);
        want = in->buf_cap;
    } else {
        want = end - at < (int64_t)in->buf_cap ? (size_t)(end - at) : in->buf_cap;
    }
    in->buf_len = 0;
    rc = nd__os_pread(f->fd, f->name, in->buf, want, from, &got);
    if (rc != ND_OK)
        return rc;
    if (from + (int64_t)got <= at)
        return short_file(f, at, 1, 0);
    if (f->strategy == ND_STRATEGY_DROP_BEHIND)
        nd__os_advise(f->fd, from, (int64_t)got, ND_ADVICE_DONTNEED);
    in->buf_start = from;
    in->buf_len = got;
    int64_t stop = from + (int64_t)got;
    *avail = (size_t)((stop < end ? stop : end) - at);
    return ND_OK;
}

static int64_t nd_input_window_impl(nd_handle input, int64_t pos, const uint8_t **out_ptr)
{
    if (ND_UNLIKELY(out_ptr == NULL))
        return nd__fail(ND_E_INVALID_ARGUMENT, "out_ptr is NULL");
    nd_input *in;
    int32_t rc = input_get(input, &in);
    if (ND_UNLIKELY(rc != ND_OK)) {
        /* closed by another thread under this cursor's last window: the caller
         * is done with it now, so the pin goes (the message stays get's) */
        (void)unpin(input);
        return rc;
    }
    int64_t result;
    if (ND_UNLIKELY(pos < 0 || pos >= in->length)) {
        result = pos < 0 ? nd__fail(ND_E_INVALID_ARGUMENT, "negative position")
                         : nd__fail(ND_E_EOF, "position %lld is at or past the "
                                              "end of '%s' (%lld bytes)",
                                    (long long)pos, in->file->name, (long long)in->length);
    } else if (in->file->strategy == ND_STRATEGY_MAPPED) {
        *out_ptr = in->file->map + in->start + pos;
        result = in->length - pos;
    } else if ((rc = cursor_enter(in)) != ND_OK) {
        result = rc;
    } else {
        size_t avail = 0;
        int64_t at = in->start + pos;
        rc = buffer_fill(in, at, &avail);
        if (rc == ND_OK) {
            *out_ptr = in->buf + (at - in->buf_start);
            result = (int64_t)avail;
        } else {
            result = rc;
        }
        cursor_leave(in);
    }
    /* on success the call's reference becomes the pin, or the pin was already
     * held (the last window's: its reader moved on) and the call's reference goes */
    if (result < 0)
        nd__handle_put(input);
    else
        nd__handle_pin(input);
    return result;
}

static int32_t nd_input_unpin_impl(nd_handle input)
{
    if (unpin(input) == ND_OK)
        return ND_OK;
    /* neither open nor closed-but-pinned: the handle table says what it is instead (a wrong
     * kind, stale, closed) in the words every other call uses */
    nd_input *in;
    if (input_get(input, &in) == ND_OK) { /* opened in between: nothing was pinned */
        nd__handle_put(input);
        return ND_OK;
    }
    return ND_E_BAD_HANDLE;
}

static int32_t nd_input_seek_impl(nd_handle input, int64_t pos)
{
    nd_input *in;
    int32_t rc = input_get(input, &in);
    if (rc != ND_OK)
        return rc;
    if (pos < 0)
        rc = nd__fail(ND_E_INVALID_ARGUMENT, "negative position");
    else if (pos > in->length)
        rc = nd__fail(ND_E_EOF, "position %lld is past the end of '%s' (%lld)",
                      (long long)pos, in->file->name, (long long)in->length);
    else if ((rc = cursor_enter(in)) == ND_OK) {
        in->pos = pos;
        cursor_leave(in);
    }
    nd__handle_put(input);
    return rc;
}

static int64_t nd_input_position_impl(nd_handle input)
{
    nd_input *in;
    int32_t rc = input_get(input, &in);
    if (rc != ND_OK)
        return rc;
    int64_t pos = rc = cursor_enter(in);
    if (rc == ND_OK) {
        pos = in->pos;
        cursor_leave(in);
    }
    nd__handle_put(input);
    return pos;
}

static int32_t nd_read_byte_buffered_impl(nd_handle input)
{
    nd_input *in;
    int32_t rc = input_get(input, &in);
    if (ND_UNLIKELY(rc != ND_OK))
        return rc;
    if ((rc = cursor_enter(in)) == ND_OK) {
        if (in->pos >= in->length) {
            rc = nd__fail(ND_E_EOF, "at the end of '%s' (%lld bytes)",
                          in->file->name, (long long)in->length);
        } else if (in->file->strategy == ND_STRATEGY_MAPPED) {
            rc = in->file->map[in->start + in->pos++];
        } else {
            int64_t at = in->start + in->pos;
            size_t avail;
            rc = buffer_fill(in, at, &avail);
            if (rc == ND_OK) {
                rc = in->buf[at - in->buf_start];
                in->pos++;
            }
        }
        cursor_leave(in);
    }
    nd__handle_put(input);
    return rc;
}

/* Reads exactly `len` bytes at `pos` through the cursor buffer and moves the
 * cursor to pos + len; on failure the cursor stays. Whatever the buffer holds
 * at `pos` is copied first (a binding's window is this buffer, so the rest of
 * it is here); a rest at least the bypass size goes straight into the
 * caller's memory: through the buffer it would cost a second copy of every
 * byte. The same size whether or not the buffer exists yet (a small first
 * read allocates it); above 64 KiB one system call per read already costs
 * little. Mappings need no buffer. */
static size_t bypass_size(const nd_input *in)
{
    size_t cap = buffer_cap(in);
    return cap < BYPASS_MAX ? cap : BYPASS_MAX;
}

static ND_HOT int32_t cursor_read(nd_input *in, int64_t pos, void *dst, int64_t len)
{
    int32_t rc = read_check(in, pos, dst, len);
    nd_file *f = in->file;
    uint8_t *out = dst;
    int64_t at = in->start + pos, left = rc == ND_OK ? len : 0;
    if (f->strategy != ND_STRATEGY_MAPPED) {
        size_t big = bypass_size(in);
        while (left > 0 && rc == ND_OK) {
            int held = in->buf_len > 0 && at >= in->buf_start &&
                       at < in->buf_start + (int64_t)in->buf_len;
            if (!held && (uint64_t)left >= big)
                break;
            size_t avail;
            rc = buffer_fill(in, at, &avail);
            if (rc == ND_OK) {
                size_t n = avail < (size_t)left ? avail : (size_t)left;
                memcpy(out, in->buf + (at - in->buf_start), n);
                out += n;
                at += (int64_t)n;
                left -= (int64_t)n;
            }
        }
    }
    if (left > 0 && rc == ND_OK)
        rc = file_read(f, at, out, (size_t)left);
    if (rc == ND_OK)
        in->pos = pos + len;
    return rc;
}

static ND_HOT int64_t nd_read_buffered_impl(nd_handle input, void *dst, int64_t len)
{
    nd_input *in;
    int32_t rc = input_get(input, &in);
    if (rc != ND_OK)
        return rc;
    if ((rc = cursor_enter(in)) == ND_OK) {
        rc = cursor_read(in, in->pos, dst, len);
        cursor_leave(in);
    }
    nd__handle_put(input);
    return rc == ND_OK ? len : rc;
}

/* nd_read_buffered at `pos`, then the window at the cursor, pinned as
 * nd_input_window's: a binding's cursor makes one call where its window ends. */
static ND_HOT int64_t nd_input_read_from_impl(nd_handle input, int64_t pos, void *dst,
                                              int64_t len, const uint8_t **out_window)
{
    if (out_window != NULL)
        *out_window = NULL;
    nd_input *in;
    int32_t rc = input_get(input, &in);
    if (ND_UNLIKELY(rc != ND_OK)) {
        (void)unpin(input); /* closed under the cursor's window: see nd_input_window */
        return rc;
    }
    int64_t result = rc = cursor_enter(in);
    if (rc == ND_OK) {
        rc = cursor_read(in, pos, dst, len);
        result = rc;
        if (rc == ND_OK) {
            int64_t at = in->start + in->pos, end = in->start + in->length;
            result = 0;
            if (out_window == NULL || at >= end) {
                /* no window wanted, or none left */
            } else if (in->file->strategy == ND_STRATEGY_MAPPED) {
                *out_window = in->file->map + at;
                result = end - at;
            } else if ((in->buf_len > 0 && at >= in->buf_start &&
                        at < in->buf_start + (int64_t)in->buf_len) ||
                       (uint64_t)len < bypass_size(in)) {
                /* the buffer's rest, refilled if a read through it ended at its end (a
                 * read straight into dst leaves none: the reader may be skipping) */
                size_t avail;
                if ((rc = buffer_fill(in, at, &avail)) == ND_OK) {
                    *out_window = in->buf + (at - in->buf_start);
                    result = (int64_t)avail;
                } else if (len == 0) {
                    result = rc; /* the window was all that was asked for */
                } /* else the read is done, and the next call says why there is no window */
            }
        }
        cursor_leave(in);
    }
    /* as in nd_input_window: the call's reference becomes the pin, or goes */
    if (result < 0 || out_window == NULL)
        nd__handle_put(input);
    else
        nd__handle_pin(input);
    return result;
}

/* ---- opening, cloning, slicing ---- */

static int32_t input_new(nd_file *f, int64_t start, int64_t length, uint32_t flags,
                         nd_handle *out)
{
    nd_input *in = nd__buffer_lines(sizeof(*in)); /* its cursor: no line shared with a clone's */
    if (in == NULL)
        return nd__fail(ND_E_NO_MEMORY, "input '%s': out of memory", f->name);
    in->base.ops = &input_ops;
    in->file = f;
    in->start = start;
    in->length = length;
    in->flags = flags;
    atomic_fetch_add_explicit(&f->refs, 1, memory_order_relaxed);
    int32_t rc = nd__handle_new(ND_KIND_INPUT, &in->base, out);
    if (rc != ND_OK) {
        atomic_fetch_sub_explicit(&f->refs, 1, memory_order_relaxed); /* the caller holds one */
        nd__os_aligned_free(in);
    }
    return rc;
}

#define INPUT_FLAGS \
    (ND_IO_RANDOM | ND_IO_SEQUENTIAL | ND_IO_MERGE | ND_IO_MMAP | ND_IO_PRELOAD | \
     ND_IO_REQUIRE_DIRECT)

static nd_advice advice_for(uint32_t flags)
{
    if (flags & (ND_IO_SEQUENTIAL | ND_IO_MERGE))
        return ND_ADVICE_SEQUENTIAL;
    if (flags & ND_IO_RANDOM)
        return ND_ADVICE_RANDOM;
    return ND_ADVICE_NORMAL;
}

static int32_t file_open(nd_dir *d, const char *name, uint32_t flags, nd_file **out)
{
    size_t nlen = strlen(name);
    nd_file *f = nd__buffer_lines(sizeof(*f) + nlen + 1);
    if (f == NULL)
        return nd__fail(ND_E_NO_MEMORY, "out of memory");
    memcpy(f->name, name, nlen + 1);
    f->fd = ND_OS_FILE_INVALID;
    atomic_init(&f->refs, 1);
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
            rc = nd__fail(ND_E_NOT_SUPPORTED,
                          "'%s' in '%s': the file system refuses direct I/O",
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
        f->strategy = (flags & ND_IO_MMAP)    ? ND_STRATEGY_MAPPED
                      : want_direct           ? ND_STRATEGY_DROP_BEHIND
                                              : ND_STRATEGY_BUFFERED;
    }
    rc = nd__os_file_size(f->fd, name, &f->size);
    if (rc != ND_OK)
        goto fail;
    if (f->strategy == ND_STRATEGY_DIRECT) {
        f->align = nd__os_direct_alignment(f->fd);
        f->bounce_mu = nd__mutex_new();
        f->bounce_cap = direct_size(BOUNCE_DIRECT, f->align);
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
                f->ahead = AHEAD_ALWAYS;
            else if (!(flags & ND_IO_RANDOM))
                f->ahead = AHEAD_ON_RUN;
        }
        /* the mapping outlives the descriptor: give it back now */
        nd__os_close_file(f->fd);
        f->fd = ND_OS_FILE_INVALID;
    } else {
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

static int32_t nd_open_input_impl(nd_handle dir, const char *name, uint32_t flags, nd_handle *out_input)
{
    if (out_input == NULL)
        return nd__fail(ND_E_INVALID_ARGUMENT, "out_input is NULL");
    *out_input = 0;
    if (flags & ~INPUT_FLAGS)
        return nd__fail(ND_E_INVALID_ARGUMENT, "flags 0x%x are not input flags",
                        flags & ~INPUT_FLAGS);
    if ((flags & ND_IO_REQUIRE_DIRECT) && (flags & ND_IO_MMAP))
        return nd__fail(ND_E_INVALID_ARGUMENT,
                        "ND_IO_REQUIRE_DIRECT and ND_IO_MMAP exclude each other");
    int32_t rc = nd__check_name(name);
    if (rc != ND_OK)
        return rc;
    nd_dir *d;
    if ((rc = nd__dir_get(dir, &d)) != ND_OK)
        return rc;
    if ((flags & ND_IO_REQUIRE_DIRECT) && !(flags & ND_IO_MERGE))
        flags |= ND_IO_MERGE;
    nd_file *f = NULL;
    rc = file_open(d, name, flags, &f);
    nd__handle_put(dir);
    if (rc != ND_OK)
        return rc;
    rc = input_new(f, 0, f->size, flags, out_input);
    file_release(f); /* the input holds its own reference */
    return rc;
}

static int32_t nd_input_clone_impl(nd_handle input, nd_handle *out_clone)
{
    if (out_clone == NULL)
        return nd__fail(ND_E_INVALID_ARGUMENT, "out_clone is NULL");
    *out_clone = 0;
    nd_input *in;
    int32_t rc = input_get(input, &in);
    if (rc != ND_OK)
        return rc;
    rc = input_new(in->file, in->start, in->length, in->flags, out_clone);
    nd__handle_put(input);
    return rc;
}

static int32_t nd_input_slice_impl(nd_handle input, int64_t offset, int64_t len, nd_handle *out_slice)
{
    if (out_slice == NULL)
        return nd__fail(ND_E_INVALID_ARGUMENT, "out_slice is NULL");
    *out_slice = 0;
    nd_input *in;
    int32_t rc = input_get(input, &in);
    if (rc != ND_OK)
        return rc;
    rc = range_check(in, offset, len);
    if (rc == ND_OK)
        rc = input_new(in->file, in->start + offset, len, in->flags, out_slice);
    nd__handle_put(input);
    return rc;
}

int32_t nd_open_input(nd_handle dir, const char *name, uint32_t flags, nd_handle *out_input)
{
    return (int32_t)nd__in_call("nd_open_input", nd_open_input_impl(dir, name, flags, out_input));
}

ND_HOT int64_t nd_read_bytes(nd_handle input, int64_t offset, void *dst, int64_t len)
{
    return (int64_t)nd__in_call("nd_read_bytes", nd_read_bytes_impl(input, offset, dst, len));
}

ND_HOT int64_t nd_read_cached(nd_handle input, int64_t offset, void *dst, int64_t len)
{
    return nd__in_call("nd_read_cached", nd_read_cached_impl(input, offset, dst, len));
}

int64_t nd_input_window(nd_handle input, int64_t pos, const uint8_t **out_ptr)
{
    return (int64_t)nd__in_call("nd_input_window", nd_input_window_impl(input, pos, out_ptr));
}

ND_HOT int64_t nd_input_read_from(nd_handle input, int64_t pos, void *dst, int64_t len,
                                  const uint8_t **out_window)
{
    return nd__in_call("nd_input_read_from",
                       nd_input_read_from_impl(input, pos, dst, len, out_window));
}

int32_t nd_read_byte_buffered(nd_handle input)
{
    return (int32_t)nd__in_call("nd_read_byte_buffered", nd_read_byte_buffered_impl(input));
}

ND_HOT int64_t nd_read_buffered(nd_handle input, void *dst, int64_t len)
{
    return (int64_t)nd__in_call("nd_read_buffered", nd_read_buffered_impl(input, dst, len));
}

int32_t nd_input_length(nd_handle input, int64_t *out_len)
{
    return (int32_t)nd__in_call("nd_input_length", nd_input_length_impl(input, out_len));
}

int32_t nd_input_strategy(nd_handle input)
{
    return (int32_t)nd__in_call("nd_input_strategy", nd_input_strategy_impl(input));
}

int64_t nd_input_buffer_size(nd_handle input)
{
    return (int64_t)nd__in_call("nd_input_buffer_size", nd_input_buffer_size_impl(input));
}

int32_t nd_input_unpin(nd_handle input)
{
    return (int32_t)nd__in_call("nd_input_unpin", nd_input_unpin_impl(input));
}

int32_t nd_input_seek(nd_handle input, int64_t pos)
{
    return (int32_t)nd__in_call("nd_input_seek", nd_input_seek_impl(input, pos));
}

int64_t nd_input_position(nd_handle input)
{
    return (int64_t)nd__in_call("nd_input_position", nd_input_position_impl(input));
}

int32_t nd_input_clone(nd_handle input, nd_handle *out_clone)
{
    return (int32_t)nd__in_call("nd_input_clone", nd_input_clone_impl(input, out_clone));
}

int32_t nd_input_slice(nd_handle input, int64_t offset, int64_t len, nd_handle *out_slice)
{
    return (int32_t)nd__in_call("nd_input_slice", nd_input_slice_impl(input, offset, len, out_slice));
}
