/*
 * nativedir.h - the whole public ABI of nativedir.
 *
 * nativedir is the file I/O a search engine's Directory layer needs, behind a
 * flat C ABI that managed runtimes can bind without hand-written declarations.
 *
 * ABI rules this header keeps (so that SWIG, cffi and P/Invoke can bind it):
 *   - no inline functions, no macros that must be called, no structs passed by
 *     value; only fixed-width integers, `const char *` (UTF-8) and `void *`;
 *   - every function returns a status (0 or a negative ND_E_* code) or a
 *     non-negative result with a negative ND_E_* code on failure;
 *   - after a failure, nd_last_error_message() and nd_last_os_error() describe
 *     it on the calling thread until that thread's next failure.
 *
 * Handles: every object (directory, input, output, lock) is an nd_handle, an
 * integer that carries the object's kind and a generation. 0 is never valid. A
 * closed, stale, forged or wrong-kind handle gets ND_E_BAD_HANDLE, never a
 * crash. Closing a handle while another thread uses it is memory-safe: the
 * object lives until the last call using it returns.
 */
#ifndef NATIVEDIR_H
#define NATIVEDIR_H

#include <stdint.h>

#if defined(_WIN32)
#  if defined(ND_BUILDING_SHARED)
#    define ND_EXTERN __declspec(dllexport)
#  elif defined(ND_STATIC)
#    define ND_EXTERN /* static library */
#  else
#    define ND_EXTERN __declspec(dllimport)
#  endif
#elif defined(ND_STATIC)
#  define ND_EXTERN /* linked into another library: stays hidden inside it */
#elif defined(__GNUC__) || defined(__clang__)
#  define ND_EXTERN __attribute__((visibility("default")))
#else
#  define ND_EXTERN
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Every handle: directory, input, output, lock. 0 is never valid. */
typedef int64_t nd_handle;

/** The ABI this header describes. Bumped only by an incompatible change. */
#define ND_ABI_VERSION 1

/*
 * Symbol versions. Every function below belongs to the version node named by
 * the last "ND_NODE" marker above it; the build reads these markers to write
 * the linker's version script, and check_exports verifies each symbol's node.
 *   ND_1            what 0.1 shipped: frozen, never changed or removed.
 *   ND_1.1          stable additions since (inherit ND_1).
 *   ND_EXPERIMENTAL calls that may still change: rings, nd_read_cached and new
 *                   calls until two bindings use them and they are measured.
 *                   Binding them is allowed; relying on their exact shape
 *                   across minor versions is not. CHANGELOG.md lists each
 *                   node's calls per release.
 */

/* ND_NODE ND_1 */

/** The ABI version the loaded library implements (compare to ND_ABI_VERSION). */
ND_EXTERN int32_t nd_abi_version(void);

/** The library's version, "MAJOR.MINOR.PATCH"; never NULL. */
ND_EXTERN const char *nd_version(void);

/* ------------------------------------------------------------------------ */
/* Status codes: 0 or negative. The values are frozen forever.               */
/* ------------------------------------------------------------------------ */
enum {
    ND_OK = 0,
    ND_E_INVALID_ARGUMENT = -1, /* NULL pointer, negative length, unknown flag   */
    ND_E_BAD_HANDLE = -2,       /* closed, stale, forged or wrong-kind handle    */
    ND_E_NOT_FOUND = -3,        /* no such file or directory                     */
    ND_E_EXISTS = -4,           /* the file exists (create without OVERWRITE)    */
    ND_E_ACCESS = -5,           /* permission denied, symlink or not a file      */
    ND_E_INVALID_NAME = -6,     /* not exactly one valid path component          */
    ND_E_EOF = -7,              /* the range ends past the end of the input      */
    ND_E_NO_SPACE = -8,         /* the device or quota is full                   */
    ND_E_IO = -9,               /* any other I/O failure                         */
    ND_E_NOT_SUPPORTED = -10,   /* e.g. ND_IO_REQUIRE_DIRECT where it is refused */
    ND_E_LOCKED = -11,          /* the lock is held by another handle or process */
    ND_E_NO_MEMORY = -12,       /* an allocation or a mapping failed             */
    ND_E_TOO_MANY_OPEN = -13,   /* the process or system is out of descriptors   */
    ND_E_BUSY = -14             /* a ring is full: reap completions first        */
};

/** The code's name, e.g. "ND_E_NOT_FOUND"; "ND_E_UNKNOWN" for others; never NULL. */
ND_EXTERN const char *nd_status_name(int32_t status);

/**
 * This thread's last failure: the call, the file and the OS's reason, e.g.
 * "nd_open_input: openat '_0.cfs' in '/idx': No such file or directory".
 * "no error" when the thread has had none. Never NULL; valid until the
 * thread's next failing call.
 */
ND_EXTERN const char *nd_last_error_message(void);

/** errno (POSIX) or GetLastError() (Windows) of this thread's last failure, 0 if none. */
ND_EXTERN int32_t nd_last_os_error(void);

