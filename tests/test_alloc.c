/*
 * test_alloc.c - "no per-read allocation in steady state": after a warm-up,
 * reads, windows, writes and even failing calls allocate nothing.
 *
 * The executable interposes malloc and friends (glibc resolves the shared
 * library's calls to the executable's definitions first) and counts calls
 * made while `counting` is set. Sanitizers interpose the same functions, so
 * this area runs only in the plain build (tests/CMakeLists.txt).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#  define ND_COUNT_ALLOCS 1

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static _Thread_local int counting;
static _Thread_local long allocations;

void *malloc(size_t n)
{
    allocations += counting;
    return __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
    allocations += counting;
    return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
    allocations += counting;
    return __libc_realloc(p, n);
}

void free(void *p)
{
    __libc_free(p);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    allocations += counting;
    void *p = __libc_memalign(align, n);
    if (p == NULL)
        return 12; /* ENOMEM */
    *out = p;
    return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
    allocations += counting;
    return __libc_memalign(align, n);
}

static void start_counting(void)
{
    allocations = 0;
    counting = 1;
}

static long stop_counting(void)
{
    counting = 0;
    return allocations;
}

static void interposition_works(void **state)
{
    (void)state;
    /* the counter must see the library's allocations, or the zeros below prove nothing */
    void *(*volatile alloc)(size_t) = malloc; /* a call the compiler cannot elide */
    start_counting();
    void *p = alloc(10);
    long n = stop_counting();
    free(p);
    assert_int_equal(n, 1);
}

static const uint32_t read_flags[] = {0, ND_IO_RANDOM, ND_IO_SEQUENTIAL, ND_IO_MMAP, ND_IO_MERGE};

static void reads_allocate_nothing(void **state)
{
    tst_env *env = *state;
    const size_t len = 1u << 20;
    uint8_t *data = tst_random_buffer(len, 1);
    char path[TST_PATH_MAX];
    assert_int_equal(tst_write_file(tst_join(path, sizeof(path), env->dir_path, "f"), data, len),
                     0);
    uint8_t *buf = malloc(70000);
    for (size_t f = 0; f < sizeof(read_flags) / sizeof(read_flags[0]); f++) {
        nd_handle in;
        start_counting();
        assert_status(ND_OK, nd_open_input(env->dir, "f", read_flags[f], &in));
        long at_open = stop_counting();
        assert_true(at_open > 0); /* the library's own allocations are seen */
        /* warm-up: the cursor buffer is made on first use */
        assert_status(data[0], nd_read_byte_buffered(in));
        start_counting();
        uint64_t x = 99;
        for (int i = 0; i < 3000; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            int64_t pos = (int64_t)((x >> 33) % (len - 70000));
            const uint8_t *p;
            (void)nd_read_bytes(in, pos, buf, 1 + (int64_t)(x % 5000));
            (void)nd_read_bytes(in, pos, buf, 64);
            (void)nd_input_seek(in, pos);
            (void)nd_read_byte_buffered(in);
            (void)nd_read_buffered(in, buf, (int64_t)(x % 70000));
            (void)nd_input_window(in, pos, &p);
            (void)nd_input_position(in);
            /* failures record a message: still nothing allocated */
            (void)nd_read_bytes(in, (int64_t)len, buf, 10);
            (void)nd_input_window(in, (int64_t)len, &p);
        }
        long steady = stop_counting();
        if (steady != 0)
            fail_msg("flags 0x%x: %ld allocations in 3000 rounds of reads", read_flags[f], steady);
        assert_status(ND_OK, nd_close(in));
    }
    free(buf);
    free(data);
}

static void writes_allocate_nothing(void **state)
{
    tst_env *env = *state;
    uint8_t *data = tst_random_buffer(100000, 2);
    const uint32_t flags[] = {0, ND_IO_MERGE};
    for (size_t f = 0; f < 2; f++) {
        nd_handle out;
        assert_status(ND_OK, nd_create_output(env->dir, f ? "m" : "b", flags[f], &out));
        /* the steady state starts once the buffer has the size the file's length calls for:
         * on Linux a buffered output's grows up to 2 MiB as its file does (large folios) */
        for (int i = 0; i < 22; i++)
            assert_status(100000, nd_write_bytes(out, data, 100000));
        start_counting();
        for (int i = 0; i < 300; i++) {
            (void)nd_write_bytes(out, data, 1 + (i * 7919) % 100000);
            (void)nd_write_byte(out, (uint8_t)i);
            (void)nd_output_position(out);
            (void)nd_output_crc32(out);
        }
        long steady = stop_counting();
        if (steady != 0)
            fail_msg("flags 0x%x: %ld allocations in 300 rounds of writes", flags[f], steady);
        assert_status(ND_OK, nd_close(out));
    }
    free(data);
}
#endif

int main(void)
{
#ifdef ND_COUNT_ALLOCS
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(interposition_works),
        cmocka_unit_test_setup_teardown(reads_allocate_nothing, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(writes_allocate_nothing, tst_setup, tst_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
#else
    /* counting needs glibc's __libc_* entry points; elsewhere say so, loudly */
    tst_loud_skip("no per-read allocation in steady state",
                  "malloc cannot be interposed in this build (not glibc, or a sanitizer owns it)");
    return 0;
#endif
}
