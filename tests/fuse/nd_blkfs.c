/*
 * nd_blkfs.c - a FUSE pass-through file system that reports a large block
 * size, for tests/fuse/run_fuse.sh.
 *
 * NFS and CephFS report st_blksize of 1-4 MiB and no STATX_DIOALIGN; so does
 * this file system (FUSE never reports STATX_DIOALIGN), with the block size
 * given on its command line. Everything else goes to a backing directory
 * unchanged, so the C suite runs in it as on any file system.
 *
 *   nd_blkfs --backing=DIR --blksize=BYTES MOUNTPOINT [fuse options]
 *
 * Test-only code: every operation is a plain *at() call on the backing
 * directory, relative to its descriptor.
 */
#define FUSE_USE_VERSION 31
#ifndef _GNU_SOURCE
#  define _GNU_SOURCE /* renameat2 flags, O_DIRECT */
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <unistd.h>

static struct {
    char *backing;
    unsigned blksize;
} opts;

static int bfd = -1; /* the backing directory */

static const struct fuse_opt option_spec[] = {
    {"--backing=%s", offsetof(__typeof__(opts), backing), 0},
    {"--blksize=%u", offsetof(__typeof__(opts), blksize), 0},
    FUSE_OPT_END,
};

/* FUSE paths start with "/": relative to the backing directory */
static const char *rel(const char *path)
{
    while (*path == '/')
        path++;
    return *path ? path : ".";
}

static int neg(int rc)
{
    return rc < 0 ? -errno : rc;
}

static void *blk_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
    (void)conn;
    cfg->use_ino = 1;
    /* no attribute or entry caching: the tests change files behind nativedir's
     * back (plain OS calls) and must see the change at once */
    cfg->entry_timeout = 0;
    cfg->attr_timeout = 0;
    cfg->negative_timeout = 0;
    return NULL;
}

static int blk_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
    int rc = fi != NULL ? fstat((int)fi->fh, st) : fstatat(bfd, rel(path), st, AT_SYMLINK_NOFOLLOW);
    if (rc != 0)
        return -errno;
    st->st_blksize = (blksize_t)opts.blksize; /* the point of this file system */
    return 0;
}

static int blk_readlink(const char *path, char *buf, size_t size)
{
    ssize_t n = readlinkat(bfd, rel(path), buf, size - 1);
    if (n < 0)
        return -errno;
    buf[n] = '\0';
    return 0;
}

static int blk_mknod(const char *path, mode_t mode, dev_t rdev)
{
    return neg(mknodat(bfd, rel(path), mode, rdev));
}

static int blk_mkdir(const char *path, mode_t mode)
{
    return neg(mkdirat(bfd, rel(path), mode));
}

static int blk_unlink(const char *path)
{
    return neg(unlinkat(bfd, rel(path), 0));
}

static int blk_rmdir(const char *path)
{
    return neg(unlinkat(bfd, rel(path), AT_REMOVEDIR));
}

static int blk_symlink(const char *target, const char *path)
{
    return neg(symlinkat(target, bfd, rel(path)));
}

static int blk_rename(const char *from, const char *to, unsigned int flags)
{
    return neg(renameat2(bfd, rel(from), bfd, rel(to), flags));
}

static int blk_link(const char *from, const char *to)
{
    return neg(linkat(bfd, rel(from), bfd, rel(to), 0));
}

static int blk_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    return neg(fi != NULL ? fchmod((int)fi->fh, mode) : fchmodat(bfd, rel(path), mode, 0));
}

static int blk_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
    return neg(fi != NULL ? fchown((int)fi->fh, uid, gid)
                          : fchownat(bfd, rel(path), uid, gid, AT_SYMLINK_NOFOLLOW));
}

static int blk_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
    if (fi != NULL)
        return neg(ftruncate((int)fi->fh, size));
    int fd = openat(bfd, rel(path), O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = neg(ftruncate(fd, size));
    close(fd);
    return rc;
}

static int blk_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
    return neg(fi != NULL ? futimens((int)fi->fh, tv)
                          : utimensat(bfd, rel(path), tv, AT_SYMLINK_NOFOLLOW));
}

/* The kernel handles O_DIRECT on the FUSE side (no page cache there); the
 * backing file is read and written plainly, so no alignment reaches it. */
static int open_flags(int flags)
{
    return (flags & ~(O_DIRECT | O_NOFOLLOW)) | O_CLOEXEC;
}