/* ------------------------------------------------------------------------ */
/* Directories. A name is one path component: "", ".", "..", anything with  */
/* '/' or '\\', over 255 bytes or invalid UTF-8 gets ND_E_INVALID_NAME (and   */
/* on Windows also ':', reserved device names, trailing dots and spaces).    */
/* Over 255 bytes also leaves the OS's own error for it in nd_last_os_error  */
/* (ENAMETOOLONG; ERROR_FILENAME_EXCED_RANGE on Windows); the others none.   */
/* Symbolic links inside the directory are never followed.                   */
/* ------------------------------------------------------------------------ */

/** nd_open_dir: create the directory (and its parents) when missing. */
#define ND_DIR_CREATE 1u

/**
 * Opens the directory at `path` (any path, UTF-8). Every later call names
 * files relative to this open directory, so renaming or replacing the
 * directory's path afterwards does not redirect them.
 */
ND_EXTERN int32_t nd_open_dir(const char *path, uint32_t flags, nd_handle *out_dir);

/**
 * Lists the regular files of the directory, sorted by byte order, each name
 * NUL-terminated, back to back in `buf`. Returns the bytes needed for all of
 * them; writes nothing when `cap` is smaller (call again with a bigger
 * buffer). Symbolic links, subdirectories and names the library would refuse
 * are left out. `buf` may be NULL when `cap` is 0.
 */
ND_EXTERN int64_t nd_list(nd_handle dir, char *buf, int64_t cap);

/** 1 if `name` is a regular file (a symlink is not), 0 if not, < 0 on error. */
ND_EXTERN int32_t nd_file_exists(nd_handle dir, const char *name);

/** The length in bytes of the regular file `name`. */
ND_EXTERN int32_t nd_file_length(nd_handle dir, const char *name, int64_t *out_len);

/** Deletes `name` (a symlink is removed itself, never its target). */
ND_EXTERN int32_t nd_delete_file(nd_handle dir, const char *name);

/** Renames `from` to `to` within the directory, atomically replacing `to`. */
ND_EXTERN int32_t nd_rename(nd_handle dir, const char *from, const char *to);

/**
 * Makes the file's bytes durable before returning (F_FULLFSYNC on macOS,
 * FlushFileBuffers on Windows). Prefer nd_output_sync through the writing
 * handle: it also covers bytes still buffered in the output.
 */
ND_EXTERN int32_t nd_fsync(nd_handle dir, const char *name);

/** Makes creates, renames and deletes in the directory durable. */
ND_EXTERN int32_t nd_sync_dir(nd_handle dir);

/**
 * Takes an exclusive, non-blocking lock named `name` (the file is created if
 * missing and left in place). Two handles exclude each other whether they are
 * in one process or two. ND_E_LOCKED if held. nd_close releases it.
 */
ND_EXTERN int32_t nd_lock(nd_handle dir, const char *name, nd_handle *out_lock);

/* ------------------------------------------------------------------------ */
/* Flags for inputs and outputs.                                             */
/* ------------------------------------------------------------------------ */
#define ND_IO_RANDOM 1u     /* access advice: random                              */
#define ND_IO_SEQUENTIAL 2u /* access advice: sequential                          */
#define ND_IO_MERGE                                                                                \
  4u                             /* read/written once, in bulk: direct I/O where the
                                    file system allows it, otherwise buffered without
                                    polluting the page cache                           */
#define ND_IO_MMAP 8u            /* serve reads from a mapping                         */
#define ND_IO_PRELOAD 16u        /* fault the mapping in / read ahead at open          */
#define ND_IO_REQUIRE_DIRECT 32u /* ND_E_NOT_SUPPORTED instead of a silent fallback     */
#define ND_IO_OVERWRITE 64u      /* nd_create_output replaces an existing file         */
/* Each read of the input is of a block not read again soon (a search's stored
 * fields, per hit). While the page cache thrashes (nd_memory_mode) its reads leave
 * none of its pages cached, and unless memory has room to spare nd_input_prefetch
 * skips it, so that it does not evict the pages that are read again; its buffer
 * holds a whole block (16 KiB), read in one call. */
#define ND_IO_NOREUSE 128u
/* A search input: while the files of its directory that searches read again
 * (all but those nd_policy_input gives ND_IO_NOREUSE), together, take at most
 * half the page cache the process may use (its memory cgroup's limit, else the
 * machine's memory, less what it uses for anything else), the whole file is
 * read into the cache at open, in reads queued at once, without waiting for
 * them; so an index that fits is as fast from its first query as once warm,
 * where faults would bring it in a page or a read-around at a time. Where they
 * do not fit, or the limit is unknown, it does nothing; nor with
 * ND_IO_NOREUSE, ND_IO_SEQUENTIAL, ND_IO_MERGE or ND_IO_PRELOAD, or while
 * mapped inputs are read positionally (nd_memory_mode). */
#define ND_IO_WARM 256u

