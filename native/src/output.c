/*
 * output.c - outputs written front to back: buffered, direct (merge) or
 * drop-behind, with a running CRC-32 (zlib's). nd_output_seek (Lucene's
 * deprecated IndexOutput.seek) moves the cursor back for small rewrites.
 *
 * Failures stick: once a write or a sync has failed, every later write, sync
 * and the close report it, so no call can claim success for bytes that never
 * reached the file, and a retried fsync cannot report pages the kernel
 * dropped after the first failure as durable.
 */
#include <stdlib.h>
#include <string.h>
#ifdef ND_HAVE_LIBDEFLATE
#  include <libdeflate.h>
#else
#  include <zlib.h>
#endif

#include "internal.h"

/* Chosen with bench/nd_bench (docs/design.md): big enough that the syscall
 * cost vanishes against the copy, small enough to stay in L2. On Linux a
 * buffered output's buffer grows with its file up to ND_OS_LARGE_WRITE (os.h,
 * grow_for_large_folios below), so that the thousands of small files an index
 * writes keep small buffers and the big ones leave large page-cache folios. */
#define OUT_BUFFERED (64u << 10)
/* direct writes go straight to the device: 1 MiB keeps it streaming */
#define OUT_DIRECT (1u << 20)

typedef struct {
    nd_object base;
    nd_mutex *mu;
    nd_os_file fd;
    int strategy;
    uint32_t align;
    uint8_t *buf; /* the buffer being filled */
    /* direct with a writer: the other buffers, in the order they are filled
     * next; those handed to the writer and not yet reaped are in flight */
    uint8_t *spare[ND_OS_WRITER_DEPTH];
    nd_os_writer *writer;
    size_t cap, used;
    size_t tail_in_file; /* direct: bytes of buf already written as a padded tail */
    int64_t flushed;     /* file offset of buf[0]: bytes before it are in the file */
    int64_t dropped;     /* drop-behind: bytes already advised out of the cache */
    uint32_t crc;
    int32_t failed; /* sticky status of a failed write or sync, ND_OK if none */
    int closed;
    char name[];
} nd_output;

static int32_t fail_for_good(nd_output *o, int32_t rc)
{
    if (o->failed == ND_OK)
        o->failed = rc;
    return rc;
}

static int32_t still_failed(nd_output *o)
{
    return nd__fail(o->failed, "'%s' failed earlier (%s); nothing written since counts", o->name,
                    nd_status_name(o->failed));
}

/* Large page-cache folios (os.h, ND_OS_LARGE_WRITE): a buffered
 * output's pieces are written where they fill whole folios of up to 2 MiB, so
 * that a fresh mapping of the file faults each 2 MiB in at once (7-13x faster
 * than the 64 KiB folios 64 KiB writes leave). Two rules, both on a buffer
 * that holds nothing yet or is full:
 * - a full buffer whose piece starts at a multiple of twice its size doubles
 *   (keeping its bytes) instead of being written, up to ND_OS_LARGE_WRITE: a
 *   file's first write is [0, min(length, 2 MiB)), whole;
 * - a file past ND_OS_LARGE_WRITE gets a buffer of that size (after seeks or
 *   flushes left the doubling off its grid).
 * A file under 64 KiB keeps its 64 KiB buffer; one of n bytes under 2 MiB
 * ends with one under 2n. Without the memory the smaller buffer goes on
 * writing every byte, in smaller folios. */
static int can_grow(const nd_output *o)
{
#if ND_OS_LARGE_WRITE > 0
    return o->strategy == ND_STRATEGY_BUFFERED && o->cap < ND_OS_LARGE_WRITE;
#else
    (void)o;
    return 0;
#endif
}

static int grow(nd_output *o, size_t cap)
{
    uint8_t *big = nd__buffer_take(o->align, cap);
    if (big == NULL)
        return 0;
    memcpy(big, o->buf, o->used);
    nd__buffer_give(o->buf, o->align, o->cap);
    o->buf = big;
    o->cap = cap;
    return 1;
}

