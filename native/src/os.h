/*
 * os.h - the small per-OS layer under the common code.
 *
 * The common code (handles, names, buffering, cursors, CRC, errors) is written
 * once; everything that touches the OS goes through these functions, which
 * live in posix/ (Linux and macOS) and windows/. Each returns ND_OK or an
 * ND_E_* status and, on failure, has already recorded the message with
 * nd__fail_os() (internal.h) so that the thread's last error names the OS
 * call and carries its error code.
 * EINTR and short transfers are retried inside.
 */
#ifndef ND_OS_H
#define ND_OS_H

#include <stddef.h>
#include <stdint.h>

#include "nativedir.h"

/* An open file: a descriptor on POSIX, a HANDLE on Windows. */
typedef intptr_t nd_os_file;
#define ND_OS_FILE_INVALID ((nd_os_file)-1)

/* An open directory, defined per OS (a descriptor plus the path for messages
 * on POSIX; a handle and a wide path on Windows). */
typedef struct nd_os_dir nd_os_dir;

/* How nd__os_open_file opens (replacing a file is nd__os_create_aside's). */
typedef enum {
    ND_OPEN_READ = 0,      /* existing file, read-only                   */
    ND_OPEN_CREATE_NEW = 1 /* create, failing with ND_E_EXISTS           */
} nd_open_mode;

/* Access advice for nd__os_advise. */
typedef enum {
    ND_ADVICE_NORMAL = 0,
    ND_ADVICE_RANDOM = 1,
    ND_ADVICE_SEQUENTIAL = 2,
    ND_ADVICE_WILLNEED = 3,
    ND_ADVICE_DONTNEED = 4 /* drop these clean pages from the cache */
} nd_advice;

/* directories */
int32_t nd__os_dir_open(const char *path, int create, nd_os_dir **out);
void nd__os_dir_free(nd_os_dir *dir);
const char *nd__os_dir_path(const nd_os_dir *dir); /* for messages */

/* Calls `fn` once per regular file whose name is not a symlink, a directory
 * or anything else; the common code validates and sorts. Returns ND_OK or
 * the status of the enumeration, or the first non-zero `fn` result. */
typedef int32_t (*nd_os_list_fn)(void *ctx, const char *name, size_t len);
int32_t nd__os_dir_list(nd_os_dir *dir, nd_os_list_fn fn, void *ctx);

/* Stat of `name` without following a symlink: *not_file is 0 for a regular
 * file, else the OS error an open of it as a file gives (EISDIR for a
 * directory), so every call refusing it reports the same; *len its length.
 * ND_E_NOT_FOUND if missing. */
int32_t nd__os_stat(nd_os_dir *dir, const char *name, int *not_file, int64_t *len);
int32_t nd__os_unlink(nd_os_dir *dir, const char *name);
int32_t nd__os_rename(nd_os_dir *dir, const char *from, const char *to);
int32_t nd__os_dir_sync(nd_os_dir *dir);

/* Opens `name` without following symlinks, refusing anything that is not a
 * regular file. With `direct`, asks for unbuffered I/O: ND_E_NOT_SUPPORTED
 * when the file system refuses (the caller then decides on a fallback). */
int32_t nd__os_open_file(nd_os_dir *dir, const char *name, nd_open_mode mode, int direct,
                         nd_os_file *out);
void nd__os_close_file(nd_os_file f);

/* Replacing `name` (ND_IO_OVERWRITE) takes two steps, so that a failure
 * before the second leaves the old file exactly as it was. This is the first:
 * it refuses a `name` that exists and is not a regular file (as an open of it
 * would), then creates and opens a new file under a temporary name of its own
 * (written to tmp), as ND_OPEN_CREATE_NEW with `direct` would. The second is
 * nd__os_rename(dir, tmp, name): one step that readers of the old file
 * survive. Until then the caller owns the temporary and on failure closes it
 * and nd__os_unlink()s tmp. */
#define ND_OS_TMP_NAME_CAP 64
int32_t nd__os_create_aside(nd_os_dir *dir, const char *name, int direct, nd_os_file *out,
                            char tmp[ND_OS_TMP_NAME_CAP]);

/* Exclusive non-blocking lock on `name` (created if missing): ND_E_LOCKED if
 * held by any other open of it, in this process or another. *out is the
 * lock's file; closing it releases the lock. */
int32_t nd__os_lock(nd_os_dir *dir, const char *name, nd_os_file *out);

/* files; `what` names the file in messages */
int32_t nd__os_file_size(nd_os_file f, const char *what, int64_t *out);
/* Reads up to len bytes at off, retrying until len or EOF; *got = bytes read. */
int32_t nd__os_pread(nd_os_file f, const char *what, void *dst, size_t len, int64_t off,
                     size_t *got);
/* Reads what the page cache already holds of [off, off+len), never waiting
 * for the device; returns how many bytes it copied (0 where the OS cannot
 * tell without waiting, or on any error: the caller then reads the rest the
 * blocking way, which reports the error). */
size_t nd__os_pread_cached(nd_os_file f, void *dst, size_t len, int64_t off);
/* Writes all len bytes at off. */
int32_t nd__os_pwrite(nd_os_file f, const char *what, const void *src, size_t len, int64_t off);
int32_t nd__os_truncate(nd_os_file f, const char *what, int64_t len);
int32_t nd__os_fsync(nd_os_file f, const char *what); /* full durability */
/* Starts write-back of [off, off+len) without waiting (drop-behind outputs);
 * a no-op where the OS has no such call. */