/** What an input or output actually does, as reported by nd_input_strategy/nd_output_strategy. */
enum {
    ND_STRATEGY_BUFFERED = 1,   /* page cache, library buffer                        */
    ND_STRATEGY_MAPPED = 2,     /* memory mapping                                   */
    ND_STRATEGY_DIRECT = 3,     /* O_DIRECT / FILE_FLAG_NO_BUFFERING / F_NOCACHE     */
    ND_STRATEGY_DROP_BEHIND = 4 /* buffered, dropping from the page cache what it
                                   brought in: ND_IO_MERGE where direct is refused   */
};

/* ------------------------------------------------------------------------ */
/* Inputs. Positional calls (nd_read_bytes, nd_input_length) are thread-safe  */
/* on one handle. Cursor calls (seek, position, buffered reads, window) are   */
/* per handle: give each thread its own clone.                                */
/* ------------------------------------------------------------------------ */

/** Opens `name` for reading with ND_IO_* flags (OVERWRITE is refused). */
ND_EXTERN int32_t nd_open_input(nd_handle dir, const char *name, uint32_t flags,
                                nd_handle *out_input);

/** The input's length (a slice's own length). */
ND_EXTERN int32_t nd_input_length(nd_handle input, int64_t *out_len);

/** Reads exactly `len` bytes at `offset` into `dst`; returns `len`, or ND_E_EOF (reading nothing) if offset + len > length. */
ND_EXTERN int64_t nd_read_bytes(nd_handle input, int64_t offset, void *dst, int64_t len);

/** Moves the cursor to `pos` (0..length). */
ND_EXTERN int32_t nd_input_seek(nd_handle input, int64_t pos);

/** The cursor's position, or < 0 on error. */
ND_EXTERN int64_t nd_input_position(nd_handle input);

/** The byte at the cursor (0..255) and advances it; ND_E_EOF at the end. */
ND_EXTERN int32_t nd_read_byte_buffered(nd_handle input);

/** Reads exactly `len` bytes at the cursor and advances it; ND_E_EOF (cursor unchanged) if fewer remain. */
ND_EXTERN int64_t nd_read_buffered(nd_handle input, void *dst, int64_t len);

/**
 * Zero copy: sets *out_ptr to the bytes at `pos` and returns how many are
 * readable there (>= 1), or ND_E_EOF when pos >= length. The pointer stays
 * valid until the next cursor or window call on this handle or its close; for
 * a mapped input, until the handle is closed (the bytes: until the file's
 * last handle is, see below). The cursor does not move.
 * This is how bindings read bytes without one native call per byte.
 *
 * The window is pinned, and the pin is yours (explicit ownership): its memory
 * (buffer or mapping) stays allocated until the next nd_input_window on this
 * handle or nd_input_unpin, from any thread. nd_close does not release it, on
 * any thread: the library cannot know who still reads a window (an input may
 * be handed to another thread between window calls), so a close racing a
 * reader never frees memory under it; the reader's next window call gets
 * ND_E_BAD_HANDLE and releases the memory then. Done with a window, call
 * nd_input_unpin (before or after nd_close), or its memory stays until you
 * do. The file does not wait for the pin: the window of an input that is not
 * mapped is its own buffer, so nd_close closes the file's descriptor (if no
 * clone or slice still uses it) as if no window were pinned; a mapped input's
 * window is the mapping, which reads the file's bytes while any handle of the
 * file (input, clone, slice) is open. The close of the last one lets go of
 * the file at once and leaves zero-filled read-only memory at the mapping's
 * addresses: a reader still inside a window reads zeros there (bytes it must
 * discard), never a fault, and the addresses are freed with the last pin.
 */
ND_EXTERN int64_t nd_input_window(nd_handle input, int64_t pos, const uint8_t **out_ptr);

/** A new handle on the same file (and mapping) with its own cursor at 0. */
ND_EXTERN int32_t nd_input_clone(nd_handle input, nd_handle *out_clone);

/** A new handle on bytes [offset, offset + len) of the input; offsets are relative to it and nothing outside it is readable. */
ND_EXTERN int32_t nd_input_slice(nd_handle input, int64_t offset, int64_t len,
                                 nd_handle *out_slice);

/** The ND_STRATEGY_* the input reads with, or < 0. */
ND_EXTERN int32_t nd_input_strategy(nd_handle input);

/* ------------------------------------------------------------------------ */
/* Outputs: written front to back (only nd_output_seek moves the cursor);  */
/* one writer per handle (calls are serialised).                             */
/* ------------------------------------------------------------------------ */

/** Creates `name` (ND_E_EXISTS if present unless ND_IO_OVERWRITE). ND_IO_MERGE writes with direct I/O.
 * With ND_IO_OVERWRITE the old file is replaced in one step when the call succeeds (its readers
 * keep reading it) and is left exactly as it was when the call fails. */
ND_EXTERN int32_t nd_create_output(nd_handle dir, const char *name, uint32_t flags,
                                   nd_handle *out_output);

