/*
 * input.c - input handles: opening one on a file (file.c), clones that share
 * the file with a cursor of their own (cursor.c), slices that see part of it,
 * and the positional reads, which touch only what is fixed at open and so
 * are thread-safe on one handle.
 *
 * A closed input whose window is still pinned (cursor.c) keeps only what the
 * window points into alive: the cursor buffer, or the mapping's addresses.
 * The file goes as soon as no call is in flight on the closed handle
 * (input_pinned_only, from the handle table, which sees "closed and only the
 * pin holds it" in one word), as POSIX close() would give it back: a
 * buffered, direct or drop-behind input lets go of its descriptor, and the
 * last input of a mapped file has the mapping replaced by zeros (file.c,
 * nd__file_unuse); the reader's next window call gets ND_E_BAD_HANDLE and
 * drops the rest.
 */
#include <string.h>

#include "input.h"

/* Closed, pinned, and no call in flight (none can start): the input never
 * reads its file again, so it stops using it now (a clone or slice still
 * open keeps the file open). A window points into the cursor buffer or the
 * mapping, never at the descriptor: a file that is not mapped is let go of
 * as if the input had been unpinned; a mapped one keeps the reference that
 * holds the mapping's addresses until the unpin. */
static void input_pinned_only(nd_object *obj)
{
    nd_input *in = (nd_input *)obj;
    nd__file_unuse(in->file, 1);
    in->unused = 1;
    if (in->file->strategy != ND_STRATEGY_MAPPED) {
        nd__file_release(in->file);
        in->file = NULL;
    }
}

static void input_destroy(nd_object *obj)
{
    nd_input *in = (nd_input *)obj;
    nd__os_aligned_free(in->buf);
    if (in->file != NULL) {
        if (!in->unused)
            nd__file_unuse(in->file, 0);
        nd__file_release(in->file);
    }
    nd__os_aligned_free(in);
}

/* no close step: a close leaves a pinned window to its reader (top of file) */
static const nd_object_ops input_ops = {NULL, input_destroy, input_pinned_only};

/* What every positional read starts with: the input, held, and its range
 * checked. On failure nothing is held. */