static void grow_for_large_folios(nd_output *o)
{
    if (can_grow(o) && o->flushed >= (int64_t)ND_OS_LARGE_WRITE)
        (void)grow(o, ND_OS_LARGE_WRITE);
}

/* A full buffer that can double on its grid: then it does, and is not written. */
static int doubled(nd_output *o)
{
    return can_grow(o) && o->used == o->cap && (uint64_t)o->flushed % (2 * (uint64_t)o->cap) == 0 &&
           grow(o, 2 * o->cap);
}

/* Bytes the buffer takes before it must be written. A direct buffer is
 * written full. A buffered one is written when the file reaches the next
 * multiple of its size: after a seek or a flush moved the buffer's start off
 * that grid, one shorter piece brings the writes back onto it. */
static size_t room(const nd_output *o)
{
    if (o->strategy == ND_STRATEGY_DIRECT)
        return o->cap - o->used;
    /* a mask, not a division, on every write where the buffer is a power of two
     * (64 KiB doubling to 2 MiB, or 1 MiB; a former direct output's is rounded
     * to its alignment) */
    uint64_t end = (uint64_t)(o->flushed + (int64_t)o->used);
    size_t in_cell =
        (o->cap & (o->cap - 1)) == 0 ? (size_t)(end & (o->cap - 1)) : (size_t)(end % o->cap);
    size_t n = o->cap - in_cell;
    /* the buffer holds [flushed, end) inside one cell of the grid, so n fits;
     * the clamp makes the copy's bound this function's own business */
    return n <= o->cap - o->used ? n : o->cap - o->used;
}

/* Writes the full buffer (or, with `tail`, the partial buffer padded to the
 * alignment). Buffered outputs empty the buffer; a direct tail stays in the
 * buffer so that later writes extend the same aligned block. */
static int32_t flush(nd_output *o, int tail)
{
    int32_t rc;
    if (o->used == 0) {
        /* nothing buffered, but the last full buffer's write may be in flight:
         * a flush or sync covers it only once it has landed */
        if (tail && o->writer != NULL && (rc = nd__os_writer_wait(o->writer, 0)) != ND_OK)
            return fail_for_good(o, rc);
        return ND_OK;
    }
    if (o->strategy == ND_STRATEGY_DIRECT) {
        /* nothing written since the last tail write: the file has it all */
        if (tail && o->used == o->tail_in_file)
            return ND_OK;
        size_t span = o->used;
        if (o->writer != NULL) {
            /* A full buffer joins the writes in flight once the oldest is
             * done: its buffer is the one filled next. A tail is written here,
             * after all of them. */
            rc = nd__os_writer_wait(o->writer, tail ? 0 : ND_OS_WRITER_DEPTH - 1);
            if (rc != ND_OK)
                return fail_for_good(o, rc);
            if (!tail) {
                rc = nd__os_writer_start(o->writer, o->buf, span, o->flushed);
                if (rc != ND_OK)
                    return fail_for_good(o, rc);
                o->flushed += (int64_t)o->used;
                o->used = 0;
                o->tail_in_file = 0;
                uint8_t *next = o->spare[0];
                for (int i = 0; i + 1 < ND_OS_WRITER_DEPTH; i++)
                    o->spare[i] = o->spare[i + 1];
                o->spare[ND_OS_WRITER_DEPTH - 1] = o->buf;
                o->buf = next;
                return ND_OK;
            }
        }
        if (tail) {
            span = (o->used + o->align - 1) / o->align * o->align;
            memset(o->buf + o->used, 0, span - o->used);
        }
        rc = nd__os_pwrite(o->fd, o->name, o->buf, span, o->flushed);
        if (rc == ND_OK && tail && span != o->used)
            rc = nd__os_truncate(o->fd, o->name, o->flushed + (int64_t)o->used);
        if (rc != ND_OK)
            return fail_for_good(o, rc);
        if (!tail || span == o->used) {
            o->flushed += (int64_t)o->used;
            o->used = 0;
            o->tail_in_file = 0;
        } else {
            o->tail_in_file = o->used;
        }
        return ND_OK;
    }
    rc = nd__os_pwrite(o->fd, o->name, o->buf, o->used, o->flushed);
    if (rc != ND_OK)
        return fail_for_good(o, rc);
    if (o->strategy == ND_STRATEGY_DROP_BEHIND) {
        /* start write-back now; drop what earlier write-back has cleaned */
        nd__os_writeback(o->fd, o->flushed, (int64_t)o->used);
        if (o->flushed > o->dropped) {
            nd__os_advise(o->fd, o->dropped, o->flushed - o->dropped, ND_ADVICE_DONTNEED);
            o->dropped = o->flushed;
        }
    }
    o->flushed += (int64_t)o->used;
    o->used = 0;
    grow_for_large_folios(o);
    return ND_OK;
}