/** Appends all `len` bytes; returns `len` or < 0 (then the output is failed for good). */
ND_EXTERN int64_t nd_write_bytes(nd_handle output, const void *src, int64_t len);

/** Appends one byte. */
ND_EXTERN int32_t nd_write_byte(nd_handle output, uint8_t b);

/** Bytes written so far (the file's length once closed): where the next byte goes, after an nd_output_seek the cursor; after a failed write or sync, that failure's status. */
ND_EXTERN int64_t nd_output_position(nd_handle output);

/** zlib's CRC-32 of every byte written so far (0..0xFFFFFFFF); after a failed write or sync, that failure's status. */
ND_EXTERN int64_t nd_output_crc32(nd_handle output);

/**
 * Flushes and fsyncs through this handle: every byte written so far is
 * durable on return. After a failed sync every later sync of this output
 * fails too: a retry never reports pages the kernel may have dropped as safe.
 */
ND_EXTERN int32_t nd_output_sync(nd_handle output);

/** The ND_STRATEGY_* the output writes with, or < 0. */
ND_EXTERN int32_t nd_output_strategy(nd_handle output);

/* ------------------------------------------------------------------------ */
/* Closing.                                                                  */
/* ------------------------------------------------------------------------ */

/**
 * Closes any handle. An output flushes (and for direct I/O truncates to its
 * logical length) and reports a failure of that final flush; it does not
 * fsync (call nd_output_sync first). A second close gets ND_E_BAD_HANDLE.
 * Closing a directory leaves its inputs, outputs and locks working. Closing
 * the last input, clone or slice of a file closes the file before it returns
 * (a deleted file's space is freed; on Windows it can be deleted, and its
 * folder removed), even if a ring read it or a window of it is still pinned
 * (nd_input_window: a pinned window of a mapping then reads zeros), unless a
 * read of it is still in flight: then the file closes when that read returns
 * (a ring's: is reaped or its ring closed). Closing a ring wakes its reaper, waits for the
 * reads in flight to finish (their buffers are not written after it returns)
 * and drops their completions.
 */
ND_EXTERN int32_t nd_close(nd_handle handle);

/* ------------------------------------------------------------------------ */
/* ND_NODE ND_1.1: stable additions.                                         */
/* ------------------------------------------------------------------------ */

/**
 * Hands every byte written so far to the OS, without an fsync: afterwards
 * the file's length (nd_file_length, a new input) is the output's position
 * (after an nd_output_seek back, the furthest byte written) and readers see
 * every byte. A direct output writes its unaligned tail padded to the block
 * and truncates the file back to its length; the tail stays buffered, so
 * later writes extend it, and a flush or sync with nothing new since writes
 * nothing again. Cheap when nothing is buffered. Durability is nd_output_sync.
 */
ND_EXTERN int32_t nd_output_flush(nd_handle output);

/**
 * Releases the memory the last nd_input_window of this handle pinned (see
 * there), if any: call it when no thread can still read that window (a C
 * caller done with it, a binding's finalizer). Works on a handle already
 * closed while its window is pinned (then its buffer or the mapping's
 * addresses are released now: the file went with the close of its last
 * handle); ND_OK whether or not a window was pinned;
 * ND_E_BAD_HANDLE once nothing of the handle is left. Stable (ND_1.1): a C
 * caller needs it to finish with a window of nd_input_window (ND_1), and the
 * Java, .NET and Python bindings release their windows with it.
 */
ND_EXTERN int32_t nd_input_unpin(nd_handle input);

/* ------------------------------------------------------------------------ */
/* ND_NODE ND_EXPERIMENTAL: calls that may still change.                     */
/* ------------------------------------------------------------------------ */

/**
 * Moves the output's cursor to `pos` (>= 0): the following writes overwrite
 * the file from there (a position past the end leaves zeros in between),
 * like a file stream's seek under Lucene's deprecated IndexOutput.seek. The
 * buffered bytes are handed to the OS first. Afterwards nd_output_position is
 * the cursor; the file keeps its furthest byte written (it never shrinks);
 * nd_output_crc32 goes on covering every byte written, in the order written,
 * not the file's content. Seeking to the current position changes nothing.
 * A direct output turns into a drop-behind one (nd_output_strategy says so):
 * rewrites are small and unaligned.
 */
ND_EXTERN int32_t nd_output_seek(nd_handle output, int64_t pos);

/**
 * The size in bytes (>= 1) of the cursor buffer the library gives this input
 * (allocated on first use), chosen from its strategy and access flags and
 * never larger than the input when buffered: a binding that keeps a cursor
 * buffer of its own sizes it with this, so the choice is made in one place.
 */
ND_EXTERN int64_t nd_input_buffer_size(nd_handle input);

/**
 * The size in bytes (>= 1) of the buffer this output collects writes in now:
 * 64 KiB for a buffered output (growing with its file on Linux, up to 2 MiB,
 * so large files leave large page-cache folios), the staging buffer of a
 * direct one (1 MiB, rounded up to the direct-I/O alignment). A binding that
 * collects small writes in a buffer of its own sizes it with this at open: a
 * full one is then one call that the library copies once or hands straight
 * to the OS, and the choice is made in one place.
 */
