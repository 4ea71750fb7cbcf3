/*
 * model.c - the persistence model of model.h over crashfs's log: one pass
 * keeps, per inode, the live bytes and the durable ones, and per directory
 * the live entries and the durable ones; a cut at any point of the pass is
 * then read off the durable half without replaying anything again.
 */
#ifndef _GNU_SOURCE
#  define _GNU_SOURCE
#endif
#include "model.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#  define RENAME_EXCHANGE (1 << 1)
#endif

/* ---- the log ---- */

struct cm_log {
    cm_op *ops;
    size_t n, cap;
    uint8_t *raw; /* a loaded log's bytes; payloads point into it */
    char **owned; /* names and, for hand-built logs, payloads */
    size_t n_owned, cap_owned;
};

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (q == NULL) {
        fprintf(stderr, "crash model: out of memory\n");
        abort();
    }
    return q;
}

static char *own(cm_log *log, const void *src, size_t len)
{
    char *s = xrealloc(NULL, len + 1);
    if (len)
        memcpy(s, src, len);
    s[len] = '\0';
    if (log->n_owned == log->cap_owned) {
        log->cap_owned = log->cap_owned ? 2 * log->cap_owned : 64;
        log->owned = xrealloc(log->owned, log->cap_owned * sizeof(*log->owned));
    }
    log->owned[log->n_owned++] = s;
    return s;
}

static cm_op *push(cm_log *log)
{
    if (log->n == log->cap) {
        log->cap = log->cap ? 2 * log->cap : 256;
        log->ops = xrealloc(log->ops, log->cap * sizeof(*log->ops));
    }
    cm_op *op = &log->ops[log->n++];
    memset(op, 0, sizeof(*op));
    return op;
}

cm_log *cm_log_new(void)
{
    cm_log *log = xrealloc(NULL, sizeof(*log));
    memset(log, 0, sizeof(*log));
    return log;
}

void cm_log_add(cm_log *log, uint32_t type, uint32_t flags, uint64_t a, uint64_t b,
                const char *name1, const char *name2, const void *data, size_t len)
{
    cm_op *op = push(log);
    op->type = type;
    op->flags = flags;
    op->a = a;
    op->b = b;
    op->name1 = own(log, name1 ? name1 : "", name1 ? strlen(name1) : 0);
    op->name2 = own(log, name2 ? name2 : "", name2 ? strlen(name2) : 0);
    op->data = (const uint8_t *)own(log, data, data ? len : 0);
    op->len = data ? len : 0;
}

cm_log *cm_log_load(const char *path, char *err, size_t errcap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, errcap, "%s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    size_t size = (size_t)st.st_size;
    uint8_t *raw = xrealloc(NULL, size);
    size_t got = 0;
    while (got < size) {
        ssize_t r = read(fd, raw + got, size - got);
        if (r <= 0) {
            snprintf(err, errcap, "%s: short read", path);
            close(fd);
            free(raw);
            return NULL;
        }
        got += (size_t)r;
    }
    close(fd);
    if (size < 8 || memcmp(raw, CL_MAGIC, 8) != 0) {
        snprintf(err, errcap, "%s: not a crashfs log", path);
        free(raw);
        return NULL;
    }
    cm_log *log = cm_log_new();
    log->raw = raw;
    size_t at = 8;
    while (at < size) {
        cl_rec r;
        if (size - at < sizeof(r)) {
            snprintf(err, errcap, "%s: truncated record at byte %zu", path, at);
            cm_log_free(log);
            return NULL;
        }
        memcpy(&r, raw + at, sizeof(r));
        at += sizeof(r);
        uint64_t need = (uint64_t)r.name1_len + r.name2_len + r.len;
        if (need > size - at || r.type < CL_CREATE || r.type > CL_MARK) {
            snprintf(err, errcap, "%s: truncated or malformed record (type %u) at byte %zu", path,
                     r.type, at - sizeof(r));
            cm_log_free(log);
            return NULL;
        }
        cm_op *op = push(log);
        op->type = r.type;
        op->flags = r.flags;
        op->a = r.a;
        op->b = r.b;
        op->name1 = own(log, raw + at, r.name1_len);
        at += r.name1_len;
        op->name2 = own(log, raw + at, r.name2_len);
        at += r.name2_len;
        op->data = raw + at;
        op->len = r.len;
        at += r.len;
    }
    return log;
}

