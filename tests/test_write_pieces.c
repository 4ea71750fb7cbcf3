/*
 * test_write_pieces.c - the pieces a buffered output hands the OS.
 *
 * On Linux the page cache makes its folios as large as each write allows, and
 * a fresh mapping faults a 2 MiB folio in with one PMD where 64 KiB folios
 * cost a fault each few pages (7-13x slower to scan). So a buffered output
 * writes a file's first min(length, 2 MiB) bytes in one piece, and 2 MiB
 * pieces aligned to 2 MiB after that, whatever the sizes of the calls that
 * filled it. Checked here by watching every pwrite the library makes (the
 * executable's pwrite comes first in glibc's symbol lookup, as strace would
 * see them), for random call sizes from 1 B to 3 MiB, with and without
 * flushes in between; and end to end, where the kernel maps large folios of
 * a file written in one pwrite with PMDs, by the FilePmdMapped of a mapping
 * of a file written in 64 KiB calls.
 *
 * Elsewhere (Windows, macOS) the outputs keep their 64 KiB buffer: these
 * tests skip, loudly. Every file's content is also checked against a model.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

#if defined(__linux__) && defined(__GLIBC__)
#  define ND_WATCH_WRITES 1
#  include <dlfcn.h>
#  include <fcntl.h>
#  include <stdatomic.h>
#  include <sys/mman.h>
#  include <unistd.h>

#  define LARGE ((int64_t)2 << 20)
#  define MAX_WRITES 8192

typedef struct {
    int64_t off;
    int64_t len;
} piece;

static atomic_int watching;
static piece writes[MAX_WRITES];
static int nwrites, overflow;

static void record(off_t off, size_t n)
{
    if (!atomic_load(&watching))
        return;
    if (nwrites == MAX_WRITES) {
        overflow = 1;
        return;
    }
    writes[nwrites].off = (int64_t)off;
    writes[nwrites].len = (int64_t)n;
    nwrites++;
}

typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    static pwrite_fn real;
    if (real == NULL)
        real = (pwrite_fn)dlsym(RTLD_NEXT, "pwrite");
    ssize_t done = real(fd, buf, n, off);
    if (done > 0)
        record(off, (size_t)done);
    return done;
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
    static pwrite_fn real;
    if (real == NULL)
        real = (pwrite_fn)dlsym(RTLD_NEXT, "pwrite64");
    ssize_t done = real(fd, buf, n, off);
    if (done > 0)
        record(off, (size_t)done);
    return done;
}

static void start_watching(void)
{
    nwrites = 0;
    overflow = 0;
    atomic_store(&watching, 1);
}

static void stop_watching(void)
{
    atomic_store(&watching, 0);
    if (overflow)
        fail_msg("more than %d writes: raise MAX_WRITES", MAX_WRITES);
}

static uint64_t next_rand(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* A call size from 1 B to 3 MiB, spread over the scales writers use. */
static size_t call_size(uint64_t *x)
{
    uint64_t r = next_rand(x);
    switch (r % 6) {
    case 0: return 1 + (size_t)(r >> 8) % 16;   /* single bytes, vInts */
    case 1: return 1 + (size_t)(r >> 8) % 8192; /* up to 8 KiB */
    case 2: return 8192;
    case 3: return 65536;                              /* a binding's full buffer */
    case 4: return 1 + (size_t)(r >> 8) % (1u << 20);  /* up to 1 MiB */
    default: return 1 + (size_t)(r >> 8) % (3u << 20); /* up to 3 MiB */
    }
}

/* The writes cover [0, len) once, front to back. */
static void check_contiguous(int64_t len, uint64_t seed)
{
    int64_t at = 0;
    for (int i = 0; i < nwrites; i++) {
        if (writes[i].off != at)
            fail_msg("seed %llu: write %d at %lld, expected %lld", (unsigned long long)seed, i,
                     (long long)writes[i].off, (long long)at);
        at += writes[i].len;
    }
    if (at != len)
        fail_msg("seed %llu: writes end at %lld, the file is %lld bytes", (unsigned long long)seed,
                 (long long)at, (long long)len);
}

