/*
 * fault.h - fault injection points (a build option, off in release builds).
 *
 * With ND_FAULT_INJECTION defined, ND_FAULT(point) asks fault.c whether this
 * call of `point` should fail; if so errno is set and the OS call is skipped.
 * Without it, ND_FAULT(point) is the constant 0 and costs nothing, and the
 * control functions below do not exist: only the test variant of the library
 * (tests/reliability) compiles fault.c.
 */
#ifndef ND_FAULT_H
#define ND_FAULT_H

#include <stdint.h>

typedef enum {
    ND_FAULT_OPEN = 0,
    ND_FAULT_READ = 1,  /* pread/read */
    ND_FAULT_WRITE = 2, /* pwrite/write */
    ND_FAULT_FSYNC = 3,
    ND_FAULT_RENAME = 4,
    ND_FAULT_ALLOC = 5,    /* malloc/calloc/realloc/strdup and aligned buffers: NULL */
    ND_FAULT_HANDLE = 6,   /* a handle-table slot: the table is full */
    ND_FAULT_THREAD = 7,   /* creating a ring's worker thread */
    ND_FAULT_REGISTER = 8, /* io_uring_register of a ring's files: it falls back to plain fds */
    ND_FAULT_SUBMIT = 9,   /* io_uring_submit of a ring's reads: the reads it carried fail */
    ND_FAULT_POINTS = 10
} nd_fault_point;
/* The points above that stand for I/O system calls (the others are resources). */
#define ND_FAULT_IO_POINTS 5

/* What an armed point does to the calls it hits. */
enum {
    ND_FAULT_MODE_FAIL = 1, /* the call fails with the armed errno */
    ND_FAULT_MODE_SHORT = 2 /* a transfer moves only part of what it was asked */
};

#ifdef ND_FAULT_INJECTION
/* 1: fail this call (errno set); 2: make this transfer short (half); 0: go on. */
int nd__fault_hit(nd_fault_point point);
#  define ND_FAULT_CHECK(p) nd__fault_hit(p)

/*
 * Control, for tests. Calls are counted per point from the moment it is
 * armed: `nth` = 1 is the very next call. Arming replaces what the point had.
 * Arm a point while no other thread is inside the library's I/O on it; hits
 * themselves are atomic and may come from any thread.
 */
/* The nth call from now fails with `err` (or, with ND_FAULT_MODE_SHORT, is short). */
void nd__fault_set(nd_fault_point point, long nth, int err, int mode);
/* Calls nth .. nth+times-1 are hit; times < 0: every call from the nth on. */
void nd__fault_set_times(nd_fault_point point, long nth, long times, int err, int mode);
/* Disarms every point and zeroes the per-arming counters (not the totals). */
void nd__fault_clear(void);
/* Calls of `point` seen since it was last armed or cleared. */
long nd__fault_calls(nd_fault_point point);
/* Faults injected at `point` since it was last armed or cleared. */
long nd__fault_injected(nd_fault_point point);
/* Faults injected at every point since the process started (for reports). */
long nd__fault_injected_total(void);
/* "open", "read", ... for messages; "?" for anything else. */
const char *nd__fault_point_name(nd_fault_point point);

/*
 * Direct-I/O alignment, for tests/test_align.c. Set before opening: a handle
 * keeps the alignment it was opened with. 0 turns a hook off.
 * set_alignment: nd__os_direct_alignment returns `align` without asking
 * the file system (every buffer must follow whatever it says).
 * set_blksize: nd__os_direct_alignment acts as on a file system that does
 * not report STATX_DIOALIGN (NFS, CephFS, FUSE, kernels before 6.1) and
 * reports st_blksize = `blksize` (its own rule for that case is tested).
 */
void nd__fault_set_alignment(uint32_t align);
void nd__fault_set_blksize(uint32_t blksize);
uint32_t nd__fault_alignment(void);
uint32_t nd__fault_blksize(void);
#  define ND_FAULT_ALIGNMENT() nd__fault_alignment()
#  define ND_FAULT_BLKSIZE() nd__fault_blksize()
/*
 * A pause, not a fault, for tests/test_ring_files.c: the io_uring submitter
 * sleeps `us` microseconds after each batch it sent, once it holds no lock,
 * so that callers reaping that batch always overtake whatever it still does
 * (nothing it does then may matter to them). 0 turns it off.
 */
void nd__fault_set_submit_pause(uint32_t us);
uint32_t nd__fault_submit_pause(void);
#  define ND_FAULT_SUBMIT_PAUSE() nd__fault_submit_pause()
/*
 * The fault build routes the library's own allocations through the
 * switchboard, so that a sweep can fail each one in turn (ND_FAULT_ALLOC).
 * internal.h maps the C library's names onto these (fault build only); the
 * C library's headers are included here first so that their declarations
 * keep their own names.
 */
#  include <stdlib.h>
#  include <string.h>
void *nd__fault_malloc(size_t n);
void *nd__fault_calloc(size_t n, size_t size);
void *nd__fault_realloc(void *p, size_t n);
char *nd__fault_strdup(const char *s);
#else
#  define ND_FAULT_CHECK(p) 0
#  define ND_FAULT_ALIGNMENT() 0u
#  define ND_FAULT_BLKSIZE() 0u
#  define ND_FAULT_SUBMIT_PAUSE() 0u
#endif
/* for calls that can only fail, not fall short */
#define ND_FAULT(p) (ND_FAULT_CHECK(p) == 1)

#endif /* ND_FAULT_H */
