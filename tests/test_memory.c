/*
 * test_memory.c - how mapped inputs are read (nd_memory_mode, nd_input_mapped_now):
 * the forced modes on every platform (a window of a mapped input points into
 * the mapping or into the cursor buffer, every read returns the file's bytes
 * either way, and a window taken before a switch stays readable); and on
 * Linux, in a memory cgroup of the test's own, that the automatic mode turns
 * to positional reads when a mapped file far larger than the cgroup's page
 * cache is read at random (the cache thrashes), and back to the mapping once
 * the limit is raised (the cache may hold more than where it thrashed): the
 * signal the library reads is the kernel's, so this is the one place it is
 * shown.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#  include <errno.h>
#  include <fcntl.h>
#  include <sys/mman.h>
#  include <time.h>
#  include <unistd.h>

#  include "memlimit.h"
#endif

#include "support.h"

#define FILE_LEN (4u << 20)

/* Every mode is a process-wide setting: each test puts back what it found. */
static int32_t set_mode(int32_t mode)
{
    int32_t old = nd_memory_mode(mode);
    assert_true(old >= 0);
    return old;
}

static void modes_are_set_and_asked(void **state)
{
    (void)state;
    int32_t old = set_mode(ND_MEMORY_POSITIONAL);
    assert_int_equal(ND_MEMORY_POSITIONAL, nd_memory_mode(-1));
    assert_int_equal(ND_MEMORY_POSITIONAL, set_mode(ND_MEMORY_MAPPED));
    assert_int_equal(ND_MEMORY_MAPPED, set_mode(old));
    assert_status(ND_E_INVALID_ARGUMENT, nd_memory_mode(3));
    assert_message_contains("nd_memory_mode: mode 3");
    assert_status(ND_E_INVALID_ARGUMENT, nd_memory_mode(-2));
    assert_int_equal(old, nd_memory_mode(-1)); /* a refused call changes nothing */
}

static int in_mapping(const uint8_t *p, const uint8_t *map, int64_t len)
{
    return p >= map && p < map + len;
}

/* A mapped input in each forced mode: where its windows point, that every kind
 * of read returns the file's bytes, that a window from before a switch still
 * reads, and that an input that is not mapped never reads through a mapping. */
static void forced_modes_choose_the_mapping_or_the_descriptor(void **state)
{
    tst_env *env = *state;
    uint8_t *data = tst_put_random(env, "f", FILE_LEN, 3);
    int32_t old = set_mode(ND_MEMORY_MAPPED);
    static const uint32_t flags[] = {ND_IO_MMAP, ND_IO_MMAP | ND_IO_RANDOM,
                                     ND_IO_MMAP | ND_IO_SEQUENTIAL};
    for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++) {
        set_mode(ND_MEMORY_MAPPED);
        nd_handle in, plain;
        const uint8_t *map, *w;
        assert_status(ND_OK, nd_open_input(env->dir, "f", flags[f], &in));
        assert_status(ND_OK, nd_open_input(env->dir, "f", 0, &plain));
        assert_status(1, nd_input_mapped_now(in));
        assert_status(0, nd_input_mapped_now(plain));
        assert_status(FILE_LEN, nd_input_window(in, 0, &map));
        const uint8_t *before = map + 777777;

        set_mode(ND_MEMORY_POSITIONAL);
        assert_status(0, nd_input_mapped_now(in));
        /* the mapping itself stays at hand, whole, for a binding that reads it itself */
        const uint8_t *whole;
        assert_status(FILE_LEN - 5, nd_input_map(in, 5, &whole));
        assert_ptr_equal(whole, map + 5);
        assert_status(ND_E_NOT_SUPPORTED, nd_input_map(plain, 0, &whole));
        assert_status(ND_E_EOF, nd_input_map(in, FILE_LEN, &whole));
        assert_status(ND_E_INVALID_ARGUMENT, nd_input_map(in, 0, NULL));
        int64_t n = nd_input_window(in, 1000000, &w);
        assert_true(n >= 1 && n < FILE_LEN - 1000000);
        assert_false(in_mapping(w, map, FILE_LEN));
        assert_memory_equal(w, data + 1000000, (size_t)n);
        assert_memory_equal(before, data + 777777, 4096); /* the old window still reads */
        uint8_t buf[100000];
        assert_status(sizeof buf, nd_read_bytes(in, 2000001, buf, sizeof buf));
        assert_memory_equal(buf, data + 2000001, sizeof buf);
        assert_status(ND_OK, nd_input_seek(in, 3000003));
        assert_status(5000, nd_read_buffered(in, buf, 5000));
        assert_memory_equal(buf, data + 3000003, 5000);
        assert_status(data[3005003], nd_read_byte_buffered(in));
        const uint8_t *rw;
        n = nd_input_read_from(in, 12345, buf, 999, &rw);
        assert_true(n >= 1);
        assert_memory_equal(buf, data + 12345, 999);
        assert_false(in_mapping(rw, map, FILE_LEN));
        assert_memory_equal(rw, data + 12345 + 999, (size_t)n);
        assert_status(ND_OK, nd_input_prefetch(in, 0, FILE_LEN));
        assert_status(ND_OK, nd_input_advise(in, ND_IO_RANDOM));

        set_mode(ND_MEMORY_MAPPED); /* and back: the mapping is read again */
        assert_status(1, nd_input_mapped_now(in));
        assert_true(nd_input_window(in, 54321, &w) >= 1);
        assert_ptr_equal(w, map + 54321);
        assert_status(sizeof buf, nd_read_bytes(in, 1, buf, sizeof buf));
        assert_memory_equal(buf, data + 1, sizeof buf);
        assert_status(ND_OK, nd_input_unpin(in));
        assert_status(ND_OK, nd_close(in));
        assert_status(ND_OK, nd_close(plain));
    }
    set_mode(old);
    free(data);
}