/* Every write from `from` (a multiple of 2 MiB) on starts on the 2 MiB grid, and all but the
 * last are whole multiples of 2 MiB: each fills whole large folios. */
static void check_large_pieces(int64_t from, uint64_t seed)
{
    for (int i = 0; i < nwrites; i++) {
        const piece *p = &writes[i];
        if (p->off < from)
            continue;
        if (p->off % LARGE != 0 || (i + 1 < nwrites && p->len % LARGE != 0))
            fail_msg("seed %llu: write %d of %d is [%lld, +%lld): not whole 2 MiB pieces on "
                     "their grid",
                     (unsigned long long)seed, i, nwrites, (long long)p->off, (long long)p->len);
    }
}

static void check_file(tst_env *env, const char *name, const uint8_t *want, size_t len)
{
    char path[TST_PATH_MAX];
    size_t got = 0;
    uint8_t *disk = tst_read_file(tst_join(path, sizeof(path), env->dir_path, name), &got);
    assert_non_null(disk);
    assert_int_equal(got, len);
    if (len > 0 && memcmp(disk, want, len) != 0)
        fail_msg("%s: the file's bytes differ from what was written", name);
    free(disk);
}

/* Sequential writers: random call sizes, random file lengths up to 13 MiB. */
static void pieces_are_whole_large_folios(void **state)
{
    tst_env *env = *state;
    const size_t cap = 13u << 20;
    uint8_t *src = tst_random_buffer(cap, 19);
    for (uint64_t seed = 1; seed <= 24; seed++) {
        uint64_t x = seed * 0x9E3779B97F4A7C15ull;
        /* lengths around the interesting sizes: tiny, around 64 KiB and 2 MiB, many MiB */
        static const size_t lens[] = {
            0, 1, 65535, 65536, 65537, (2u << 20) - 1, 2u << 20, (2u << 20) + 1};
        size_t len = seed <= 8 ? lens[seed - 1] : (size_t)(next_rand(&x) % cap);
        nd_handle out;
        nd_delete_file(env->dir, "p");
        assert_status(ND_OK, nd_create_output(env->dir, "p", 0, &out));
        start_watching();
        for (size_t at = 0; at < len;) {
            size_t n = call_size(&x);
            if (n > len - at)
                n = len - at;
            if (n == 1 && next_rand(&x) % 2)
                assert_status(ND_OK, nd_write_byte(out, src[at]));
            else
                assert_status((int64_t)n, nd_write_bytes(out, src + at, (int64_t)n));
            at += n;
        }
        assert_status((int64_t)len, nd_output_position(out));
        assert_status(ND_OK, nd_close(out));
        stop_watching();
        check_contiguous((int64_t)len, seed);
        check_large_pieces(0, seed);
        /* under 2 MiB the whole file is one write: one folio as large as it can be */
        if (len > 0 && len <= (size_t)LARGE && nwrites != 1)
            fail_msg("seed %llu: %zu bytes took %d writes, not one", (unsigned long long)seed, len,
                     nwrites);
        check_file(env, "p", src, len);
    }
    free(src);
}

/* A flush (or sync) writes what is buffered wherever the file is; the writes after the next
 * 2 MiB boundary are whole 2 MiB pieces on the grid again. */
static void pieces_return_to_the_grid_after_a_flush(void **state)
{
    tst_env *env = *state;
    const size_t cap = 11u << 20;
    uint8_t *src = tst_random_buffer(cap, 20);
    for (uint64_t seed = 1; seed <= 12; seed++) {
        uint64_t x = seed * 0xD1B54A32D192ED03ull;
        size_t len = (size_t)(next_rand(&x) % cap);
        size_t flush_at = (size_t)(next_rand(&x) % (len + 1));
        int sync = seed % 3 == 0;
        nd_handle out;
        nd_delete_file(env->dir, "f");
        assert_status(ND_OK, nd_create_output(env->dir, "f", 0, &out));
        start_watching();
        int flushed = 0;
        for (size_t at = 0; at < len;) {
            size_t n = call_size(&x);
            if (!flushed && at + n > flush_at)
                n = flush_at - at;
            if (n > len - at)
                n = len - at;
            assert_status((int64_t)n, nd_write_bytes(out, src + at, (int64_t)n));
            at += n;
            if (!flushed && at == flush_at) {
                assert_status(ND_OK, sync ? nd_output_sync(out) : nd_output_flush(out));
                flushed = 1;
            }
        }
        assert_status(ND_OK, nd_close(out));
        stop_watching();
        check_contiguous((int64_t)len, seed);
        check_large_pieces(((int64_t)flush_at + LARGE - 1) / LARGE * LARGE, seed);
        check_file(env, "f", src, len);
    }
    free(src);
}

