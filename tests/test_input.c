/*
 * test_input.c - inputs under every strategy (buffered, mapped, direct or
 * drop-behind, with each access hint): positional reads, the cursor, windows,
 * clones and slices, and what is refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#  include <fcntl.h>
#  include <sys/mman.h>
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
    {ND_IO_PRELOAD, "preload"},
    {ND_IO_MMAP, "mmap"},
    {ND_IO_MMAP | ND_IO_RANDOM, "mmap random"},
    {ND_IO_MMAP | ND_IO_SEQUENTIAL, "mmap sequential"},
    {ND_IO_MMAP | ND_IO_PRELOAD, "mmap preload"},
    {ND_IO_MERGE, "merge"},
    {ND_IO_MERGE | ND_IO_SEQUENTIAL, "merge sequential"},
    {ND_IO_MERGE | ND_IO_RANDOM, "merge random"},
    {ND_IO_MERGE | ND_IO_PRELOAD, "merge preload"},
};
#define N_STRATEGIES (sizeof(strategies) / sizeof(strategies[0]))

/* Sizes around every buffer and block edge the strategies have. */
static const size_t sizes[] = {0,     1,     511,    4095,        4096,     4097,
                               16384, 65537, 262144, 262144 + 17, 1u << 20, (1u << 20) + 3};
#define N_SIZES (sizeof(sizes) / sizeof(sizes[0]))

/* Does this directory's file system take O_DIRECT? Decides what MERGE must report. */
static int direct_works(tst_env *env)
{
    nd_handle in;
    int32_t rc = nd_open_input(env->dir, "probe", ND_IO_REQUIRE_DIRECT, &in);
    if (rc == ND_OK) {
        nd_close(in);
        return 1;
    }
    assert_status(ND_E_NOT_SUPPORTED, rc);
    return 0;
}

static int32_t expected_strategy(uint32_t flags, int direct)
{
    if (flags & ND_IO_MMAP)
        return ND_STRATEGY_MAPPED;
    if (flags & ND_IO_MERGE)
        return direct ? ND_STRATEGY_DIRECT : ND_STRATEGY_DROP_BEHIND;
    return ND_STRATEGY_BUFFERED;
}

static void every_strategy_reads_every_size(void **state)
{
    tst_env *env = *state;
    free(tst_put_random(env, "probe", 4096, 1));
    int direct = direct_works(env);
    if (!direct)
        tst_loud_skip("ND_IO_MERGE reading with O_DIRECT",
                      "this file system refuses O_DIRECT; MERGE is checked as drop-behind");
    for (size_t s = 0; s < N_SIZES; s++) {
        char name[32];
        snprintf(name, sizeof(name), "size_%zu", sizes[s]);
        uint8_t *data = tst_put_random(env, name, sizes[s], 100 + s);
        for (size_t k = 0; k < N_STRATEGIES; k++) {
            nd_handle in;
            assert_status(ND_OK, nd_open_input(env->dir, name, strategies[k].flags, &in));
            assert_status(expected_strategy(strategies[k].flags, direct), nd_input_strategy(in));
            assert_status(ND_OK, nd_close(in));
            if (tst_verify_input(env->dir, name, strategies[k].flags, data, sizes[s]) != 0)
                fail_msg("%s input of %lu bytes read back wrong", strategies[k].what,
                         (unsigned long)sizes[s]);
        }
        free(data);
    }
}

static void require_direct_on_this_file_system(void **state)
{
    tst_env *env = *state;
    uint8_t *data = tst_put_random(env, "probe", 12345, 2);
    nd_handle in;
    int32_t rc = nd_open_input(env->dir, "probe", ND_IO_REQUIRE_DIRECT, &in);
    if (rc == ND_E_NOT_SUPPORTED) {
        /* the build tree should be on a disk file system; say so loudly if not */
        tst_loud_skip("ND_IO_REQUIRE_DIRECT succeeding", "the test directory refuses O_DIRECT");
        free(data);
        return;
    }
    assert_status(ND_OK, rc);
    /* REQUIRE_DIRECT implies MERGE's direct strategy, never a silent fallback */
    assert_status(ND_STRATEGY_DIRECT, nd_input_strategy(in));
    assert_status(ND_OK, nd_close(in));
    assert_int_equal(tst_verify_input(env->dir, "probe", ND_IO_REQUIRE_DIRECT, data, 12345), 0);
    assert_int_equal(
        tst_verify_input(env->dir, "probe", ND_IO_REQUIRE_DIRECT | ND_IO_MERGE, data, 12345), 0);
    free(data);
}

static void direct_reads_aligned_and_unaligned(void **state)
{
    tst_env *env = *state;
    const size_t len = (3u << 20) + 1000;
    uint8_t *data = tst_put_random(env, "big", len, 3);
    nd_handle in;
    assert_status(ND_OK, nd_open_input(env->dir, "big", ND_IO_MERGE, &in));
    /* an aligned destination, offset and length take the zero-copy direct path */
    uint8_t *aligned = NULL;
#ifdef _WIN32
    aligned = _aligned_malloc(1u << 20, 65536);
#else
    assert_int_equal(posix_memalign((void **)&aligned, 65536, 1u << 20), 0);
#endif
    assert_status(1 << 20, nd_read_bytes(in, 65536, aligned, 1 << 20));
    assert_memory_equal(aligned, data + 65536, 1u << 20);
    /* the same range shifted by odd amounts goes through the bounce buffer */
    const int64_t shifts[] = {1, 511, 4095, 4097, 300001};
    for (size_t i = 0; i < sizeof(shifts) / sizeof(shifts[0]); i++) {
        assert_status((1 << 20) - 3, nd_read_bytes(in, shifts[i], aligned + 1, (1 << 20) - 3));
        assert_memory_equal(aligned + 1, data + shifts[i], (1u << 20) - 3);
    }
    /* the last bytes, past the last full block */
    assert_status(1000, nd_read_bytes(in, (int64_t)len - 1000, aligned, 1000));
    assert_memory_equal(aligned, data + len - 1000, 1000);
#ifdef _WIN32
    _aligned_free(aligned);
#else
    free(aligned);
#endif
    assert_status(ND_OK, nd_close(in));
    free(data);
}