/* The automatic mode with nothing thrashing (the test's own process, unlimited or
 * not: the first sample has no rate yet) reads through the mapping. */
static void auto_mode_starts_on_the_mapping(void **state)
{
    tst_env *env = *state;
    free(tst_put_random(env, "f", 65536, 4));
    int32_t old = set_mode(ND_MEMORY_AUTO);
    nd_handle in;
    assert_status(ND_OK, nd_open_input(env->dir, "f", ND_IO_MMAP, &in));
    assert_status(1, nd_input_mapped_now(in));
    assert_status(ND_OK, nd_close(in));
    set_mode(old);
}

#if defined(__linux__)
/* How many of the pages of [off, off+len) of the file are in the page cache,
 * seen from outside the library (a mapping of its own and mincore). */
static int cached_pages(const char *path, int64_t off, int64_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    long page = sysconf(_SC_PAGESIZE);
    int64_t from = off - off % page, n = (off + len - from + page - 1) / page;
    void *map = mmap(NULL, (size_t)(n * page), PROT_READ, MAP_SHARED, fd, from);
    assert_true(map != MAP_FAILED);
    unsigned char vec[64];
    assert_true(n <= (int64_t)sizeof vec);
    assert_int_equal(0, mincore(map, (size_t)(n * page), vec));
    int in = 0;
    for (int64_t i = 0; i < n; i++)
        in += vec[i] & 1;
    munmap(map, (size_t)(n * page));
    close(fd);
    return in;
}

/* Whether `got` bytes of a `len`-byte file in the page cache show it was read
 * in: 7/8 of it at least. Not all of it: the machine may reclaim page cache
 * that nothing maps at any moment (proactive reclaim, such as DAMON's on
 * virtual machines), and read-ahead pages, never touched, go first. A read-in
 * that did not happen leaves at most what the cgroup's cache had room for:
 * nothing, or an eighth of the file. */
static int read_in(int64_t got, int64_t len)
{
    return got >= len - len / 8;
}

/* One read of 5000 bytes at an unaligned offset of a file nobody has cached
 * (so two pages), through an input opened with `flags` in `mode`: how many of
 * those pages the page cache holds afterwards. */
static int pages_left_by(tst_env *env, uint32_t flags, int32_t mode)
{
    char path[TST_PATH_MAX];
    tst_join(path, sizeof path, env->dir_path, "f");
    tst_drop_cache(env->dir_path, "f");
    assert_int_equal(0, cached_pages(path, 100000, 5000));
    int32_t old = set_mode(mode);
    nd_handle in;
    uint8_t buf[5000];
    assert_status(ND_OK, nd_open_input(env->dir, "f", flags, &in));
    assert_status(sizeof buf, nd_read_bytes(in, 100000, buf, sizeof buf));
    int left = cached_pages(path, 100000, 5000);
    assert_status(ND_OK, nd_close(in));
    set_mode(old);
    return left;
}
#endif

/* ND_IO_NOREUSE: while mapped inputs read positionally (here forced), a read
 * of the input leaves none of the pages it brought in cached, by whole pages,
 * mapped or buffered; while they read through the mapping, or without the
 * flag (the control), the pages stay. A mapped one reads a block at a time. */
static void noreuse_reads_keep_nothing_while_positional(void **state)
{
    tst_env *env = *state;
    free(tst_put_random(env, "f", 1 << 20, 5));
    nd_handle in;
    assert_status(ND_OK,
                  nd_open_input(env->dir, "f", ND_IO_MMAP | ND_IO_RANDOM | ND_IO_NOREUSE, &in));
    assert_status(16384, nd_input_buffer_size(in));
    assert_status(ND_OK, nd_close(in));
    assert_status(ND_OK, nd_open_input(env->dir, "f", ND_IO_MMAP | ND_IO_RANDOM, &in));
    assert_status(4096, nd_input_buffer_size(in));
    assert_status(ND_OK, nd_close(in));
#if defined(__linux__)
    const uint32_t noreuse = ND_IO_RANDOM | ND_IO_NOREUSE;
    assert_int_equal(0, pages_left_by(env, ND_IO_MMAP | noreuse, ND_MEMORY_POSITIONAL));
    assert_int_equal(0, pages_left_by(env, noreuse, ND_MEMORY_POSITIONAL));
    /* the controls: without the flag, or through the mapping, the pages stay */
    assert_int_equal(2, pages_left_by(env, ND_IO_MMAP | ND_IO_RANDOM, ND_MEMORY_POSITIONAL));
    assert_int_equal(2, pages_left_by(env, ND_IO_RANDOM, ND_MEMORY_POSITIONAL));
    assert_int_equal(2, pages_left_by(env, ND_IO_MMAP | noreuse, ND_MEMORY_MAPPED));
#endif
}

#if defined(__linux__)
static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Random 4 KiB reads of `in` until nd_input_mapped_now says `want` or `limit`
 * seconds pass; the seconds it took, or -1. */
