/*
 * crashfs.c - the crash-model file system: an in-memory FUSE file system that
 * logs every operation a power cut could undo (crashlog.h), so that model.c
 * can rebuild what would persist at any point of a recorded run.
 *
 *   crashfs --log=FILE MOUNTPOINT [-f] [-o options]
 *
 * The live file system behaves as any POSIX one (hard links, rename with
 * RENAME_NOREPLACE and RENAME_EXCHANGE, O_DIRECT, mmap); only the log knows
 * what was synced. The log is written before each answer, so its order is the
 * order the kernel saw the answers in: one request at a time (a single-thread
 * loop), every write and fsync reaching the daemon when the caller makes it
 * (no writeback cache: the kernel sends each write through; no attribute or
 * entry caching, so a name created behind the kernel's back cannot hide).
 *
 * The root holds a hidden file, CL_MARK_NAME: each write() to it becomes one
 * CL_MARK record, so a test can say in the log which calls had returned.
 *
 * Test-only code: nothing here is shipped.
 */
#define FUSE_USE_VERSION 34
#ifndef _GNU_SOURCE
#  define _GNU_SOURCE /* RENAME_* */
#endif

#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "crashlog.h"

#ifndef RENAME_NOREPLACE
#  define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#  define RENAME_EXCHANGE (1 << 1)
#endif

#define MARK_INO 2u

typedef struct {
    char *name;
    fuse_ino_t ino;
} entry;

typedef struct {
    int kind; /* CL_KIND_*; 0 for a slot never used */
    mode_t mode;
    uid_t uid;
    gid_t gid;
    nlink_t nlink;
    struct timespec atime, mtime, ctime;
    uint8_t *data; /* a file's bytes */
    size_t size, cap;
    entry *ents; /* a directory's entries */
    size_t n, ecap;
    fuse_ino_t parent; /* a directory's "..": the one it was last linked into */
    char *target;      /* a symlink's */
    int opens;
} inode;

static inode **inodes;
static fuse_ino_t n_inodes; /* slots 0..n_inodes-1; 0 is never an inode */
static int logfd = -1;
static char *log_path;

/* ---- the log ---- */

static void die(const char *what)
{
    perror(what);
    abort(); /* a log with a hole proves nothing: end the run loudly */
}

static void log_rec(uint32_t type, uint32_t flags, uint64_t a, uint64_t b, const char *n1,
                    const char *n2, const void *payload, size_t len)
{
    cl_rec r;
    memset(&r, 0, sizeof(r));
    r.type = type;
    r.flags = flags;
    r.a = a;
    r.b = b;
    r.len = len;
    r.name1_len = n1 != NULL ? (uint32_t)strlen(n1) : 0;
    r.name2_len = n2 != NULL ? (uint32_t)strlen(n2) : 0;
    struct iovec iov[4] = {
        {&r, sizeof(r)},
        {(void *)n1, r.name1_len},
        {(void *)n2, r.name2_len},
        {(void *)payload, len},
    };
    int at = 0;
    while (at < 4) {
        ssize_t w = writev(logfd, iov + at, 4 - at);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            die(log_path);
        }
        size_t left = (size_t)w;
        while (at < 4 && left >= iov[at].iov_len)
            left -= iov[at++].iov_len;
        if (at < 4) {
            iov[at].iov_base = (char *)iov[at].iov_base + left;
            iov[at].iov_len -= left;
        }
    }
}

/* ---- inodes ---- */

static inode *get(fuse_ino_t ino)
{
    return ino > 0 && ino < n_inodes && inodes[ino] != NULL && inodes[ino]->kind != 0 ? inodes[ino]
                                                                                      : NULL;
}

static void now(struct timespec *t)
{
    clock_gettime(CLOCK_REALTIME, t);
}

static fuse_ino_t new_inode(int kind, mode_t mode, fuse_req_t req)
{
    inode **grown = realloc(inodes, (n_inodes + 1) * sizeof(*inodes));
    inode *in = calloc(1, sizeof(*in));
    if (grown == NULL || in == NULL)
        die("out of memory");
    inodes = grown;
    in->kind = kind;
    in->mode = mode & 07777;
    if (req != NULL) {
        const struct fuse_ctx *ctx = fuse_req_ctx(req);
        in->uid = ctx->uid;
        in->gid = ctx->gid;
    }
    in->nlink = kind == CL_KIND_DIR ? 2 : 1;
    now(&in->atime);
    in->mtime = in->ctime = in->atime;
    inodes[n_inodes] = in;
    return n_inodes++;
}

