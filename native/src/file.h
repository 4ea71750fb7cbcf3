/*
 * file.h - the open file behind an input, its clones and slices (file.c).
 *
 * One nd_file per nd_open_input: the descriptor or the mapping, the strategy
 * every read of it follows, and what reads share (the direct bounce buffer,
 * how far a mapping is populated). Inputs (input.c) hold references on it;
 * so do io_uring rings while its descriptor is registered (posix/ring_uring.c).
 */
#ifndef ND_FILE_H
#define ND_FILE_H

#include "internal.h"

/* When a mapped file populates its page tables ahead of its readers. */
typedef enum {
    ND_AHEAD_NEVER,  /* not mapped, opened ND_IO_RANDOM, or ND_IO_PRELOAD (all populated at open) */
    ND_AHEAD_ALWAYS, /* opened ND_IO_SEQUENTIAL */
    ND_AHEAD_ON_RUN  /* opened without advice: once its reads run in order (file.c) */
} nd_ahead_mode;

typedef struct {
    /* the references in the low 32 bits, and in the high 32 bits how many of
     * them rings hold (registered descriptors): one word, so "only rings hold
     * the file" is a single load, never a torn pair of counts */
    _Atomic uint64_t refs;
    /* the inputs (handles) that may still read the file: an input closed with
     * a window pinned stops counting at its close, though it keeps a
     * reference for its window until unpinned (nd__file_unuse) */
    _Atomic uint32_t users;
    nd_os_file fd;
    int strategy; /* ND_STRATEGY_* */
    int64_t size;
    uint8_t *map;
    void *map_token;
    nd_ahead_mode ahead;
    int noreuse;         /* ND_IO_NOREUSE: positional reads drop behind while the cache thrashes */
    uint32_t align;      /* direct I/O alignment */
    nd_mutex *bounce_mu; /* direct: serialises positional reads through bounce */
    uint8_t *bounce;
    size_t bounce_cap; /* nd__direct_size(ND_BOUNCE_DIRECT, align) */
    /* What reads and prefetches write, on a cache line of its own (the file is
     * allocated with nd__buffer_lines): every read of every clone reads the
     * fields above, and a sequential reader moving run_end, or prefetches
     * counting hits, must not take their line from the others. */
    _Alignas(ND_CACHE_LINE) _Atomic int64_t populated; /* [0, populated) populated ahead */
    _Atomic int64_t run_end;        /* ND_AHEAD_ON_RUN: the end of the reads run from 0 */
    _Atomic uint32_t prefetch_hits; /* prefetch.c's back-off */
    char name[];
} nd_file;

/* Direct reads skip the cache: make each one count. Both direct buffers (the
 * file's bounce buffer, a cursor's buffer) are at least this and at least one
 * alignment unit, a multiple of it either way (nd__direct_size): an aligned
 * read rounded up to the alignment must fit. */
#define ND_BUF_DIRECT (256u << 10)
#define ND_BOUNCE_DIRECT (256u << 10)

/* A direct buffer's size: `want` rounded up to a multiple of the alignment.
 * File systems ask for anything from 512 B to several MiB (st_blksize stands
 * in where they do not say: docs/design.md), so a buffer may grow past its
 * default but never holds less than one aligned unit. */
static inline size_t nd__direct_size(size_t want, uint32_t align)
{
    return (want + align - 1) / align * align;
}

/* Opens `name` in `d` for reading with the strategy `flags` ask for (input
 * flags, already checked), holding one reference for the caller. */
int32_t nd__file_open(nd_dir *d, const char *name, uint32_t flags, nd_file **out);

/* Another reference, for a new input, which also counts as a user until
 * nd__file_unuse (the caller holds a reference already). */
static inline void nd__file_hold(nd_file *f)
{
    atomic_fetch_add_explicit(&f->users, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&f->refs, 1, memory_order_relaxed);
}

/* An input of the file will never read it again (closed, no call left on
 * it); it keeps its reference. The last user releases the file itself at
 * once: a mapping that a window may still point into (`window_left`: this
 * input's pin, or the pins of inputs closed before, which still hold their
 * references) is replaced by zero-filled memory at the same addresses, so
 * the OS lets go of the file (a deleted file's space comes back, Windows
 * lets it be deleted and its folder removed) while a reader still inside a
 * window reads zeros instead of faulting; the addresses go with the last
 * reference. Without such a window the last release unmaps as before. */
void nd__file_unuse(nd_file *f, int window_left);

/* Drops a reference; the last closes the file. When only rings hold it then,
 * they let go before this returns (ring_files.c), so the file is closed as if
 * no ring had read it. */
void nd__file_release(nd_file *f);

/* Whether a read of the file now goes through its mapping: it is mapped, and
 * the page cache is not thrashing (memory.c). A mapped file keeps its
 * descriptor for the reads that do not. */
static inline int nd__file_maps_now(const nd_file *f)
{
    return f->strategy == ND_STRATEGY_MAPPED && nd__memory_maps();
}

/* Exact read of [off, off+len) of the file by its strategy (the caller
 * checked the range): a copy out of the mapping, a pread (also of a mapped
 * file while the cache thrashes), or direct reads through the bounce buffer
 * where the caller's memory or range is unaligned. */
int32_t nd__file_read(nd_file *f, int64_t off, void *dst, size_t len);

/* After a positional read of [off, off+len) (`len` bytes arrived): a
 * drop-behind file drops what it read, and so does an ND_IO_NOREUSE file
 * while the page cache thrashes, by whole pages (a read that ends inside a page
 * brought all of it in, and the kernel drops only whole pages). */
void nd__file_after_read(nd_file *f, int64_t off, size_t len);

/* Records that the file holds `got` of `want` bytes at `off`: it shrank
 * after open (ND_E_IO). */
int32_t nd__file_shrank(const nd_file *f, int64_t off, int64_t want, size_t got);

/* For the io_uring ring's registered files (posix/ring_uring.c): `file` is
 * what nd__input_begin_async gave (unique while anything holds it). A ring
 * holds it while its descriptor is registered, so that the key cannot be
 * reused by another file. */
void nd__file_ring_hold(void *file);
/* The ring's own slot must already be unregistered: this may close the file.
 * `wake_rings`: make the rings let go if only rings hold it now (0 from inside
 * that sweep, which reaches every ring anyway, and with a ring's lock held:
 * lock order, ring_files.c). */
void nd__file_ring_drop(void *file, int wake_rings);
/* 1 if only rings hold the file (no input, clone, slice or read in flight
 * uses it; none can appear, since they come from an input): once true, it
 * stays true, and a ring should let go. */
int nd__file_ring_only(void *file);

#endif /* ND_FILE_H */