ND_EXTERN int64_t nd_output_buffer_size(nd_handle output);

/**
 * The rest of a cursor read, for a binding whose cursor reads a window of
 * nd_input_window and has run out of it: reads exactly `len` bytes at `pos`
 * into `dst` the way nd_read_buffered does (what the handle's cursor buffer
 * holds at `pos` first, then refills, or one read straight into `dst` for
 * the rest once it is at least the buffer size, capped at 64 KiB; a mapped
 * input copies from the mapping) and moves the handle's cursor to pos + len.
 * Returns the count of bytes readable at pos + len without another call
 * (the mapping's rest, or the buffer's, refilled when a read through it, or
 * one of 0 bytes, ended at its end), with their address in *out_window,
 * which is pinned as a window of nd_input_window is; 0 (and NULL) when none
 * is at hand (the end, a read straight into `dst` that left the buffer
 * elsewhere, or out_window NULL, which takes no window). With len 0 it is
 * nd_input_window at `pos` that also moves the cursor, except that `pos` may
 * be the end (0) and a failed refill is its error. A window from an earlier
 * call may now hold other bytes: use only the one returned (Java, .NET and
 * Python cursors use this call). ND_E_EOF when pos + len passes the end and
 * ND_E_INVALID_ARGUMENT for a negative pos or len, with nothing read or
 * moved. On a closed handle it releases the pin, as nd_input_window does.
 */
ND_EXTERN int64_t nd_input_read_from(nd_handle input, int64_t pos, void *dst, int64_t len,
                                     const uint8_t **out_window);

/**
 * Asks the OS to start bringing [offset, offset+len) of the input (a slice's
 * own offsets) into memory and returns at once, without waiting for the
 * device: Lucene's IndexInput.prefetch. Call it for the blocks a query will
 * read next, then read them; the reads then overlap on the device instead of
 * waiting one after another. ND_OK also when the bytes are already in memory
 * (that case costs a few nanoseconds: after repeated prefetches found their
 * pages resident, the library looks again only now and then, so on a cached
 * index an occasional prefetch of a range that is not resident does nothing).
 * ND_E_EOF if offset + len > length; len 0 does nothing.
 * Mapped: madvise(MADV_WILLNEED) of the range's pages after a mincore look;
 * buffered and drop-behind: posix_fadvise(POSIX_FADV_WILLNEED) after a look
 * at the page cache (cachestat, else a read that refuses to wait); direct:
 * nothing (its reads never use the cache). Windows: PrefetchVirtualMemory
 * for mappings, nothing for files; macOS: madvise, F_RDADVISE for files.
 * A hint: a failure of the OS call is not reported.
 */
ND_EXTERN int32_t nd_input_prefetch(nd_handle input, int64_t offset, int64_t len);

/**
 * Changes the access advice of an open input to ND_IO_RANDOM, ND_IO_SEQUENTIAL
 * or 0 (normal); any other value gets ND_E_INVALID_ARGUMENT. Lucene 10's
 * read-advice update: e.g. a file opened for random reads that is about to be
 * read front to back once. Mapped: madvise(MADV_RANDOM/SEQUENTIAL/NORMAL) of
 * the pages under the input's range: clones share the mapping and so the
 * advice; a slice's advice covers its own range, rounded out to whole pages
 * (a page shared with a neighbouring slice gets it too). Buffered and
 * drop-behind: posix_fadvise on the descriptor every clone and slice shares
 * (Linux applies it to the whole open file). Direct: nothing. Windows: nothing
 * (no advice exists for an open file or a view). The cursor buffer size and a
 * mapped sequential input's read-ahead stay as chosen at open.
 */
ND_EXTERN int32_t nd_input_advise(nd_handle input, uint32_t flags);

/* ------------------------------------------------------------------------ */
/* The read and write policy of a search engine's files: which ND_IO_* flags */
/* a file gets for what the engine is about to do with it (Lucene's         */
/* IOContext), decided here once for every binding's directory.             */
/* ------------------------------------------------------------------------ */

/** What a search engine is about to do with a file (nd_policy_input, nd_policy_output). */
enum {
    ND_USE_SEARCH = 0,    /* read while the index is open (Lucene: DEFAULT, READ) */
    ND_USE_READ_ONCE = 1, /* read front to back once (Lucene: READONCE: checksums, commit
                             points, segment infos) */
    ND_USE_MERGE = 2,     /* read or written once, in bulk, by a merge (Lucene: MERGE) */
    ND_USE_FLUSH = 3      /* written by a flush of new documents (Lucene: FLUSH) */
};

/** A merge estimated at or above this many bytes reads and writes with direct I/O. */
#define ND_POLICY_MIN_DIRECT 10485760 /* 10 MiB */