static double read_until(nd_handle in, int64_t len, int32_t want, double limit, uint64_t *x)
{
    double t0 = seconds();
    uint8_t buf[4096];
    while (seconds() - t0 < limit) {
        for (int i = 0; i < 64; i++) {
            *x = *x * 6364136223846793005ull + 1442695040888963407ull;
            int64_t at = (int64_t)((*x >> 20) % (uint64_t)(len - (int64_t)sizeof buf));
            if (nd_read_bytes(in, at, buf, sizeof buf) != (int64_t)sizeof buf)
                return -2;
        }
        if (nd_input_mapped_now(in) == want)
            return seconds() - t0;
    }
    return -1;
}

/* Random reads of `in` for `seconds`, asking nothing; with a `sampler` (an
 * input read once per use, mapped), a prefetch of its first block every 64
 * reads: the library samples the page cache when asked whether memory has
 * room (a buffered input never asks), and no mapping is read. 0, or -1 if a
 * read failed. */
static int read_for(nd_handle in, int64_t len, double limit, uint64_t *x, nd_handle sampler)
{
    double t0 = seconds();
    uint8_t buf[4096];
    for (unsigned i = 0; seconds() - t0 < limit; i++) {
        if (sampler != 0 && i % 64 == 0)
            nd_input_prefetch(sampler, 0, 4096);
        *x = *x * 6364136223846793005ull + 1442695040888963407ull;
        int64_t at = (int64_t)((*x >> 20) % (uint64_t)(len - (int64_t)sizeof buf));
        if (nd_read_bytes(in, at, buf, sizeof buf) != (int64_t)sizeof buf)
            return -1;
    }
    return 0;
}

/* Whether random reads of `in` stay off mode `other` for `seconds`; if not,
 * says `what` and when. */
static int stays(nd_handle in, int64_t len, int32_t other, double seconds, uint64_t *x,
                 const char *what)
{
    double t = read_until(in, len, other, seconds, x);
    if (t != -1)
        fprintf(stderr, "test_memory: %s after %.2f s\n", what, t);
    return t == -1;
}

/* With the memory at its limit, a prefetch of a block read once per use
 * (ND_IO_NOREUSE, `once`) brings nothing in: the bytes around it would crowd
 * out pages read again. The control: the same prefetch through an input
 * without the flag brings the range in. 1 if so, else 0 (printed). */
static int prefetch_waits_for_room(const char *dir_path, nd_handle dir, nd_handle once)
{
    char path[TST_PATH_MAX];
    tst_join(path, sizeof path, dir_path, "fresh");
    enum { AT = 8 << 20, LEN = 64 << 10 };
    tst_drop_cache(dir_path, "fresh");
    if (nd_input_prefetch(once, AT, LEN) != ND_OK) {
        fprintf(stderr, "test_memory: prefetch: %s\n", nd_last_error_message());
        return 0;
    }
    struct timespec pause = {0, 300 * 1000 * 1000};
    nanosleep(&pause, NULL);
    int in = cached_pages(path, AT, LEN);
    if (in != 0) {
        fprintf(stderr,
                "test_memory: with memory at its limit, a prefetch of a file read once "
                "per use brought %d of its pages in\n",
                in);
        return 0;
    }
    nd_handle plain;
    if (nd_open_input(dir, "fresh", ND_IO_MMAP | ND_IO_RANDOM, &plain) != ND_OK ||
        nd_input_prefetch(plain, AT, LEN) != ND_OK) {
        fprintf(stderr, "test_memory: control: %s\n", nd_last_error_message());
        return 0;
    }
    /* Half of them will do: at its limit, the cgroup's own reclaim (and the
     * machine's, see read_in) may take some back as soon as they come in. */
    for (int i = 0; i < 40 && (in = cached_pages(path, AT, LEN)) < LEN / 4096 / 2; i++)
        nanosleep(&pause, NULL);
    nd_close(plain);
    if (in < LEN / 4096 / 2) {
        fprintf(stderr,
                "test_memory: control: a prefetch without the flag brought %d of %d "
                "pages in\n",
                in, LEN / 4096);
        return 0;
    }
    fprintf(stderr, "test_memory: at the limit, a prefetch of a file read once per use waits "
                    "(the control's brings its pages in)\n");
    return 1;
}

typedef struct {
    const char *dir;
    ndml_cgroup first, cg; /* made and removed by the parent: a cgroup a process is in stays */
    char why[800];
} thrash_ctx;

/* The share of the machine's memory that is free (/proc/meminfo), or -1. */
static double machine_free_share(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (f == NULL)
        return -1;
    char line[256];
    long long total = -1, free_kb = -1, v;
    while (fgets(line, sizeof line, f) != NULL) {
        if (sscanf(line, "MemTotal: %lld", &v) == 1)
            total = v;
        else if (sscanf(line, "MemFree: %lld", &v) == 1)
            free_kb = v;
    }
    fclose(f);
    return total > 0 && free_kb >= 0 ? (double)free_kb / (double)total : -1;
}

/* Limits the cgroup to `cache` bytes of page cache on top of what the process
 * holds now besides the cache (more under a sanitizer's shadow memory), which
 * cannot be reclaimed; that memory goes to *held. The limit, or -1 (printed). */
