/*
 * crashlog.h - the operation log of the crash-model file system.
 *
 * crashfs (crashfs.c) appends one record per operation that changed what a
 * power cut could leave behind, in the order it answered them, before it
 * answers; model.c reads the log back and rebuilds what would persist if the
 * power went at any point of it. Both sides share this layout; the log is
 * read on the machine that wrote it (host byte order).
 *
 * A log starts with the 8 bytes CL_MAGIC, then records back to back: a
 * cl_rec, then name1_len bytes of the first name, name2_len bytes of the
 * second, then len bytes of payload. Inode 1 is the root directory; inode
 * numbers are never reused within one log.
 */
#ifndef ND_CRASHLOG_H
#define ND_CRASHLOG_H

#include <stdint.h>

#define CL_MAGIC "NDCRASH1"
#define CL_ROOT 1u
/* The hidden file in the root that takes marks: each write() to it is one
 * CL_MARK record (its bytes, not stored as file data); readdir never lists it. */
#define CL_MARK_NAME ".crashfs-mark"

enum cl_type {
    CL_CREATE = 1,   /* a = parent, b = new inode, flags = CL_KIND_*, name1; payload: link target */
    CL_LINK = 2,     /* a = inode, b = new parent, name1 = new name */
    CL_UNLINK = 3,   /* a = parent, name1 (files and empty directories alike) */
    CL_RENAME = 4,   /* a = parent, b = new parent, flags = renameat2 flags, name1 -> name2 */
    CL_WRITE = 5,    /* a = inode, b = offset, payload = the bytes */
    CL_TRUNCATE = 6, /* a = inode, b = new size (a shrink or an extension with zeros) */
    CL_FSYNC = 7,    /* a = inode, flags = 1 for fdatasync */
    CL_FSYNCDIR = 8, /* a = directory inode, flags = 1 for fdatasync */
    CL_MARK = 9,     /* payload = the text a test wrote to CL_MARK_NAME */
};

enum cl_kind { CL_KIND_FILE = 1, CL_KIND_DIR = 2, CL_KIND_SYMLINK = 3, CL_KIND_OTHER = 4 };

typedef struct {
    uint32_t type;
    uint32_t flags;
    uint64_t a, b;
    uint64_t len;       /* payload bytes */
    uint32_t name1_len; /* bytes, no terminator */
    uint32_t name2_len;
} cl_rec;

#endif /* ND_CRASHLOG_H */