/* an unlinked file's bytes go with its last open */
static void maybe_free(inode *in)
{
    if (in->nlink == 0 && in->opens == 0) {
        free(in->data);
        in->data = NULL;
        in->size = in->cap = 0;
    }
}

static mode_t type_bits(const inode *in)
{
    switch (in->kind) {
    case CL_KIND_DIR: return S_IFDIR;
    case CL_KIND_SYMLINK: return S_IFLNK;
    case CL_KIND_OTHER: return S_IFIFO;
    default: return S_IFREG;
    }
}

static void fill_attr(fuse_ino_t ino, const inode *in, struct stat *st)
{
    memset(st, 0, sizeof(*st));
    st->st_ino = ino;
    st->st_mode = type_bits(in) | in->mode;
    st->st_nlink = in->nlink;
    st->st_uid = in->uid;
    st->st_gid = in->gid;
    st->st_size = in->kind == CL_KIND_SYMLINK ? (off_t)strlen(in->target) : (off_t)in->size;
    st->st_blocks = (blkcnt_t)((in->size + 511) / 512);
    st->st_blksize = 4096;
    st->st_atim = in->atime;
    st->st_mtim = in->mtime;
    st->st_ctim = in->ctime;
}

static entry *find(inode *dir, const char *name)
{
    for (size_t i = 0; i < dir->n; i++)
        if (strcmp(dir->ents[i].name, name) == 0)
            return &dir->ents[i];
    return NULL;
}

static void add_entry(inode *dir, const char *name, fuse_ino_t ino)
{
    if (dir->n == dir->ecap) {
        dir->ecap = dir->ecap ? 2 * dir->ecap : 16;
        dir->ents = realloc(dir->ents, dir->ecap * sizeof(*dir->ents));
        if (dir->ents == NULL)
            die("out of memory");
    }
    dir->ents[dir->n].name = strdup(name);
    if (dir->ents[dir->n].name == NULL)
        die("out of memory");
    dir->ents[dir->n++].ino = ino;
    now(&dir->mtime);
    dir->ctime = dir->mtime;
}

static void remove_entry(inode *dir, entry *e)
{
    free(e->name);
    *e = dir->ents[--dir->n];
    now(&dir->mtime);
    dir->ctime = dir->mtime;
}

static int resize(inode *in, size_t size)
{
    if (size > in->cap) {
        size_t cap = in->cap ? in->cap : 4096;
        while (cap < size)
            cap *= 2;
        uint8_t *d = realloc(in->data, cap);
        if (d == NULL)
            return ENOSPC;
        in->data = d;
        in->cap = cap;
    }
    if (size > in->size)
        memset(in->data + in->size, 0, size - in->size);
    in->size = size;
    now(&in->mtime);
    in->ctime = in->mtime;
    return 0;
}

static void reply_entry(fuse_req_t req, fuse_ino_t ino)
{
    struct fuse_entry_param e;
    memset(&e, 0, sizeof(e));
    e.ino = ino;
    e.generation = 1;
    fill_attr(ino, get(ino), &e.attr);
    e.attr_timeout = 0;
    e.entry_timeout = 0;
    fuse_reply_entry(req, &e);
}

static int is_mark(fuse_ino_t parent, const char *name)
{
    return parent == CL_ROOT && strcmp(name, CL_MARK_NAME) == 0;
}

/* ---- operations ---- */

static void fs_init(void *userdata, struct fuse_conn_info *conn)
{
    (void)userdata;
    /* every write must reach us when it is made: no page-cache write-back */
    conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE;
}

static void fs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    inode *dir = get(parent);
    if (dir == NULL || dir->kind != CL_KIND_DIR) {
        fuse_reply_err(req, ENOTDIR);
        return;
    }
    if (is_mark(parent, name)) {
        reply_entry(req, MARK_INO);
        return;
    }
    entry *e = find(dir, name);
    if (e == NULL) {
        fuse_reply_err(req, ENOENT);
        return;
    }
    reply_entry(req, e->ino);
}

static void fs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
    (void)ino, (void)nlookup; /* inodes stay until unmount: numbers are never reused */
    fuse_reply_none(req);
}