void nd__os_writeback(nd_os_file f, int64_t off, int64_t len);
void nd__os_advise(nd_os_file f, int64_t off, int64_t len, nd_advice advice);

/* Overlapped writes for direct outputs: up to ND_OS_WRITER_DEPTH writes in
 * flight, done in order, while the caller fills the next buffer, so the CRC
 * and the copy overlap the device's work. ND_E_NOT_SUPPORTED from new means
 * "write synchronously". start returns at once (fewer than the depth in
 * flight on entry); a buffer must stay untouched until a wait has reaped its
 * write. wait reaps the oldest writes until at most `keep` are in flight and
 * returns the first failure among those it reaped (ND_OK when none). With two
 * in flight the next write is queued when the last one ends, so the device
 * never waits for a thread to be woken (posix/writer.c). */
#if defined(_WIN32)
#  define ND_OS_WRITER_DEPTH 2
#else
#  define ND_OS_WRITER_DEPTH 2
#endif
typedef struct nd_os_writer nd_os_writer;
int32_t nd__os_writer_new(nd_os_file f, const char *what, nd_os_writer **out);
int32_t nd__os_writer_start(nd_os_writer *w, const void *buf, size_t len, int64_t off);
int32_t nd__os_writer_wait(nd_os_writer *w, int keep);
void nd__os_writer_free(nd_os_writer *w); /* waits for the writes in flight first */

/* Turns direct I/O off on an open file (it may replace *f with a new handle
 * on the same file and close the old one): later transfers need no
 * alignment and go through the page cache. */
int32_t nd__os_file_undirect(nd_os_file *f, const char *what);

/* Alignment that direct I/O on `f` needs for offsets, lengths and buffers,
 * asked from the file system. */
uint32_t nd__os_direct_alignment(nd_os_file f);

/* Mappings (read-only). *token is OS state to pass back to unmap. */
int32_t nd__os_map(nd_os_file f, const char *what, int64_t len, void **addr, void **token);
void nd__os_unmap(void *addr, int64_t len, void *token);
/* Lets go of the file behind a mapping now, keeping [addr, addr+len) readable:
 * the pages become zero-filled, read-only private memory (nothing resident
 * until read), so a reader still holding a pointer reads zeros and never
 * faults (Windows, where a view cannot be replaced in one step: a vectored
 * exception handler covers the moment between unmapping the view and
 * reserving its addresses, and commits zero pages where they are read).
 * nd__os_unmap with the same token frees the addresses later. */
void nd__os_map_revoke(void *addr, int64_t len, void **token);
void nd__os_map_advise(void *addr, int64_t len, nd_advice advice);
void nd__os_map_populate(void *addr, int64_t len);

/* Prefetch (os prefetch.c). The page size mappings are advised in. */
int64_t nd__os_page_size(void);
/* Whether every page of [addr, addr+len) of a mapping (addr page-aligned) is
 * in memory: 1 yes, 0 no, -1 the OS cannot tell cheaply. */
int nd__os_map_resident(const void *addr, int64_t len);
/* The same for [off, off+len) of a file in the page cache. */
int nd__os_file_resident(nd_os_file f, int64_t off, int64_t len);

/* Memory (os memory.c): what the page cache the process may use is doing.
 * `refaults` counts file pages read back in soon after they were evicted
 * (workingset refaults) and `major_faults` mapped pages faulted in from the
 * device, both since boot, of the process's memory cgroup (Linux, v1 or v2)
 * or, outside one, of the machine; `used` and `limit` are the memory in use
 * (the page cache counted) and what the process may use: its cgroup's limit,
 * or the machine's memory where it has none (in use there: all but what is
 * free), and `cache_bytes` the page cache within `used`. Memory well below
 * `limit` is under no pressure, whatever was evicted before. `limit` is -1
 * where not even the machine's is known. ND_E_NOT_SUPPORTED where the OS
 * tells none of it. */
typedef struct {
    uint64_t refaults, major_faults;
    uint64_t cache_bytes;
    int64_t used, limit;
} nd_os_memory;
int32_t nd__os_memory(nd_os_memory *out);
/* A monotonic clock in nanoseconds that costs next to nothing to read (a
 * coarse one where the OS has it: a few milliseconds of resolution). */
int64_t nd__os_clock_ns(void);

/* Where the size and alignment of buffered writes decide how fast a fresh
 * mapping of the file faults in: Linux's page cache makes its folios as large
 * as each write allows (up to 2 MiB, mapped by one PMD on 4 KiB-page x86-64 and
 * arm64; on file systems with large folios: ext4 from 6.16, XFS, tmpfs with
 * huge=), and a small write leaves small folios that a mapping faults in a
 * few pages at a time. Buffered outputs past this size write in pieces of it,
 * aligned to it (output.c). 0: no OS benefit, outputs keep small buffers. */
#if defined(__linux__)
#  define ND_OS_LARGE_WRITE (2u << 20)
#else
#  define ND_OS_LARGE_WRITE 0u
#endif

/* Aligned memory for direct I/O buffers. */
void *nd__os_aligned_alloc(size_t align, size_t size);
void nd__os_aligned_free(void *p);

/* Threads' locks: a plain mutex. */
typedef struct nd_mutex nd_mutex;
nd_mutex *nd__mutex_new(void);
void nd__mutex_free(nd_mutex *m);
void nd__mutex_lock(nd_mutex *m);
void nd__mutex_unlock(nd_mutex *m);
/* The mutex in *slot, made by the first caller (mutex.c); NULL without memory. */
nd_mutex *nd__mutex_once(nd_mutex *_Atomic *slot);

#endif /* ND_OS_H */
