/*
 * test_buffers.c - white-box: the cache of large I/O buffers (buffers.c) keeps
 * the ones given back most recently, so that the next output (a flush after a
 * merge, a merge after a flush) finds its buffers already mapped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "internal.h"

#define ALIGN 4096

static size_t size_of(int i)
{
    return ND_BUFFERS_CACHE_MIN + (size_t)i * ALIGN; /* every buffer a size of its own */
}

/* The cache full of buffers 0..CACHED-1; buffer 0 taken back out (its slot
 * empty), a new one X given (it takes that slot), then another Y: the one to
 * go is buffer 1, given back longest ago, never X, given back just now (a
 * round-robin over the slots threw X out here). Every kept buffer comes back
 * as the same memory. */
static void the_cache_keeps_the_buffers_given_back_last(void **state)
{
    (void)state;
    enum { N = ND_BUFFERS_CACHED, X = N, Y = N + 1 };
    void *p[N + 2];
    for (int i = 0; i < N + 2; i++) {
        p[i] = nd__buffer_take(ALIGN, size_of(i)); /* sizes nothing cached has: new memory */
        assert_non_null(p[i]);
    }
    for (int i = 0; i < N; i++)
        nd__buffer_give(p[i], ALIGN, size_of(i));
    assert_ptr_equal(nd__buffer_take(ALIGN, size_of(0)), p[0]);
    nd__buffer_give(p[X], ALIGN, size_of(X));
    nd__buffer_give(p[Y], ALIGN, size_of(Y)); /* full: one goes */
    for (int i = 2; i < N + 2; i++) {
        void *back = nd__buffer_take(ALIGN, size_of(i));
        if (back != p[i])
            fail_msg("buffer %d (given back %s) was not kept", i,
                     i == X   ? "second to last"
                     : i == Y ? "last"
                              : "before X and Y");
        nd__os_aligned_free(back);
    }
    nd__os_aligned_free(p[0]);
    /* buffer 1 was freed by the cache: nothing of it to take back or free */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_cache_keeps_the_buffers_given_back_last),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