static int32_t output_close(nd_object *obj)
{
    nd_output *o = (nd_output *)obj;
    nd__mutex_lock(o->mu);
    int32_t rc = o->failed;
    if (rc == ND_OK)
        rc = flush(o, 1);
    else
        still_failed(o);
    if (o->strategy == ND_STRATEGY_DROP_BEHIND)
        nd__os_advise(o->fd, 0, 0, ND_ADVICE_DONTNEED);
    if (o->writer != NULL) { /* a failed flush left a write in flight: let it land first */
        nd__os_writer_free(o->writer);
        o->writer = NULL;
    }
    nd__os_close_file(o->fd);
    o->fd = ND_OS_FILE_INVALID;
    o->closed = 1;
    /* nothing writes through them any more (every call refuses a closed output):
     * the next output may start with them */
    nd__buffer_give(o->buf, o->align, o->cap);
    for (int i = 0; i < ND_OS_WRITER_DEPTH; i++) {
        nd__buffer_give(o->spare[i], o->align, o->cap);
        o->spare[i] = NULL;
    }
    o->buf = NULL;
    nd__mutex_unlock(o->mu);
    return rc;
}

static void free_spares(nd_output *o)
{
    for (int i = 0; i < ND_OS_WRITER_DEPTH; i++) {
        nd__os_aligned_free(o->spare[i]);
        o->spare[i] = NULL;
    }
}

static void output_destroy(nd_object *obj)
{
    nd_output *o = (nd_output *)obj;
    nd__mutex_free(o->mu);
    nd__os_aligned_free(o->buf);
    free_spares(o);
    nd__os_aligned_free(o);
}

static const nd_object_ops output_ops = {output_close, output_destroy, NULL};

/* Looks up the output and takes its lock; the caller must call leave(). */
static int32_t enter(nd_handle h, nd_output **out)
{
    nd_object *obj;
    *out = NULL; /* never read on failure; says so to the compiler's flow analysis */
    int32_t rc = nd__handle_get(h, ND_KIND_OUTPUT, &obj);
    if (ND_UNLIKELY(rc != ND_OK))
        return rc;
    nd_output *o = (nd_output *)obj;
    nd__mutex_lock(o->mu);
    if (ND_UNLIKELY(o->closed)) { /* closed by another thread after our lookup */
        /* record while o is alive: the put below may free it */
        rc = nd__fail(ND_E_BAD_HANDLE, "output '%s' is closed", o->name);
        nd__mutex_unlock(o->mu);
        nd__handle_put(h);
        return rc;
    }
    *out = o;
    return ND_OK;
}

static void leave(nd_handle h, nd_output *o)
{
    nd__mutex_unlock(o->mu);
    nd__handle_put(h);
}

