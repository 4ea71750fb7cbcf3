/*
 * test_prefetch.c - nd_input_prefetch and nd_input_advise on every strategy:
 * ranges at the edges, EOF, bad arguments, slices and clones; on Linux, that
 * a prefetch really brings dropped pages into the page cache (checked with
 * mincore on a mapping of the test's own, which reads nothing), that a slice
 * prefetches its own range, that the back-off looks again within 64 calls,
 * and that advice reaches the mapping (VmFlags in /proc/self/smaps).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#  include <fcntl.h>
#  include <sys/mman.h>
#  include <time.h>
#  include <unistd.h>
#endif

#include "support.h"

typedef struct {
    uint32_t flags;
    const char *what;
} strategy_case;

static const strategy_case strategies[] = {
    {0, "default"},
    {ND_IO_RANDOM, "random"},
    {ND_IO_SEQUENTIAL, "sequential"},
    {ND_IO_MMAP, "mmap"},
    {ND_IO_MMAP | ND_IO_RANDOM, "mmap random"},
    {ND_IO_MMAP | ND_IO_SEQUENTIAL, "mmap sequential"},
    {ND_IO_MMAP | ND_IO_PRELOAD, "mmap preload"},
    {ND_IO_MERGE, "merge"},
    {ND_IO_MERGE | ND_IO_RANDOM, "merge random"},
};
#define N_STRATEGIES (sizeof(strategies) / sizeof(strategies[0]))

/* every byte of the input still reads right (prefetch and advice change no data) */
static void reads_match(nd_handle in, const uint8_t *expect, int64_t len, const char *what)
{
    uint8_t *got = malloc(len > 0 ? (size_t)len : 1);
    assert_non_null(got);
    assert_status(len, nd_read_bytes(in, 0, got, len));
    if (len > 0 && memcmp(got, expect, (size_t)len) != 0)
        fail_msg("%s: bytes differ after prefetch/advise", what);
    free(got);
}

/* The range rules of nd_read_bytes: in range (len 0 too, at the end too) is
 * ND_OK, past the end ND_E_EOF, negative ND_E_INVALID_ARGUMENT; offsets are
 * the input's own. Asserted for an input of `len` bytes. */
static void range_rules(nd_handle in, int64_t len, const char *what)
{
    const struct {
        int64_t off, n;
        int32_t want;
    } cases[] = {
        {0, 0, ND_OK},
        {0, len, ND_OK},
        {len, 0, ND_OK},
        {len > 0 ? len - 1 : 0, len > 0 ? 1 : 0, ND_OK},
        {len > 0 ? 1 : 0, len > 0 ? len - 1 : 0, ND_OK},
        {len / 2, len - len / 2, ND_OK},
        {0, len + 1, ND_E_EOF},
        {len, 1, ND_E_EOF},
        {len + 1, 0, ND_E_EOF},
        {INT64_MAX, 1, ND_E_EOF},
        {1, INT64_MAX, ND_E_EOF},
        {INT64_MAX, INT64_MAX, ND_E_EOF},
        {-1, 1, ND_E_INVALID_ARGUMENT},
        {0, -1, ND_E_INVALID_ARGUMENT},
        {INT64_MIN, 0, ND_E_INVALID_ARGUMENT},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int32_t rc = nd_input_prefetch(in, cases[i].off, cases[i].n);
        if (rc != cases[i].want)
            fail_msg("%s (%lld bytes): prefetch(%lld, %lld) = %s, want %s: %s", what,
                     (long long)len, (long long)cases[i].off, (long long)cases[i].n,
                     nd_status_name(rc), nd_status_name(cases[i].want), nd_last_error_message());
        if (rc != ND_OK)
            assert_message_contains("nd_input_prefetch: ");
    }
}

