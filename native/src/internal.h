/*
 * internal.h - what the common code shares: errors, handles, names, objects.
 */
#ifndef ND_INTERNAL_H
#define ND_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "fault.h"
#include "nativedir.h"
#include "os.h"

#ifdef ND_FAULT_INJECTION
/* the test variant: every allocation of the library can be made to fail (fault.h) */
#  define malloc(n) nd__fault_malloc(n)
#  define calloc(n, size) nd__fault_calloc(n, size)
#  define realloc(p, n) nd__fault_realloc(p, n)
#  define strdup(s) nd__fault_strdup(s)
#endif

#if defined(__GNUC__) || defined(__clang__)
#  define ND_LIKELY(x) __builtin_expect(!!(x), 1)
#  define ND_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* The per-read path. The linker puts .text.hot together, so one read touches
 * one or two pages of the library's code instead of five: where the kernel
 * flushes the TLB on every system call (page-table isolation without PCID,
 * common on VMs) each page is a TLB miss per read, ~100 ns in all. */
#  define ND_HOT __attribute__((hot))
#  if defined(__MINGW32__) &&                                                                      \
      !defined(__clang__) /* gcc's "printf" there is msvcrt's, without %zu */
#    define ND_PRINTF(a, b) __attribute__((format(gnu_printf, a, b)))
#  else
#    define ND_PRINTF(a, b) __attribute__((format(printf, a, b)))
#  endif
#else
#  define ND_LIKELY(x) (x)
#  define ND_UNLIKELY(x) (x)
#  define ND_HOT
#  define ND_PRINTF(a, b)
#endif

/* ---- errors (error.c) ---------------------------------------------------- */

/* Records a failure of `status` with a formatted message and no OS error;
 * returns `status` so callers can `return nd__fail(...)`. */
int32_t nd__fail(int32_t status, const char *fmt, ...) ND_PRINTF(2, 3);
/* Records an OS failure: the status is mapped from `os_error` (errno or
 * GetLastError()) and the OS's own text is appended to the message. */
int32_t nd__fail_os(int os_error, const char *fmt, ...) ND_PRINTF(2, 3);
/* The one place an API call's name enters a message: every exported function
 * is a shell `return nd__in_call("nd_x", x_impl(...))`, and on failure this
 * prefixes "nd_x: " to the thread's message. Everything below (handle table,
 * name checks, the OS layer) describes the operation and the file only, and an
 * exported function never calls another one (it calls the _impl), so every
 * message names exactly one call. Returns `status` unchanged; for ND_OK or
 * positive results it does nothing (inline, so the read paths pay one
 * predicted branch). */
int64_t nd__in_call_failed(const char *call, int64_t status);
static inline int64_t nd__in_call(const char *call, int64_t status)
{
    return ND_LIKELY(status >= 0) ? status : nd__in_call_failed(call, status);
}
/* Re-records this thread's last failure with a new lead-in ("lead-in: old
 * message"), keeping its OS error; returns `status`. */
int32_t nd__fail_again(int32_t status, const char *fmt, ...) ND_PRINTF(2, 3);
/* The thread's last failure, kept across a step whose own failure the call
 * recovers from and the caller never sees (a file that vanished while a
 * directory was measured): nd_last_error_message() describes the last call
 * that failed, not a step of one that did not. */
typedef struct {
    char message[1024];
    int os_error, has_error;
} nd_error_state;
void nd__error_save(nd_error_state *s);
void nd__error_restore(const nd_error_state *s);
/* The status an OS error maps to. */
int32_t nd__status_from_os(int os_error);
/* Text for an OS error (strerror / FormatMessage) into buf. */
void nd__os_error_text(int os_error, char *buf, size_t cap);

/* ---- names (name.c) ------------------------------------------------------- */

/* ND_OK if `name` is one valid path component, else ND_E_INVALID_NAME (or
 * ND_E_INVALID_ARGUMENT for NULL) with the reason recorded. */