/* The running CRC-32 and the copy into the buffer go piece by piece: a piece
 * read once for the CRC is still in the CPU's cache for the copy. In one pass
 * each over a 1 MiB write, the CRC pushed the start of the source out of a
 * 1 MiB L2 before the copy came back to it: a 64 MiB direct output written in
 * 1 MiB calls (a Lucene merge's) took 1.53x the raw device time against 1.21x
 * in 64 KiB calls (nd_bench WriteSync). */
#define CRC_COPY_PIECE ((size_t)64 << 10)

/* The CRC-32 of zlib and gzip (and so of Lucene's CodecUtil footers).
 * libdeflate's folds with carry-less multiplies (PCLMULQDQ, ARMv8 PMULL):
 * 4.9 ms per 64 MiB against zlib 1.2.13's 11.7 ms on the benchmark machine,
 * where the CRC was the larger part of a buffered output's CPU time
 * (docs/benchmarks.md). Builds without libdeflate use zlib's. */
static uint32_t crc_update(uint32_t crc, const uint8_t *p, size_t n)
{
#ifdef ND_HAVE_LIBDEFLATE
    return libdeflate_crc32(crc, p, n);
#else
    return (uint32_t)crc32_z(crc, p, n);
#endif
}

static void crc_and_copy(nd_output *o, uint8_t *dst, const uint8_t *src, size_t n)
{
    for (size_t done = 0; done < n; done += CRC_COPY_PIECE) {
        size_t k = n - done < CRC_COPY_PIECE ? n - done : CRC_COPY_PIECE;
        o->crc = crc_update(o->crc, src + done, k);
        memcpy(dst + done, src + done, k);
    }
}

static int32_t append(nd_output *o, const uint8_t *src, size_t len)
{
    while (len > 0) {
        size_t want = room(o);
        /* whole buffers on their grid skip the copy; where the buffer could still
         * double, only whole large folios on theirs do (it collects the rest) */
        size_t unit = o->cap;
        if (o->used == 0 && len >= o->cap && o->strategy != ND_STRATEGY_DIRECT && can_grow(o) &&
            (uint64_t)o->flushed % (2 * (uint64_t)o->cap) == 0)
            unit = ND_OS_LARGE_WRITE;
        if (o->used == 0 && len >= unit && (uint64_t)o->flushed % unit == 0 &&
            o->strategy != ND_STRATEGY_DIRECT) {
            size_t n = len / unit * unit;
            o->crc = crc_update(o->crc, src, n);
            int32_t rc = nd__os_pwrite(o->fd, o->name, src, n, o->flushed);
            if (rc != ND_OK)
                return fail_for_good(o, rc);
            if (o->strategy == ND_STRATEGY_DROP_BEHIND)
                nd__os_writeback(o->fd, o->flushed, (int64_t)n);
            o->flushed += (int64_t)n;
            src += n;
            len -= n;
            grow_for_large_folios(o);
            continue;
        }
        size_t n = want < len ? want : len;
        crc_and_copy(o, o->buf + o->used, src, n);
        o->used += n;
        src += n;
        len -= n;
        if (n == want && !doubled(o)) {
            int32_t rc = flush(o, 0);
            if (rc != ND_OK)
                return rc;
        }
    }
    return ND_OK;
}

static int64_t nd_write_bytes_impl(nd_handle output, const void *src, int64_t len)
{
    nd_output *o;
    int32_t rc = enter(output, &o);
    if (rc != ND_OK)
        return rc;
    if (len < 0 || (src == NULL && len > 0))
        rc = nd__fail(ND_E_INVALID_ARGUMENT, "%s", len < 0 ? "negative length" : "src is NULL");
    else if (o->failed != ND_OK)
        rc = still_failed(o);
    else
        rc = append(o, src, (size_t)len);
    leave(output, o);
    return rc == ND_OK ? len : rc;
}

static int32_t nd_write_byte_impl(nd_handle output, uint8_t b)
{
    nd_output *o;
    int32_t rc = enter(output, &o);
    if (rc != ND_OK)
        return rc;
    rc = o->failed != ND_OK ? still_failed(o) : append(o, &b, 1);
    leave(output, o);
    return rc;
}

