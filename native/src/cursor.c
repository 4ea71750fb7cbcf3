/*
 * cursor.c - an input's cursor: the position, the buffer behind it, the
 * windows bindings read bytes from, and the cursor reads (nd_read_buffered,
 * nd_read_byte_buffered, nd_input_read_from, seek and position).
 *
 * Cursor calls use the handle's own buffer and are guarded by a flag: two
 * threads using one cursor at once get an error instead of torn memory.
 *
 * Windows are pinned: the handle keeps one reference on the input from a
 * window call until the next window call on it (from any thread: the cursor
 * has one user at a time, and a caller moving it is done with the last
 * window) or nd_input_unpin. nd_close never releases a pinned window, on any
 * thread: the library cannot see who reads a window (a binding hands its
 * input, window and all, to another thread without a call), so only the
 * reader can say it is done. What the close leaves alive under the pin is
 * input.c's (input_pinned_only). The pin is the reference the window call
 * took anyway, so it costs no atomic beyond the handle lookup's (and a
 * compare-and-swap on the same line).
 */
#include <string.h>

#include "input.h"

/* Cursor buffer sizes, chosen with bench/nd_bench (see docs/design.md): a
 * sequential scan wants few large preads; a random reader pays for every byte
 * it pulls in but does not use. */
#define BUF_DEFAULT (16u << 10)
#define BUF_SEQUENTIAL (256u << 10)
#define BUF_RANDOM (4u << 10)
#define BYPASS_MAX ((size_t)64 << 10) /* cursor reads at least this big skip the buffer */