static void fs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)fi;
    inode *in = get(ino);
    if (in == NULL) {
        fuse_reply_err(req, ENOENT);
        return;
    }
    struct stat st;
    fill_attr(ino, in, &st);
    fuse_reply_attr(req, &st, 0);
}

static void fs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
                       struct fuse_file_info *fi)
{
    (void)fi;
    inode *in = get(ino);
    if (in == NULL) {
        fuse_reply_err(req, ENOENT);
        return;
    }
    if ((to_set & FUSE_SET_ATTR_SIZE) && ino != MARK_INO) {
        if (in->kind != CL_KIND_FILE) {
            fuse_reply_err(req, in->kind == CL_KIND_DIR ? EISDIR : EINVAL);
            return;
        }
        int rc = resize(in, (size_t)attr->st_size);
        if (rc != 0) {
            fuse_reply_err(req, rc);
            return;
        }
        log_rec(CL_TRUNCATE, 0, ino, (uint64_t)attr->st_size, NULL, NULL, NULL, 0);
    }
    if (to_set & FUSE_SET_ATTR_MODE)
        in->mode = attr->st_mode & 07777;
    if (to_set & FUSE_SET_ATTR_UID)
        in->uid = attr->st_uid;
    if (to_set & FUSE_SET_ATTR_GID)
        in->gid = attr->st_gid;
    if (to_set & FUSE_SET_ATTR_ATIME)
        in->atime = attr->st_atim;
    if (to_set & FUSE_SET_ATTR_MTIME)
        in->mtime = attr->st_mtim;
    if (to_set & FUSE_SET_ATTR_ATIME_NOW)
        now(&in->atime);
    if (to_set & FUSE_SET_ATTR_MTIME_NOW)
        now(&in->mtime);
    now(&in->ctime);
    struct stat st;
    fill_attr(ino, in, &st);
    fuse_reply_attr(req, &st, 0);
}

static void fs_readlink(fuse_req_t req, fuse_ino_t ino)
{
    inode *in = get(ino);
    if (in == NULL || in->kind != CL_KIND_SYMLINK)
        fuse_reply_err(req, EINVAL);
    else
        fuse_reply_readlink(req, in->target);
}

/* A new inode of `kind` under parent/name, logged; 0 and the error in *err if refused. */
static fuse_ino_t make(fuse_req_t req, fuse_ino_t parent, const char *name, int kind, mode_t mode,
                       const char *target, int *err)
{
    inode *dir = get(parent);
    if (dir == NULL || dir->kind != CL_KIND_DIR) {
        *err = ENOTDIR;
        return 0;
    }
    if (is_mark(parent, name) || find(dir, name) != NULL) {
        *err = EEXIST;
        return 0;
    }
    if (strlen(name) > 255) {
        *err = ENAMETOOLONG;
        return 0;
    }
    fuse_ino_t ino = new_inode(kind, mode, req);
    inode *in = get(ino);
    dir = get(parent); /* the table may have moved */
    if (kind == CL_KIND_DIR) {
        in->parent = parent;
        dir->nlink++;
    }
    if (target != NULL && (in->target = strdup(target)) == NULL)
        die("out of memory");
    add_entry(dir, name, ino);
    log_rec(CL_CREATE, (uint32_t)kind, parent, ino, name, NULL, target,
            target != NULL ? strlen(target) : 0);
    return ino;
}

static void fs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
    (void)rdev;
    int kind = S_ISREG(mode) ? CL_KIND_FILE : S_ISFIFO(mode) ? CL_KIND_OTHER : 0;
    if (kind == 0) {
        fuse_reply_err(req, EPERM);
        return;
    }
    int err = 0;
    fuse_ino_t ino = make(req, parent, name, kind, mode, NULL, &err);
    if (ino == 0)
        fuse_reply_err(req, err);
    else
        reply_entry(req, ino);
}

static void fs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
    int err = 0;
    fuse_ino_t ino = make(req, parent, name, CL_KIND_DIR, mode, NULL, &err);
    if (ino == 0)
        fuse_reply_err(req, err);
    else
        reply_entry(req, ino);
}

static void fs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
    int err = 0;
    fuse_ino_t ino = make(req, parent, name, CL_KIND_SYMLINK, 0777, link, &err);
    if (ino == 0)
        fuse_reply_err(req, err);
    else
        reply_entry(req, ino);
}