static int64_t limit_cache(ndml_cgroup *cg, int64_t cache, int64_t *held)
{
    ndml_stat st;
    if (ndml_read_stat(cg, &st) != 0) {
        fprintf(stderr, "test_memory: cgroup: %s\n", cg->error);
        return -1;
    }
    int64_t h = st.usage - (st.file > 0 ? st.file : 0);
    *held = h > 0 ? h : 0;
    if (ndml_set_limit(cg, *held + cache) != 0) {
        fprintf(stderr, "test_memory: cgroup: %s\n", cg->error);
        return -1;
    }
    return *held + cache;
}

/* The cache thrashed by others' reads (a buffered input's: no mapping read)
 * brings the mapping back after 2 s of calm, and a pause in the reads is no
 * calm: with the limit at 48 MiB, buffered random reads of `big` (8 times
 * it, the library asked by a prefetch) thrash the cache; calm reads that
 * keep nothing (`fresh`, ND_IO_NOREUSE)
 * for half a second, then none for 2.5 s, then calm reads again stay
 * positional for 1.2 s (the pause counted as calm would bring the mapping
 * back at once), and go back to the mapping within 3 s (the control: calm
 * that is seen does). 0 or -1 (printed). */
static int pause_is_no_calm(ndml_cgroup *cg, nd_handle dir, uint64_t *x)
{
    int rc = -1;
    nd_handle plain = 0, calm = 0;
    int64_t len, calm_len, held;
    if (limit_cache(cg, 48 << 20, &held) < 0)
        return -1;
    if (nd_open_input(dir, "big", ND_IO_RANDOM, &plain) != ND_OK ||
        nd_open_input(dir, "fresh", ND_IO_MMAP | ND_IO_RANDOM | ND_IO_NOREUSE, &calm) != ND_OK) {
        fprintf(stderr, "test_memory: open: %s\n", nd_last_error_message());
        goto out;
    }
    nd_input_length(plain, &len);
    nd_input_length(calm, &calm_len);
    if (read_for(plain, len, 3, x, calm) != 0) {
        fprintf(stderr, "test_memory: read: %s\n", nd_last_error_message());
        goto out;
    }
    if (nd_input_mapped_now(calm) != 0) {
        fprintf(stderr, "test_memory: 3 s of buffered random reads of 8x the cache did not "
                        "thrash it\n");
        goto out;
    }
    if (read_for(calm, calm_len, 0.5, x, 0) != 0) {
        fprintf(stderr, "test_memory: read: %s\n", nd_last_error_message());
        goto out;
    }
    usleep(2500 * 1000);
    if (!stays(calm, calm_len, 1, 1.2, x,
               "after a pause in the reads, the mapping came back without 2 s of calm seen"))
        goto out;
    double t = read_until(calm, calm_len, 1, 3, x);
    if (t < 0) {
        fprintf(stderr, "test_memory: calm reads after a thrash of others did not bring the "
                        "mapping back in 3 s\n");
        goto out;
    }
    fprintf(stderr,
            "test_memory: a pause is no calm: positional 1.2 s after it, mapped again "
            "%.2f s later\n",
            1.2 + t);
    rc = 0;
out:
    if (plain != 0)
        nd_close(plain);
    if (calm != 0)
        nd_close(calm);
    return rc;
}

/* The bytes of `name` in the page cache, after waiting up to `seconds` for all
 * of them (0: at once). */
static int64_t cached_after(const char *dir, const char *name, double seconds)
{
    char path[TST_PATH_MAX], why[200];
    tst_join(path, sizeof path, dir, name);
    int64_t bytes = 0, cached = -1;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        if (ndml_residency(path, 0, &bytes, &cached, why, sizeof why) != 0)
            return -1;
        clock_gettime(CLOCK_MONOTONIC, &t);
        double dt = (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9;
        if (cached >= bytes || dt >= seconds)
            return cached;
        usleep(20000);
    }
}

/* The limit back at an eighth of `in`'s file (48 MiB of cache on top of what
 * the process holds, which goes to *held): its mapped reads thrash and turn
 * positional within 10 s. 0 or -1 (printed). */
static int thrash_again(ndml_cgroup *cg, nd_handle in, int64_t len, int64_t *held, uint64_t *x)
{
    if (limit_cache(cg, 48 << 20, held) < 0)
        return -1;
    if (read_until(in, len, 0, 10, x) < 0) {
        fprintf(stderr, "test_memory: the limit back at an eighth of the file, the reads did "
                        "not turn positional in 10 s\n");
        return -1;
    }
    return 0;
}

/* Room is seen at once: a mapping that thrashed comes back as soon as the
 * cache may hold far more, without waiting for calm reads. `in` is mapped and
 * positional now, its cache thrashing at an eighth of its file; the limit is
 * back there, thrashing again, on success. 0 or -1 (printed).
 * - After a pause in the reads (more than a second without a sample), the
 *   first read is mapped again if the limit rose meanwhile; the control, the
 *   same pause at the same limit, stays positional.
 * - With no pause (the last sample just taken), the limit rises and a
 *   directory opens at once: the open reads the room, the mapping is back,
 *   and an input opened ND_IO_WARM is read in at open, as in a process that
 *   never thrashed. */