static ND_HOT int32_t positional_get(nd_handle h, int64_t off, const void *dst, int64_t len,
                                     nd_input **out)
{
    int32_t rc = nd__input_get(h, out);
    if (ND_UNLIKELY(rc != ND_OK))
        return rc;
    rc = nd__input_read_check(*out, off, dst, len);
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
        rc = nd__file_read(in->file, in->start + offset, dst, (size_t)len);
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
    if (len > 0 && nd__file_maps_now(f)) {
        rc = nd__file_read(f, in->start + offset, dst, (size_t)len); /* a mapping reads whole */
        got = len;
    } else if (len > 0 &&
               (f->strategy == ND_STRATEGY_BUFFERED || f->strategy == ND_STRATEGY_MAPPED)) {
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
                (f->strategy == ND_STRATEGY_MAPPED && !nd__file_maps_now(f)) ||
                (f->strategy == ND_STRATEGY_DIRECT && (uintptr_t)dst % a == 0 &&
                 (uint64_t)at % a == 0 && (uint64_t)len % a == 0);
    *file = f;
    if (async && len > 0) {
        *fd = f->fd;
        *file_off = at;
    } else {
        *fd = ND_OS_FILE_INVALID;
        rc = len > 0 ? nd__file_read(f, at, dst, (size_t)len) : ND_OK;
        *result = rc == ND_OK ? len : rc;
    }
    return ND_OK;
}

int32_t nd__input_view(nd_handle h, int64_t off, int64_t len, nd_input_view *out)
{
    nd_input *in;
    int32_t rc = nd__input_get(h, &in);
    if (rc != ND_OK)
        return rc;
    if ((rc = nd__input_range_check(in, off, len)) != ND_OK) {
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
    out->noreuse = f->noreuse;
    return ND_OK;
}

static int32_t nd_input_length_impl(nd_handle input, int64_t *out_len)
{
    if (out_len == NULL)
        return nd__fail(ND_E_INVALID_ARGUMENT, "out_len is NULL");
    nd_input *in;
    int32_t rc = nd__input_get(input, &in);
    if (rc != ND_OK)
        return rc;
    *out_len = in->length;
    nd__handle_put(input);
    return ND_OK;
}

static int32_t nd_input_mapped_now_impl(nd_handle input)
{
    nd_input *in;
    int32_t rc = nd__input_get(input, &in);
    if (rc != ND_OK)
        return rc;
    rc = nd__file_maps_now(in->file);
    nd__handle_put(input);
    return rc;
}

static int32_t nd_input_strategy_impl(nd_handle input)
{
    nd_input *in;
    int32_t rc = nd__input_get(input, &in);
    if (rc != ND_OK)
        return rc;
    rc = in->file->strategy;
    nd__handle_put(input);
    return rc;
}

/* ---- opening, cloning, slicing ---- */

static int32_t input_new(nd_file *f, int64_t start, int64_t length, uint32_t flags, nd_handle *out)
{
    nd_input *in = nd__buffer_lines(sizeof(*in)); /* its cursor: no line shared with a clone's */
    if (in == NULL)
        return nd__fail(ND_E_NO_MEMORY, "input '%s': out of memory", f->name);
    in->base.ops = &input_ops;
    in->file = f;
    in->start = start;
    in->length = length;
    in->flags = flags;
    nd__file_hold(f);
    int32_t rc = nd__handle_new(ND_KIND_INPUT, &in->base, out);
    if (rc != ND_OK) {
        nd__file_release(f); /* never the last: the caller holds one */
        nd__os_aligned_free(in);
    }
    return rc;
}

#define INPUT_FLAGS                                                                                \
  (ND_IO_RANDOM | ND_IO_SEQUENTIAL | ND_IO_MERGE | ND_IO_MMAP | ND_IO_PRELOAD |                    \
   ND_IO_REQUIRE_DIRECT | ND_IO_NOREUSE | ND_IO_WARM)

static int32_t nd_open_input_impl(nd_handle dir, const char *name, uint32_t flags,
                                  nd_handle *out_input)
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
    rc = nd__file_open(d, name, flags, &f);
    nd__handle_put(dir);
    if (rc != ND_OK)
        return rc;
    rc = input_new(f, 0, f->size, flags, out_input);
    nd__file_release(f); /* the input holds its own reference */
    return rc;
}

static int32_t nd_input_clone_impl(nd_handle input, nd_handle *out_clone)
{
    if (out_clone == NULL)
        return nd__fail(ND_E_INVALID_ARGUMENT, "out_clone is NULL");
    *out_clone = 0;
    nd_input *in;
    int32_t rc = nd__input_get(input, &in);
    if (rc != ND_OK)
        return rc;
    rc = input_new(in->file, in->start, in->length, in->flags, out_clone);
    nd__handle_put(input);
    return rc;
}

static int32_t nd_input_slice_impl(nd_handle input, int64_t offset, int64_t len,
                                   nd_handle *out_slice)
{
    if (out_slice == NULL)
        return nd__fail(ND_E_INVALID_ARGUMENT, "out_slice is NULL");
    *out_slice = 0;
    nd_input *in;
    int32_t rc = nd__input_get(input, &in);
    if (rc != ND_OK)
        return rc;
    rc = nd__input_range_check(in, offset, len);
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

int32_t nd_input_length(nd_handle input, int64_t *out_len)
{
    return (int32_t)nd__in_call("nd_input_length", nd_input_length_impl(input, out_len));
}

int32_t nd_input_mapped_now(nd_handle input)
{
    return (int32_t)nd__in_call("nd_input_mapped_now", nd_input_mapped_now_impl(input));
}

int32_t nd_input_strategy(nd_handle input)
{
    return (int32_t)nd__in_call("nd_input_strategy", nd_input_strategy_impl(input));
}

int32_t nd_input_clone(nd_handle input, nd_handle *out_clone)
{
    return (int32_t)nd__in_call("nd_input_clone", nd_input_clone_impl(input, out_clone));
}

int32_t nd_input_slice(nd_handle input, int64_t offset, int64_t len, nd_handle *out_slice)
{
    return (int32_t)nd__in_call("nd_input_slice",
                                nd_input_slice_impl(input, offset, len, out_slice));
}
