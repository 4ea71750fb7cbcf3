/*
 * dir.c - the directory calls: argument checks, then the OS layer.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int32_t dir_close(nd_object *obj)
{
    (void)obj;
    return ND_OK;
}

static void dir_destroy(nd_object *obj)
{
    nd_dir *d = (nd_dir *)obj;
    nd__os_dir_free(d->os);
    free(d);
}

static const nd_object_ops dir_ops = {dir_close, dir_destroy, NULL};

int32_t nd__dir_get(nd_handle h, nd_dir **out)
{
    nd_object *obj;
    int32_t rc = nd__handle_get(h, ND_KIND_DIR, &obj);
    if (rc == ND_OK)
        *out = (nd_dir *)obj;
    return rc;
}

static int32_t nd_open_dir_impl(const char *path, uint32_t flags, nd_handle *out_dir)
{
    if (path == NULL || out_dir == NULL)
        return nd__fail(ND_E_INVALID_ARGUMENT, "%s is NULL", path == NULL ? "path" : "out_dir");
    *out_dir = 0;
    if (path[0] == '\0')
        return nd__fail(ND_E_INVALID_ARGUMENT, "path is empty");
    if ((flags & ~ND_DIR_CREATE) != 0)
        return nd__fail(ND_E_INVALID_ARGUMENT, "unknown flags 0x%x", flags);
    nd_dir *d = calloc(1, sizeof(*d));
    if (d == NULL)
        return nd__fail(ND_E_NO_MEMORY, "open '%s': out of memory", path);
    d->base.ops = &dir_ops;
    int32_t rc = nd__os_dir_open(path, (flags & ND_DIR_CREATE) != 0, &d->os);
    if (rc == ND_OK) {
        rc = nd__handle_new(ND_KIND_DIR, &d->base, out_dir);
        if (rc != ND_OK)
            nd__os_dir_free(d->os);
    }
    if (rc != ND_OK)
        free(d);
    return rc;
}

/* ---- listing ---- */

typedef struct {
    char **names;
    size_t count, cap;
} name_list;