static int room_is_seen_at_once(ndml_cgroup *cg, const char *dir_path, nd_handle in, int64_t len,
                                int64_t held, uint64_t *x)
{
    usleep(1200 * 1000);
    if (nd_input_mapped_now(in) != 0) {
        fprintf(stderr, "test_memory: after a pause at the limit where the mapping thrashed, "
                        "the first read went back to the mapping\n");
        return -1;
    }
    usleep(1200 * 1000);
    if (ndml_set_limit(cg, held + 4 * len) != 0) {
        fprintf(stderr, "test_memory: cgroup: %s\n", cg->error);
        return -1;
    }
    if (nd_input_mapped_now(in) != 1) {
        fprintf(stderr, "test_memory: after a pause in which the limit rose to 4x the file, "
                        "the first read stayed positional\n");
        return -1;
    }
    fprintf(stderr, "test_memory: after a pause, the first read is mapped again if the limit "
                    "rose meanwhile, and positional if it did not\n");
    if (thrash_again(cg, in, len, &held, x) != 0)
        return -1;
    int rc = -1;
    nd_handle dir = 0, warm = 0;
    if (ndml_set_limit(cg, held + 4 * len) != 0) {
        fprintf(stderr, "test_memory: cgroup: %s\n", cg->error);
        return -1;
    }
    if (nd_open_dir(dir_path, 0, &dir) != ND_OK ||
        nd_open_input(dir, "big", ND_IO_MMAP | ND_IO_WARM, &warm) != ND_OK) {
        fprintf(stderr, "test_memory: open: %s\n", nd_last_error_message());
        goto out;
    }
    if (nd_input_mapped_now(in) != 1) {
        fprintf(stderr, "test_memory: a directory opened just after the limit rose to 4x the "
                        "file, the reads stayed positional\n");
        goto out;
    }
    int64_t got = cached_after(dir_path, "big", 10);
    if (!read_in(got, len)) {
        fprintf(stderr,
                "test_memory: a search input opened just after the limit rose: %lld of its "
                "%lld bytes read in 10 s after its open\n",
                (long long)got, (long long)len);
        goto out;
    }
    fprintf(stderr, "test_memory: the limit risen, a directory opened at once maps and reads "
                    "its search input in at open\n");
    nd_close(warm);
    warm = 0;
    if (thrash_again(cg, in, len, &held, x) != 0)
        goto out;
    rc = 0;
out:
    if (warm != 0)
        nd_close(warm);
    if (dir != 0)
        nd_close(dir);
    return rc;
}

/* How much the heap grows just before the mapping thrashes: half the cache's room. */
#  define HEAP_SWING (24 << 20)

/* In a child process that moves between two cgroups of its own. First the
 * control, in the first: with no limit, the same random reads of a file nobody
 * has read yet (major faults, a cache filling) stay on the mapping. Then the
 * process moves to the second, as a supervisor may move a running server, and
 * that one gets a limit of an eighth of the file: the reads turn positional
 * within a few samples, so the library follows the process to the cgroup it
 * is in now (the first one's counters never see this thrashing). Its heap
 * grew by half the cache's room just before, and shrinks back after. A
 * prefetch of a file read once per use then waits for room; reads that keep
 * nothing (ND_IO_NOREUSE) are calm, yet stay positional, the mapping having
 * thrashed, and the room the heap gave back being no more than it had seconds
 * before the thrash.
 * With the limit raised to four times the file the reads go back to the
 * mapping at once, and stay there while they fault back pages the old limit
 * evicted (refaults, with no pressure now). Back at an eighth, they thrash
 * again, and with no limit at all the machine's memory is the cgroup's.
 * Exit codes: 0 ok, else a failure the child prints. */