static void drop_link(inode *dir, entry *e)
{
    inode *in = get(e->ino);
    if (in->kind == CL_KIND_DIR) {
        in->nlink = 0;
        dir->nlink--;
    } else {
        in->nlink--;
    }
    now(&in->ctime);
    remove_entry(dir, e);
    if (in->kind == CL_KIND_FILE)
        maybe_free(in);
}

static void remove_name(fuse_req_t req, fuse_ino_t parent, const char *name, int want_dir)
{
    inode *dir = get(parent);
    if (dir == NULL || dir->kind != CL_KIND_DIR) {
        fuse_reply_err(req, ENOTDIR);
        return;
    }
    if (is_mark(parent, name)) {
        fuse_reply_err(req, EPERM);
        return;
    }
    entry *e = find(dir, name);
    if (e == NULL) {
        fuse_reply_err(req, ENOENT);
        return;
    }
    inode *in = get(e->ino);
    if (want_dir && in->kind != CL_KIND_DIR) {
        fuse_reply_err(req, ENOTDIR);
        return;
    }
    if (!want_dir && in->kind == CL_KIND_DIR) {
        fuse_reply_err(req, EISDIR);
        return;
    }
    if (want_dir && in->n > 0) {
        fuse_reply_err(req, ENOTEMPTY);
        return;
    }
    drop_link(dir, e);
    log_rec(CL_UNLINK, 0, parent, 0, name, NULL, NULL, 0);
    fuse_reply_err(req, 0);
}

static void fs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    remove_name(req, parent, name, 0);
}

static void fs_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    remove_name(req, parent, name, 1);
}

/* 1 if directory `anc` is `ino` or one of its ancestors */
static int is_ancestor(fuse_ino_t anc, fuse_ino_t ino)
{
    for (int depth = 0; depth < 4096; depth++) {
        if (ino == anc)
            return 1;
        if (ino == CL_ROOT)
            return 0;
        inode *in = get(ino);
        if (in == NULL)
            return 0;
        ino = in->parent;
    }
    return 1;
}

static void fs_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
                      const char *newname, unsigned int flags)
{
    inode *from = get(parent), *to = get(newparent);
    if (from == NULL || to == NULL || from->kind != CL_KIND_DIR || to->kind != CL_KIND_DIR) {
        fuse_reply_err(req, ENOTDIR);
        return;
    }
    if (flags & ~(unsigned)(RENAME_NOREPLACE | RENAME_EXCHANGE) ||
        (flags & RENAME_NOREPLACE && flags & RENAME_EXCHANGE)) {
        fuse_reply_err(req, EINVAL);
        return;
    }
    if (is_mark(parent, name) || is_mark(newparent, newname)) {
        fuse_reply_err(req, EPERM);
        return;
    }
    entry *src = find(from, name);
    if (src == NULL) {
        fuse_reply_err(req, ENOENT);
        return;
    }
    if (strlen(newname) > 255) {
        fuse_reply_err(req, ENAMETOOLONG);
        return;
    }
    fuse_ino_t sino = src->ino;
    inode *s = get(sino);
    if (s->kind == CL_KIND_DIR && is_ancestor(sino, newparent)) {
        fuse_reply_err(req, EINVAL);
        return;
    }
    entry *dst = find(to, newname);
    if (flags & RENAME_EXCHANGE) {
        if (dst == NULL) {
            fuse_reply_err(req, ENOENT);
            return;
        }
        inode *d = get(dst->ino);
        if (d->kind == CL_KIND_DIR && is_ancestor(dst->ino, parent)) {
            fuse_reply_err(req, EINVAL);
            return;
        }
        fuse_ino_t dino = dst->ino;
        src->ino = dino;
        dst->ino = sino;
        if (s->kind == CL_KIND_DIR && parent != newparent) {
            s->parent = newparent;
            from->nlink--, to->nlink++;
        }
        if (d->kind == CL_KIND_DIR && parent != newparent) {
            d->parent = parent;
            to->nlink--, from->nlink++;
        }
        now(&s->ctime);
        now(&d->ctime);
        log_rec(CL_RENAME, flags, parent, newparent, name, newname, NULL, 0);
        fuse_reply_err(req, 0);
        return;
    }
    if (dst != NULL) {
        if (flags & RENAME_NOREPLACE) {
            fuse_reply_err(req, EEXIST);
            return;
        }
        if (dst->ino == sino) { /* two links to one file: POSIX says do nothing */
            fuse_reply_err(req, 0);
            return;
        }
        inode *d = get(dst->ino);
        if (s->kind == CL_KIND_DIR && d->kind != CL_KIND_DIR) {
            fuse_reply_err(req, ENOTDIR);
            return;
        }
        if (s->kind != CL_KIND_DIR && d->kind == CL_KIND_DIR) {
            fuse_reply_err(req, EISDIR);
            return;
        }
        if (d->kind == CL_KIND_DIR && d->n > 0) {
            fuse_reply_err(req, ENOTEMPTY);
            return;
        }
        drop_link(to, dst);
        src = find(from, name); /* drop_link moved entries around */
    }
    remove_entry(from, src);
    add_entry(to, newname, sino);
    if (s->kind == CL_KIND_DIR && parent != newparent) {
        s->parent = newparent;
        from->nlink--, to->nlink++;
    }
    now(&s->ctime);
    log_rec(CL_RENAME, flags, parent, newparent, name, newname, NULL, 0);
    fuse_reply_err(req, 0);
}

