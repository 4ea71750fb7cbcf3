/*
 * noop_sync.c - an LD_PRELOAD shim for the negative controls: with
 * ND_CRASH_NOOP=dir, fsync and fdatasync of a directory return success
 * without doing anything (but those of the directory ND_CRASH_NOOP_KEEP
 * names, if set: the mount's root, so that the directories a run creates in
 * it stay durable and the checks see what the no-op lost inside them); with
 * ND_CRASH_NOOP=file, those of a regular file.
 * A run recorded under it must fail the crash sweeps' contract checks: a
 * check that still passes could not see the sync it claims to need.
 *
 * Test-only code: it is loaded into the recorders of the controls, never
 * linked into anything shipped.
 */
#ifndef _GNU_SOURCE
#  define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int skipped(int fd)
{
    const char *what = getenv("ND_CRASH_NOOP");
    struct stat st;
    if (what == NULL || fstat(fd, &st) != 0)
        return 0;
    if (strcmp(what, "dir") == 0) {
        const char *keep = getenv("ND_CRASH_NOOP_KEEP");
        struct stat k;
        if (S_ISDIR(st.st_mode) && keep != NULL && stat(keep, &k) == 0 && k.st_dev == st.st_dev &&
            k.st_ino == st.st_ino)
            return 0;
        return S_ISDIR(st.st_mode);
    }
    if (strcmp(what, "file") == 0)
        return S_ISREG(st.st_mode);
    return 0;
}

int fsync(int fd)
{
    if (skipped(fd))
        return 0;
    return (int)syscall(SYS_fsync, fd);
}

int fdatasync(int fd)
{
    if (skipped(fd))
        return 0;
    return (int)syscall(SYS_fdatasync, fd);
}