static void positional_read_ranges(void **state)
{
    tst_env *env = *state;
    uint8_t *data = tst_put_random(env, "f", 1000, 4);
    for (size_t k = 0; k < N_STRATEGIES; k++) {
        nd_handle in;
        assert_status(ND_OK, nd_open_input(env->dir, "f", strategies[k].flags, &in));
        uint8_t buf[1100];
        memset(buf, 0xEE, sizeof(buf));
        assert_status(ND_E_INVALID_ARGUMENT, nd_read_bytes(in, -1, buf, 1));
        assert_status(ND_E_INVALID_ARGUMENT, nd_read_bytes(in, 0, buf, -1));
        assert_status(ND_E_INVALID_ARGUMENT, nd_read_bytes(in, INT64_MIN, buf, 10));
        /* ends past EOF: ND_E_EOF and not a byte written */
        assert_status(ND_E_EOF, nd_read_bytes(in, 0, buf, 1001));
        assert_status(ND_E_EOF, nd_read_bytes(in, 990, buf, 11));
        assert_status(ND_E_EOF, nd_read_bytes(in, 1001, buf, 0));
        assert_status(ND_E_EOF, nd_read_bytes(in, 1000, buf, 1));
        assert_status(ND_E_EOF, nd_read_bytes(in, 1, buf, INT64_MAX));
        assert_status(ND_E_EOF, nd_read_bytes(in, INT64_MAX, buf, 1));
        assert_status(ND_E_EOF, nd_read_bytes(in, INT64_MAX, buf, INT64_MAX));
        for (size_t i = 0; i < sizeof(buf); i++)
            assert_int_equal(buf[i], 0xEE);
        assert_message_contains("f");
        /* empty reads anywhere inside, including exactly at the end */
        assert_status(0, nd_read_bytes(in, 0, buf, 0));
        assert_status(0, nd_read_bytes(in, 1000, buf, 0));
        assert_int_equal(buf[0], 0xEE);
        /* exact reads, up to the last byte */
        assert_status(10, nd_read_bytes(in, 990, buf, 10));
        assert_memory_equal(buf, data + 990, 10);
        assert_status(1, nd_read_bytes(in, 999, buf, 1));
        assert_int_equal(buf[0], data[999]);
        assert_status(1000, nd_read_bytes(in, 0, buf, 1000));
        assert_memory_equal(buf, data, 1000);
        /* positional reads do not move the cursor */
        assert_status(0, nd_input_position(in));
        assert_status(ND_OK, nd_close(in));
    }
    free(data);
}

static void cursor_edges(void **state)
{
    tst_env *env = *state;
    uint8_t *data = tst_put_random(env, "f", 5000, 5);
    for (size_t k = 0; k < N_STRATEGIES; k++) {
        nd_handle in;
        uint8_t buf[6000];
        assert_status(ND_OK, nd_open_input(env->dir, "f", strategies[k].flags, &in));
        assert_status(0, nd_input_position(in));
        assert_status(ND_E_INVALID_ARGUMENT, nd_input_seek(in, -1));
        assert_status(ND_E_EOF, nd_input_seek(in, 5001));
        assert_status(0, nd_input_position(in)); /* refused seeks do not move it */
        assert_status(ND_OK, nd_input_seek(in, 4990));
        assert_status(4990, nd_input_position(in));
        /* a read that would pass the end reads nothing and leaves the cursor */
        memset(buf, 0xEE, sizeof(buf));
        assert_status(ND_E_EOF, nd_read_buffered(in, buf, 11));
        assert_int_equal(buf[0], 0xEE);
        assert_status(4990, nd_input_position(in));
        assert_status(ND_E_INVALID_ARGUMENT, nd_read_buffered(in, buf, -1));
        /* exactly to the end */
        assert_status(10, nd_read_buffered(in, buf, 10));
        assert_memory_equal(buf, data + 4990, 10);
        assert_status(5000, nd_input_position(in));
        assert_status(0, nd_read_buffered(in, buf, 0));
        assert_status(ND_E_EOF, nd_read_byte_buffered(in));
        assert_status(ND_E_EOF, nd_read_buffered(in, buf, 1));
        assert_status(5000, nd_input_position(in));
        /* seeking exactly to the end is allowed; back to the start works */
        assert_status(ND_OK, nd_input_seek(in, 5000));
        assert_status(ND_OK, nd_input_seek(in, 0));
        assert_status(data[0], nd_read_byte_buffered(in));
        assert_status(data[1], nd_read_byte_buffered(in));
        assert_status(2, nd_input_position(in));
        /* a read larger than any buffer, from an odd place */
        assert_status(4997, nd_read_buffered(in, buf, 4997));
        assert_memory_equal(buf, data + 2, 4997);
        assert_status(data[4999], nd_read_byte_buffered(in));
        /* backwards seeks after the buffer moved on */
        for (int64_t pos = 4999; pos >= 0; pos -= 997) {
            assert_status(ND_OK, nd_input_seek(in, pos));
            assert_status(data[pos], nd_read_byte_buffered(in));
        }
        assert_status(ND_OK, nd_close(in));
    }
    free(data);
}

static void windows_match_the_file(void **state)
{
    tst_env *env = *state;
    const size_t len = 200000;
    uint8_t *data = tst_put_random(env, "f", len, 6);
    for (size_t k = 0; k < N_STRATEGIES; k++) {
        nd_handle in;
        const uint8_t *p = NULL;
        assert_status(ND_OK, nd_open_input(env->dir, "f", strategies[k].flags, &in));
        assert_status(ND_E_INVALID_ARGUMENT, nd_input_window(in, -1, &p));
        assert_status(ND_E_EOF, nd_input_window(in, (int64_t)len, &p));
        assert_status(ND_E_EOF, nd_input_window(in, INT64_MAX, &p));
        /* the last byte alone */
        assert_status(1, nd_input_window(in, (int64_t)len - 1, &p));
        assert_int_equal(p[0], data[len - 1]);
        /* random positions: at least one byte, never past the end, all correct */
        uint64_t x = 77;
        for (int i = 0; i < 200; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            int64_t pos = (int64_t)((x >> 33) % len);
            int64_t n = nd_input_window(in, pos, &p);
            assert_true(n >= 1);
            assert_true(n <= (int64_t)len - pos);
            assert_memory_equal(p, data + pos, (size_t)n);
        }
        /* windows do not move the cursor */
        assert_status(0, nd_input_position(in));
        if (strategies[k].flags & ND_IO_MMAP) {
            /* a mapped window lives until close, across other calls */
            const uint8_t *first = NULL;
            int64_t n = nd_input_window(in, 0, &first);
            assert_int_equal(n, (int64_t)len);
            assert_int_equal(nd_input_window(in, 100000, &p), (int64_t)len - 100000);
            assert_status(data[0], nd_read_byte_buffered(in));
            assert_memory_equal(first, data, len);
        }
        assert_status(ND_OK, nd_close(in));
    }
    free(data);
}