static int thrash_then_calm(void *arg)
{
    thrash_ctx *ctx = arg;
    ndml_cgroup *first = &ctx->first, *cg = &ctx->cg;
    int rc = 1;
    nd_handle dir = 0, in = 0;
    void *heap = NULL;
    if (ndml_join(first, 0) != 0) {
        fprintf(stderr, "test_memory: cgroup: %s\n", first->error);
        goto out;
    }
    char path[TST_PATH_MAX];
    tst_join(path, sizeof path, ctx->dir, "big");
    ndml_evict(path, NULL, NULL, ctx->why, sizeof ctx->why);
    if (nd_open_dir(ctx->dir, 0, &dir) != ND_OK ||
        nd_open_input(dir, "big", ND_IO_MMAP, &in) != ND_OK) {
        fprintf(stderr, "test_memory: open: %s\n", nd_last_error_message());
        goto out;
    }
    int64_t len;
    nd_input_length(in, &len);
    uint64_t x = 12345;
    double t = read_until(in, len, 0, 2, &x);
    if (t != -1) {
        fprintf(stderr,
                "test_memory: with no limit, cold random reads turned positional (%.2f s): "
                "a cache filling was taken for one thrashing\n",
                t);
        goto out;
    }
    fprintf(stderr, "test_memory: control: 2 s of cold reads without a limit stayed mapped\n");
    if (ndml_join(cg, 0) != 0) {
        fprintf(stderr, "test_memory: cgroup: %s\n", cg->error);
        goto out;
    }
    /* the pages the control read stay charged to the first cgroup: unmapped and
     * dropped, so this one's reads fault them in again, under its limit */
    nd_close(in);
    in = 0;
    ndml_evict(path, NULL, NULL, ctx->why, sizeof ctx->why);
    if (nd_open_input(dir, "big", ND_IO_MMAP, &in) != ND_OK) {
        fprintf(stderr, "test_memory: open: %s\n", nd_last_error_message());
        goto out;
    }
    /* The cache gets 48 MiB, an eighth of the file, on top of what the process holds. */
    int64_t held, limit = limit_cache(cg, 48 << 20, &held);
    if (limit < 0)
        goto out;
    fprintf(stderr, "test_memory: the process holds %lld MiB; limit %lld MiB\n",
            (long long)(held >> 20), (long long)(limit >> 20));
    /* The heap swings: samples with the process as it is (the cache empty, so
     * nothing thrashes yet), then it grows by 24 MiB and the mapping thrashes
     * with half the room; below, the heap shrinks back. The mapping had that
     * room seconds ago, so it does not come back for it. */
    for (int i = 0; i < 2; i++) {
        nd_input_mapped_now(in);
        usleep(300 * 1000);
    }
    heap = mmap(NULL, HEAP_SWING, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (heap == MAP_FAILED) {
        heap = NULL;
        fprintf(stderr, "test_memory: mmap of the heap's swing: %s\n", strerror(errno));
        goto out;
    }
    memset(heap, 1, HEAP_SWING);
    t = read_until(in, len, 0, 10, &x);
    if (t < 0) {
        fprintf(stderr, "test_memory: random reads of a file 8x the cgroup's cache through its "
                        "mapping did not turn positional in 10 s\n");
        goto out;
    }
    fprintf(stderr, "test_memory: thrashing: positional reads after %.2f s\n", t);
    /* Reads that keep nothing (ND_IO_NOREUSE) are calm at once at the level
     * where the mapping thrashed (a file of its own, that no eviction has left
     * shadows of: its reads are no refaults). The mapping having thrashed,
     * they stay positional past the 2 s of calm that would do after a thrash
     * of other readers. */
    nd_handle once;
    int64_t once_len;
    if (nd_open_input(dir, "fresh", ND_IO_MMAP | ND_IO_RANDOM | ND_IO_NOREUSE, &once) != ND_OK) {
        fprintf(stderr, "test_memory: open: %s\n", nd_last_error_message());
        goto out;
    }
    nd_input_length(once, &once_len);
    if (!prefetch_waits_for_room(ctx->dir, dir, once)) {
        nd_close(once);
        goto out;
    }
    munmap(heap, HEAP_SWING);
    heap = NULL;
    int stayed = stays(once, once_len, 1, 4, &x,
                       "calm reads that keep nothing went back to the mapping, at the limit "
                       "where it thrashed, when the heap shrank back to where it was seconds "
                       "before");
    nd_close(once);
    if (!stayed)
        goto out;
    fprintf(stderr, "test_memory: 4 s of calm reads that keep nothing stayed positional, the "
                    "heap back to where it was before the thrash\n");
    /* The limit raised to four times the file: the cache may now hold far
     * more than where the mapping thrashed, so it comes back at once, not
     * after the calm period it would need at the same limit. */
    if (ndml_set_limit(cg, held + 4 * len) != 0) {
        fprintf(stderr, "test_memory: cgroup: %s\n", cg->error);
        goto out;
    }
    t = read_until(in, len, 1, 1.5, &x);
    if (t < 0) {
        fprintf(stderr, "test_memory: with the limit raised to 4x the file, the reads did not go "
                        "back to the mapping in 1.5 s\n");
        goto out;
    }
    fprintf(stderr, "test_memory: limit raised: mapped reads again after %.2f s\n", t);
    /* Its reads now fault back pages evicted under the old limit, one page a
     * fault (random advice): refaults, as many a second as thrashing makes,
     * but with the cgroup far below its limit nothing evicts them now, and
     * the reads stay on the mapping. */
    nd_handle rnd;
    if (nd_open_input(dir, "big", ND_IO_MMAP | ND_IO_RANDOM, &rnd) != ND_OK) {
        fprintf(stderr, "test_memory: open: %s\n", nd_last_error_message());
        goto out;
    }
    stayed = stays(rnd, len, 0, 3, &x,
                   "refaults of pages evicted under an earlier limit turned the reads "
                   "positional, with the cgroup far below its limit");
    nd_close(rnd);
    if (!stayed)
        goto out;
    fprintf(stderr, "test_memory: 3 s of refaults far below the limit stayed mapped\n");
    /* The limit back at an eighth of the file: the mapping thrashes again. Then
     * the cgroup loses its limit, as a systemd service has none by default: the
     * machine's memory is its limit now. Where the machine has plenty free,
     * the pages read back (evicted by the limit the cgroup no longer has) are
     * no thrashing, and the mapping comes back at once; where it has little,
     * they are, and the reads stay positional. */
    /* what the process holds now (more than before under a sanitizer) stays on top */
    if (thrash_again(cg, in, len, &held, &x) != 0)
        goto out;
    if (room_is_seen_at_once(cg, ctx->dir, in, len, held, &x) != 0)
        goto out;
    if (ndml_set_limit(cg, -1) != 0) {
        fprintf(stderr, "test_memory: cgroup: %s\n", cg->error);
        goto out;
    }
    double free_share = machine_free_share();
    if (free_share >= 0.3) {
        t = read_until(in, len, 1, 1.5, &x);
        if (t < 0) {
            fprintf(stderr,
                    "test_memory: the limit removed, with %.0f%% of the machine's memory "
                    "free, the reads did not go back to the mapping in 1.5 s\n",
                    100 * free_share);
            goto out;
        }
        fprintf(stderr,
                "test_memory: limit removed, %.0f%% of the machine free: mapped reads "
                "again after %.2f s\n",
                100 * free_share, t);
    } else if (free_share >= 0 && free_share < 0.15) {
        if (!stays(in, len, 1, 2, &x,
                   "the limit removed, with little of the machine free, "
                   "refaults went back to the mapping"))
            goto out;
        fprintf(stderr,
                "test_memory: limit removed, %.0f%% of the machine free: 2 s of "
                "refaults stayed positional\n",
                100 * free_share);
    } else {
        fprintf(stderr,
                "test_memory: SKIPPED the cgroup without a limit: %.0f%% of the "
                "machine's memory is free, near the line where it is pressed\n",
                100 * free_share);
    }
    if (pause_is_no_calm(cg, dir, &x) != 0)
        goto out;
    rc = 0;
out:
    if (heap != NULL)
        munmap(heap, HEAP_SWING);
    if (in != 0)
        nd_close(in);
    if (dir != 0)
        nd_close(dir);
    return rc;
}

/* The cgroup tests' reasons to skip: an emulator (ND_TEST_EMULATOR), which keeps the
 * kernel's view of the process's memory from it, and no cgroup to be made here. */
static int under_emulator(void)
{
    const char *emu = getenv("ND_TEST_EMULATOR");
    return emu != NULL && emu[0] != '\0';
}

static void say_no_cgroup(const char *error)
{
    fprintf(stderr,
            "test_memory: SKIPPED: no memory cgroup can be made here (root and "
            "cgroup v1's memory controller or cgroup v2 are needed): %s\n",
            error);
}

/* ND_IO_WARM, in a child process in a cgroup of its own whose limit leaves the
 * page cache 64 MiB. The files that count (8 MiB: stored fields do not) take
 * less than half of it: a search input opened with the flag is read into the
 * cache at open, with no read of the test's, while one that keeps nothing
 * (ND_IO_NOREUSE) and one without the flag (the control) stay out. With mapped
 * inputs read positionally (forced) nothing is read in. Stored fields do not
 * count (1 GiB of them, sparse, join the directory, and the input is read in
 * again, on a fresh directory handle: each keeps its verdict for a second);
 * then the directory no longer fits (1 GiB of a file that counts) and nothing
 * is read in either. Exit codes: 0 ok, else a failure it prints. */
typedef struct {
    const char *dir;
    ndml_cgroup cg;
} warm_ctx;

static int warm_child(void *arg)
{
    warm_ctx *ctx = arg;
    enum { MiB = 1 << 20 };
    int rc = 1;
    nd_handle dir = 0, doc = 0, fdt = 0, pos = 0;
    ndml_stat st;
    if (ndml_join(&ctx->cg, 0) != 0 || ndml_read_stat(&ctx->cg, &st) != 0) {
        fprintf(stderr, "test_memory: cgroup: %s\n", ctx->cg.error);
        goto out;
    }
    int64_t held = st.usage - (st.file > 0 ? st.file : 0);
    if (ndml_set_limit(&ctx->cg, (held > 0 ? held : 0) + 64 * MiB) != 0) {
        fprintf(stderr, "test_memory: cgroup: %s\n", ctx->cg.error);
        goto out;
    }
    char why[200], path[TST_PATH_MAX];
    ndml_evict(ctx->dir, NULL, NULL, why, sizeof why);
    if (nd_open_dir(ctx->dir, 0, &dir) != ND_OK ||
        nd_open_input(dir, "a.doc", ND_IO_MMAP | ND_IO_WARM, &doc) != ND_OK ||
        nd_open_input(dir, "b.fdt", ND_IO_MMAP | ND_IO_WARM | ND_IO_RANDOM | ND_IO_NOREUSE, &fdt) !=
            ND_OK ||
        nd_open_input(dir, "c.pos", ND_IO_MMAP, &pos) != ND_OK) {
        fprintf(stderr, "test_memory: open: %s\n", nd_last_error_message());
        goto out;
    }
    int64_t got = cached_after(ctx->dir, "a.doc", 5);
    if (!read_in(got, 4 * MiB)) {
        fprintf(stderr,
                "test_memory: a search input of a directory that fits: %lld of its 4 MiB "
                "read in 5 s after its open\n",
                (long long)got);
        goto out;
    }
    if ((got = cached_after(ctx->dir, "b.fdt", 0)) != 0 ||
        (got = cached_after(ctx->dir, "c.pos", 0)) != 0) {
        fprintf(stderr,
                "test_memory: %lld bytes of an input read in that keeps nothing or was "
                "opened without ND_IO_WARM\n",
                (long long)got);
        goto out;
    }
    fprintf(stderr, "test_memory: warm: the 4 MiB read in at open; the control and the input "
                    "that keeps nothing stayed out\n");
    nd_close(doc);
    doc = 0;
    tst_join(path, sizeof path, ctx->dir, "a.doc");
    ndml_evict(path, NULL, NULL, why, sizeof why);
    int32_t old = nd_memory_mode(ND_MEMORY_POSITIONAL);
    int32_t orc = nd_open_input(dir, "a.doc", ND_IO_MMAP | ND_IO_WARM, &doc);
    nd_memory_mode(old);
    if (orc != ND_OK) {
        fprintf(stderr, "test_memory: open: %s\n", nd_last_error_message());
        goto out;
    }
    if ((got = cached_after(ctx->dir, "a.doc", 1)) != 0) {
        fprintf(stderr,
                "test_memory: %lld bytes read in while mapped inputs read "
                "positionally\n",
                (long long)got);
        goto out;
    }
    nd_close(doc);
    doc = 0;
    /* Stored fields do not count: they are never read in. With 1 GiB of them
     * (sparse: no page), for the limit's 64 MiB, the rest still fits. Then
     * 1 GiB of a file that counts, and the directory no longer fits. */
    static const char *const sparse[] = {"h.fdt", "huge"};
    for (int k = 0; k < 2; k++) {
        tst_join(path, sizeof path, ctx->dir, sparse[k]);
        int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0 || ftruncate(fd, (off_t)1 << 30) != 0) {
            fprintf(stderr, "test_memory: a sparse file: %s\n", strerror(errno));
            if (fd >= 0)
                close(fd);
            goto out;
        }
        close(fd);
        nd_close(dir);
        dir = 0;
        tst_join(path, sizeof path, ctx->dir, "a.doc");
        ndml_evict(path, NULL, NULL, why, sizeof why);
        if (nd_open_dir(ctx->dir, 0, &dir) != ND_OK ||
            nd_open_input(dir, "a.doc", ND_IO_MMAP | ND_IO_WARM, &doc) != ND_OK) {
            fprintf(stderr, "test_memory: open: %s\n", nd_last_error_message());
            goto out;
        }
        got = cached_after(ctx->dir, "a.doc", k == 0 ? 5 : 1);
        if (k == 0 && !read_in(got, 4 * MiB)) {
            fprintf(stderr,
                    "test_memory: beside 1 GiB of stored fields: %lld of the 4 MiB read "
                    "in 5 s after its open\n",
                    (long long)got);
            goto out;
        }
        if (k == 1 && got != 0) {
            fprintf(stderr, "test_memory: %lld bytes read in of a directory that does not fit\n",
                    (long long)got);
            goto out;
        }
        nd_close(doc);
        doc = 0;
    }
    fprintf(stderr, "test_memory: warm: read in beside 1 GiB of stored fields; nothing read "
                    "in while positional, nor of a directory that does not fit\n");
    rc = 0;
out:
    if (doc != 0)
        nd_close(doc);
    if (fdt != 0)
        nd_close(fdt);
    if (pos != 0)
        nd_close(pos);
    if (dir != 0)
        nd_close(dir);
    return rc;
}