int32_t nd__check_name(const char *name);
/* Same test without recording anything (for listings). */
int nd__name_ok(const char *name, size_t len);

/* ---- handles (handle.c) ---------------------------------------------------- */

typedef enum {
    ND_KIND_DIR = 1,
    ND_KIND_INPUT = 2,
    ND_KIND_OUTPUT = 3,
    ND_KIND_LOCK = 4,
    ND_KIND_RING = 5
} nd_kind;

/* Each kind's object starts with this header. `close` runs once, when the
 * handle is closed (its result is nd_close's); `destroy` runs when the last
 * user releases it, possibly on another thread. `pinned_only` (may be NULL)
 * runs at most once, on any thread, when the handle is closed and its pin is
 * all that holds the object: no call is using it and none can start (only
 * nd__handle_get_closed finds it now), so it may let go of whatever the pin
 * does not need; `destroy` still follows. */
typedef struct nd_object nd_object;
typedef struct {
    int32_t (*close)(nd_object *obj);
    void (*destroy)(nd_object *obj);
    void (*pinned_only)(nd_object *obj);
} nd_object_ops;

struct nd_object {
    const nd_object_ops *ops;
};

/* Registers obj under a new handle of `kind`. On failure the caller still
 * owns obj. */
int32_t nd__handle_new(nd_kind kind, nd_object *obj, nd_handle *out);
/* nd__handle_new in two steps, for a caller with a step of its own that must
 * come last (a replacing create's rename): reserve takes a slot (the only
 * part that can fail; lookups cannot see it yet), then either publish, which
 * cannot fail, or unreserve gives the slot back. */
int32_t nd__handle_reserve(uint32_t *out_index);
nd_handle nd__handle_publish(uint32_t index, nd_kind kind, nd_object *obj);
void nd__handle_unreserve(uint32_t index);
/* Takes a reference on the live object behind `h` if it is of `kind`;
 * ND_E_BAD_HANDLE (recorded) otherwise. */
int32_t nd__handle_get(nd_handle h, nd_kind kind, nd_object **out);
/* nd__handle_get that also finds a handle already closed while its object
 * still lives (held by a window pin); records nothing on a miss. Whoever
 * finds an object this way must not use what ops->pinned_only let go of. */
int32_t nd__handle_get_closed(nd_handle h, nd_kind kind, nd_object **out);
/* Drops a reference taken by nd__handle_get. */
void nd__handle_put(nd_handle h);
/* Keeps the caller's reference (from nd__handle_get) as the handle's pin, or,
 * when the handle has a pin already, drops it: at most one pin per handle. */
void nd__handle_pin(nd_handle h);
/* Drops the handle's pin, if it has one (1; else 0). The caller holds a
 * reference of its own (nd__handle_get or nd__handle_get_closed). */
int nd__handle_unpin(nd_handle h);

/* ---- memory (memory.c) ------------------------------------------------------- */

/* 1 while mapped inputs should be read with positional reads (the page cache
 * thrashes, or nd_memory_mode says so), else 0. Costs a clock read and a load;
 * samples the OS's statistics at most every 250 ms. */
int nd__memory_tight(void);
/* !nd__memory_tight(), for a read about to go through a mapping: also notes
 * that mappings are being read (whether a thrashing cache is theirs). */
int nd__memory_maps(void);
/* 1 while the memory the process uses is well below what it may use (its
 * limit, or the machine's) as last sampled, or has no limit, whatever
 * nd_memory_mode says; else 0. */
int nd__memory_roomy(void);
/* The most page cache the process may hold now: its limit (its memory
 * cgroup's, else the machine's) less the memory it uses for anything else; -1
 * where no limit is known (a cgroup without one). Reads the OS's figures
 * afresh, and brings a mapping that thrashed back if the room has grown enough
 * since (nd__memory_tight then says 0). */
int64_t nd__memory_room(void);

/* ---- large I/O buffers (buffers.c) ---------------------------------------------- */