/* A window of a mapped input: the rest of the input, up to ND_MAPPED_WINDOW. */
static int64_t mapped_window(int64_t rest)
{
    return rest < ND_MAPPED_WINDOW ? rest : ND_MAPPED_WINDOW;
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

/* The cursor buffer's size for this input (allocated on first use). */
static size_t buffer_cap(const nd_input *in)
{
    const nd_file *f = in->file;
    size_t cap = BUF_DEFAULT;
    if (f->strategy == ND_STRATEGY_DIRECT)
        return nd__direct_size(ND_BUF_DIRECT,
                               f->align); /* whole aligned units, the last past EOF */
    if (f->noreuse)
        cap = BUF_DEFAULT; /* a block read whole once per use (a stored-fields chunk per hit):
                              one device read, not one per 4 KiB refill (1.1x the searches a
                              second at 10% and 5% of the index in cache, docs/strategies.md) */
    else if (f->strategy == ND_STRATEGY_MAPPED)
        cap = BUF_RANDOM; /* read through only while the cache thrashes: a read brings in what
                             is asked, and a clone's buffer is taken from that same cache */
    else if (in->flags & (ND_IO_SEQUENTIAL | ND_IO_MERGE))
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
    int32_t rc = nd__input_get(input, &in);
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
            return nd__fail(ND_E_NO_MEMORY, "read '%s': no memory for a %zu-byte buffer", f->name,
                            cap);
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
        return nd__file_shrank(f, at, 1, 0);
    nd__file_after_read(f, from, got);
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
    int32_t rc = nd__input_get(input, &in);
    if (ND_UNLIKELY(rc != ND_OK)) {
        /* closed by another thread under this cursor's last window: the caller
         * is done with it now, so the pin goes (the message stays get's) */
        (void)unpin(input);
        return rc;
    }
    int64_t result;
    if (ND_UNLIKELY(pos < 0 || pos >= in->length)) {
        result = pos < 0 ? nd__fail(ND_E_INVALID_ARGUMENT, "negative position")
                         : nd__fail(ND_E_EOF,
                                    "position %lld is at or past the "
                                    "end of '%s' (%lld bytes)",
                                    (long long)pos, in->file->name, (long long)in->length);
    } else if (nd__file_maps_now(in->file)) {
        *out_ptr = in->file->map + in->start + pos;
        result = mapped_window(in->length - pos);
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

static int64_t nd_input_map_impl(nd_handle input, int64_t pos, const uint8_t **out_ptr)
{
    if (out_ptr == NULL)
        return nd__fail(ND_E_INVALID_ARGUMENT, "out_ptr is NULL");
    nd_input *in;
    int32_t rc = nd__input_get(input, &in);
    if (rc != ND_OK)
        return rc;
    int64_t result;
    if (in->file->strategy != ND_STRATEGY_MAPPED)
        result = nd__fail(ND_E_NOT_SUPPORTED, "'%s' is not mapped", in->file->name);
    else if (pos < 0 || pos >= in->length)
        result =
            pos < 0 ? nd__fail(ND_E_INVALID_ARGUMENT, "negative position")
                    : nd__fail(ND_E_EOF, "position %lld is at or past the end of '%s' (%lld bytes)",
                               (long long)pos, in->file->name, (long long)in->length);
    else {
        *out_ptr = in->file->map + in->start + pos;
        result = in->length - pos;
    }
    /* as in nd_input_window: the call's reference becomes the pin, or goes */
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
    if (nd__input_get(input, &in) == ND_OK) { /* opened in between: nothing was pinned */
        nd__handle_put(input);
        return ND_OK;
    }
    return ND_E_BAD_HANDLE;
}

static int32_t nd_input_seek_impl(nd_handle input, int64_t pos)
{
    nd_input *in;
    int32_t rc = nd__input_get(input, &in);
    if (rc != ND_OK)
        return rc;
    if (pos < 0)
        rc = nd__fail(ND_E_INVALID_ARGUMENT, "negative position");
    else if (pos > in->length)
        rc = nd__fail(ND_E_EOF, "position %lld is past the end of '%s' (%lld)", (long long)pos,
                      in->file->name, (long long)in->length);
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
    int32_t rc = nd__input_get(input, &in);
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
    int32_t rc = nd__input_get(input, &in);
    if (ND_UNLIKELY(rc != ND_OK))
        return rc;
    if ((rc = cursor_enter(in)) == ND_OK) {
        if (in->pos >= in->length) {
            rc = nd__fail(ND_E_EOF, "at the end of '%s' (%lld bytes)", in->file->name,
                          (long long)in->length);
        } else if (nd__file_maps_now(in->file)) {
            rc = in->file->map[in->start + in->pos++];
        } else {
            int64_t at = in->start + in->pos;
            size_t avail = 0;
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
    int32_t rc = nd__input_read_check(in, pos, dst, len);
    nd_file *f = in->file;
    uint8_t *out = dst;
    int64_t at = in->start + pos, left = rc == ND_OK ? len : 0;
    if (!nd__file_maps_now(f)) {
        size_t big = bypass_size(in);
        while (left > 0 && rc == ND_OK) {
            int held =
                in->buf_len > 0 && at >= in->buf_start && at < in->buf_start + (int64_t)in->buf_len;
            if (!held && (uint64_t)left >= big)
                break;
            size_t avail = 0;
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
        rc = nd__file_read(f, at, out, (size_t)left);
    if (rc == ND_OK)
        in->pos = pos + len;
    return rc;
}

static ND_HOT int64_t nd_read_buffered_impl(nd_handle input, void *dst, int64_t len)
{
    nd_input *in;
    int32_t rc = nd__input_get(input, &in);
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
static ND_HOT int64_t nd_input_read_from_impl(nd_handle input, int64_t pos, void *dst, int64_t len,
                                              const uint8_t **out_window)
{
    if (out_window != NULL)
        *out_window = NULL;
    nd_input *in;
    int32_t rc = nd__input_get(input, &in);
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
            } else if (nd__file_maps_now(in->file)) {
                *out_window = in->file->map + at;
                result = mapped_window(end - at);
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

int64_t nd_input_window(nd_handle input, int64_t pos, const uint8_t **out_ptr)
{
    return (int64_t)nd__in_call("nd_input_window", nd_input_window_impl(input, pos, out_ptr));
}

int64_t nd_input_map(nd_handle input, int64_t pos, const uint8_t **out_ptr)
{
    return nd__in_call("nd_input_map", nd_input_map_impl(input, pos, out_ptr));
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