static int64_t nd_output_position_impl(nd_handle output)
{
    nd_output *o;
    int32_t rc = enter(output, &o);
    if (rc != ND_OK)
        return rc;
    /* after a failure nobody knows which of these bytes reached the file */
    int64_t pos = o->failed != ND_OK ? still_failed(o) : o->flushed + (int64_t)o->used;
    leave(output, o);
    return pos;
}

static int64_t nd_output_crc32_impl(nd_handle output)
{
    nd_output *o;
    int32_t rc = enter(output, &o);
    if (rc != ND_OK)
        return rc;
    int64_t crc = o->failed != ND_OK ? still_failed(o) : (int64_t)(o->crc & 0xFFFFFFFFu);
    leave(output, o);
    return crc;
}

static int32_t nd_output_strategy_impl(nd_handle output)
{
    nd_output *o;
    int32_t rc = enter(output, &o);
    if (rc != ND_OK)
        return rc;
    rc = o->strategy;
    leave(output, o);
    return rc;
}

static int64_t nd_output_buffer_size_impl(nd_handle output)
{
    nd_output *o;
    int32_t rc = enter(output, &o);
    if (rc != ND_OK)
        return rc;
    int64_t cap = (int64_t)o->cap;
    leave(output, o);
    return cap;
}

static int32_t nd_output_sync_impl(nd_handle output)
{
    nd_output *o;
    int32_t rc = enter(output, &o);
    if (rc != ND_OK)
        return rc;
    if (o->failed != ND_OK) {
        rc = still_failed(o);
    } else {
        rc = flush(o, 1);
        if (rc == ND_OK) {
            rc = nd__os_fsync(o->fd, o->name);
            if (rc != ND_OK)
                fail_for_good(o, rc);
        }
    }
    leave(output, o);
    return rc;
}

static int32_t nd_output_flush_impl(nd_handle output)
{
    nd_output *o;
    int32_t rc = enter(output, &o);
    if (rc != ND_OK)
        return rc;
    /* the same tail write a sync does, so a sync after it writes nothing again */
    rc = o->failed != ND_OK ? still_failed(o) : flush(o, 1);
    leave(output, o);
    return rc;
}

/* A direct output cannot rewrite a few bytes in the middle of a block
 * without reading the block back first; a seek is rare (Lucene 3.x's term
 * dictionary header) so the output just stops being direct: its tail goes to
 * the file, the descriptor drops direct I/O and the rest is drop-behind. */
static int32_t leave_direct(nd_output *o)
{
    int32_t rc = flush(o, 1);
    if (rc != ND_OK)
        return rc;
    if (o->writer != NULL) { /* flush(tail) waited for it: nothing is in flight */
        nd__os_writer_free(o->writer);
        o->writer = NULL;
    }
    rc = nd__os_file_undirect(&o->fd, o->name);
    if (rc != ND_OK)
        return fail_for_good(o, rc);
    o->strategy = ND_STRATEGY_DROP_BEHIND;
    o->flushed += (int64_t)o->used; /* the tail is in the file already */
    o->used = 0;
    o->tail_in_file = 0;
    return ND_OK;
}

static int32_t nd_output_seek_impl(nd_handle output, int64_t pos)
{
    nd_output *o;
    int32_t rc = enter(output, &o);
    if (rc != ND_OK)
        return rc;
    if (pos < 0)
        rc = nd__fail(ND_E_INVALID_ARGUMENT, "'%s': negative position %lld", o->name,
                      (long long)pos);
    else if (o->failed != ND_OK)
        rc = still_failed(o);
    else if (pos != o->flushed + (int64_t)o->used) {
        rc = o->strategy == ND_STRATEGY_DIRECT ? leave_direct(o) : flush(o, 1);
        if (rc == ND_OK)
            o->flushed = pos; /* an empty buffer that starts at pos */
    }
    leave(output, o);
    return rc;
}

