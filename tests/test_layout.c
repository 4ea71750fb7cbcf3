/*
 * test_layout.c - what threads write on every call sits on cache lines of
 * its own.
 *
 * Two threads reading through their own clones of one input must not write
 * the same cache line: each call takes and drops a reference in its handle's
 * slot and a cursor read moves its input's position (and two threads writing
 * two files each move their output's). With the inputs from
 * malloc (16-byte aligned) two clones' objects shared a line, and the
 * 2-thread mapped rows of ConcurrentCloneReads (bench/concurrent.c) scaled
 * 1.1-1.4x instead of ~1.9x: the speed is the benchmark's to show; this test
 * checks the layout that gives it, white-box, against the library's own
 * objects (built with the hooks library, which carries the sources' headers).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

#include "internal.h"

static void assert_on_its_own_lines(const void *p)
{
    if ((uintptr_t)p % ND_CACHE_LINE != 0)
        fail_msg("object at %p does not start on a %d-byte cache line", p, ND_CACHE_LINE);
}

/* The object behind handle h (of `kind`) starts on a cache line. */
static void assert_object_on_its_own_lines(nd_handle h, nd_kind kind)
{
    nd_object *obj;
    assert_int_equal(nd__handle_get(h, kind, &obj), ND_OK);
    assert_on_its_own_lines(obj);
    nd__handle_put(h);
}

/* Every input object (opened, cloned, sliced; mapped and buffered) starts on a line. */
static void inputs_start_on_a_cache_line(void **state)
{
    tst_env *env = *state;
    char path[TST_PATH_MAX];
    uint8_t data[8192];
    memset(data, 7, sizeof(data));
    assert_int_equal(
        tst_write_file(tst_join(path, sizeof(path), env->dir_path, "f"), data, sizeof(data)), 0);
    const uint32_t kinds[] = {0, ND_IO_MMAP};
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        enum { N = 24 };
        nd_handle h[N];
        void *shift[N]; /* small blocks of every size in between: malloc's next address moves */
        assert_int_equal(nd_open_input(env->dir, "f", kinds[k], &h[0]), ND_OK);
        for (int i = 1; i < N; i++) {
            shift[i] = malloc(16 * (size_t)i);
            assert_non_null(shift[i]);
            if (i % 3 == 0)
                assert_int_equal(nd_input_slice(h[0], 1, 100, &h[i]), ND_OK);
            else
                assert_int_equal(nd_input_clone(h[i - 1], &h[i]), ND_OK);
        }
        for (int i = 0; i < N; i++)
            assert_object_on_its_own_lines(h[i], ND_KIND_INPUT);
        for (int i = N - 1; i >= 0; i--)
            assert_int_equal(nd_close(h[i]), ND_OK);
        for (int i = 1; i < N; i++)
            free(shift[i]);
    }
}

/* Outputs too: Lucene writes a segment's files on several threads at once. */
static void outputs_start_on_a_cache_line(void **state)
{
    tst_env *env = *state;
    enum { N = 24 };
    nd_handle h[N];
    void *shift[N];
    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof(name), "out%d%.*s", i, i, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
        shift[i] = malloc(16 * (size_t)(i + 1));
        assert_non_null(shift[i]);
        assert_int_equal(nd_create_output(env->dir, name, i % 2 ? ND_IO_MERGE : 0, &h[i]), ND_OK);
        assert_object_on_its_own_lines(h[i], ND_KIND_OUTPUT);
    }
    for (int i = 0; i < N; i++) {
        assert_int_equal(nd_close(h[i]), ND_OK);
        free(shift[i]);
    }
}

/* nd__buffer_lines: aligned, zeroed, whole lines (so the next block cannot
 * start inside the last line of this one) for every size around a line. */
static void line_blocks_are_aligned_zeroed_and_whole(void **state)
{
    (void)state;
    for (size_t size = 1; size <= 4 * ND_CACHE_LINE + 1; size++) {
        uint8_t *p = nd__buffer_lines(size);
        assert_non_null(p);
        assert_on_its_own_lines(p);
        size_t whole = (size + ND_CACHE_LINE - 1) / ND_CACHE_LINE * ND_CACHE_LINE;
        for (size_t i = 0; i < whole; i++) /* ASan: every byte of the whole lines is ours */
            if (p[i] != 0)
                fail_msg("byte %zu of a %zu-byte block is %u, not 0", i, size, p[i]);
        memset(p, 0xA5, whole);
        nd__os_aligned_free(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(inputs_start_on_a_cache_line, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(outputs_start_on_a_cache_line, tst_setup, tst_teardown),
        cmocka_unit_test(line_blocks_are_aligned_zeroed_and_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