size_t cm_log_count(const cm_log *log)
{
    return log->n;
}

const cm_op *cm_log_op(const cm_log *log, size_t i)
{
    return i < log->n ? &log->ops[i] : NULL;
}

void cm_log_free(cm_log *log)
{
    if (log == NULL)
        return;
    for (size_t i = 0; i < log->n_owned; i++)
        free(log->owned[i]);
    free(log->owned);
    free(log->ops);
    free(log->raw);
    free(log);
}

/* ---- inodes ---- */

typedef struct {
    char *name;
    uint64_t ino;
} ment;

typedef struct {
    ment *e;
    size_t n, cap;
} ments;

typedef struct {
    int kind;
    uint8_t *live, *dur;
    size_t llen, lcap, dlen, dcap;
    const cm_op *last_write; /* the last change since the last fsync, if it was a write */
    ments live_ents, dur_ents;
    int dirty; /* live entries changed since they were last made durable */
    char *target;
    uint32_t stamp;
} minode;

struct cm_model {
    int mode;
    minode **in;
    uint64_t n;
    char err[512];
    uint8_t *scratch;
    size_t scap;
    uint32_t stamp;
};

static int fail(cm_model *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->err, sizeof(m->err), fmt, ap);
    va_end(ap);
    return -1;
}

const char *cm_model_error(const cm_model *m)
{
    return m->err;
}

static minode *node(const cm_model *m, uint64_t ino)
{
    return ino < m->n ? m->in[ino] : NULL;
}

static minode *add_node(cm_model *m, uint64_t ino, int kind)
{
    if (ino >= m->n) {
        uint64_t n = m->n ? m->n : 16;
        while (n <= ino)
            n *= 2;
        m->in = xrealloc(m->in, n * sizeof(*m->in));
        memset(m->in + m->n, 0, (n - m->n) * sizeof(*m->in));
        m->n = n;
    }
    minode *in = xrealloc(NULL, sizeof(*in));
    memset(in, 0, sizeof(*in));
    in->kind = kind;
    m->in[ino] = in;
    return in;
}

cm_model *cm_model_new(int mode)
{
    cm_model *m = xrealloc(NULL, sizeof(*m));
    memset(m, 0, sizeof(*m));
    m->mode = mode;
    add_node(m, CL_ROOT, CL_KIND_DIR); /* the root is there, empty, from the start */
    return m;
}

static void ments_clear(ments *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->e[i].name);
    s->n = 0;
}

void cm_model_free(cm_model *m)
{
    if (m == NULL)
        return;
    for (uint64_t i = 0; i < m->n; i++) {
        minode *in = m->in[i];
        if (in == NULL)
            continue;
        free(in->live);
        free(in->dur);
        ments_clear(&in->live_ents);
        ments_clear(&in->dur_ents);
        free(in->live_ents.e);
        free(in->dur_ents.e);
        free(in->target);
        free(in);
    }
    free(m->in);
    free(m->scratch);
    free(m);
}

static ment *ments_find(const ments *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->e[i].name, name) == 0)
            return &s->e[i];
    return NULL;
}

static void ments_add(ments *s, const char *name, uint64_t ino)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 16;
        s->e = xrealloc(s->e, s->cap * sizeof(*s->e));
    }
    s->e[s->n].name = strdup(name);
    if (s->e[s->n].name == NULL)
        abort();
    s->e[s->n++].ino = ino;
}

static void ments_del(ments *s, ment *e)
{
    free(e->name);
    *e = s->e[--s->n];
}

static void ments_copy(ments *dst, const ments *src)
{
    ments_clear(dst);
    for (size_t i = 0; i < src->n; i++)
        ments_add(dst, src->e[i].name, src->e[i].ino);
}

static void set_len(uint8_t **buf, size_t *len, size_t *cap, size_t n)
{
    if (n > *cap) {
        size_t c = *cap ? *cap : 4096;
        while (c < n)
            c *= 2;
        *buf = xrealloc(*buf, c);
        *cap = c;
    }
    if (n > *len)
        memset(*buf + *len, 0, n - *len);
    *len = n;
}