static void fs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
    inode *in = get(ino), *dir = get(newparent);
    if (in == NULL || ino == MARK_INO || in->kind == CL_KIND_DIR) {
        fuse_reply_err(req, EPERM);
        return;
    }
    if (dir == NULL || dir->kind != CL_KIND_DIR) {
        fuse_reply_err(req, ENOTDIR);
        return;
    }
    if (is_mark(newparent, newname) || find(dir, newname) != NULL) {
        fuse_reply_err(req, EEXIST);
        return;
    }
    add_entry(dir, newname, ino);
    in->nlink++;
    now(&in->ctime);
    log_rec(CL_LINK, 0, ino, newparent, newname, NULL, NULL, 0);
    reply_entry(req, ino);
}

static void opened(fuse_req_t req, fuse_ino_t ino, inode *in, struct fuse_file_info *fi, int fresh)
{
    if (ino == MARK_INO) {
        fi->direct_io = 1; /* each write() is one request: one mark */
        fi->nonseekable = 1;
    } else if ((fi->flags & O_TRUNC) && in->size != 0 && (fi->flags & O_ACCMODE) != O_RDONLY) {
        int rc = resize(in, 0);
        if (rc != 0) {
            fuse_reply_err(req, rc);
            return;
        }
        log_rec(CL_TRUNCATE, 0, ino, 0, NULL, NULL, NULL, 0);
    }
    fi->keep_cache = 0;
    in->opens++;
    if (fresh) {
        struct fuse_entry_param e;
        memset(&e, 0, sizeof(e));
        e.ino = ino;
        e.generation = 1;
        fill_attr(ino, in, &e.attr);
        fuse_reply_create(req, &e, fi);
    } else {
        fuse_reply_open(req, fi);
    }
}

static void fs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    inode *in = get(ino);
    if (in == NULL) {
        fuse_reply_err(req, ENOENT);
        return;
    }
    if (in->kind == CL_KIND_DIR) {
        fuse_reply_err(req, EISDIR);
        return;
    }
    opened(req, ino, in, fi, 0);
}

static void fs_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                      struct fuse_file_info *fi)
{
    inode *dir = get(parent);
    if (dir == NULL || dir->kind != CL_KIND_DIR) {
        fuse_reply_err(req, ENOTDIR);
        return;
    }
    entry *e = is_mark(parent, name) ? NULL : find(dir, name);
    if (e != NULL || is_mark(parent, name)) { /* it appeared since the kernel's lookup */
        if (fi->flags & O_EXCL) {
            fuse_reply_err(req, EEXIST);
            return;
        }
        fuse_ino_t ino = e != NULL ? e->ino : MARK_INO;
        inode *in = get(ino);
        if (in->kind == CL_KIND_DIR) {
            fuse_reply_err(req, EISDIR);
            return;
        }
        opened(req, ino, in, fi, 1);
        return;
    }
    int err = 0;
    fuse_ino_t ino = make(req, parent, name, CL_KIND_FILE, mode, NULL, &err);
    if (ino == 0) {
        fuse_reply_err(req, err);
        return;
    }
    opened(req, ino, get(ino), fi, 1);
}

static void fs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
    (void)fi;
    inode *in = get(ino);
    if (in == NULL || in->kind != CL_KIND_FILE) {
        fuse_reply_err(req, in == NULL ? ENOENT : EISDIR);
        return;
    }
    if (ino == MARK_INO || off < 0 || (size_t)off >= in->size) {
        fuse_reply_buf(req, NULL, 0);
        return;
    }
    size_t n = in->size - (size_t)off < size ? in->size - (size_t)off : size;
    fuse_reply_buf(req, (const char *)in->data + off, n);
}