/* One nd_input_read_from(in, pos, buf, n) against the reference bytes: exactly
 * the bytes, the cursor at pos + n, and a window (if any) of the bytes there;
 * past the end ND_E_EOF with nothing read or moved. */
static void check_read_from(nd_handle in, const uint8_t *data, int64_t flen, int64_t pos, int64_t n,
                            int mapped, uint8_t *buf, const char *what)
{
    const uint8_t *w = (const uint8_t *)"stale";
    int64_t before = nd_input_position(in);
    memset(buf, 0xEE, (size_t)n + 1);
    int64_t got = nd_input_read_from(in, pos, buf, n, &w);
    if (pos + n > flen) {
        if (got != ND_E_EOF || buf[0] != 0xEE || nd_input_position(in) != before || w != NULL)
            fail_msg("%s: %lld bytes at %lld of %lld: %lld, not a clean EOF", what, (long long)n,
                     (long long)pos, (long long)flen, (long long)got);
        tst_assert_message_contains("nd_input_read_from: ", __FILE__, __LINE__);
        return;
    }
    int64_t bypass = nd_input_buffer_size(in) < 65536 ? nd_input_buffer_size(in) : 65536;
    if (got < 0 || got > flen - (pos + n) || (got == 0) != (w == NULL) ||
        (mapped && got != flen - (pos + n)) || /* a read through the buffer leaves a window */
        (got == 0 && n < bypass && pos + n < flen))
        fail_msg("%s: %lld bytes at %lld: window of %lld", what, (long long)n, (long long)pos,
                 (long long)got);
    if (n > 0 && memcmp(buf, data + pos, (size_t)n) != 0)
        fail_msg("%s: %lld bytes at %lld read back wrong", what, (long long)n, (long long)pos);
    if (got > 0 && memcmp(w, data + pos + n, (size_t)got) != 0)
        fail_msg("%s: the window after %lld bytes at %lld is wrong", what, (long long)n,
                 (long long)pos);
    assert_int_equal(buf[n], 0xEE);
    assert_status(pos + n, nd_input_position(in));
}

/* nd_input_read_from over every strategy, at positions and lengths around the
 * buffers' edges (4 KiB, 16 KiB, 256 KiB), the 64 KiB bypass and the end, from
 * a buffer that holds the position, one that holds something else, and none. */
static void read_from_matches_a_reference_read(void **state)
{
    tst_env *env = *state;
    const int64_t flen = 300017;
    uint8_t *data = tst_put_random(env, "f", (size_t)flen, 90);
    const int64_t edges[] = {0,     1,     4095,  4096,   4097,   16383, 16384,
                             65535, 65536, 65537, 262143, 262144, 262145};
    const size_t n_edges = sizeof(edges) / sizeof(edges[0]);
    uint8_t *buf = malloc((size_t)flen + 2);
    for (size_t k = 0; k < N_STRATEGIES; k++) {
        int mapped = (strategies[k].flags & ND_IO_MMAP) != 0;
        for (int from = 0; from < 3; from++) {
            nd_handle in;
            assert_status(ND_OK, nd_open_input(env->dir, "f", strategies[k].flags, &in));
            for (size_t i = 0; i < n_edges + 3; i++) {
                /* positions at the edges and a little before the end */
                int64_t pos = i < n_edges ? edges[i] : flen - (int64_t)(i - n_edges) * 4097;
                for (size_t j = 0; j < n_edges + 2; j++) {
                    int64_t n = j < n_edges ? edges[j] : flen - pos + (int64_t)(j - n_edges);
                    const uint8_t *w;
                    if (from == 1 && pos < flen) /* the buffer holds pos */
                        assert_true(nd_input_window(in, pos, &w) >= 1);
                    else if (from == 2) /* the buffer holds the start */
                        assert_true(nd_input_window(in, 0, &w) >= 1);
                    check_read_from(in, data, flen, pos, n, mapped, buf, strategies[k].what);
                }
            }
            /* no window asked for: 0, the bytes all the same */
            assert_status(0, nd_input_read_from(in, 5, buf, 7, NULL));
            assert_memory_equal(buf, data + 5, 7);
            assert_status(ND_E_INVALID_ARGUMENT, nd_input_read_from(in, -1, buf, 1, NULL));
            assert_status(ND_E_INVALID_ARGUMENT, nd_input_read_from(in, 0, buf, -1, NULL));
            assert_status(ND_E_INVALID_ARGUMENT, nd_input_read_from(in, 0, NULL, 1, NULL));
            assert_status(ND_OK, nd_close(in));
        }
    }
    free(buf);
    free(data);
}

/* A binding's cursor: reads the window it holds, and where it ends makes one
 * nd_input_read_from for the rest. Read sizes cycle across every edge; the
 * whole file must come back in order, through every strategy. */
static void read_from_drives_a_window_cursor(void **state)
{
    tst_env *env = *state;
    const int64_t flen = 1200007;
    uint8_t *data = tst_put_random(env, "f", (size_t)flen, 91);
    uint8_t *out = malloc((size_t)flen);
    const int64_t steps[] = {1, 7, 4096, 3, 16385, 65536, 65535, 100000, 2, 262145, 8191};
    for (size_t k = 0; k < N_STRATEGIES; k++) {
        nd_handle in;
        assert_status(ND_OK, nd_open_input(env->dir, "f", strategies[k].flags, &in));
        const uint8_t *win = NULL;
        int64_t have = 0, pos = 0, calls = 0;
        for (size_t s = 0; pos < flen; s++) {
            int64_t n = steps[s % (sizeof(steps) / sizeof(steps[0]))];
            if (n > flen - pos)
                n = flen - pos;
            if (n <= have) { /* inside the window: no call */
                memcpy(out + pos, win, (size_t)n);
                win += n;
                have -= n;
            } else {
                have = nd_input_read_from(in, pos, out + pos, n, &win);
                assert_true(have >= 0);
                calls++;
            }
            pos += n;
        }
        if (memcmp(out, data, (size_t)flen) != 0)
            fail_msg("%s: the file read through windows and read_from came back wrong",
                     strategies[k].what);
        if (strategies[k].flags & ND_IO_MMAP)
            assert_int_equal(calls, 1); /* a mapping's window is the rest of the input */
        assert_status(ND_E_EOF, nd_input_read_from(in, flen, out, 1, &win));
        assert_status(0, nd_input_read_from(in, flen, out, 0, &win));
        assert_status(ND_OK, nd_close(in));
        /* closed: a clean ND_E_BAD_HANDLE that lets the pin go */
        assert_status(ND_E_BAD_HANDLE, nd_input_read_from(in, 0, out, 1, &win));
        assert_status(ND_E_BAD_HANDLE, nd_input_unpin(in));
    }
    free(out);
    free(data);
}