static minode *dir_node(cm_model *m, uint64_t ino, const char *what)
{
    minode *d = node(m, ino);
    if (d == NULL || d->kind != CL_KIND_DIR) {
        fail(m, "%s: inode %llu is not a known directory", what, (unsigned long long)ino);
        return NULL;
    }
    return d;
}

/* every directory change so far becomes durable (a journal commit) */
static void commit_all_dirs(cm_model *m)
{
    for (uint64_t i = 0; i < m->n; i++) {
        minode *d = m->in[i];
        if (d != NULL && d->kind == CL_KIND_DIR && d->dirty) {
            ments_copy(&d->dur_ents, &d->live_ents);
            d->dirty = 0;
        }
    }
}

int cm_op_is_cut_point(const cm_op *op)
{
    return op->type != CL_MARK;
}

int cm_apply(cm_model *m, const cm_op *op)
{
    m->err[0] = '\0';
    switch (op->type) {
    case CL_CREATE: {
        minode *d = dir_node(m, op->a, "create");
        if (d == NULL)
            return -1;
        if (node(m, op->b) != NULL || op->b == 0)
            return fail(m, "create '%s': inode %llu reused", op->name1, (unsigned long long)op->b);
        if (ments_find(&d->live_ents, op->name1) != NULL)
            return fail(m, "create '%s': the name exists", op->name1);
        int kind = (int)op->flags;
        if (kind < CL_KIND_FILE || kind > CL_KIND_OTHER)
            return fail(m, "create '%s': kind %d", op->name1, kind);
        minode *in = add_node(m, op->b, kind);
        if (kind == CL_KIND_SYMLINK) {
            in->target = xrealloc(NULL, op->len + 1);
            memcpy(in->target, op->data, op->len);
            in->target[op->len] = '\0';
        }
        d = node(m, op->a);
        ments_add(&d->live_ents, op->name1, op->b);
        d->dirty = 1;
        return 0;
    }
    case CL_LINK: {
        minode *in = node(m, op->a);
        minode *d = dir_node(m, op->b, "link");
        if (d == NULL)
            return -1;
        if (in == NULL || in->kind == CL_KIND_DIR)
            return fail(m, "link '%s': inode %llu is not a known file", op->name1,
                        (unsigned long long)op->a);
        if (ments_find(&d->live_ents, op->name1) != NULL)
            return fail(m, "link '%s': the name exists", op->name1);
        ments_add(&d->live_ents, op->name1, op->a);
        d->dirty = 1;
        return 0;
    }
    case CL_UNLINK: {
        minode *d = dir_node(m, op->a, "unlink");
        if (d == NULL)
            return -1;
        ment *e = ments_find(&d->live_ents, op->name1);
        if (e == NULL)
            return fail(m, "unlink '%s': no such name", op->name1);
        ments_del(&d->live_ents, e);
        d->dirty = 1;
        return 0;
    }
    case CL_RENAME: {
        minode *from = dir_node(m, op->a, "rename");
        minode *to = from ? dir_node(m, op->b, "rename") : NULL;
        if (to == NULL)
            return -1;
        ment *s = ments_find(&from->live_ents, op->name1);
        if (s == NULL)
            return fail(m, "rename '%s': no such name", op->name1);
        ment *t = ments_find(&to->live_ents, op->name2);
        if (op->flags & RENAME_EXCHANGE) {
            if (t == NULL)
                return fail(m, "exchange '%s': no '%s'", op->name1, op->name2);
            uint64_t x = s->ino;
            s->ino = t->ino;
            t->ino = x;
        } else {
            uint64_t ino = s->ino;
            if (t != NULL && t->ino == ino)
                return 0; /* two links to one file: nothing happens */
            if (t != NULL)
                ments_del(&to->live_ents, t);
            s = ments_find(&from->live_ents, op->name1); /* the delete moved entries */
            ments_del(&from->live_ents, s);
            ments_add(&to->live_ents, op->name2, ino);
        }
        from->dirty = to->dirty = 1;
        return 0;
    }
    case CL_WRITE: {
        minode *in = node(m, op->a);
        if (in == NULL || in->kind != CL_KIND_FILE)
            return fail(m, "write: inode %llu is not a known file", (unsigned long long)op->a);
        size_t end = (size_t)(op->b + op->len);
        if (end > in->llen)
            set_len(&in->live, &in->llen, &in->lcap, end);
        memcpy(in->live + op->b, op->data, op->len);
        in->last_write = op;
        return 0;
    }
    case CL_TRUNCATE: {
        minode *in = node(m, op->a);
        if (in == NULL || in->kind != CL_KIND_FILE)
            return fail(m, "truncate: inode %llu is not a known file", (unsigned long long)op->a);
        set_len(&in->live, &in->llen, &in->lcap, (size_t)op->b);
        in->last_write = NULL;
        return 0;
    }
    case CL_FSYNC: {
        minode *in = node(m, op->a);
        if (in == NULL)
            return fail(m, "fsync: inode %llu is unknown", (unsigned long long)op->a);
        if (in->kind == CL_KIND_FILE) {
            in->dlen = 0;
            set_len(&in->dur, &in->dlen, &in->dcap, in->llen);
            if (in->llen)
                memcpy(in->dur, in->live, in->llen);
            in->last_write = NULL;
        } else if (in->kind == CL_KIND_DIR) {
            /* a directory fsynced through FSYNC (kernels send FSYNCDIR; accept both) */
            ments_copy(&in->dur_ents, &in->live_ents);
            in->dirty = 0;
        }
        if (m->mode == CM_JOURNALED)
            commit_all_dirs(m);
        return 0;
    }
    case CL_FSYNCDIR: {
        minode *d = dir_node(m, op->a, "fsyncdir");
        if (d == NULL)
            return -1;
        ments_copy(&d->dur_ents, &d->live_ents);
        d->dirty = 0;
        if (m->mode == CM_JOURNALED)
            commit_all_dirs(m);
        return 0;
    }
    case CL_MARK: return 0;
    default: return fail(m, "unknown record type %u", op->type);
    }
}