static void fs_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
                     struct fuse_file_info *fi)
{
    (void)fi;
    inode *in = get(ino);
    if (in == NULL || in->kind != CL_KIND_FILE) {
        fuse_reply_err(req, in == NULL ? ENOENT : EISDIR);
        return;
    }
    if (ino == MARK_INO) {
        log_rec(CL_MARK, 0, 0, 0, NULL, NULL, buf, size);
        fuse_reply_write(req, size);
        return;
    }
    if (off < 0) {
        fuse_reply_err(req, EINVAL);
        return;
    }
    size_t end = (size_t)off + size;
    if (end > in->size) {
        int rc = resize(in, end);
        if (rc != 0) {
            fuse_reply_err(req, rc);
            return;
        }
    }
    memcpy(in->data + off, buf, size);
    now(&in->mtime);
    in->ctime = in->mtime;
    log_rec(CL_WRITE, 0, ino, (uint64_t)off, NULL, NULL, buf, size);
    fuse_reply_write(req, size);
}

static void fs_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)ino, (void)fi;
    fuse_reply_err(req, 0);
}

static void fs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)fi;
    inode *in = get(ino);
    if (in != NULL) {
        in->opens--;
        if (in->kind == CL_KIND_FILE)
            maybe_free(in);
    }
    fuse_reply_err(req, 0);
}

static void fs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
    (void)fi;
    if (ino != MARK_INO)
        log_rec(CL_FSYNC, datasync ? 1u : 0u, ino, 0, NULL, NULL, NULL, 0);
    fuse_reply_err(req, 0);
}

/* A directory's entries as they were at opendir, so that a listing in several
 * readdir calls is consistent while the directory changes. */
typedef struct {
    size_t n;
    entry ents[];
} listing;

static void fs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    inode *in = get(ino);
    if (in == NULL || in->kind != CL_KIND_DIR) {
        fuse_reply_err(req, in == NULL ? ENOENT : ENOTDIR);
        return;
    }
    listing *l = malloc(sizeof(*l) + (in->n + 2) * sizeof(entry));
    if (l == NULL) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    l->n = 0;
    l->ents[l->n].name = strdup(".");
    l->ents[l->n++].ino = ino;
    l->ents[l->n].name = strdup("..");
    l->ents[l->n++].ino = ino == CL_ROOT ? CL_ROOT : in->parent;
    for (size_t i = 0; i < in->n; i++) {
        l->ents[l->n].name = strdup(in->ents[i].name);
        l->ents[l->n++].ino = in->ents[i].ino;
    }
    for (size_t i = 0; i < l->n; i++)
        if (l->ents[i].name == NULL)
            die("out of memory");
    fi->fh = (uint64_t)(uintptr_t)l;
    fuse_reply_open(req, fi);
}

static void fs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                       struct fuse_file_info *fi)
{
    (void)ino;
    listing *l = (listing *)(uintptr_t)fi->fh;
    char *buf = malloc(size);
    if (buf == NULL) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    size_t used = 0;
    for (size_t i = off < 0 ? 0 : (size_t)off; i < l->n; i++) {
        struct stat st;
        memset(&st, 0, sizeof(st));
        st.st_ino = l->ents[i].ino;
        inode *in = get(l->ents[i].ino);
        st.st_mode = in != NULL ? type_bits(in) : S_IFDIR;
        size_t need =
            fuse_add_direntry(req, buf + used, size - used, l->ents[i].name, &st, (off_t)(i + 1));
        if (need > size - used)
            break;
        used += need;
    }
    fuse_reply_buf(req, buf, used);
    free(buf);
}

static void fs_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)ino;
    listing *l = (listing *)(uintptr_t)fi->fh;
    for (size_t i = 0; i < l->n; i++)
        free(l->ents[i].name);
    free(l);
    fuse_reply_err(req, 0);
}

static void fs_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
    (void)fi;
    log_rec(CL_FSYNCDIR, datasync ? 1u : 0u, ino, 0, NULL, NULL, NULL, 0);
    fuse_reply_err(req, 0);
}