static void clones_have_their_own_cursor(void **state)
{
    tst_env *env = *state;
    uint8_t *data = tst_put_random(env, "f", 70000, 7);
    for (size_t k = 0; k < N_STRATEGIES; k++) {
        nd_handle in, clone, clone2;
        assert_status(ND_OK, nd_open_input(env->dir, "f", strategies[k].flags, &in));
        assert_status(ND_OK, nd_input_seek(in, 1234));
        assert_status(ND_OK, nd_input_clone(in, &clone));
        assert_true(clone != in);
        /* a clone starts at 0 whatever the parent's cursor, with the same strategy */
        assert_status(0, nd_input_position(clone));
        assert_status(nd_input_strategy(in), nd_input_strategy(clone));
        int64_t len = 0;
        assert_status(ND_OK, nd_input_length(clone, &len));
        assert_int_equal(len, 70000);
        assert_status(data[0], nd_read_byte_buffered(clone));
        assert_status(data[1234], nd_read_byte_buffered(in));
        assert_status(ND_OK, nd_input_seek(clone, 60000));
        assert_status(1235, nd_input_position(in));
        assert_status(ND_OK, nd_input_clone(clone, &clone2));
        assert_status(0, nd_input_position(clone2));
        /* closing the parent leaves the clones reading */
        assert_status(ND_OK, nd_close(in));
        uint8_t buf[100];
        assert_status(100, nd_read_buffered(clone, buf, 100));
        assert_memory_equal(buf, data + 60000, 100);
        assert_status(ND_OK, nd_close(clone));
        assert_status(100, nd_read_bytes(clone2, 69900, buf, 100));
        assert_memory_equal(buf, data + 69900, 100);
        assert_status(ND_OK, nd_close(clone2));
    }
    free(data);
}

static void check_slice(nd_handle s, const uint8_t *expect, int64_t len, const char *what)
{
    int64_t got_len = -1;
    assert_status(ND_OK, nd_input_length(s, &got_len));
    assert_int_equal(got_len, len);
    uint8_t *buf = malloc((size_t)len + 16);
    memset(buf, 0xEE, (size_t)len + 16);
    /* positional reads stop at the slice's end even where the file goes on */
    assert_status(ND_E_EOF, nd_read_bytes(s, 0, buf, len + 1));
    assert_status(ND_E_EOF, nd_read_bytes(s, len, buf, 1));
    assert_int_equal(buf[0], 0xEE);
    assert_status(len, nd_read_bytes(s, 0, buf, len));
    if (len > 0)
        assert_memory_equal(buf, expect, (size_t)len);
    /* windows never count bytes past the slice end */
    int64_t at = 0;
    while (at < len) {
        const uint8_t *p = NULL;
        int64_t n = nd_input_window(s, at, &p);
        if (n < 1 || n > len - at)
            fail_msg("%s: window at %lld of a %lld-byte slice returned %lld", what, (long long)at,
                     (long long)len, (long long)n);
        assert_memory_equal(p, expect + at, (size_t)n);
        at += n;
    }
    assert_status(ND_E_EOF, nd_input_window(s, len, &(const uint8_t *){NULL}));
    /* the cursor: byte by byte to the end, then EOF */
    assert_status(ND_OK, nd_input_seek(s, 0));
    for (int64_t i = 0; i < len; i++)
        assert_status(expect[i], nd_read_byte_buffered(s));
    assert_status(ND_E_EOF, nd_read_byte_buffered(s));
    assert_status(ND_E_EOF, nd_input_seek(s, len + 1));
    assert_status(ND_OK, nd_input_seek(s, 0));
    assert_status(ND_E_EOF, nd_read_buffered(s, buf, len + 1));
    assert_status(0, nd_input_position(s));
    free(buf);
}

static void slices_see_only_themselves(void **state)
{
    tst_env *env = *state;
    const int64_t len = 300000;
    uint8_t *data = tst_put_random(env, "f", (size_t)len, 8);
    for (size_t k = 0; k < N_STRATEGIES; k++) {
        nd_handle in, s, ss, empty, tail, cl;
        assert_status(ND_OK, nd_open_input(env->dir, "f", strategies[k].flags, &in));
        /* refused ranges */
        assert_status(ND_E_INVALID_ARGUMENT, nd_input_slice(in, -1, 10, &s));
        assert_status(ND_E_INVALID_ARGUMENT, nd_input_slice(in, 0, -1, &s));
        assert_status(ND_E_EOF, nd_input_slice(in, 0, len + 1, &s));
        assert_status(ND_E_EOF, nd_input_slice(in, len - 5, 6, &s));
        assert_status(ND_E_EOF, nd_input_slice(in, len + 1, 0, &s));
        assert_status(ND_E_EOF, nd_input_slice(in, 10, INT64_MAX, &s));
        assert_int_equal(s, 0);
        /* an odd slice in the middle, one of it, a clone of that, an empty one, the tail */
        assert_status(ND_OK, nd_input_slice(in, 4097, 70001, &s));
        check_slice(s, data + 4097, 70001, strategies[k].what);
        assert_status(ND_OK, nd_input_slice(s, 333, 5000, &ss));
        check_slice(ss, data + 4097 + 333, 5000, strategies[k].what);
        assert_status(ND_E_EOF, nd_input_slice(s, 70000, 2, &empty));
        assert_status(ND_OK, nd_input_clone(ss, &cl));
        check_slice(cl, data + 4097 + 333, 5000, strategies[k].what);
        assert_status(ND_OK, nd_input_slice(in, 1000, 0, &empty));
        check_slice(empty, data, 0, strategies[k].what);
        assert_status(ND_OK, nd_input_slice(in, len - 3, 3, &tail));
        check_slice(tail, data + len - 3, 3, strategies[k].what);
        /* asynchronous reads see the slice's bounds too */
        nd_handle ring;
        if (nd_ring_open(4, 0, &ring) == ND_OK) {
            uint8_t rb[16];
            uint64_t tag;
            int64_t res;
            assert_status(ND_E_EOF, nd_ring_submit_read(ring, ss, 4990, rb, 11, 1));
            assert_status(ND_E_EOF, nd_ring_submit_read(ring, ss, 5000, rb, 1, 2));
            assert_status(ND_E_INVALID_ARGUMENT, nd_ring_submit_read(ring, ss, -1, rb, 1, 3));
            assert_status(ND_OK, nd_ring_submit_read(ring, ss, 4990, rb, 10, 4));
            assert_status(1, nd_ring_reap(ring, &tag, &res, 1, -1));
            assert_int_equal(tag, 4);
            assert_int_equal(res, 10);
            assert_memory_equal(rb, data + 4097 + 333 + 4990, 10);
            assert_status(ND_OK, nd_close(ring));
        }
        /* slices outlive their parent */
        assert_status(ND_OK, nd_close(in));
        assert_status(ND_OK, nd_close(s));
        check_slice(ss, data + 4097 + 333, 5000, strategies[k].what);
        nd_close(ss);
        nd_close(cl);
        nd_close(empty);
        nd_close(tail);
    }
    free(data);
}

