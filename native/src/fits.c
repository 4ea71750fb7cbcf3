/*
 * fits.c - whether the files of a directory that searches read again fit in
 * the page cache the process may use (nd__dir_fits). Where they do, an input
 * opened for searches reads its whole file in ahead at open (file.c), so that
 * an index that fits is as fast from its first query as once warm: faulted in
 * through its mapping, a cold index comes in a page at a time (random advice)
 * or a read-around at a time, one device read after another, and Lucene.NET's
 * searches of one that fits ran their first seconds at a fraction of the warm
 * rate (docs/strategies.md). Where they do not, reading a file in ahead would
 * evict what the searches read: the blocks come in as they are asked for.
 *
 * The files read a block per use (stored fields, term vectors: most of an
 * index's bytes) are never read in, so they do not count; the others may take
 * half the cache, the other half left to those blocks. Half, because the whole
 * directory fitting is too late a test: the benchmark index's postings, terms
 * and norms are 154 of its 1,074 MiB, and they fit beside what its searches
 * read of the stored fields from a cache of half the index on, while a cache of
 * a quarter (268 MiB) holds the pages its searches read, and no more.
 */
#include "internal.h"

/* A verdict is this old at most: a listing and a stat per file cost far more
 * than an open, and an index opens dozens of files at once. */
#define FITS_TTL_NS ((int64_t)1000 * 1000 * 1000)

typedef struct {
    nd_os_dir *os;
    int64_t bytes;
} sizes;

static int32_t add_size(void *ctx, const char *name, size_t len)
{
    sizes *s = ctx;
    int not_file = 0;
    int64_t n = 0;
    (void)len;
    /* a file deleted since the listing counts nothing */
    if (!nd__policy_read_per_use(name) && nd__os_stat(s->os, name, &not_file, &n) == ND_OK &&
        !not_file && n > 0)
        s->bytes += n;
    return ND_OK;
}

int nd__dir_fits(nd_dir *d)
{
    int64_t now = nd__os_clock_ns();
    int64_t at = atomic_load_explicit(&d->fits_at, memory_order_acquire);
    if (at != 0 && now - at < FITS_TTL_NS)
        return atomic_load_explicit(&d->fits, memory_order_relaxed);
    int fits = 0;
    int64_t room = nd__memory_room();
    if (room > 0) {
        /* a listing or a stat that fails (a file deleted meanwhile) is the open's
         * to shrug off, not the caller's last failure */
        nd_error_state kept;
        nd__error_save(&kept);
        sizes s = {d->os, 0};
        fits = nd__os_dir_list(d->os, add_size, &s) == ND_OK && s.bytes <= room / 2;
        nd__error_restore(&kept);
    }
    atomic_store_explicit(&d->fits, fits, memory_order_relaxed);
    atomic_store_explicit(&d->fits_at, now != 0 ? now : 1, memory_order_release);
    return fits;
}