/**
 * The ND_IO_* flags (>= 0) to open `name` in `dir` with as an input used as
 * `use` (ND_USE_*), or a status (< 0). `dir` may be 0 (the rules that hold in
 * any directory) and `name` NULL (the flags of `use` alone, without the
 * file's own access advice). `merge_bytes` is the merge's estimated
 * size for ND_USE_MERGE (ignored otherwise); `min_direct` the size from which
 * a merge bypasses the page cache, or -1 for ND_POLICY_MIN_DIRECT. `name` may
 * be a sub-file of a compound file (its slice gets the sub-file's advice).
 * Read once: ND_IO_SEQUENTIAL (buffered). A merge at or above min_direct:
 * ND_IO_MERGE (direct reads leave the cache to the searches); a smaller one:
 * mapped, sequential. A search: mapped and ND_IO_WARM, with ND_IO_RANDOM for the files read
 * one small block at an unpredictable offset (terms dictionary .tim, stored
 * fields .fdt, term vectors .tvd, doc values .dvd, points .kdd), whose
 * read-around would mostly read what nobody asks for, and ND_IO_NOREUSE for
 * those read per hit (.fdt, .tvd) (docs/strategies.md).
 */
ND_EXTERN int32_t nd_policy_input(nd_handle dir, const char *name, int32_t use, int64_t merge_bytes,
                                  int64_t min_direct);

/**
 * The ND_IO_* flags (>= 0) to create `name` in `dir` with as an output written
 * as `use`, or a status (< 0); `merge_bytes` and `min_direct` as for
 * nd_policy_input. A merge at or above min_direct: ND_IO_MERGE (direct
 * writes: a merge does not evict the pages searches read); anything else: 0
 * (buffered through the page cache, where a new segment is read next).
 */
ND_EXTERN int32_t nd_policy_output(nd_handle dir, const char *name, int32_t use,
                                   int64_t merge_bytes, int64_t min_direct);

/** How mapped inputs are read (nd_memory_mode). */
enum {
    ND_MEMORY_AUTO = 0,      /* through the mapping while the page cache holds what is read, with
                                positional reads while it thrashes (the default) */
    ND_MEMORY_MAPPED = 1,    /* always through the mapping */
    ND_MEMORY_POSITIONAL = 2 /* always with positional reads through the file's descriptor */
};

/**
 * Sets how the process's mapped inputs (ND_IO_MMAP) are read and returns the
 * mode it replaces; -1 only asks. ND_MEMORY_AUTO (the default) reads through
 * the mapping while the page cache the process may use (its memory cgroup's,
 * else the machine's) holds what is read, and with positional reads (pread
 * of what is asked, with the input's access advice) while it thrashes:
 * measured from the cache's workingset refaults and major faults as a share
 * of the cache, sampled every 250 ms, with hysteresis (docs/strategies.md).
 * Where the OS tells neither (macOS, Windows) AUTO reads through mappings.
 * The choice applies at each read and window call: a window handed out
 * before it changes stays valid.
 */
ND_EXTERN int32_t nd_memory_mode(int32_t mode);

/**
 * The most bytes a window of a mapped input covers (nd_input_window,
 * nd_input_read_from): a reader comes back for the next window at least this
 * often, which is when a change of how mapped inputs are read (nd_memory_mode)
 * reaches it. A binding that points windows into a mapping itself uses the
 * same size.
 */
#define ND_MAPPED_WINDOW 4194304 /* 4 MiB */

/**
 * For a binding that reads a mapping itself (its clones sharing one pointer):
 * sets *out_ptr to the byte at `pos` of a mapped input's mapping and returns
 * how many are there, the whole rest of the input, whatever ND_MAPPED_WINDOW
 * and nd_memory_mode say. Pinned as a window of nd_input_window is (and
 * released the same way, by the next window or map call on the handle or
 * nd_input_unpin): its addresses stay readable until then, and read the file
 * while any handle of it is open. ND_E_NOT_SUPPORTED for an input that is not
 * mapped; ND_E_EOF when pos >= length. Ask nd_input_mapped_now before pointing
 * a new window into it: while it says 0, read with positional calls instead.
 */
ND_EXTERN int64_t nd_input_map(nd_handle input, int64_t pos, const uint8_t **out_ptr);

/**
 * 1 when a read of `input` at this moment goes through its mapping, 0 when
 * it goes to its descriptor (not mapped, or nd_memory_mode says positional
 * reads now); < 0 a status. A binding that reads a mapping itself (through a
 * pointer of nd_input_window) asks this before it points a new window into
 * the mapping.
 */
ND_EXTERN int32_t nd_input_mapped_now(nd_handle input);

/* ------------------------------------------------------------------------ */
/* Asynchronous reads. A ring takes positional reads and reports them done,  */
/* with nothing allocated per read and no callbacks: one thread (or many)   */
/* submits, one thread reaps. Linux uses io_uring where the kernel allows    */
/* it and a small thread pool otherwise; Windows uses worker threads behind */
/* I/O completion ports.                                                     */
/* ------------------------------------------------------------------------ */