/* ---- random operations against a model ---- */

typedef struct {
    nd_handle h;
    int64_t start, length, pos; /* what the handle must behave like */
} model_handle;

static uint64_t rnd(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* Lengths that probe edges: tiny, around buffers, huge, negative. */
static int64_t some_length(uint64_t *x, int64_t around)
{
    switch (rnd(x) % 8) {
    case 0: return (int64_t)(rnd(x) % 3);
    case 1: return (int64_t)(rnd(x) % 64);
    case 2: return (int64_t)(rnd(x) % 5000);
    case 3: return (int64_t)(rnd(x) % 70000);
    case 4: return around - (int64_t)(rnd(x) % 3) + 1; /* just at or past an end */
    case 5: return -(int64_t)(rnd(x) % 3) - 1;
    case 6: return (int64_t)(rnd(x) % 300000);
    default: return (int64_t)(rnd(x) % 17);
    }
}

static void random_operations_match_a_model(void **state)
{
    tst_env *env = *state;
    const int64_t len = 300001;
    uint8_t *data = tst_put_random(env, "f", (size_t)len, 12);
    uint8_t *buf = malloc(400000);
    assert_non_null(buf);
    static const uint32_t flags[] = {0, ND_IO_RANDOM, ND_IO_MMAP, ND_IO_MERGE,
                                     ND_IO_MERGE | ND_IO_SEQUENTIAL};
    for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++) {
        model_handle pool[16];
        int n = 1;
        pool[0] = (model_handle){0, 0, len, 0};
        assert_status(ND_OK, nd_open_input(env->dir, "f", flags[f], &pool[0].h));
        uint64_t x = 0x9E3779B97F4A7C15ull + f;
        for (int step = 0; step < 4000; step++) {
            model_handle *m = &pool[rnd(&x) % (uint64_t)n];
            int op = (int)(rnd(&x) % 10);
            int64_t a =
                (int64_t)(rnd(&x) % (uint64_t)(m->length + 2)) - (rnd(&x) % 50 == 0 ? 5 : 0);
            int64_t b = some_length(&x, m->length - a);
            const uint8_t *p = NULL;
            int64_t want, got;
            switch (op) {
            case 0:
            case 1: /* positional read */
                want = a < 0 || b < 0 ? ND_E_INVALID_ARGUMENT : a + b > m->length ? ND_E_EOF : b;
                got = nd_read_bytes(m->h, a, buf, b);
                if (got != want)
                    fail_msg("flags 0x%x step %d: nd_read_bytes(%lld, %lld) of [%lld,+%lld) = "
                             "%lld, want %lld",
                             flags[f], step, (long long)a, (long long)b, (long long)m->start,
                             (long long)m->length, (long long)got, (long long)want);
                if (want > 0)
                    assert_memory_equal(buf, data + m->start + a, (size_t)b);
                break;
            case 2: /* seek */
                want = a < 0 ? ND_E_INVALID_ARGUMENT : a > m->length ? ND_E_EOF : ND_OK;
                assert_status(want, nd_input_seek(m->h, a));
                if (want == ND_OK)
                    m->pos = a;
                assert_status(m->pos, nd_input_position(m->h));
                break;
            case 3: /* one byte at the cursor */
                want = m->pos < m->length ? data[m->start + m->pos] : ND_E_EOF;
                assert_status(want, nd_read_byte_buffered(m->h));
                if (want >= 0)
                    m->pos++;
                break;
            case 4:
            case 5: /* bytes at the cursor */
                want = b < 0 ? ND_E_INVALID_ARGUMENT : m->pos + b > m->length ? ND_E_EOF : b;
                got = nd_read_buffered(m->h, buf, b);
                if (got != want)
                    fail_msg("flags 0x%x step %d: nd_read_buffered(%lld) at %lld of %lld = %lld, "
                             "want %lld",
                             flags[f], step, (long long)b, (long long)m->pos, (long long)m->length,
                             (long long)got, (long long)want);
                if (want > 0) {
                    assert_memory_equal(buf, data + m->start + m->pos, (size_t)b);
                    m->pos += b;
                }
                assert_status(m->pos, nd_input_position(m->h));
                break;
            case 6:
            case 7: /* a window */
                got = nd_input_window(m->h, a, &p);
                if (a < 0)
                    assert_status(ND_E_INVALID_ARGUMENT, got);
                else if (a >= m->length)
                    assert_status(ND_E_EOF, got);
                else {
                    if (got < 1 || got > m->length - a)
                        fail_msg("flags 0x%x step %d: window at %lld of %lld gave %lld", flags[f],
                                 step, (long long)a, (long long)m->length, (long long)got);
                    assert_memory_equal(p, data + m->start + a, (size_t)(got < 4096 ? got : 4096));
                }
                break;
            case 8: /* a clone or a slice joins the pool (or replaces one) */
                if (n == 16) {
                    int victim = 1 + (int)(rnd(&x) % 15);
                    assert_status(ND_OK, nd_close(pool[victim].h));
                    pool[victim] = pool[--n];
                    m = &pool[rnd(&x) % (uint64_t)n];
                }
                if (rnd(&x) % 2) {
                    nd_handle c;
                    assert_status(ND_OK, nd_input_clone(m->h, &c));
                    pool[n++] = (model_handle){c, m->start, m->length, 0};
                } else {
                    nd_handle sl;
                    want = a < 0 || b < 0      ? ND_E_INVALID_ARGUMENT
                           : a + b > m->length ? ND_E_EOF
                                               : ND_OK;
                    assert_status(want, nd_input_slice(m->h, a, b, &sl));
                    if (want == ND_OK)
                        pool[n++] = (model_handle){sl, m->start + a, b, 0};
                }
                break;
            default: { /* lengths agree */
                int64_t l = -1;
                assert_status(ND_OK, nd_input_length(m->h, &l));
                assert_int_equal(l, m->length);
                break;
            }
            }
        }
        for (int i = 0; i < n; i++)
            assert_status(ND_OK, nd_close(pool[i].h));
    }
    free(buf);
    free(data);
}