/* An aligned buffer of `size` bytes, one a closed output left behind when one
 * fits (already mapped: no page faults), else a new one; NULL if out of memory. */
void *nd__buffer_take(size_t align, size_t size);
/* Gives back a buffer from nd__buffer_take (or nd__os_aligned_alloc) of `size`
 * bytes aligned to `align`: kept for the next output, or freed. NULL: nothing. */
void nd__buffer_give(void *p, size_t align, size_t size);
/* How many buffers of at least ND_BUFFERS_CACHE_MIN bytes are kept: a direct
 * output's three and a buffered one's 256 KiB-2 MiB steps; when full, the one
 * given back longest ago is freed. */
#define ND_BUFFERS_CACHED 6
#define ND_BUFFERS_CACHE_MIN ((size_t)256 << 10) /* smaller ones come from the C library's heap */

/* A cache line: 64 bytes on x86-64 and the arm64 cores the library ships for. */
#define ND_CACHE_LINE 64
/* A zeroed block of `size` bytes rounded up to whole cache lines, starting on
 * one (free it with nd__os_aligned_free); NULL if out of memory. For what one
 * thread writes on every call while other threads write their own copies (a
 * handle's slot, a clone's cursor): from malloc, 16-byte aligned, two clones'
 * cursors shared a line, and two threads reading through their own clones
 * took turns owning it (ConcurrentCloneReads, docs/design.md). */
void *nd__buffer_lines(size_t size);

/* ---- objects ------------------------------------------------------------------ */

typedef struct {
    nd_object base;
    nd_os_dir *os;
    /* fits.c: whether the directory's files fit the page cache the process may
     * use, as found at fits_at (0: never asked) */
    _Atomic int64_t fits_at;
    _Atomic int32_t fits;
} nd_dir;

/* fits.c: 1 if the files of `d` that searches read again (all but those
 * nd__policy_read_per_use names), together, take at most half the page cache
 * the process may use now (nd__memory_room), else 0; found afresh at most once
 * a second per directory (a listing and a stat of each file). */
int nd__dir_fits(nd_dir *d);

/* policy.c: 1 if a search reads `name` a block per use (nd_policy_input gives
 * it ND_IO_NOREUSE: stored fields, term vectors), else 0. */
int nd__policy_read_per_use(const char *name);

typedef struct {
    nd_object base;
    nd_os_file file;
} nd_lock_obj;

/* dir.c: nd__handle_get for a directory */
int32_t nd__dir_get(nd_handle h, nd_dir **out);

/* input.c, for rings: checks [off, off+len) of input `h` for
 * nd_ring_submit_read and takes a reference on it (the caller drops it with
 * nd__handle_put(h) when the read is over). Where the read can go to the OS
 * asynchronously, sets *fd and *file_off; otherwise (a mapping, an unaligned
 * direct read) does it now, sets *fd to ND_OS_FILE_INVALID and *result to its
 * outcome. *file is the open file behind the input (file.h), which io_uring
 * rings register. */
int32_t nd__input_begin_async(nd_handle h, int64_t off, void *dst, int64_t len, nd_os_file *fd,
                              int64_t *file_off, int64_t *result, void **file);

/* input.c, for prefetch.c: what prefetch and advice need of input `h`, with a
 * reference taken (drop it with nd__handle_put(h)). `hits` is the file's
 * prefetch back-off counter, shared by its clones and slices. */
typedef struct {
    int strategy;          /* ND_STRATEGY_* */
    nd_os_file fd;         /* ND_OS_FILE_INVALID for a mapping */
    uint8_t *map;          /* the whole file's mapping, or NULL */
    int64_t start, length; /* the input's range, in file offsets */
    _Atomic uint32_t *hits;
    int noreuse; /* opened ND_IO_NOREUSE */
} nd_input_view;
/* ...after the same range check every read of [off, off+len) gets (0, 0: none) */
int32_t nd__input_view(nd_handle h, int64_t off, int64_t len, nd_input_view *out);

#endif /* ND_INTERNAL_H */