/* ---- views ---- */

int cm_kind(const cm_model *m, uint64_t ino)
{
    minode *in = node(m, ino);
    return in ? in->kind : 0;
}

uint64_t cm_view_lookup(const cm_view *v, uint64_t dir, const char *name)
{
    minode *d = node(v->m, dir);
    if (d == NULL || d->kind != CL_KIND_DIR)
        return 0;
    ment *e = ments_find(&d->dur_ents, name);
    return e ? e->ino : 0;
}

static uint64_t resolve(const cm_model *m, const char *path, int durable)
{
    uint64_t ino = CL_ROOT;
    char part[256];
    while (*path) {
        while (*path == '/')
            path++;
        if (!*path)
            break;
        size_t n = strcspn(path, "/");
        if (n >= sizeof(part))
            return 0;
        memcpy(part, path, n);
        part[n] = '\0';
        path += n;
        minode *d = node(m, ino);
        if (d == NULL || d->kind != CL_KIND_DIR)
            return 0;
        ment *e = ments_find(durable ? &d->dur_ents : &d->live_ents, part);
        if (e == NULL)
            return 0;
        ino = e->ino;
    }
    return ino;
}

uint64_t cm_view_resolve(const cm_view *v, const char *path)
{
    return resolve(v->m, path, 1);
}

const char *cm_view_entry(const cm_view *v, uint64_t dir, size_t i, uint64_t *ino)
{
    minode *d = node(v->m, dir);
    if (d == NULL || d->kind != CL_KIND_DIR || i >= d->dur_ents.n)
        return NULL;
    if (ino)
        *ino = d->dur_ents.e[i].ino;
    return d->dur_ents.e[i].name;
}