static void refused_flags_and_missing_files(void **state)
{
    tst_env *env = *state;
    free(tst_put_random(env, "f", 10, 9));
    nd_handle in = 5;
    assert_status(ND_E_INVALID_ARGUMENT, nd_open_input(env->dir, "f", ND_IO_OVERWRITE, &in));
    assert_int_equal(in, 0);
    assert_status(ND_E_INVALID_ARGUMENT, nd_open_input(env->dir, "f", 0x200, &in));
    assert_status(ND_E_INVALID_ARGUMENT, nd_open_input(env->dir, "f", 0x80000000u, &in));
    assert_status(ND_E_INVALID_ARGUMENT,
                  nd_open_input(env->dir, "f", ND_IO_REQUIRE_DIRECT | ND_IO_MMAP, &in));
    assert_status(ND_E_NOT_FOUND, nd_open_input(env->dir, "missing", 0, &in));
    assert_status(ND_E_NOT_FOUND, nd_open_input(env->dir, "missing", ND_IO_MMAP, &in));
    assert_status(ND_E_NOT_FOUND, nd_open_input(env->dir, "missing", ND_IO_MERGE, &in));
    assert_status(ND_E_NOT_FOUND, nd_open_input(env->dir, "missing", ND_IO_REQUIRE_DIRECT, &in));
    /* a directory is not an input */
    char path[TST_PATH_MAX];
    assert_int_equal(tst_mkdir(tst_join(path, sizeof(path), env->dir_path, "subdir")), 0);
    assert_status(ND_E_ACCESS, nd_open_input(env->dir, "subdir", 0, &in));
    assert_status(ND_E_ACCESS, nd_open_input(env->dir, "subdir", ND_IO_MMAP, &in));
    assert_status(ND_E_ACCESS, nd_open_input(env->dir, "subdir", ND_IO_MERGE, &in));
}

#ifndef _WIN32
/* POSIX only: Windows inputs do not share write access, so no one can grow the
 * file under a reader there. */
static void file_growing_after_open_is_not_seen(void **state)
{
    /* the length is fixed at open: readers of a Lucene file never see a writer's tail */
    tst_env *env = *state;
    uint8_t *data = tst_put_random(env, "f", 100, 10);
    for (size_t k = 0; k < N_STRATEGIES; k++) {
        nd_handle in;
        char path[TST_PATH_MAX];
        assert_int_equal(
            tst_write_file(tst_join(path, sizeof(path), env->dir_path, "f"), data, 100), 0);
        assert_status(ND_OK, nd_open_input(env->dir, "f", strategies[k].flags, &in));
        uint8_t more[200];
        memcpy(more, data, 100);
        memset(more + 100, 0x42, 100);
        assert_int_equal(tst_write_file(path, more, 200), 0);
        int64_t len = 0;
        assert_status(ND_OK, nd_input_length(in, &len));
        assert_int_equal(len, 100);
        uint8_t buf[101];
        assert_status(ND_E_EOF, nd_read_bytes(in, 0, buf, 101));
        assert_status(ND_OK, nd_close(in));
    }
    free(data);
}
#endif

static void offsets_past_4_gib(void **state)
{
    /* a sparse 5 GiB file with markers just past the 32-bit boundaries: any
     * truncation of an offset to 32 bits reads the wrong place */
    tst_env *env = *state;
    char path[TST_PATH_MAX];
    const int64_t len = ((int64_t)5 << 30) + 4097;
    const int64_t marks[] = {((int64_t)1 << 31) - 3, ((int64_t)1 << 32) - 2,
                             ((int64_t)1 << 32) + 4093, len - 9};
    tst_join(path, sizeof(path), env->dir_path, "sparse");
    if (tst_truncate(path, len) != 0) {
        tst_loud_skip("offsets past 4 GiB", "cannot make a sparse 5 GiB file here");
        skip();
    }
    uint8_t mark[9];
    for (size_t m = 0; m < 4; m++) {
        tst_fill_random(mark, sizeof(mark), 40 + m);
        assert_int_equal(tst_write_at(path, marks[m], mark, sizeof(mark)), 0);
    }
    for (size_t k = 0; k < N_STRATEGIES; k++) {
        if (strategies[k].flags & ND_IO_PRELOAD)
            continue; /* preloading 5 GiB of holes proves nothing and costs seconds */
        nd_handle in, s;
        assert_status(ND_OK, nd_open_input(env->dir, "sparse", strategies[k].flags, &in));
        int64_t got_len = 0;
        assert_status(ND_OK, nd_input_length(in, &got_len));
        assert_true(got_len == len);
        for (size_t m = 0; m < 4; m++) {
            uint8_t buf[10];
            tst_fill_random(mark, sizeof(mark), 40 + m);
            /* one byte of hole, then the mark */
            assert_status(10, nd_read_bytes(in, marks[m] - 1, buf, 10));
            assert_int_equal(buf[0], 0);
            assert_memory_equal(buf + 1, mark, 9);
            /* the cursor and a window at the same place */
            assert_status(ND_OK, nd_input_seek(in, marks[m]));
            assert_status(mark[0], nd_read_byte_buffered(in));
            assert_status(marks[m] + 1, nd_input_position(in));
            const uint8_t *p = NULL;
            int64_t n = nd_input_window(in, marks[m] + 1, &p);
            assert_true(n >= 1);
            assert_int_equal(p[0], mark[1]);
            /* a slice starting past the boundary sees the mark at its own offset 1 */
            assert_status(ND_OK, nd_input_slice(in, marks[m] - 1, 10, &s));
            assert_status(mark[8], nd_read_bytes(s, 9, buf, 1) == 1 ? buf[0] : -1);
            assert_status(ND_E_EOF, nd_read_bytes(s, 9, buf, 2));
            assert_status(ND_OK, nd_close(s));
        }
        assert_status(ND_E_EOF, nd_read_bytes(in, len - 1, mark, 2));
        assert_status(ND_OK, nd_close(in));
    }
}

