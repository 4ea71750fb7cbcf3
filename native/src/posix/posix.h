/*
 * posix.h - what the POSIX files share.
 */
#ifndef ND_POSIX_H
#define ND_POSIX_H

#include "../fault.h"
#include "../os.h"

/* dir.c: the directory's descriptor, for the *at() calls of file.c. */
int nd__posix_dir_fd(const nd_os_dir *dir);
/* dir.c: renameat within the directory, retried on EINTR (FUSE and NFS can be
 * interrupted) with the rename fault point inside the loop; 0 or an errno. */
int nd__posix_rename(const nd_os_dir *dir, const char *from, const char *to);
/* fsync.c: fsync with the strongest durability the OS offers (F_FULLFSYNC on
 * macOS); returns 0 or an errno. */
int nd__posix_full_fsync(int fd);

#endif /* ND_POSIX_H */