static void prefetch_ranges_on_every_strategy(void **state)
{
    tst_env *env = *state;
    const int64_t len = 300001;
    uint8_t *data = tst_put_random(env, "f", (size_t)len, 11);
    free(tst_put_random(env, "empty", 0, 12));
    for (size_t k = 0; k < N_STRATEGIES; k++) {
        nd_handle in, clone, slice, inner, empty;
        assert_status(ND_OK, nd_open_input(env->dir, "f", strategies[k].flags, &in));
        range_rules(in, len, strategies[k].what);
        assert_status(ND_OK, nd_input_clone(in, &clone));
        range_rules(clone, len, strategies[k].what);
        assert_status(ND_OK, nd_input_slice(in, 4097, 70001, &slice));
        range_rules(slice, 70001, strategies[k].what);
        assert_status(ND_OK, nd_input_slice(slice, 333, 5000, &inner));
        range_rules(inner, 5000, strategies[k].what);
        assert_status(ND_OK, nd_open_input(env->dir, "empty", strategies[k].flags, &empty));
        range_rules(empty, 0, strategies[k].what);
        /* many prefetches of every size, through the back-off's looks and skips */
        for (int i = 0; i < 1000; i++) {
            int64_t n = 1 + (i * 7919) % 65536;
            int64_t off = ((int64_t)i * 104729) % (len - n);
            assert_status(ND_OK, nd_input_prefetch(i % 2 ? clone : in, off, n));
        }
        reads_match(in, data, len, strategies[k].what);
        reads_match(slice, data + 4097, 70001, strategies[k].what);
        reads_match(inner, data + 4097 + 333, 5000, strategies[k].what);
        nd_close(empty);
        nd_close(inner);
        nd_close(slice);
        nd_close(clone);
        nd_close(in);
        assert_status(ND_E_BAD_HANDLE, nd_input_prefetch(in, 0, 1)); /* closed */
        assert_message_contains("nd_input_prefetch: ");
    }
    free(data);
}

static void advise_every_value_on_every_strategy(void **state)
{
    tst_env *env = *state;
    const int64_t len = 200003;
    uint8_t *data = tst_put_random(env, "f", (size_t)len, 21);
    free(tst_put_random(env, "empty", 0, 22));
    const uint32_t good[] = {ND_IO_RANDOM, ND_IO_SEQUENTIAL, 0, ND_IO_SEQUENTIAL, ND_IO_RANDOM};
    const uint32_t bad[] = {ND_IO_RANDOM | ND_IO_SEQUENTIAL,
                            ND_IO_MMAP,
                            ND_IO_MERGE,
                            ND_IO_PRELOAD,
                            ND_IO_REQUIRE_DIRECT,
                            ND_IO_OVERWRITE,
                            ND_IO_RANDOM | ND_IO_MMAP,
                            0x80u,
                            0x80000000u,
                            0xFFFFFFFFu};
    for (size_t k = 0; k < N_STRATEGIES; k++) {
        nd_handle in, clone, slice, empty;
        assert_status(ND_OK, nd_open_input(env->dir, "f", strategies[k].flags, &in));
        assert_status(ND_OK, nd_input_clone(in, &clone));
        assert_status(ND_OK, nd_input_slice(in, 5000, 100000, &slice));
        assert_status(ND_OK, nd_open_input(env->dir, "empty", strategies[k].flags, &empty));
        nd_handle all[] = {in, clone, slice, empty};
        for (size_t h = 0; h < 4; h++) {
            for (size_t g = 0; g < sizeof(good) / sizeof(good[0]); g++)
                assert_status(ND_OK, nd_input_advise(all[h], good[g]));
            for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
                assert_status(ND_E_INVALID_ARGUMENT, nd_input_advise(all[h], bad[b]));
                assert_message_contains("nd_input_advise: ");
                assert_message_contains("not one advice");
            }
        }
        /* advice changes neither the strategy nor a byte */
        assert_status(nd_input_strategy(in), nd_input_strategy(clone));
        reads_match(in, data, len, strategies[k].what);
        reads_match(slice, data + 5000, 100000, strategies[k].what);
        nd_close(empty);
        nd_close(slice);
        nd_close(clone);
        nd_close(in);
        assert_status(ND_E_BAD_HANDLE, nd_input_advise(in, 0)); /* closed */
        assert_message_contains("nd_input_advise: ");
    }
    /* not an input */
    assert_status(ND_E_BAD_HANDLE, nd_input_advise(env->dir, ND_IO_RANDOM));
    assert_status(ND_E_BAD_HANDLE, nd_input_prefetch(env->dir, 0, 0));
    nd_handle out;
    assert_status(ND_OK, nd_create_output(env->dir, "o", 0, &out));
    assert_status(ND_E_BAD_HANDLE, nd_input_advise(out, 0));
    assert_status(ND_E_BAD_HANDLE, nd_input_prefetch(out, 0, 0));
    nd_close(out);
    free(data);
}