#ifndef _WIN32
/* POSIX only (Linux mount namespaces): a file system that refuses O_DIRECT.
 * ramfs does (tmpfs accepts O_DIRECT since Linux 6.6). */
static int ramfs_inputs(const char *mnt, void *ctx)
{
    (void)ctx;
    uint8_t *data = tst_random_buffer(70001, 11);
    char path[TST_PATH_MAX];
    if (tst_write_file(tst_join(path, sizeof(path), mnt, "f"), data, 70001) != 0)
        return 1;
    nd_handle dir, in;
    if (nd_open_dir(mnt, 0, &dir) != ND_OK)
        return 2;
    int32_t rc = nd_open_input(dir, "f", ND_IO_REQUIRE_DIRECT, &in);
    if (rc != ND_E_NOT_SUPPORTED) {
        fprintf(stderr, "REQUIRE_DIRECT on ramfs: %s (%s)\n", nd_status_name(rc),
                nd_last_error_message());
        return 3;
    }
    if (in != 0)
        return 4;
    rc = nd_open_input(dir, "f", ND_IO_REQUIRE_DIRECT | ND_IO_MERGE, &in);
    if (rc != ND_E_NOT_SUPPORTED)
        return 5;
    /* MERGE alone falls back to drop-behind, reporting it */
    if (nd_open_input(dir, "f", ND_IO_MERGE, &in) != ND_OK)
        return 6;
    if (nd_input_strategy(in) != ND_STRATEGY_DROP_BEHIND) {
        fprintf(stderr, "MERGE on ramfs reports strategy %d\n", (int)nd_input_strategy(in));
        return 7;
    }
    nd_close(in);
    if (tst_verify_input(dir, "f", ND_IO_MERGE, data, 70001) != 0)
        return 8;
    if (tst_verify_input(dir, "f", ND_IO_MERGE | ND_IO_SEQUENTIAL, data, 70001) != 0)
        return 9;
    nd_close(dir);
    free(data);
    return 0;
}

static void require_direct_refused_where_unsupported(void **state)
{
    (void)state;
    int rc = tst_with_private_mount("ramfs", NULL, ramfs_inputs, NULL);
    if (rc == TST_NO_MOUNT) {
        tst_loud_skip("ND_IO_REQUIRE_DIRECT -> ND_E_NOT_SUPPORTED and MERGE's drop-behind fallback",
                      "no private ramfs mount is possible here (needs root or user namespaces)");
        skip();
    }
    assert_int_equal(rc, 0);
}
#endif

/* A sequential mapped reader populates the mapping ahead of itself in
 * stretches: reads across stretch edges, a jump past unpopulated ground, a
 * read copied in several pieces, a slice and a clone sharing the mapping all
 * see the file's bytes. */
static void mapped_sequential_reads_across_populated_stretches(void **state)
{
    tst_env *env = *state;
    /* past the clone's 64 MiB stretch (input.c, POPULATE_AHEAD), with a ragged end */
    const size_t len = (77u << 20) + 4097;
    uint8_t *data = tst_put_random(env, "big", len, 77);
    uint8_t *buf = malloc(1 << 20);
    nd_handle in, clone, slice;
    assert_status(ND_OK, nd_open_input(env->dir, "big", ND_IO_MMAP | ND_IO_SEQUENTIAL, &in));
    assert_status(ND_OK, nd_input_clone(in, &clone));
    /* the clone jumps ahead first: population starts where it reads */
    assert_int_equal(nd_read_bytes(clone, 9 << 20, buf, 1000), 1000);
    assert_memory_equal(buf, data + (9 << 20), 1000);
    /* then the input scans from the start in odd chunks, through the clone's stretch
     * (9 MiB + 64 MiB) and on into one of its own */
    size_t chunk = 65536 + 123;
    for (size_t off = 0; off < len; off += chunk) {
        size_t n = len - off < chunk ? len - off : chunk;
        assert_int_equal(nd_read_buffered(in, buf, (int64_t)n), (int64_t)n);
        assert_memory_equal(buf, data + off, n);
    }
    /* one read of several copy pieces (256 KiB each) from an odd offset */
    memset(buf, 0, 1 << 20);
    assert_int_equal(nd_read_bytes(in, 12345, buf, (1 << 20) - 3), (1 << 20) - 3);
    assert_memory_equal(buf, data + 12345, (1 << 20) - 3);
    /* a slice near the end reads the last bytes */
    assert_status(ND_OK, nd_input_slice(in, (int64_t)len - 5000, 5000, &slice));
    assert_int_equal(nd_read_bytes(slice, 0, buf, 5000), 5000);
    assert_memory_equal(buf, data + len - 5000, 5000);
    nd_close(slice);
    nd_close(clone);
    nd_close(in);
    free(buf);
    free(data);
}

#ifdef __linux__
/* Whether madvise(MADV_POPULATE_READ) populates a mapping of `path` here: a
 * user-mode emulator (qemu-aarch64 runs the arm64 suite) accepts and ignores it. */
static int populate_works(const char *path, size_t len)
{
#  ifdef MADV_POPULATE_READ
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return 0;
    void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return 0;
    int works = madvise(m, len, MADV_POPULATE_READ) == 0 &&
                tst_smaps_kib(m, "Rss") >= (long)(len >> 10) - 64;
    munmap(m, len);
    return works;
#  else
    (void)path, (void)len;
    return 0;
#  endif
}

/* A mapping opened without advice whose reads follow each other from offset 0
 * for 1 MiB is populated ahead, as an ND_IO_SEQUENTIAL one is (input.c,
 * follow_run); reads that jump about are left to the page faults. Seen in
 * the mapping's resident size, with the bytes checked all along. */
