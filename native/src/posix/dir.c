/*
 * dir.c - directories on POSIX: everything relative to one open descriptor.
 *
 * Every call names files with *at() functions relative to the descriptor the
 * directory was opened with, so a later rename or replacement of the
 * directory's path cannot redirect them, and O_NOFOLLOW / AT_SYMLINK_NOFOLLOW
 * keep symbolic links from being followed.
 */
/* -std=c11 without extensions declares only ISO C; this file needs
 * O_DIRECTORY, O_NOFOLLOW, strdup, fdopendir. */
#if !defined(_GNU_SOURCE)
#  define _GNU_SOURCE
#endif
#include <dirent.h>
#include <stdio.h> /* renameat */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../internal.h"
#include "posix.h"

struct nd_os_dir {
    int fd;
    char *path;
};

const char *nd__os_dir_path(const nd_os_dir *dir)
{
    return dir->path;
}

int nd__posix_dir_fd(const nd_os_dir *dir)
{
    return dir->fd;
}

/* fsync of the directory that holds `path`'s last component, so that a
 * directory just made there is durable in it. */
static int sync_parent(const char *path)
{
    size_t end = strlen(path);
    while (end > 1 && path[end - 1] == '/') /* trailing slashes */
        end--;
    while (end > 0 && path[end - 1] != '/') /* the last component */
        end--;
    while (end > 1 && path[end - 1] == '/') /* the slashes before it */
        end--;
    char *parent = end == 0 ? strdup(".") : strndup(path, end);
    if (parent == NULL)
        return ENOMEM;
    int fd;
    do
        fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    int e = fd < 0 ? errno : nd__posix_full_fsync(fd);
    if (fd >= 0)
        close(fd);
    free(parent);
    return e;
}

/* mkdir of one component; one made here is made durable in its parent: a
 * power cut would otherwise take it, and every file nd_sync_dir made durable
 * in it, away (POSIX: a new name is durable once its directory is fsynced). */
static int make_dir(char *path, const char **what)
{
    if (mkdir(path, 0777) != 0) {
        *what = "mkdir";
        return errno == EEXIST ? 0 : errno;
    }
    *what = "fsync the parent of";
    return sync_parent(path);
}

/* mkdir -p: each missing component, tolerating a racing creator. */
static int make_dirs(char *path, const char **what)
{
    for (char *p = path + 1; *p != '\0'; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int e = make_dir(path, what);
        *p = '/';
        if (e != 0)
            return e;
    }
    return make_dir(path, what);
}

int32_t nd__os_dir_open(const char *path, int create, nd_os_dir **out)
{
    nd_os_dir *d = calloc(1, sizeof(*d));
    char *copy = strdup(path);
    if (d == NULL || copy == NULL) {
        free(d);
        free(copy);
        return nd__fail(ND_E_NO_MEMORY, "open '%s': out of memory", path);
    }
    if (create) {
        const char *what = "mkdir";
        int e = make_dirs(copy, &what);
        if (e != 0) {
            free(d);
            free(copy);
            return nd__fail_os(e, "%s '%s'", what, path);
        }
    }
    int fd;
    do
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        int e = errno;
        free(d);
        free(copy);
        return nd__fail_os(e, "open '%s'", path);
    }
    d->fd = fd;
    d->path = copy;
    *out = d;
    return ND_OK;
}

void nd__os_dir_free(nd_os_dir *dir)
{
    if (dir != NULL) {
        close(dir->fd);
        free(dir->path);
        free(dir);
    }
}

int32_t nd__os_dir_list(nd_os_dir *dir, nd_os_list_fn fn, void *ctx)
{
    /* a descriptor of our own: a DIR stream moves the offset it reads */
    int fd = openat(dir->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return nd__fail_os(errno, "open '%s'", dir->path);
    DIR *ds = fdopendir(fd);
    if (ds == NULL) {
        int e = errno;
        close(fd);
        return nd__fail_os(e, "fdopendir '%s'", dir->path);
    }
    int32_t rc = ND_OK;
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(ds);
        if (de == NULL) {
            if (errno != 0)
                rc = nd__fail_os(errno, "readdir '%s'", dir->path);
            break;
        }
        int regular;
#ifdef DT_REG
        if (de->d_type == DT_REG)
            regular = 1;
        else if (de->d_type != DT_UNKNOWN)
            regular = 0;
        else
#endif
        {
            struct stat st;
            regular =
                fstatat(dir->fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
        }
        if (!regular)
            continue;
        rc = fn(ctx, de->d_name, strlen(de->d_name));
        if (rc != ND_OK)
            break;
    }
    closedir(ds);
    return rc;
}

int32_t nd__os_stat(nd_os_dir *dir, const char *name, int *not_file, int64_t *len)
{
    struct stat st;
    if (fstatat(dir->fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        int e = errno;
        return nd__fail_os(e, "stat '%s' in '%s'", name, dir->path);
    }
    /* as open_exact and the replace check in file.c refuse each kind */
    *not_file = S_ISREG(st.st_mode)   ? 0
                : S_ISDIR(st.st_mode) ? EISDIR
                : S_ISLNK(st.st_mode) ? ELOOP
                                      : EACCES;
    *len = (int64_t)st.st_size;
    return ND_OK;
}

int32_t nd__os_unlink(nd_os_dir *dir, const char *name)
{
    if (unlinkat(dir->fd, name, 0) != 0)
        return nd__fail_os(errno, "unlink '%s' in '%s'", name, dir->path);
    return ND_OK;
}

int nd__posix_rename(const nd_os_dir *dir, const char *from, const char *to)
{
    int rc;
    do
        rc = ND_FAULT(ND_FAULT_RENAME) ? -1 : renameat(dir->fd, from, dir->fd, to);
    while (rc != 0 && errno == EINTR);
    return rc == 0 ? 0 : errno;
}

int32_t nd__os_rename(nd_os_dir *dir, const char *from, const char *to)
{
    int e = nd__posix_rename(dir, from, to);
    if (e != 0)
        return nd__fail_os(e, "rename '%s' to '%s' in '%s'", from, to, dir->path);
    return ND_OK;
}

int32_t nd__os_dir_sync(nd_os_dir *dir)
{
    int32_t rc = nd__posix_full_fsync(dir->fd);
    if (rc != 0)
        return nd__fail_os(rc, "fsync '%s'", dir->path);
    return ND_OK;
}