static void warm_reads_in_what_fits(void **state)
{
    tst_env *env = *state;
    if (under_emulator()) {
        tst_loud_skip("ND_IO_WARM reading a file in",
                      "running under an emulator, which does not hand madvise to the kernel");
        skip();
    }
    free(tst_put_random(env, "a.doc", 4u << 20, 51));
    free(tst_put_random(env, "b.fdt", 4u << 20, 52));
    free(tst_put_random(env, "c.pos", 4u << 20, 53));
    warm_ctx ctx = {.dir = env->dir_path};
    if (ndml_create(&ctx.cg, "nd-test-warm") != 0) {
        say_no_cgroup(ctx.cg.error);
        skip();
    }
    int32_t old = set_mode(ND_MEMORY_AUTO);
    int rc = tst_run_child(warm_child, &ctx);
    set_mode(old);
    int removed = ndml_remove(&ctx.cg);
    assert_int_equal(0, rc);
    assert_int_equal(0, removed);
}

static void auto_mode_follows_the_page_cache(void **state)
{
    tst_env *env = *state;
    if (under_emulator())
        skip(); /* the cgroup is the host's; under an emulator the reads are too slow to thrash */
    enum { BIG = 384 << 20, FRESH = 64 << 20 };
    char path[TST_PATH_MAX];
    tst_join(path, sizeof path, env->dir_path, "big");
    uint8_t *chunk = tst_random_buffer(1 << 20, 9);
    assert_int_equal(0, tst_write_file(path, chunk, 1 << 20));
    for (int64_t at = 1 << 20; at < BIG; at += 1 << 20)
        assert_int_equal(0, tst_write_at(path, at, chunk, 1 << 20));
    /* read by the test of reads that keep nothing; written, then dropped */
    tst_join(path, sizeof path, env->dir_path, "fresh");
    assert_int_equal(0, tst_write_file(path, chunk, 1 << 20));
    for (int64_t at = 1 << 20; at < FRESH; at += 1 << 20)
        assert_int_equal(0, tst_write_at(path, at, chunk, 1 << 20));
    tst_drop_cache(env->dir_path, "fresh");
    free(chunk);
    thrash_ctx ctx = {.dir = env->dir_path};
    if (ndml_create(&ctx.first, "nd-test-memory-first") != 0 ||
        ndml_create(&ctx.cg, "nd-test-memory") != 0) {
        say_no_cgroup(ctx.first.error[0] != '\0' ? ctx.first.error : ctx.cg.error);
        ndml_remove(&ctx.first);
        skip();
    }
    int32_t old = set_mode(ND_MEMORY_AUTO);
    int rc = tst_run_child(thrash_then_calm, &ctx);
    set_mode(old);
    /* both go whatever the child did; its failure, which it printed, is reported first */
    int removed = ndml_remove(&ctx.cg);
    removed |= ndml_remove(&ctx.first);
    assert_int_equal(0, rc);
    assert_int_equal(0, removed);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(modes_are_set_and_asked),
        cmocka_unit_test_setup_teardown(forced_modes_choose_the_mapping_or_the_descriptor,
                                        tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(auto_mode_starts_on_the_mapping, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(noreuse_reads_keep_nothing_while_positional, tst_setup,
                                        tst_teardown),
#if defined(__linux__)
        cmocka_unit_test_setup_teardown(auto_mode_follows_the_page_cache, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(warm_reads_in_what_fits, tst_setup, tst_teardown),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