static void unadvised_mapping_read_in_order_is_populated_ahead(void **state)
{
    tst_env *env = *state;
    const size_t len = 16u << 20;
    uint8_t *data = tst_put_random(env, "run", len, 91);
    uint8_t *jumpy = tst_put_random(env, "jumpy", len, 92);
    char path[TST_PATH_MAX];
    if (!populate_works(tst_join(path, sizeof(path), env->dir_path, "run"), len)) {
        free(data);
        free(jumpy);
        tst_loud_skip("populating a mapping ahead of its reader",
                      "madvise(MADV_POPULATE_READ) populates nothing here (a user-mode emulator "
                      "accepts and ignores it), so there is nothing to see in the resident size");
        skip();
        return; /* cmocka's skip() does not return, but is not declared noreturn */
    }
    uint8_t *buf = malloc(65536);
    nd_handle in, other, w;
    const uint8_t *p;
    /* reads that jump about (never where the last one ended) in the first 4 MiB */
    assert_status(ND_OK, nd_open_input(env->dir, "jumpy", ND_IO_MMAP, &other));
    assert_status(ND_OK, nd_input_clone(other, &w));
    assert_true(nd_input_window(w, 0, &p) > 0);
    for (int i = 0; i < 32; i++) {
        int64_t off = (int64_t)((i * 7919) % 61) * 65536 + 4096;
        assert_int_equal(nd_read_bytes(other, off, buf, 4096), 4096);
        assert_memory_equal(buf, jumpy + off, 4096);
    }
    long jumped = tst_smaps_kib(p, "Rss");
    nd_close(w);
    nd_close(other);
    /* front to back in 64 KiB reads, after one read elsewhere that starts no run */
    assert_status(ND_OK, nd_open_input(env->dir, "run", ND_IO_MMAP, &in));
    assert_status(ND_OK, nd_input_clone(in, &w));
    assert_true(nd_input_window(w, 0, &p) > 0);
    assert_int_equal(nd_read_bytes(in, 12 << 20, buf, 64), 64);
    assert_memory_equal(buf, data + (12 << 20), 64);
    for (int64_t off = 0; off <= (1 << 20); off += 65536) {
        assert_int_equal(nd_read_bytes(in, off, buf, 65536), 65536);
        assert_memory_equal(buf, data + off, 65536);
    }
    long ran = tst_smaps_kib(p, "Rss");
    if (jumped < 0 || ran < 0)
        fail_msg("no mapping in /proc/self/smaps holds the windows");
    if (jumped > 8 << 10 || ran < 15 << 10)
        fail_msg("resident: %ld KiB after jumping reads (want <= 8 MiB), %ld KiB after 1 MiB in "
                 "order (want the whole 16 MiB)",
                 jumped, ran);
    /* the rest of the file still reads right */
    for (int64_t off = (1 << 20) + 65536; off < (int64_t)len; off += 65536) {
        assert_int_equal(nd_read_bytes(in, off, buf, 65536), 65536);
        assert_memory_equal(buf, data + off, 65536);
    }
    nd_close(w);
    nd_close(in);
    free(buf);
    free(jumpy);
    free(data);
}
#endif

/* nd_input_buffer_size is the one place a cursor buffer's size is chosen (bindings
 * that keep their own buffer ask it): it follows the access advice, never
 * exceeds a buffered input, and refuses what is not an input. */
static void buffer_size_follows_advice_and_length(void **state)
{
    tst_env *env = *state;
    free(tst_put_random(env, "big", 1u << 20, 81));
    free(tst_put_random(env, "small", 10, 82));
    free(tst_put_random(env, "empty", 0, 83));
    nd_handle in, clone, slice;
    int64_t size[6];
    const uint32_t flags[6] = {0,
                               ND_IO_RANDOM,
                               ND_IO_SEQUENTIAL,
                               ND_IO_RANDOM | ND_IO_SEQUENTIAL,
                               ND_IO_MERGE,
                               ND_IO_MERGE | ND_IO_RANDOM};
    for (int i = 0; i < 6; i++) {
        assert_status(ND_OK, nd_open_input(env->dir, "big", flags[i], &in));
        size[i] = nd_input_buffer_size(in);
        assert_true(size[i] >= 4096 && size[i] % 4096 == 0);
        assert_status(ND_OK, nd_input_clone(in, &clone));
        assert_int_equal(nd_input_buffer_size(clone), size[i]);
        /* a slice smaller than the buffer gets no more than it can hold */
        assert_status(ND_OK, nd_input_slice(in, 1000, 100, &slice));
        if (nd_input_strategy(slice) != ND_STRATEGY_DIRECT)
            assert_int_equal(nd_input_buffer_size(slice), 100);
        nd_close(slice);
        nd_close(clone);
        nd_close(in);
    }
    /* random < default < sequential; sequential wins over random; a merge scans */
    assert_true(size[1] < size[0] && size[0] < size[2]);
    assert_int_equal(size[3], size[2]);
    assert_true(size[4] >= size[2] && size[5] >= size[2]);
    const char *names[] = {"small", "empty"};
    const int64_t want[] = {10, 1};
    for (int n = 0; n < 2; n++) {
        assert_status(ND_OK, nd_open_input(env->dir, names[n], ND_IO_SEQUENTIAL, &in));
        assert_int_equal(nd_input_buffer_size(in), want[n]);
        nd_close(in);
    }
    assert_status(ND_E_BAD_HANDLE, nd_input_buffer_size(in)); /* closed */
    assert_message_contains("nd_input_buffer_size");
    assert_status(ND_E_BAD_HANDLE, nd_input_buffer_size(env->dir)); /* not an input */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(every_strategy_reads_every_size, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(require_direct_on_this_file_system, tst_setup,
                                        tst_teardown),
        cmocka_unit_test_setup_teardown(direct_reads_aligned_and_unaligned, tst_setup,
                                        tst_teardown),
        cmocka_unit_test_setup_teardown(positional_read_ranges, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(cursor_edges, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(windows_match_the_file, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(mapped_sequential_reads_across_populated_stretches,
                                        tst_setup, tst_teardown),
#ifdef __linux__
        cmocka_unit_test_setup_teardown(unadvised_mapping_read_in_order_is_populated_ahead,
                                        tst_setup, tst_teardown),
#endif
        cmocka_unit_test_setup_teardown(read_from_matches_a_reference_read, tst_setup,
                                        tst_teardown),
        cmocka_unit_test_setup_teardown(read_from_drives_a_window_cursor, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(clones_have_their_own_cursor, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(buffer_size_follows_advice_and_length, tst_setup,
                                        tst_teardown),
        cmocka_unit_test_setup_teardown(slices_see_only_themselves, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(random_operations_match_a_model, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(refused_flags_and_missing_files, tst_setup, tst_teardown),
#ifndef _WIN32
        cmocka_unit_test_setup_teardown(file_growing_after_open_is_not_seen, tst_setup,
                                        tst_teardown),
#endif
        cmocka_unit_test_setup_teardown(offsets_past_4_gib, tst_setup, tst_teardown),
#ifndef _WIN32
        cmocka_unit_test(require_direct_refused_where_unsupported),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
