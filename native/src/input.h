/*
 * input.h - an input handle's object (input.c), shared with its cursor
 * (cursor.c): the file it reads, the range it may read, and the cursor's
 * position and buffer.
 */
#ifndef ND_INPUT_H
#define ND_INPUT_H

#include "file.h"

typedef struct {
    nd_object base;
    nd_file *file;         /* NULL once a closed, pinned input let go of it (input.c) */
    int64_t start, length; /* the readable range, in file offsets */
    int64_t pos;           /* cursor, relative to start */
    uint8_t *buf;          /* cursor buffer, allocated on first use */
    size_t buf_cap;
    int64_t buf_start; /* file offset of buf[0] */
    size_t buf_len;
    uint32_t flags;
    int unused;       /* closed under a pinned window: no longer a user of its file */
    _Atomic int busy; /* the cursor's one user (cursor.c) */
} nd_input;

/* The live input behind `h`, with a reference taken (nd__handle_put(h) drops it). */
static inline ND_HOT int32_t nd__input_get(nd_handle h, nd_input **out)
{
    nd_object *obj;
    int32_t rc = nd__handle_get(h, ND_KIND_INPUT, &obj);
    if (rc == ND_OK)
        *out = (nd_input *)obj;
    return rc;
}

/* ND_OK if [off, off+len) lies inside the input; else records why. */
static inline ND_HOT int32_t nd__input_range_check(const nd_input *in, int64_t off, int64_t len)
{
    if (off < 0 || len < 0)
        return nd__fail(ND_E_INVALID_ARGUMENT, "negative %s on '%s'", off < 0 ? "offset" : "length",
                        in->file->name);
    if (off > in->length || len > in->length - off)
        return nd__fail(ND_E_EOF, "%lld bytes at %lld end past the end of '%s' (%lld bytes)",
                        (long long)len, (long long)off, in->file->name, (long long)in->length);
    return ND_OK;
}

/* The range check plus the destination: what every read of [off, off+len) needs. */
static inline ND_HOT int32_t nd__input_read_check(const nd_input *in, int64_t off, const void *dst,
                                                  int64_t len)
{
    int32_t rc = nd__input_range_check(in, off, len);
    if (rc == ND_OK && dst == NULL && len > 0)
        rc = nd__fail(ND_E_INVALID_ARGUMENT, "dst is NULL");
    return rc;
}

#endif /* ND_INPUT_H */