#if defined(__linux__)

#  define BIG ((int64_t)16 << 20)
#  define PAGE 4096

/* The test's own view of the file's page cache: a mapping it never touches,
 * so looking (mincore) brings nothing in. */
typedef struct {
    int fd;
    uint8_t *map;
    long page;
} cache_view;

static void view_open(cache_view *v, tst_env *env, const char *name, int64_t len)
{
    char path[TST_PATH_MAX];
    v->fd = open(tst_join(path, sizeof path, env->dir_path, name), O_RDONLY | O_CLOEXEC);
    assert_true(v->fd >= 0);
    v->map = mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, v->fd, 0);
    assert_true(v->map != MAP_FAILED);
    v->page = sysconf(_SC_PAGESIZE);
}

static void view_close(cache_view *v, int64_t len)
{
    munmap(v->map, (size_t)len);
    close(v->fd);
}

/* 1 if every page of [off, off+len) is in the page cache */
static int resident(cache_view *v, int64_t off, int64_t len)
{
    int64_t from = off - off % v->page;
    size_t pages = (size_t)((off + len - from + v->page - 1) / v->page);
    unsigned char *vec = malloc(pages);
    assert_non_null(vec);
    assert_int_equal(mincore(v->map + from, pages * (size_t)v->page, vec), 0);
    int all = 1;
    for (size_t i = 0; i < pages; i++)
        all &= vec[i] & 1;
    free(vec);
    return all;
}

/* 1 if no page of [off, off+len) is in the page cache */
static int absent(cache_view *v, int64_t off, int64_t len)
{
    for (int64_t at = off - off % v->page; at < off + len; at += v->page)
        if (resident(v, at, 1))
            return 0;
    return 1;
}

/* Waits (up to 20 s: the device may be busy with other work) for the range
 * to become resident. A prefetch starts reads and returns; nothing here
 * measures how long they take. */