/** nd_ring_open: use the thread-pool backend even where io_uring works. */
#define ND_RING_FORCE_THREADS 1u

/** What a ring runs on, as reported by nd_ring_backend. */
enum {
    ND_RING_IO_URING = 1, /* Linux io_uring: the kernel does the reads          */
    ND_RING_THREADS = 2,  /* worker threads doing blocking reads (Windows too) */
    ND_RING_IOCP = 3      /* reserved, never returned: Windows rings run their
                             reads on worker threads (ND_RING_THREADS) */
};

/**
 * Creates a ring that holds up to `depth` reads in flight (1..4096). A ring
 * runs threads of its own, which a fork()ed child does not have: use rings
 * only in the process that opened them.
 */
ND_EXTERN int32_t nd_ring_open(uint32_t depth, uint32_t flags, nd_handle *out_ring);

/** The ND_RING_* backend the ring runs on, or < 0. */
ND_EXTERN int32_t nd_ring_backend(nd_handle ring);

/**
 * Starts reading `len` bytes at `offset` of `input` into `dst`, which must stay
 * valid until the read's completion is reaped (or the ring is closed). `tag`
 * comes back with the completion. A range past the end fails here with
 * ND_E_EOF; a full ring with ND_E_BUSY. The input may be closed while the read
 * is in flight: the read still completes. A mapped input has no read to hand
 * the kernel: its bytes are copied here, in the calling thread (a page fault
 * may wait for the device), and only the completion goes through the ring.
 */
ND_EXTERN int32_t nd_ring_submit_read(nd_handle ring, nd_handle input, int64_t offset, void *dst,
                                      int64_t len, uint64_t tag);

/**
 * Copies the part of [offset, offset+len) of `input` that can be read without
 * waiting for the device: from `offset` on, the bytes the page cache holds, up
 * to the first one it does not (a buffered input, where the OS can tell: Linux;
 * elsewhere nothing). Returns how many bytes it copied (0..len), or < 0 (the
 * range checks of nd_read_bytes). Direct and drop-behind inputs copy nothing.
 * A mapped input copies all of it, from the mapping, as every read of a
 * mapping does: a page fault may wait for the device. With
 * nd_ring_submit_read for the rest, this makes an asynchronous read that costs
 * one system call, like a synchronous one, when the bytes are cached.
 */
ND_EXTERN int64_t nd_read_cached(nd_handle input, int64_t offset, void *dst, int64_t len);

/**
 * Waits up to `timeout_ms` (0: do not wait, -1: no limit) for completions and
 * stores up to `max` of them: tags[i] and results[i] (the length read, or a
 * negative ND_E_* status). Returns how many were stored (0 on timeout), or < 0.
 */
ND_EXTERN int32_t nd_ring_reap(nd_handle ring, uint64_t *tags, int64_t *results, int32_t max,
                               int32_t timeout_ms);

/** Reads submitted and not yet reaped, or < 0. */
ND_EXTERN int32_t nd_ring_in_flight(nd_handle ring);

/**
 * A file descriptor that becomes readable when completions of the ring wait to
 * be reaped, for an event loop that must not block in nd_ring_reap (Python's
 * asyncio add_reader, libuv, epoll). Returns it (>= 0) or < 0. The first call
 * makes it, later calls return the same one. Linux: an eventfd (io_uring rings
 * register it with the kernel, which signals it for every completion; the
 * thread pool's workers write it); other POSIX systems: the read end of a
 * pipe. Non-blocking and close-on-exec.
 *
 * The protocol: when it is readable, read (and discard) up to 8 bytes from it
 * (EAGAIN: another reaper reset it first), then call nd_ring_reap with timeout
 * 0 until it stores fewer than `max`. A completion that arrives after that
 * read makes it readable again, so none is left waiting unseen. It may also be
 * readable with nothing to reap (a wake-up, a read resubmitted for its rest).
 *
 * The ring owns the descriptor and closes it when the ring is freed (at
 * nd_close, or when the last call using the ring returns): stop watching it
 * first, or watch a dup() of it. ND_E_NOT_SUPPORTED on Windows (there is no
 * descriptor an event loop could watch: reap on a thread of your own).
 */
ND_EXTERN int32_t nd_ring_event_fd(nd_handle ring);

/* ------------------------------------------------------------------------ */
/* Files the caller opened itself: positional reads and writes, length,      */
/* direct I/O and access advice on an OS file (a POSIX descriptor, or a     */
/* Windows HANDLE, as an int64_t), and advice on memory. For runtimes whose  */
/* file API lacks them (.NET Framework and netstandard2.0 have no positional */
/* I/O on a FileStream's handle) and for ports whose public API hands out OS */
/* files (Lucene's NativePosixUtil): the values of O_DIRECT, the advice      */
/* codes and the calls' ABI come from each OS's own headers here, never from */
/* a declaration written by hand. The library never opens or closes these   */
/* files: their owner does.                                                  */
/* ------------------------------------------------------------------------ */