static int blk_open(const char *path, struct fuse_file_info *fi)
{
    int fd = openat(bfd, rel(path), open_flags(fi->flags));
    if (fd < 0)
        return -errno;
    fi->fh = (uint64_t)fd;
    return 0;
}

static int blk_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    int fd = openat(bfd, rel(path), open_flags(fi->flags) | O_CREAT, mode);
    if (fd < 0)
        return -errno;
    fi->fh = (uint64_t)fd;
    return 0;
}

static int blk_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
    (void)path;
    ssize_t n = pread((int)fi->fh, buf, size, off);
    return n < 0 ? -errno : (int)n;
}

static int blk_write(const char *path, const char *buf, size_t size, off_t off,
                     struct fuse_file_info *fi)
{
    (void)path;
    ssize_t n = pwrite((int)fi->fh, buf, size, off);
    return n < 0 ? -errno : (int)n;
}

static int blk_statfs(const char *path, struct statvfs *st)
{
    (void)path;
    if (fstatvfs(bfd, st) != 0)
        return -errno;
    st->f_bsize = opts.blksize;
    return 0;
}

static int blk_release(const char *path, struct fuse_file_info *fi)
{
    (void)path;
    close((int)fi->fh);
    return 0;
}

static int blk_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
    (void)path;
    return neg(datasync ? fdatasync((int)fi->fh) : fsync((int)fi->fh));
}

static int blk_opendir(const char *path, struct fuse_file_info *fi)
{
    int fd = openat(bfd, rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    DIR *d = fdopendir(fd);
    if (d == NULL) {
        int e = errno;
        close(fd);
        return -e;
    }
    fi->fh = (uint64_t)(uintptr_t)d;
    return 0;
}

static int blk_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
                       struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
    (void)path, (void)off, (void)flags;
    DIR *d = (DIR *)(uintptr_t)fi->fh;
    rewinddir(d);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        struct stat st;
        memset(&st, 0, sizeof(st));
        st.st_ino = de->d_ino;
        st.st_mode = (mode_t)(DTTOIF(de->d_type));
        if (fill(buf, de->d_name, &st, 0, 0))
            break;
    }
    return 0;
}

static int blk_releasedir(const char *path, struct fuse_file_info *fi)
{
    (void)path;
    closedir((DIR *)(uintptr_t)fi->fh);
    return 0;
}

static int blk_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi)
{
    (void)path;
    int fd = dirfd((DIR *)(uintptr_t)fi->fh);
    return neg(datasync ? fdatasync(fd) : fsync(fd));
}

static int blk_access(const char *path, int mask)
{
    return neg(faccessat(bfd, rel(path), mask, AT_SYMLINK_NOFOLLOW));
}

static int blk_fallocate(const char *path, int mode, off_t off, off_t len,
                         struct fuse_file_info *fi)
{
    (void)path;
    return neg(fallocate((int)fi->fh, mode, off, len));
}

static const struct fuse_operations ops = {
    .init = blk_init,
    .getattr = blk_getattr,
    .readlink = blk_readlink,
    .mknod = blk_mknod,
    .mkdir = blk_mkdir,
    .unlink = blk_unlink,
    .rmdir = blk_rmdir,
    .symlink = blk_symlink,
    .rename = blk_rename,
    .link = blk_link,
    .chmod = blk_chmod,
    .chown = blk_chown,
    .truncate = blk_truncate,
    .utimens = blk_utimens,
    .open = blk_open,
    .create = blk_create,
    .read = blk_read,
    .write = blk_write,
    .statfs = blk_statfs,
    .release = blk_release,
    .fsync = blk_fsync,
    .opendir = blk_opendir,
    .readdir = blk_readdir,
    .releasedir = blk_releasedir,
    .fsyncdir = blk_fsyncdir,
    .access = blk_access,
    .fallocate = blk_fallocate,
};

int main(int argc, char *argv[])
{
    struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
    if (fuse_opt_parse(&args, &opts, option_spec, NULL) != 0)
        return 1;
    if (opts.backing == NULL || opts.blksize == 0) {
        fprintf(stderr, "usage: nd_blkfs --backing=DIR --blksize=BYTES MOUNTPOINT [options]\n");
        return 1;
    }
    bfd = open(opts.backing, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (bfd < 0) {
        perror(opts.backing);
        return 1;
    }
    int rc = fuse_main(args.argc, args.argv, &ops, NULL);
    fuse_opt_free_args(&args);
    close(bfd);
    return rc;
}
