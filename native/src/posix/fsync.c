/*
 * fsync.c - the one fsync every durable call ends in, for files (file.c) and
 * directories (dir.c) alike.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "posix.h"

int nd__posix_full_fsync(int fd)
{
#if defined(__APPLE__)
    /* fsync on macOS only reaches the drive's cache; F_FULLFSYNC flushes it.
     * Some file systems (SMB, FUSE) refuse it: fall back to a barrier, then fsync. */
    if (fcntl(fd, F_FULLFSYNC) == 0)
        return 0;
#  ifdef F_BARRIERFSYNC
    if (fcntl(fd, F_BARRIERFSYNC) == 0)
        return 0;
#  endif
#endif
    int rc;
    do
        rc = ND_FAULT(ND_FAULT_FSYNC) ? -1 : fsync(fd);
    while (rc != 0 && errno == EINTR);
    return rc == 0 ? 0 : errno;
}