const uint8_t *cm_view_data(const cm_view *v, uint64_t ino, size_t *len)
{
    cm_model *m = v->m;
    minode *in = node(m, ino);
    if (in == NULL || in->kind != CL_KIND_FILE) {
        *len = 0;
        return NULL;
    }
    if (v->torn_ino != ino || in->last_write == NULL) {
        *len = in->dlen;
        return in->dur;
    }
    /* the durable bytes, with the last write's bytes up to torn_end on top */
    const cm_op *w = in->last_write;
    size_t end = (size_t)v->torn_end;
    size_t n = in->dlen > end ? in->dlen : end;
    if (n > m->scap) {
        m->scratch = xrealloc(m->scratch, n);
        m->scap = n;
    }
    memset(m->scratch, 0, n);
    if (in->dlen)
        memcpy(m->scratch, in->dur, in->dlen);
    memcpy(m->scratch + w->b, w->data, end - (size_t)w->b);
    *len = n;
    return m->scratch;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int write_tree(const cm_view *v, uint64_t dir, const char *path, int depth)
{
    if (depth > 64) { /* a cycle only an unsynced directory rename can make */
        errno = ELOOP;
        return -1;
    }
    if (mkdir(path, 0755) != 0)
        return -1;
    uint64_t ino;
    const char *name;
    for (size_t i = 0; (name = cm_view_entry(v, dir, i, &ino)) != NULL; i++) {
        char *sub = NULL;
        if (asprintf(&sub, "%s/%s", path, name) < 0)
            return -1;
        int rc = 0;
        minode *in = node(v->m, ino);
        switch (in ? in->kind : 0) {
        case CL_KIND_FILE: {
            size_t len;
            const uint8_t *data = cm_view_data(v, ino, &len);
            int fd = open(sub, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
            rc = fd < 0 ? -1 : write_all(fd, data, len);
            if (fd >= 0 && close(fd) != 0)
                rc = -1;
            break;
        }
        case CL_KIND_DIR: rc = write_tree(v, ino, sub, depth + 1); break;
        case CL_KIND_SYMLINK: rc = symlink(in->target, sub); break;
        default: break; /* FIFOs and the like hold nothing to check */
        }
        free(sub);
        if (rc != 0)
            return -1;
    }
    return 0;
}

int cm_view_write_tree(const cm_view *v, uint64_t dir, const char *path)
{
    return write_tree(v, dir, path, 0);
}

uint64_t cm_live_lookup(const cm_model *m, uint64_t dir, const char *name)
{
    minode *d = node(m, dir);
    if (d == NULL || d->kind != CL_KIND_DIR)
        return 0;
    ment *e = ments_find(&d->live_ents, name);
    return e ? e->ino : 0;
}

uint64_t cm_live_resolve(const cm_model *m, const char *path)
{
    return resolve(m, path, 0);
}

const char *cm_live_entry(const cm_model *m, uint64_t dir, size_t i, uint64_t *ino)
{
    minode *d = node(m, dir);
    if (d == NULL || d->kind != CL_KIND_DIR || i >= d->live_ents.n)
        return NULL;
    if (ino)
        *ino = d->live_ents.e[i].ino;
    return d->live_ents.e[i].name;
}

const uint8_t *cm_live_data(const cm_model *m, uint64_t ino, size_t *len)
{
    minode *in = node(m, ino);
    if (in == NULL || in->kind != CL_KIND_FILE) {
        *len = 0;
        return NULL;
    }
    *len = in->llen;
    return in->live;
}

/* ---- torn writes ---- */

static void reach(cm_model *m, uint64_t ino, int depth, uint64_t *inos, uint64_t *ends, size_t cap,
                  size_t *count)
{
    minode *in = node(m, ino);
    if (in == NULL || in->stamp == m->stamp || depth > 64)
        return;
    in->stamp = m->stamp;
    if (in->kind == CL_KIND_DIR) {
        for (size_t i = 0; i < in->dur_ents.n; i++)
            reach(m, in->dur_ents.e[i].ino, depth + 1, inos, ends, cap, count);
        return;
    }
    if (in->kind != CL_KIND_FILE || in->last_write == NULL)
        return;
    uint64_t off = in->last_write->b, end = off + in->last_write->len;
    uint64_t first = (off / 512 + 1) * 512;
    uint64_t last = end > 0 ? (end - 1) / 512 * 512 : 0;
    if (first >= end)
        return; /* no boundary strictly inside the write: it cannot tear */
    uint64_t mid = (off + end) / 2 / 512 * 512;
    uint64_t cuts[3] = {first, last, mid};
    int n = last != first ? 2 : 1;
    if (mid > first && mid < last)
        n = 3;
    for (int i = 0; i < n; i++) {
        if (*count < cap) {
            inos[*count] = ino;
            ends[*count] = cuts[i];
        }
        (*count)++;
    }
}

size_t cm_torn_points(cm_model *m, uint64_t *inos, uint64_t *ends, size_t cap)
{
    m->stamp++;
    size_t count = 0;
    reach(m, CL_ROOT, 0, inos, ends, cap, &count);
    return count;
}