#define OUTPUT_FLAGS                                                                               \
  (ND_IO_RANDOM | ND_IO_SEQUENTIAL | ND_IO_MERGE | ND_IO_REQUIRE_DIRECT | ND_IO_OVERWRITE)

static int32_t nd_create_output_impl(nd_handle dir, const char *name, uint32_t flags,
                                     nd_handle *out_output)
{
    if (out_output == NULL)
        return nd__fail(ND_E_INVALID_ARGUMENT, "out_output is NULL");
    *out_output = 0;
    if (flags & ~OUTPUT_FLAGS)
        return nd__fail(ND_E_INVALID_ARGUMENT, "flags 0x%x are not output flags",
                        flags & ~OUTPUT_FLAGS);
    int32_t rc = nd__check_name(name);
    if (rc != ND_OK)
        return rc;
    nd_dir *d;
    if ((rc = nd__dir_get(dir, &d)) != ND_OK)
        return rc;
    /* Every step that can fail comes before the file takes `name`: with
     * OVERWRITE the new file is made aside and renamed over the old one last,
     * after which nothing can fail, so a failed create leaves the old file
     * exactly as it was (and never leaves the temporary behind). */
    int replace = (flags & ND_IO_OVERWRITE) != 0;
    char tmp[ND_OS_TMP_NAME_CAP] = "";
    size_t nlen = strlen(name);
    /* its own cache lines: outputs written on two threads never share one */
    nd_output *o = nd__buffer_lines(sizeof(*o) + nlen + 1);
    if (o == NULL) {
        nd__handle_put(dir);
        return nd__fail(ND_E_NO_MEMORY, "create '%s': out of memory", name);
    }
    memcpy(o->name, name, nlen + 1);
    o->base.ops = &output_ops;
    o->fd = ND_OS_FILE_INVALID;
    o->crc = 0; /* the CRC-32 of no bytes */
    o->mu = nd__mutex_new();
    if (o->mu == NULL)
        rc = nd__fail(ND_E_NO_MEMORY, "create '%s': out of memory", name);
    int merge = (flags & (ND_IO_MERGE | ND_IO_REQUIRE_DIRECT)) != 0;
    if (rc == ND_OK && merge) {
        rc = replace ? nd__os_create_aside(d->os, name, 1, &o->fd, tmp)
                     : nd__os_open_file(d->os, name, ND_OPEN_CREATE_NEW, 1, &o->fd);
        if (rc == ND_OK) {
            o->strategy = ND_STRATEGY_DIRECT;
        } else if (rc == ND_E_INVALID_ARGUMENT || rc == ND_E_NOT_SUPPORTED) {
            if (flags & ND_IO_REQUIRE_DIRECT)
                rc =
                    nd__fail(ND_E_NOT_SUPPORTED, "'%s' in '%s': the file system refuses direct I/O",
                             name, nd__os_dir_path(d->os));
            else
                rc = ND_OK; /* fall back to drop-behind below */
        }
        /* a refused direct open leaves nothing behind: the OS layer removes
         * the file it had just created */
    }
    if (rc == ND_OK && o->fd == ND_OS_FILE_INVALID) {
        rc = replace ? nd__os_create_aside(d->os, name, 0, &o->fd, tmp)
                     : nd__os_open_file(d->os, name, ND_OPEN_CREATE_NEW, 0, &o->fd);
        o->strategy = merge ? ND_STRATEGY_DROP_BEHIND : ND_STRATEGY_BUFFERED;
    }
    if (rc == ND_OK) {
        o->align = o->strategy == ND_STRATEGY_DIRECT ? nd__os_direct_alignment(o->fd) : 64;
        o->cap = o->strategy == ND_STRATEGY_BUFFERED ? OUT_BUFFERED : OUT_DIRECT;
        o->cap = (o->cap + o->align - 1) / o->align * o->align;
        o->buf = nd__buffer_take(o->align, o->cap);
        if (o->buf == NULL)
            rc = nd__fail(ND_E_NO_MEMORY, "create '%s': out of memory", name);
        /* direct writes overlap the next buffer's copy and CRC where the OS can */
        if (rc == ND_OK && o->strategy == ND_STRATEGY_DIRECT &&
            nd__os_writer_new(o->fd, name, &o->writer) == ND_OK) {
            for (int i = 0; i < ND_OS_WRITER_DEPTH && o->writer != NULL; i++)
                if ((o->spare[i] = nd__buffer_take(o->align, o->cap)) == NULL) {
                    /* short of memory: synchronous writes from the one buffer */
                    free_spares(o);
                    nd__os_writer_free(o->writer);
                    o->writer = NULL;
                }
        }
        if (rc == ND_OK && o->strategy != ND_STRATEGY_DIRECT)
            nd__os_advise(o->fd, 0, 0, ND_ADVICE_SEQUENTIAL);
    }
    uint32_t slot = 0;
    if (rc == ND_OK && (rc = nd__handle_reserve(&slot)) != ND_OK)
        nd__fail_again(rc, "'%s' in '%s'", name, nd__os_dir_path(d->os));
    if (rc == ND_OK && replace && (rc = nd__os_rename(d->os, tmp, name)) != ND_OK) {
        nd__fail_again(rc, "replace '%s' in '%s' (through '%s')", name, nd__os_dir_path(d->os),
                       tmp);
        nd__handle_unreserve(slot);
    }
    if (rc == ND_OK) {
        *out_output = nd__handle_publish(slot, ND_KIND_OUTPUT, &o->base);
    } else {
        nd__os_writer_free(o->writer);
        if (o->fd != ND_OS_FILE_INVALID) {
            nd__os_close_file(o->fd);
            /* ours, never renamed: the old file (if any) is untouched */
            nd__os_unlink(d->os, replace ? tmp : name);
        }
        nd__mutex_free(o->mu);
        nd__os_aligned_free(o->buf);
        free_spares(o);
        nd__os_aligned_free(o);
    }
    nd__handle_put(dir);
    return rc;
}