static int becomes_resident(cache_view *v, int64_t off, int64_t len)
{
    for (int i = 0; i < 20000; i++) {
        if (resident(v, off, len))
            return 1;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

/* Drops the file from the cache; 0 with a loud skip where the kernel keeps it.
 * The first MiB is not checked: pages a mapped read faulted in (fault-around
 * maps several) stay while mapped. */
static int dropped(tst_env *env, cache_view *v, const char *what)
{
    tst_drop_cache(env->dir_path, "big");
    if (!absent(v, 1 << 20, BIG - (1 << 20))) {
        tst_loud_skip(what, "the kernel kept the file's pages after POSIX_FADV_DONTNEED");
        return 0;
    }
    return 1;
}

/* After the file is dropped from the cache, a prefetch brings exactly the
 * asked range in, on every strategy that uses the cache, at the slice's own
 * offsets; the pages far from it stay out (nothing else reads the file). */
/* qemu-user (the arm64 runs: the cross toolchain's emulator sets ND_TEST_EMULATOR) takes madvise
 * without passing it to the kernel and shows its own mappings in /proc/self/smaps: what the
 * kernel does with the advice cannot be seen there. */
static int kernel_advice_invisible(const char *what)
{
    const char *emu = getenv("ND_TEST_EMULATOR");
    if (emu == NULL || *emu == '\0')
        return 0;
    char why[160];
    snprintf(why, sizeof why, "running under %s, which does not hand madvise to the kernel", emu);
    tst_loud_skip(what, why);
    return 1;
}

static void prefetch_brings_dropped_pages_in(void **state)
{
    if (kernel_advice_invisible("prefetched pages becoming resident"))
        skip();
    tst_env *env = *state;
    free(tst_put_random(env, "big", (size_t)BIG, 31));
    cache_view v;
    view_open(&v, env, "big", BIG);
    const uint32_t flags[] = {0, ND_IO_RANDOM, ND_IO_MMAP, ND_IO_MMAP | ND_IO_RANDOM};
    int ran = 0;
    for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
        nd_handle in, slice;
        assert_status(ND_OK, nd_open_input(env->dir, "big", flags[k], &in));
        assert_status(ND_OK, nd_input_slice(in, 8 << 20, 4 << 20, &slice));
        if (!dropped(env, &v, "prefetch of dropped pages")) {
            nd_close(slice);
            nd_close(in);
            continue;
        }
        ran++;
        /* an unaligned range: the pages under both of its ends come in */
        assert_status(ND_OK, nd_input_prefetch(in, (2 << 20) + 100, 200000));
        if (!becomes_resident(&v, (2 << 20) + 100, 200000))
            fail_msg("flags 0x%x: the prefetched range did not become resident", flags[k]);
        /* the slice's offset 1 MiB is the file's 9 MiB */
        assert_status(ND_OK, nd_input_prefetch(slice, 1 << 20, 65536));
        if (!becomes_resident(&v, 9 << 20, 65536))
            fail_msg("flags 0x%x: the slice's prefetched range did not become resident", flags[k]);
        assert_true(
            absent(&v, 1 << 20, PAGE)); /* the slice's offset taken as the file's: not read */
        assert_true(absent(&v, 14 << 20, 1 << 20));
        nd_close(slice);
        nd_close(in);
    }
    view_close(&v, BIG);
    if (ran == 0)
        skip();
}

/* A long run of prefetches that found the pages resident makes prefetch look
 * only now and then; after the pages are dropped, a cold range is brought in
 * within 64 more calls. */
static void back_off_looks_again_within_64_calls(void **state)
{
    if (kernel_advice_invisible("a dropped range brought back in after a run of hits"))
        skip();
    tst_env *env = *state;
    uint8_t *data = tst_put_random(env, "big", (size_t)BIG, 41);
    cache_view v;
    view_open(&v, env, "big", BIG);
    const uint32_t flags[] = {0, ND_IO_MMAP};
    int ran = 0;
    for (size_t k = 0; k < 2; k++) {
        nd_handle in;
        assert_status(ND_OK, nd_open_input(env->dir, "big", flags[k], &in));
        uint8_t buf[PAGE];
        assert_status(PAGE, nd_read_bytes(in, 0, buf, PAGE));
        assert_memory_equal(buf, data, PAGE);
        for (int i = 0; i < 10000; i++) /* all hits: the run grows long */
            assert_status(ND_OK, nd_input_prefetch(in, 0, PAGE));
        if (!dropped(env, &v, "prefetch back-off")) {
            nd_close(in);
            continue;
        }
        ran++;
        for (int i = 0; i < 64; i++)
            assert_status(ND_OK, nd_input_prefetch(in, 5 << 20, 1 << 20));
        if (!becomes_resident(&v, 5 << 20, 1 << 20))
            fail_msg("flags 0x%x: 64 prefetches after a run of hits brought nothing in", flags[k]);
        nd_close(in);
    }
    view_close(&v, BIG);
    free(data);
    if (ran == 0)
        skip();
}

/* The VmFlags line of the mapping in /proc/self/smaps that holds `addr`
 * (into line; 0 if found). */
static int vm_flags(const void *addr, char *line, size_t cap)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (f == NULL)
        return -1;
    char buf[512];
    int in_it = 0, found = -1;
    while (fgets(buf, sizeof buf, f) != NULL) {
        unsigned long lo, hi;
        if (sscanf(buf, "%lx-%lx ", &lo, &hi) == 2 && strchr(buf, '-') < strchr(buf, ' '))
            in_it = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
        else if (in_it && strncmp(buf, "VmFlags:", 8) == 0) {
            snprintf(line, cap, "%s", buf);
            found = 0;
            break;
        }
    }
    fclose(f);
    return found;
}