static int32_t collect(void *ctx, const char *name, size_t len)
{
    name_list *l = ctx;
    if (!nd__name_ok(name, len))
        return ND_OK; /* a name no call could open is not listed */
    if (l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        char **grown = realloc(l->names, cap * sizeof(char *));
        if (grown == NULL)
            return nd__fail(ND_E_NO_MEMORY, "list: out of memory");
        l->names = grown;
        l->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (copy == NULL)
        return nd__fail(ND_E_NO_MEMORY, "list: out of memory");
    memcpy(copy, name, len + 1);
    l->names[l->count++] = copy;
    return ND_OK;
}

static int by_bytes(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int64_t nd_list_impl(nd_handle dir, char *buf, int64_t cap)
{
    if (cap < 0 || (buf == NULL && cap > 0))
        return nd__fail(ND_E_INVALID_ARGUMENT, "%s",
                        cap < 0 ? "negative capacity" : "buf is NULL with a capacity");
    nd_dir *d;
    int32_t rc = nd__dir_get(dir, &d);
    if (rc != ND_OK)
        return rc;
    name_list l = {0};
    rc = nd__os_dir_list(d->os, collect, &l);
    int64_t need = 0;
    if (rc == ND_OK) {
        if (l.count > 1) /* qsort's pointer must not be NULL, even for 0 elements */
            qsort(l.names, l.count, sizeof(char *), by_bytes);
        for (size_t i = 0; i < l.count; i++)
            need += (int64_t)strlen(l.names[i]) + 1;
        if (need <= cap) {
            char *p = buf;
            for (size_t i = 0; i < l.count; i++) {
                size_t n = strlen(l.names[i]) + 1;
                memcpy(p, l.names[i], n);
                p += n;
            }
        }
    }
    for (size_t i = 0; i < l.count; i++)
        free(l.names[i]);
    free(l.names);
    nd__handle_put(dir);
    return rc == ND_OK ? need : rc;
}

/* ---- single files ---- */

/* Looks up the directory and checks the name: the common head of most calls. */
static int32_t dir_and_name(nd_handle dir, const char *name, nd_dir **out)
{
    int32_t rc = nd__check_name(name);
    if (rc != ND_OK)
        return rc;
    return nd__dir_get(dir, out);
}

static int32_t nd_file_exists_impl(nd_handle dir, const char *name)
{
    nd_dir *d;
    int32_t rc = dir_and_name(dir, name, &d);
    if (rc != ND_OK)
        return rc;
    int not_file = 0;
    int64_t len;
    rc = nd__os_stat(d->os, name, &not_file, &len);
    nd__handle_put(dir);
    if (rc == ND_E_NOT_FOUND)
        return 0;
    return rc == ND_OK ? !not_file : rc;
}

static int32_t nd_file_length_impl(nd_handle dir, const char *name, int64_t *out_len)
{
    if (out_len == NULL)
        return nd__fail(ND_E_INVALID_ARGUMENT, "out_len is NULL");
    nd_dir *d;
    int32_t rc = dir_and_name(dir, name, &d);
    if (rc != ND_OK)
        return rc;
    int not_file = 0;
    int64_t len = 0;
    rc = nd__os_stat(d->os, name, &not_file, &len);
    if (rc == ND_OK && not_file)
        rc = nd__fail_os(not_file, "'%s' in '%s' is not a regular file", name,
                         nd__os_dir_path(d->os));
    nd__handle_put(dir);
    if (rc == ND_OK)
        *out_len = len;
    return rc;
}

static int32_t nd_delete_file_impl(nd_handle dir, const char *name)
{
    nd_dir *d;
    int32_t rc = dir_and_name(dir, name, &d);
    if (rc != ND_OK)
        return rc;
    rc = nd__os_unlink(d->os, name);
    nd__handle_put(dir);
    return rc;
}

static int32_t nd_rename_impl(nd_handle dir, const char *from, const char *to)
{
    int32_t rc = nd__check_name(to);
    if (rc != ND_OK)
        return rc;
    nd_dir *d;
    rc = dir_and_name(dir, from, &d);
    if (rc != ND_OK)
        return rc;
    rc = nd__os_rename(d->os, from, to);
    nd__handle_put(dir);
    return rc;
}

static int32_t nd_fsync_impl(nd_handle dir, const char *name)
{
    nd_dir *d;
    int32_t rc = dir_and_name(dir, name, &d);
    if (rc != ND_OK)
        return rc;
    nd_os_file f;
    rc = nd__os_open_file(d->os, name, ND_OPEN_READ, 0, &f);
    if (rc == ND_OK) {
        rc = nd__os_fsync(f, name);
        nd__os_close_file(f);
    }
    nd__handle_put(dir);
    return rc;
}

static int32_t nd_sync_dir_impl(nd_handle dir)
{
    nd_dir *d;
    int32_t rc = nd__dir_get(dir, &d);
    if (rc != ND_OK)
        return rc;
    rc = nd__os_dir_sync(d->os);
    nd__handle_put(dir);
    return rc;
}

/* ---- locks ---- */

static int32_t lock_close(nd_object *obj)
{
    nd_lock_obj *l = (nd_lock_obj *)obj;
    nd__os_close_file(l->file); /* releases the lock now, not when the last user leaves */
    l->file = ND_OS_FILE_INVALID;
    return ND_OK;
}

static void lock_destroy(nd_object *obj)
{
    free(obj);
}

static const nd_object_ops lock_ops = {lock_close, lock_destroy, NULL};

static int32_t nd_lock_impl(nd_handle dir, const char *name, nd_handle *out_lock)
{
    if (out_lock == NULL)
        return nd__fail(ND_E_INVALID_ARGUMENT, "out_lock is NULL");
    *out_lock = 0;
    nd_dir *d;
    int32_t rc = dir_and_name(dir, name, &d);
    if (rc != ND_OK)
        return rc;
    nd_lock_obj *l = calloc(1, sizeof(*l));
    if (l == NULL) {
        nd__handle_put(dir);
        return nd__fail(ND_E_NO_MEMORY, "lock '%s': out of memory", name);
    }
    l->base.ops = &lock_ops;
    rc = nd__os_lock(d->os, name, &l->file);
    nd__handle_put(dir);
    if (rc == ND_OK) {
        rc = nd__handle_new(ND_KIND_LOCK, &l->base, out_lock);
        if (rc != ND_OK)
            nd__os_close_file(l->file);
    }
    if (rc != ND_OK)
        free(l);
    return rc;
}

int32_t nd_open_dir(const char *path, uint32_t flags, nd_handle *out_dir)
{
    return (int32_t)nd__in_call("nd_open_dir", nd_open_dir_impl(path, flags, out_dir));
}

int64_t nd_list(nd_handle dir, char *buf, int64_t cap)
{
    return (int64_t)nd__in_call("nd_list", nd_list_impl(dir, buf, cap));
}

int32_t nd_file_exists(nd_handle dir, const char *name)
{
    return (int32_t)nd__in_call("nd_file_exists", nd_file_exists_impl(dir, name));
}

int32_t nd_file_length(nd_handle dir, const char *name, int64_t *out_len)
{
    return (int32_t)nd__in_call("nd_file_length", nd_file_length_impl(dir, name, out_len));
}

int32_t nd_delete_file(nd_handle dir, const char *name)
{
    return (int32_t)nd__in_call("nd_delete_file", nd_delete_file_impl(dir, name));
}

int32_t nd_rename(nd_handle dir, const char *from, const char *to)
{
    return (int32_t)nd__in_call("nd_rename", nd_rename_impl(dir, from, to));
}

int32_t nd_fsync(nd_handle dir, const char *name)
{
    return (int32_t)nd__in_call("nd_fsync", nd_fsync_impl(dir, name));
}

int32_t nd_lock(nd_handle dir, const char *name, nd_handle *out_lock)
{
    return (int32_t)nd__in_call("nd_lock", nd_lock_impl(dir, name, out_lock));
}

int32_t nd_sync_dir(nd_handle dir)
{
    return (int32_t)nd__in_call("nd_sync_dir", nd_sync_dir_impl(dir));
}