int32_t nd_create_output(nd_handle dir, const char *name, uint32_t flags, nd_handle *out_output)
{
    return (int32_t)nd__in_call("nd_create_output",
                                nd_create_output_impl(dir, name, flags, out_output));
}

int64_t nd_write_bytes(nd_handle output, const void *src, int64_t len)
{
    return (int64_t)nd__in_call("nd_write_bytes", nd_write_bytes_impl(output, src, len));
}

int32_t nd_write_byte(nd_handle output, uint8_t b)
{
    return (int32_t)nd__in_call("nd_write_byte", nd_write_byte_impl(output, b));
}

int32_t nd_output_sync(nd_handle output)
{
    return (int32_t)nd__in_call("nd_output_sync", nd_output_sync_impl(output));
}

int32_t nd_output_flush(nd_handle output)
{
    return (int32_t)nd__in_call("nd_output_flush", nd_output_flush_impl(output));
}

int32_t nd_output_seek(nd_handle output, int64_t pos)
{
    return (int32_t)nd__in_call("nd_output_seek", nd_output_seek_impl(output, pos));
}

int64_t nd_output_position(nd_handle output)
{
    return nd__in_call("nd_output_position", nd_output_position_impl(output));
}

int64_t nd_output_crc32(nd_handle output)
{
    return nd__in_call("nd_output_crc32", nd_output_crc32_impl(output));
}

int32_t nd_output_strategy(nd_handle output)
{
    return (int32_t)nd__in_call("nd_output_strategy", nd_output_strategy_impl(output));
}

int64_t nd_output_buffer_size(nd_handle output)
{
    return nd__in_call("nd_output_buffer_size", nd_output_buffer_size_impl(output));
}