/* Advice reaches the mapping: MADV_RANDOM shows as "rr", MADV_SEQUENTIAL as
 * "sr" in VmFlags, normal as neither; a clone shares it, and a slice advises
 * its own pages (the mapping splits there), not the rest. */
static void advice_reaches_the_mapping(void **state)
{
    if (kernel_advice_invisible("advice in the mapping's VmFlags"))
        skip();
    tst_env *env = *state;
    free(tst_put_random(env, "big", (size_t)BIG, 51));
    nd_handle in, clone, slice;
    assert_status(ND_OK, nd_open_input(env->dir, "big", ND_IO_MMAP, &in));
    assert_status(ND_OK, nd_input_clone(in, &clone));
    assert_status(ND_OK, nd_input_slice(in, 8 << 20, 1 << 20, &slice));
    const uint8_t *base, *at8;
    assert_true(nd_input_window(in, 0, &base) > 0);
    assert_true(nd_input_window(slice, 0, &at8) > 0);
    char line[512];
    if (vm_flags(base, line, sizeof line) != 0) {
        tst_loud_skip("advice on the mapping", "/proc/self/smaps has no VmFlags here");
        nd_close(slice), nd_close(clone), nd_close(in);
        skip();
    }
    const struct {
        uint32_t flags;
        const char *has, *lacks;
    } steps[] = {{ND_IO_RANDOM, " rr", " sr"}, {ND_IO_SEQUENTIAL, " sr", " rr"}, {0, NULL, NULL}};
    for (size_t i = 0; i < 3; i++) {
        assert_status(ND_OK,
                      nd_input_advise(clone, steps[i].flags)); /* the clone: the same mapping */
        assert_int_equal(vm_flags(base, line, sizeof line), 0);
        if (steps[i].has != NULL && strstr(line, steps[i].has) == NULL)
            fail_msg("after advice 0x%x: %s lacks%s", steps[i].flags, line, steps[i].has);
        if (steps[i].has == NULL && (strstr(line, " rr") || strstr(line, " sr")))
            fail_msg("after normal advice: %s", line);
        if (steps[i].lacks != NULL && strstr(line, steps[i].lacks) != NULL)
            fail_msg("after advice 0x%x: %s still has%s", steps[i].flags, line, steps[i].lacks);
    }
    assert_status(ND_OK, nd_input_advise(slice, ND_IO_RANDOM));
    assert_int_equal(vm_flags(at8, line, sizeof line), 0);
    assert_non_null(strstr(line, " rr"));
    assert_int_equal(vm_flags(base, line, sizeof line), 0);
    assert_null(strstr(line, " rr")); /* the file's first page is not the slice's */
    nd_close(slice);
    nd_close(clone);
    nd_close(in);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(prefetch_ranges_on_every_strategy, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(advise_every_value_on_every_strategy, tst_setup,
                                        tst_teardown),
#if defined(__linux__)
        cmocka_unit_test_setup_teardown(prefetch_brings_dropped_pages_in, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(back_off_looks_again_within_64_calls, tst_setup,
                                        tst_teardown),
        cmocka_unit_test_setup_teardown(advice_reaches_the_mapping, tst_setup, tst_teardown),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