static void fs_statfs(fuse_req_t req, fuse_ino_t ino)
{
    (void)ino;
    struct statvfs st;
    memset(&st, 0, sizeof(st));
    st.f_bsize = 4096;
    st.f_frsize = 4096;
    st.f_blocks = (fsblkcnt_t)1 << 24; /* 64 GiB: room enough; memory is the real limit */
    st.f_bfree = st.f_bavail = (fsblkcnt_t)1 << 23;
    st.f_files = (fsfilcnt_t)1 << 24;
    st.f_ffree = st.f_favail = st.f_files - n_inodes;
    st.f_namemax = 255;
    fuse_reply_statfs(req, &st);
}

static void fs_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
    (void)mask;
    fuse_reply_err(req, get(ino) != NULL ? 0 : ENOENT);
}

static void fs_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
                         struct fuse_file_info *fi)
{
    (void)fi;
    inode *in = get(ino);
    if (in == NULL || in->kind != CL_KIND_FILE || ino == MARK_INO) {
        fuse_reply_err(req, EINVAL);
        return;
    }
    if (mode != 0) { /* only plain allocation: its one visible effect is the size */
        fuse_reply_err(req, EOPNOTSUPP);
        return;
    }
    size_t end = (size_t)off + (size_t)len;
    if (end > in->size) {
        int rc = resize(in, end);
        if (rc != 0) {
            fuse_reply_err(req, rc);
            return;
        }
        log_rec(CL_TRUNCATE, 0, ino, end, NULL, NULL, NULL, 0);
    }
    fuse_reply_err(req, 0);
}

static const struct fuse_lowlevel_ops ops = {
    .init = fs_init,
    .lookup = fs_lookup,
    .forget = fs_forget,
    .getattr = fs_getattr,
    .setattr = fs_setattr,
    .readlink = fs_readlink,
    .mknod = fs_mknod,
    .mkdir = fs_mkdir,
    .unlink = fs_unlink,
    .rmdir = fs_rmdir,
    .symlink = fs_symlink,
    .rename = fs_rename,
    .link = fs_link,
    .open = fs_open,
    .read = fs_read,
    .write = fs_write,
    .flush = fs_flush,
    .release = fs_release,
    .fsync = fs_fsync,
    .opendir = fs_opendir,
    .readdir = fs_readdir,
    .releasedir = fs_releasedir,
    .fsyncdir = fs_fsyncdir,
    .statfs = fs_statfs,
    .access = fs_access,
    .create = fs_create,
    .fallocate = fs_fallocate,
};

static const struct fuse_opt option_spec[] = {
    {"--log=%s", 0, 0},
    FUSE_OPT_END,
};

int main(int argc, char *argv[])
{
    struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
    if (fuse_opt_parse(&args, &log_path, option_spec, NULL) != 0)
        return 1;
    struct fuse_cmdline_opts opts;
    if (fuse_parse_cmdline(&args, &opts) != 0)
        return 1;
    if (log_path == NULL || opts.mountpoint == NULL) {
        fprintf(stderr, "usage: crashfs --log=FILE MOUNTPOINT [-f] [-o options]\n");
        return 1;
    }
    logfd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_APPEND, 0644);
    if (logfd < 0) {
        perror(log_path);
        return 1;
    }
    if (write(logfd, CL_MAGIC, 8) != 8)
        die(log_path);
    /* slot 0 stays empty; 1 is the root, 2 the mark file */
    inodes = calloc(1, sizeof(*inodes));
    n_inodes = 1;
    fuse_ino_t root = new_inode(CL_KIND_DIR, 0755, NULL);
    fuse_ino_t mark = new_inode(CL_KIND_FILE, 0666, NULL);
    if (root != CL_ROOT || mark != MARK_INO)
        die("inode numbering");
    get(CL_ROOT)->parent = CL_ROOT;

    struct fuse_session *se = fuse_session_new(&args, &ops, sizeof(ops), NULL);
    int rc = 1;
    if (se != NULL) {
        if (fuse_set_signal_handlers(se) == 0) {
            if (fuse_session_mount(se, opts.mountpoint) == 0) {
                fuse_daemonize(opts.foreground);
                rc = fuse_session_loop(se) != 0;
                fuse_session_unmount(se);
            }
            fuse_remove_signal_handlers(se);
        }
        fuse_session_destroy(se);
    }
    free(opts.mountpoint);
    fuse_opt_free_args(&args);
    close(logfd);
    return rc;
}
