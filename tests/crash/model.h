/*
 * model.h - what a power cut leaves of a recorded run on the crash-model file
 * system (crashfs.c), under the strictest persistence POSIX allows.
 *
 * The rules (those of ALICE and CrashMonkey's "any state a POSIX file system
 * may legally be in after a crash", with nothing reordered ahead of a sync):
 *   - a file's bytes and size are durable as of its last fsync/fdatasync
 *     (through any descriptor); every write, truncate or extension since is
 *     volatile;
 *   - a directory's entries (name -> inode) are durable as of its last fsync;
 *     a create, link, unlink or rename in it since is volatile, so a file that
 *     was fsynced in a directory that was not may vanish, and a rename over an
 *     old file that the directory's fsync did not follow leaves the old name
 *     with the old file;
 *   - an fsync of a file persists nothing of any directory, and an fsync of a
 *     directory persists nothing of the files' bytes (a new file that only its
 *     directory's fsync covered comes back empty);
 *   - at a cut everything volatile is lost, and optionally the last unsynced
 *     write of a file that the cut state still names is torn: a prefix of it
 *     ending on a 512-byte boundary of the file persisted, the rest did not.
 * Names and inodes are modelled apart (hard links, a replaced file still
 * open, rename and exchange move names, never bytes).
 *
 * CM_JOURNALED is a second, weaker-than-POSIX model of what journaling file
 * systems (ext4, XFS) do in practice: every fsync or fdatasync of anything
 * also commits every directory change made so far, in every directory. A
 * program that is correct under CM_STRICT is correct under it too; one that
 * never fsyncs its directory may survive it and not CM_STRICT.
 */
#ifndef ND_CRASH_MODEL_H
#define ND_CRASH_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "crashlog.h"

typedef struct {
    uint32_t type, flags;
    uint64_t a, b;
    const char *name1, *name2; /* NUL-terminated; "" when absent */
    const uint8_t *data;       /* payload (a write's bytes, a mark's text) */
    uint64_t len;
} cm_op;

typedef struct cm_log cm_log;

/* A log written by crashfs; NULL with a reason in err when unreadable or malformed. */
cm_log *cm_log_load(const char *path, char *err, size_t errcap);
/* An empty log to build by hand (the model's unit tests). */
cm_log *cm_log_new(void);
void cm_log_add(cm_log *log, uint32_t type, uint32_t flags, uint64_t a, uint64_t b,
                const char *name1, const char *name2, const void *data, size_t len);
size_t cm_log_count(const cm_log *log);
const cm_op *cm_log_op(const cm_log *log, size_t i);
void cm_log_free(cm_log *log);

enum { CM_STRICT = 0, CM_JOURNALED = 1 };

typedef struct cm_model cm_model;

cm_model *cm_model_new(int mode);
void cm_model_free(cm_model *m);
/* Applies one logged operation: 0, or -1 with a reason (cm_model_error) when
 * the log is inconsistent (an unknown inode, a missing name). */
int cm_apply(cm_model *m, const cm_op *op);
const char *cm_model_error(const cm_model *m);
/* 1 if a cut right after this operation can leave a state the cut before it
 * could not (everything but marks). */
int cm_op_is_cut_point(const cm_op *op);

/*
 * The state a cut right now would leave: the durable namespace and bytes, and
 * optionally one file's last unsynced write torn at torn_end (a 512-byte
 * boundary strictly inside that write, from cm_torn_points). Views read the
 * model as it is; they are invalid once the model moves on.
 */
typedef struct {
    cm_model *m;
    uint64_t torn_ino; /* 0: nothing torn */
    uint64_t torn_end;
} cm_view;

/* The inode `name` in directory `dir` names in the view, 0 if none. */
uint64_t cm_view_lookup(const cm_view *v, uint64_t dir, const char *name);
/* A path from the root ("a/b"; "" is the root) in the view, 0 if absent. */
uint64_t cm_view_resolve(const cm_view *v, const char *path);
/* The i-th entry of directory `dir` in the view (unsorted): its name, or NULL past the end. */
const char *cm_view_entry(const cm_view *v, uint64_t dir, size_t i, uint64_t *ino);
/* CL_KIND_* of an inode, 0 if unknown. */
int cm_kind(const cm_model *m, uint64_t ino);
/* A file's bytes in the view (valid until the next call on this model). */
const uint8_t *cm_view_data(const cm_view *v, uint64_t ino, size_t *len);
/* Writes the view's tree under directory `dir` into `path` (created; must not exist):
 * files with their bytes, directories, symlinks. 0 or -1 with errno. */
int cm_view_write_tree(const cm_view *v, uint64_t dir, const char *path);

/* The live (not durable) state, as the running program saw it. */
uint64_t cm_live_lookup(const cm_model *m, uint64_t dir, const char *name);
uint64_t cm_live_resolve(const cm_model *m, const char *path);
const char *cm_live_entry(const cm_model *m, uint64_t dir, size_t i, uint64_t *ino);
const uint8_t *cm_live_data(const cm_model *m, uint64_t ino, size_t *len);

/*
 * The torn variants a cut now has: for every file the durable namespace still
 * names whose last change since its last fsync is a write spanning a 512-byte
 * boundary, the first and the last such boundary inside that write and the
 * one nearest below its middle (fewer where they coincide). Fills up to cap
 * (ino, end) pairs; returns how many exist.
 */
size_t cm_torn_points(cm_model *m, uint64_t *inos, uint64_t *ends, size_t cap);

#endif /* ND_CRASH_MODEL_H */