/** Access advice for nd_os_advise and nd_os_madvise (Lucene's NativePosixUtil numbering). */
#define ND_OS_ADVICE_NORMAL 0     /* no advice                                       */
#define ND_OS_ADVICE_SEQUENTIAL 1 /* read front to back: read ahead                  */
#define ND_OS_ADVICE_RANDOM 2     /* read at random: no read-ahead                   */
#define ND_OS_ADVICE_WILLNEED 3   /* read soon: start bringing it in                 */
#define ND_OS_ADVICE_DONTNEED 4   /* not needed soon: its clean cached pages may go  */
#define ND_OS_ADVICE_NOREUSE 5    /* read once (files only)                          */

/** nd_os_madvise: advise with posix_madvise instead of madvise. */
#define ND_OS_MADVISE_POSIX 1

/**
 * Reads up to `len` bytes at `offset` of the OS file `os_file` into `dst`
 * without moving the file's offset (its file pointer): returns how many it
 * read, which is `len` unless the file ends first, and 0 at or past the end.
 * Thread-safe on one file. A failure after some bytes arrived returns those
 * bytes; the next call, at the offset after them, reports it. Interrupted and
 * short reads are retried. ND_E_ACCESS: the file is not open for reading, or
 * is a directory; ND_E_NOT_SUPPORTED: it cannot seek (a pipe, a socket, a
 * terminal); ND_E_INVALID_ARGUMENT: a negative offset or len, dst NULL with
 * len > 0, a value that is no open file, or (from the OS) a transfer that
 * direct I/O cannot align. POSIX: pread. Windows: ReadFile at the offset,
 * waited for (overlapped handles too); a synchronous handle's file pointer,
 * which ReadFile moves, is put back before the call returns, so calls on
 * one such handle run one at a time (the I/O manager serialises them anyway).
 */
ND_EXTERN int64_t nd_os_read(int64_t os_file, int64_t offset, void *dst, int64_t len);

/**
 * Writes all `len` bytes of `src` at `offset` of the OS file `os_file`
 * without moving its offset (file pointer), as nd_os_read reads; a write past
 * the end extends the file (zeros in between); len 0 writes nothing and
 * returns 0. Returns `len`, or a status: nd_os_read's, ND_E_ACCESS also for
 * a file not open for writing, ND_E_NO_SPACE when the device or quota is
 * full (some bytes may be written).
 */
ND_EXTERN int64_t nd_os_write(int64_t os_file, int64_t offset, const void *src, int64_t len);

/**
 * The length of the OS file in *out_len. ND_E_NOT_SUPPORTED if it cannot
 * seek (a pipe, a socket, a terminal); ND_E_ACCESS for a directory;
 * ND_E_INVALID_ARGUMENT for a value that is no open file.
 */
ND_EXTERN int32_t nd_os_length(int64_t os_file, int64_t *out_len);

/**
 * Turns direct I/O on (`direct` 1) or off (0) for the OS file: its reads and
 * writes then bypass the page cache. Linux: O_DIRECT through fcntl(F_SETFL),
 * after which the OS refuses (ND_E_INVALID_ARGUMENT) transfers whose offset,
 * length or buffer address is not a multiple of the file system's block;
 * macOS: F_NOCACHE (no alignment needed). ND_E_NOT_SUPPORTED where the file
 * system refuses it, and on Windows (where unbuffered I/O is chosen only when
 * a file is opened).
 */
ND_EXTERN int32_t nd_os_set_direct(int64_t os_file, int32_t direct);

/**
 * Advises the OS how [offset, offset+len) of the OS file will be read (len 0:
 * to the end): an ND_OS_ADVICE_* value, else ND_E_INVALID_ARGUMENT. Linux and
 * other POSIX systems: posix_fadvise. macOS, which has none: WILLNEED reads
 * ahead (F_RDADVISE), the others are accepted and change nothing. Windows:
 * ND_E_NOT_SUPPORTED (advice is given when a file is opened).
 */
ND_EXTERN int32_t nd_os_advise(int64_t os_file, int64_t offset, int64_t len, int32_t advice);

/**
 * Advises the OS how the memory [addr, addr+len) will be used: an
 * ND_OS_ADVICE_* value other than NOREUSE (ND_E_INVALID_ARGUMENT), with
 * madvise, or posix_madvise where `flags` is ND_OS_MADVISE_POSIX (on Linux
 * posix_madvise's DONTNEED does nothing, madvise's drops the pages). `addr`
 * must be a multiple of the page size and the range mapped
 * (ND_E_INVALID_ARGUMENT, ND_E_NO_MEMORY from the OS). Windows:
 * ND_E_NOT_SUPPORTED.
 */
ND_EXTERN int32_t nd_os_madvise(void *addr, int64_t len, int32_t advice, uint32_t flags);

#ifdef __cplusplus
}
#endif

#endif /* NATIVEDIR_H */