/* Maps `name` with nativedir, touches every page, returns its FilePmdMapped (KiB). */
static long scan_mapped(tst_env *env, const char *name, const uint8_t *want, size_t len)
{
    nd_handle in;
    assert_status(ND_OK, nd_open_input(env->dir, name, ND_IO_MMAP, &in));
    assert_status(ND_STRATEGY_MAPPED, nd_input_strategy(in));
    const uint8_t *p = NULL;
    /* the whole mapping at once: a window stops at ND_MAPPED_WINDOW */
    assert_status((int64_t)len, nd_input_map(in, 0, &p));
    for (size_t i = 0; i < len; i += 4096)
        if (p[i] != want[i])
            fail_msg("%s: byte %zu differs", name, i);
    long kib = tst_smaps_kib(p, "FilePmdMapped");
    assert_status(ND_OK, nd_close(in));
    return kib;
}

static void small_calls_leave_pmd_mappable_folios(void **state)
{
    tst_env *env = *state;
    const size_t len = 16u << 20;
    uint8_t *src = tst_random_buffer(len, 21);
    char path[TST_PATH_MAX];
    /* the control: one pwrite leaves the largest folios the page cache makes here */
    assert_int_equal(tst_write_file(tst_join(path, sizeof(path), env->dir_path, "one"), src, len),
                     0);
    long control = scan_mapped(env, "one", src, len);
    if (control <= 0) {
        tst_loud_skip("small_calls_leave_pmd_mappable_folios",
                      control < 0 ? "no FilePmdMapped in /proc/self/smaps (kernel before 4.8?)"
                                  : "a file written in one pwrite is not mapped with PMDs here "
                                    "(a file system without large folios, e.g. ext4 before "
                                    "Linux 6.16, or THP disabled, or no free 2 MiB pages)");
        free(src);
        skip();
    }
    nd_handle out;
    assert_status(ND_OK, nd_create_output(env->dir, "calls", 0, &out));
    for (size_t at = 0; at < len; at += 65536)
        assert_status(65536, nd_write_bytes(out, src + at, 65536));
    assert_status(ND_OK, nd_close(out));
    long ours = scan_mapped(env, "calls", src, len);
    printf("FilePmdMapped: one pwrite %ld KiB, 64 KiB nd_write_bytes calls %ld KiB of %zu\n",
           control, ours, len >> 10);
    /* 64 KiB folios are never PMD-mapped: a PMD here is a folio the pieces made whole. At
     * least half the control's, so a busy machine short of free 2 MiB pages does not fail it */
    if (ours * 2 < control)
        fail_msg("a file written in 64 KiB calls maps %ld KiB with PMDs where one written in "
                 "one pwrite maps %ld KiB",
                 ours, control);
    free(src);
}
#else
static void skip_here(void **state)
{
    (void)state;
    tst_loud_skip("write pieces", "buffered outputs write large pieces only on Linux, and "
                                  "watching pwrite needs glibc's symbol interposition");
    skip();
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
#ifdef ND_WATCH_WRITES
        cmocka_unit_test_setup_teardown(pieces_are_whole_large_folios, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(pieces_return_to_the_grid_after_a_flush, tst_setup,
                                        tst_teardown),
        cmocka_unit_test_setup_teardown(small_calls_leave_pmd_mappable_folios, tst_setup,
                                        tst_teardown),
#else
        cmocka_unit_test(skip_here),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
