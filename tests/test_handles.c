/*
 * test_handles.c - a closed, stale, forged or wrong-kind handle gets
 * ND_E_BAD_HANDLE from every call, never a crash and never someone else's
 * object; NULL out-pointers get ND_E_INVALID_ARGUMENT and change nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

/* Every call that takes a handle, with harmless arguments; returns the
 * status (or count) it got. `which` selects the call. */
enum { N_CALLS = 40 };

/* A call that made a handle by mistake must not leak it into later cases. */
static int64_t opened(int32_t rc, const nd_handle *made)
{
    if (rc == ND_OK)
        nd_close(*made);
    return rc;
}

static int64_t call_with(int which, nd_handle h)
{
    uint8_t buf[16];
    const uint8_t *ptr = NULL;
    int64_t len;
    nd_handle out = 0;
    switch (which) {
    case 0: return nd_list(h, (char *)buf, sizeof(buf));
    case 1: return nd_file_exists(h, "f");
    case 2: return nd_file_length(h, "f", &len);
    case 3: return nd_delete_file(h, "nothing-here");
    case 4: return nd_rename(h, "nothing-here", "nor-here");
    case 5: return nd_fsync(h, "f");
    case 6: return nd_sync_dir(h);
    case 7: return opened(nd_lock(h, "other.lock", &out), &out);
    case 8: return opened(nd_open_input(h, "f", 0, &out), &out);
    case 9: return nd_input_length(h, &len);
    case 10: return nd_read_bytes(h, 0, buf, 1);
    case 11: return nd_input_seek(h, 0);
    case 12: return nd_input_position(h);
    case 13: return nd_read_byte_buffered(h);
    case 14: return nd_read_buffered(h, buf, 1);
    case 15: return nd_input_window(h, 0, &ptr);
    case 16: return opened(nd_input_clone(h, &out), &out);
    case 17: return opened(nd_input_slice(h, 0, 1, &out), &out);
    case 18: return nd_input_strategy(h);
    case 19: return nd_input_buffer_size(h);
    case 20: return nd_input_unpin(h);
    case 21: return nd_write_bytes(h, "x", 0); /* appends nothing even if it were accepted */
    case 22: return nd_output_position(h);
    case 23: return nd_output_crc32(h);
    case 24: return nd_output_strategy(h);
    case 25: return nd_output_sync(h);
    case 26: return nd_output_flush(h);
    case 27: return nd_output_seek(h, 0);
    case 28: return nd_ring_backend(h);
    case 29: return nd_ring_in_flight(h);
    case 30: {
        uint64_t tag;
        int64_t res;
        return nd_ring_reap(h, &tag, &res, 1, 0);
    }
    case 31: return nd_ring_submit_read(h, h, 0, buf, 1, 7);
    case 32: return nd_input_prefetch(h, 0, 1);
    case 33: return nd_input_advise(h, ND_IO_RANDOM);
    case 34: return nd_ring_event_fd(h);
    case 35: return nd_output_buffer_size(h);
    case 36: return nd_policy_input(h, "_0.tim", ND_USE_SEARCH, 0, -1);
    case 37: return nd_policy_output(h, "_0.cfs", ND_USE_MERGE, 1 << 30, -1);
    case 38: return nd_input_mapped_now(h);
    case 39: return nd_input_map(h, 0, &ptr);
    default: return ND_E_INVALID_ARGUMENT;
    }
}

/* The kind each call wants: 'd'irectory, 'i'nput, 'o'utput, 'r'ing. */
static char kind_of_call(int which)
{
    if (which >= 38) /* how a mapped input reads now, its mapping */
        return 'i';
    if (which >= 36) /* the policy, after the output's buffer size */
        return 'd';
    if (which == 35)
        return 'o';
    if (which >= 34) /* added after prefetch and advice */
        return 'r';
    if (which >= 32) /* added after the rings */
        return 'i';
    return which <= 8 ? 'd' : which <= 20 ? 'i' : which <= 27 ? 'o' : 'r';
}

static const char *call_name(int which)
{
    static const char *const names[N_CALLS] = {"nd_list",
                                               "nd_file_exists",
                                               "nd_file_length",
                                               "nd_delete_file",
                                               "nd_rename",
                                               "nd_fsync",
                                               "nd_sync_dir",
                                               "nd_lock",
                                               "nd_open_input",
                                               "nd_input_length",
                                               "nd_read_bytes",
                                               "nd_input_seek",
                                               "nd_input_position",
                                               "nd_read_byte_buffered",
                                               "nd_read_buffered",
                                               "nd_input_window",
                                               "nd_input_clone",
                                               "nd_input_slice",
                                               "nd_input_strategy",
                                               "nd_input_buffer_size",
                                               "nd_input_unpin",
                                               "nd_write_bytes",
                                               "nd_output_position",
                                               "nd_output_crc32",
                                               "nd_output_strategy",
                                               "nd_output_sync",
                                               "nd_output_flush",
                                               "nd_output_seek",
                                               "nd_ring_backend",
                                               "nd_ring_in_flight",
                                               "nd_ring_reap",
                                               "nd_ring_submit_read",
                                               "nd_input_prefetch",
                                               "nd_input_advise",
                                               "nd_ring_event_fd",
                                               "nd_output_buffer_size",
                                               "nd_policy_input",
                                               "nd_policy_output",
                                               "nd_input_mapped_now",
                                               "nd_input_map"};
    return names[which];
}

static void all_calls_refuse(nd_handle h, const char *why)
{
    for (int c = 0; c < N_CALLS; c++) {
        if (h == 0 && (c == 36 || c == 37)) /* the policy takes directory 0 as "any directory" */
            continue;
        int64_t rc = call_with(c, h);
        if (rc != ND_E_BAD_HANDLE) {
            fail_msg("%s(%s handle %lld) returned %lld, not ND_E_BAD_HANDLE", call_name(c), why,
                     (long long)h, (long long)rc);
        }
    }
    assert_status(ND_E_BAD_HANDLE, nd_close(h));
}

typedef struct {
    nd_handle dir, input, output, lock, ring;
} one_of_each;

static void open_one_of_each(tst_env *env, one_of_each *k)
{
    char path[TST_PATH_MAX];
    assert_int_equal(tst_write_file(tst_join(path, sizeof(path), env->dir_path, "f"), "file", 4),
                     0);
    k->dir = env->dir;
    assert_status(ND_OK, nd_open_input(env->dir, "f", 0, &k->input));
    assert_status(ND_OK, nd_create_output(env->dir, "o", 0, &k->output));
    assert_status(ND_OK, nd_lock(env->dir, "write.lock", &k->lock));
    int32_t rc = nd_ring_open(4, 0, &k->ring);
    if (rc == ND_E_NOT_SUPPORTED) /* a platform without rings yet: 0 stands in, refused like any */
        k->ring = 0;
    else
        assert_status(ND_OK, rc);
}

static void close_ring(nd_handle ring)
{
    if (ring != 0)
        assert_status(ND_OK, nd_close(ring));
}

static void double_close_every_kind(void **state)
{
    tst_env *env = *state;
    one_of_each k;
    open_one_of_each(env, &k);
    nd_handle clone, slice;
    assert_status(ND_OK, nd_input_clone(k.input, &clone));
    assert_status(ND_OK, nd_input_slice(k.input, 1, 2, &slice));
    nd_handle all[] = {k.input, clone, slice, k.output, k.lock, k.ring, k.dir};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        if (all[i] == 0)
            continue;
        assert_status(ND_OK, nd_close(all[i]));
        assert_status(ND_E_BAD_HANDLE, nd_close(all[i]));
        assert_status(ND_E_BAD_HANDLE, nd_close(all[i]));
        all_calls_refuse(all[i], "closed");
    }
}

static void forged_handles(void **state)
{
    tst_env *env = *state;
    one_of_each k;
    open_one_of_each(env, &k);
    nd_handle live[] = {k.dir, k.input, k.output, k.lock, k.ring};
    const nd_handle fixed[] = {0,
                               -1,
                               1,
                               2,
                               3,
                               0x7FFFFFFFFFFFFFFFLL,
                               (nd_handle)0x8000000000000000ULL,
                               (nd_handle)0xFFFFFFFF00000000ULL,
                               0xFFFFFF,
                               0x1000000,
                               0x10000000,
                               (nd_handle)((uint64_t)k.input ^ 0x8000000000000000ULL)};
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        all_calls_refuse(fixed[i], "forged");
    uint64_t x = 0x243F6A8885A308D3ull;
    for (int i = 0; i < 2000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        /* random values, and random values in the range real handles use */
        nd_handle h = (nd_handle)(i % 2 ? x : x & 0x07FFFFFFFFFFFFFFull);
        int is_live = 0;
        for (size_t j = 0; j < 5; j++)
            is_live |= h == live[j];
        if (is_live)
            continue;
        assert_status(ND_E_BAD_HANDLE, call_with(i % N_CALLS, h));
        assert_status(ND_E_BAD_HANDLE, nd_close(h));
    }
    /* the real handles were not disturbed */
    char buf[4];
    assert_status(4, nd_read_bytes(k.input, 0, buf, 4));
    assert_status(1, nd_write_bytes(k.output, "z", 1));
    assert_status(ND_OK, nd_close(k.output));
    assert_status(ND_OK, nd_close(k.input));
    assert_status(ND_OK, nd_close(k.lock));
    close_ring(k.ring);
}

static void single_bit_changes_never_reach_an_object(void **state)
{
    /* whatever the layout (index, kind, generation bits), a handle with one bit
     * changed is refused unless it happens to be another live handle */
    tst_env *env = *state;
    one_of_each k;
    open_one_of_each(env, &k);
    nd_handle live[] = {k.dir, k.input, k.output, k.lock, k.ring};
    for (size_t j = 0; j < 5; j++) {
        for (int bit = 0; bit < 64; bit++) {
            nd_handle h = (nd_handle)((uint64_t)live[j] ^ (1ull << bit));
            int is_live = 0;
            for (size_t m = 0; m < 5; m++)
                is_live |= h == live[m];
            if (is_live)
                continue;
            for (int c = 0; c < N_CALLS; c++)
                if (call_with(c, h) != ND_E_BAD_HANDLE)
                    fail_msg("%s accepted handle %llx (bit %d of %llx changed)", call_name(c),
                             (unsigned long long)h, bit, (unsigned long long)live[j]);
            assert_status(ND_E_BAD_HANDLE, nd_close(h));
        }
    }
    assert_status(ND_OK, nd_close(k.input));
    assert_status(ND_OK, nd_close(k.output));
    assert_status(ND_OK, nd_close(k.lock));
    close_ring(k.ring);
}

/* A kind with its article, as the messages say it. */
static const char *kind_phrase(char kind)
{
    switch (kind) {
    case 'd': return "a directory";
    case 'i': return "an input";
    case 'o': return "an output";
    case 'l': return "a lock";
    default: return "a ring";
    }
}

/* Refused, and the message names the call and both kinds, each with its article. */
static void refused_as_wrong_kind(int c, nd_handle h, char have)
{
    int64_t rc = call_with(c, h);
    if (rc != ND_E_BAD_HANDLE)
        fail_msg("%s(%s handle) returned %lld, not ND_E_BAD_HANDLE", call_name(c),
                 kind_phrase(have), (long long)rc);
    char want[64];
    snprintf(want, sizeof(want), "is %s, not %s", kind_phrase(have), kind_phrase(kind_of_call(c)));
    const char *m = nd_last_error_message();
    if (strstr(m, call_name(c)) == NULL || strstr(m, want) == NULL)
        fail_msg("%s given %s: the message \"%s\" should name the call and say \"%s\"",
                 call_name(c), kind_phrase(have), m, want);
}

static void wrong_kind_for_every_call(void **state)
{
    tst_env *env = *state;
    one_of_each k;
    open_one_of_each(env, &k);
    for (int c = 0; c < N_CALLS; c++) {
        char want = kind_of_call(c);
        if (want != 'd')
            refused_as_wrong_kind(c, k.dir, 'd');
        if (want != 'i')
            refused_as_wrong_kind(c, k.input, 'i');
        if (want != 'o')
            refused_as_wrong_kind(c, k.output, 'o');
        if (want != 'r' && k.ring != 0)
            refused_as_wrong_kind(c, k.ring, 'r');
        refused_as_wrong_kind(c, k.lock, 'l'); /* a lock takes no call but close */
    }
    /* refusing a wrong-kind call neither closed nor leaked the object */
    assert_int_equal(nd_list(k.dir, NULL, 0),
                     (int64_t)sizeof("f") + (int64_t)sizeof("o") + (int64_t)sizeof("write.lock"));
    assert_status(ND_STRATEGY_BUFFERED, nd_input_strategy(k.input));
    assert_status(0, nd_output_position(k.output));
    assert_status(ND_OK, nd_close(k.input));
    assert_status(ND_OK, nd_close(k.output));
    assert_status(ND_OK, nd_close(k.lock));
    assert_status(ND_E_BAD_HANDLE, nd_close(k.lock));
    close_ring(k.ring);
}

static void stale_handles_after_slot_reuse(void **state)
{
    tst_env *env = *state;
    char path[TST_PATH_MAX];
    assert_int_equal(tst_write_file(tst_join(path, sizeof(path), env->dir_path, "f"), "abcd", 4),
                     0);
    enum { ROUNDS = 3000 };
    nd_handle *seen = malloc(ROUNDS * sizeof(nd_handle));
    assert_non_null(seen);
    for (int i = 0; i < ROUNDS; i++) {
        nd_handle h;
        /* alternate kinds so a reused slot changes kind as well as generation */
        if (i % 3 == 2)
            assert_status(ND_OK, nd_lock(env->dir, "l", &h));
        else
            assert_status(ND_OK, nd_open_input(env->dir, "f", i % 3 ? ND_IO_MMAP : 0, &h));
        assert_int_not_equal(h, 0);
        seen[i] = h;
        assert_status(ND_OK, nd_close(h));
        /* every earlier handle is dead, even those whose slot this one took */
        if (i > 0) {
            assert_status(ND_E_BAD_HANDLE, nd_read_byte_buffered(seen[i - 1]));
            assert_status(ND_E_BAD_HANDLE, nd_close(seen[i - 1]));
            assert_status(ND_E_BAD_HANDLE, nd_close(seen[i / 2]));
        }
    }
    /* no handle value was ever handed out twice */
    for (int i = 0; i < ROUNDS; i++)
        for (int j = i + 1; j < ROUNDS; j += 1)
            if (seen[i] == seen[j])
                fail_msg("handle %llx was given out at rounds %d and %d",
                         (unsigned long long)seen[i], i, j);
    /* a live handle in a reused slot works while the stale ones keep failing */
    nd_handle live;
    assert_status(ND_OK, nd_open_input(env->dir, "f", 0, &live));
    for (int i = 0; i < ROUNDS; i += 7)
        assert_status(ND_E_BAD_HANDLE, nd_input_seek(seen[i], 0));
    assert_status('a', nd_read_byte_buffered(live));
    assert_status(ND_OK, nd_close(live));
    free(seen);
}

static void null_out_pointers(void **state)
{
    tst_env *env = *state;
    char path[TST_PATH_MAX];
    assert_int_equal(tst_write_file(tst_join(path, sizeof(path), env->dir_path, "f"), "abcd", 4),
                     0);
    nd_handle in, out;
    assert_status(ND_OK, nd_open_input(env->dir, "f", 0, &in));
    assert_status(ND_OK, nd_create_output(env->dir, "o", 0, &out));

    assert_status(ND_E_INVALID_ARGUMENT, nd_open_dir(env->dir_path, 0, NULL));
    assert_status(ND_E_INVALID_ARGUMENT, nd_file_length(env->dir, "f", NULL));
    assert_status(ND_E_INVALID_ARGUMENT, nd_lock(env->dir, "null.lock", NULL));
    assert_status(ND_E_INVALID_ARGUMENT, nd_open_input(env->dir, "f", 0, NULL));
    assert_status(ND_E_INVALID_ARGUMENT, nd_create_output(env->dir, "null-out", 0, NULL));
    assert_status(ND_E_INVALID_ARGUMENT,
                  nd_create_output(env->dir, "null-out", ND_IO_MERGE | ND_IO_OVERWRITE, NULL));
    assert_status(ND_E_INVALID_ARGUMENT, nd_input_length(in, NULL));
    assert_status(ND_E_INVALID_ARGUMENT, nd_input_window(in, 0, NULL));
    assert_status(ND_E_INVALID_ARGUMENT, nd_input_clone(in, NULL));
    assert_status(ND_E_INVALID_ARGUMENT, nd_input_slice(in, 0, 1, NULL));
    int32_t ring_rc = nd_ring_open(4, 0, NULL);
    assert_true(ring_rc == ND_E_INVALID_ARGUMENT || ring_rc == ND_E_NOT_SUPPORTED);
    nd_handle ring;
    if (nd_ring_open(4, 0, &ring) == ND_OK) {
        uint64_t tag;
        int64_t result;
        assert_status(ND_E_INVALID_ARGUMENT, nd_ring_reap(ring, NULL, &result, 1, 0));
        assert_status(ND_E_INVALID_ARGUMENT, nd_ring_reap(ring, &tag, NULL, 1, 0));
        assert_status(ND_E_INVALID_ARGUMENT, nd_ring_submit_read(ring, in, 0, NULL, 1, 1));
        assert_status(0, nd_ring_in_flight(ring));
        assert_status(ND_OK, nd_close(ring));
    }
    /* NULL buffers with a length */
    assert_status(ND_E_INVALID_ARGUMENT, nd_read_bytes(in, 0, NULL, 1));
    assert_status(ND_E_INVALID_ARGUMENT, nd_read_buffered(in, NULL, 1));
    assert_status(ND_E_INVALID_ARGUMENT, nd_write_bytes(out, NULL, 1));
    assert_status(ND_E_INVALID_ARGUMENT, nd_list(env->dir, NULL, 1));
    /* ...and without one, NULL is fine */
    assert_status(0, nd_read_bytes(in, 0, NULL, 0));
    assert_status(0, nd_read_buffered(in, NULL, 0));
    assert_status(0, nd_write_bytes(out, NULL, 0));
    /* a refused call made nothing: no file, no lock file, no handle */
    assert_status(0, nd_file_exists(env->dir, "null-out"));
    assert_status(0, nd_file_exists(env->dir, "null.lock"));
    assert_status(0, nd_input_position(in));
    assert_status(0, nd_output_position(out));
    /* after the refusals both still work and close once */
    assert_status(2, nd_write_bytes(out, "ok", 2));
    assert_status(ND_OK, nd_close(out));
    assert_status('a', nd_read_byte_buffered(in));
    assert_status(ND_OK, nd_close(in));
}

static void handles_are_distinct_and_nonzero(void **state)
{
    tst_env *env = *state;
    char path[TST_PATH_MAX];
    assert_int_equal(tst_write_file(tst_join(path, sizeof(path), env->dir_path, "f"), "abcd", 4),
                     0);
    enum { N = 300 };
    nd_handle h[N];
    for (int i = 0; i < N; i++) {
        assert_status(ND_OK, nd_open_input(env->dir, "f", 0, &h[i]));
        assert_int_not_equal(h[i], 0);
        for (int j = 0; j < i; j++)
            assert_true(h[i] != h[j]);
    }
    for (int i = 0; i < N; i++)
        assert_status(ND_OK, nd_close(h[i]));
}

static void thousands_of_live_handles(void **state)
{
    /* clones cost no descriptor, so the handle table itself is what grows here,
     * across however it is chunked */
    tst_env *env = *state;
    char path[TST_PATH_MAX];
    uint8_t bytes[256];
    for (int i = 0; i < 256; i++)
        bytes[i] = (uint8_t)i;
    assert_int_equal(tst_write_file(tst_join(path, sizeof(path), env->dir_path, "f"), bytes, 256),
                     0);
    enum { N = 5000 };
    nd_handle *h = malloc(N * sizeof(nd_handle));
    assert_non_null(h);
    assert_status(ND_OK, nd_open_input(env->dir, "f", ND_IO_MMAP, &h[0]));
    for (int i = 1; i < N; i++) {
        /* every other one a slice starting at its own offset: a mix-up shows in the byte */
        if (i % 2)
            assert_status(ND_OK, nd_input_clone(h[0], &h[i]));
        else
            assert_status(ND_OK, nd_input_slice(h[0], i % 256, 256 - i % 256, &h[i]));
    }
    for (int i = N - 1; i >= 0; i--)
        assert_status(i % 2 ? 0 : i % 256, nd_read_byte_buffered(h[i]));
    /* close the odd ones; the even ones still read, the odd ones are dead */
    for (int i = 1; i < N; i += 2)
        assert_status(ND_OK, nd_close(h[i]));
    for (int i = 0; i < N; i++) /* an even one's second byte follows its first */
        assert_status(i % 2 ? ND_E_BAD_HANDLE : (i + 1) % 256, nd_read_byte_buffered(h[i]));
    for (int i = 0; i < N; i += 2)
        assert_status(ND_OK, nd_close(h[i]));
    free(h);
}

#ifndef _WIN32
/* POSIX only: Windows handles are not inherited unless asked for, and there is
 * no descriptor table to inspect the same way. */
typedef struct {
    int fds[1024];
    int n;
} fd_set_snapshot;

static void snapshot(fd_set_snapshot *s)
{
    s->n = tst_open_fds(s->fds, 1024);
    assert_true(s->n >= 0);
}

static int had(const fd_set_snapshot *s, int fd)
{
    for (int i = 0; i < s->n; i++)
        if (s->fds[i] == fd)
            return 1;
    return 0;
}

static void open_every_kind(tst_env *env, nd_handle *h, int *n)
{
    static const uint32_t in_flags[] = {0, ND_IO_MMAP, ND_IO_MERGE, ND_IO_RANDOM | ND_IO_PRELOAD};
    *n = 0;
    nd_handle d;
    assert_status(ND_OK, nd_open_dir(env->dir_path, 0, &d));
    h[(*n)++] = d;
    for (size_t i = 0; i < sizeof(in_flags) / sizeof(in_flags[0]); i++) {
        assert_status(ND_OK, nd_open_input(env->dir, "f", in_flags[i], &h[*n]));
        nd_handle clone;
        assert_status(ND_OK, nd_input_clone(h[*n], &clone));
        (*n)++;
        h[(*n)++] = clone;
    }
    assert_status(ND_OK, nd_create_output(env->dir, "o1", ND_IO_OVERWRITE, &h[(*n)++]));
    assert_status(ND_OK,
                  nd_create_output(env->dir, "o2", ND_IO_OVERWRITE | ND_IO_MERGE, &h[(*n)++]));
    assert_status(ND_OK, nd_lock(env->dir, "write.lock", &h[(*n)++]));
    assert_status(ND_OK, nd_ring_open(8, 0, &h[(*n)++]));
    assert_status(ND_OK, nd_ring_open(8, ND_RING_FORCE_THREADS, &h[(*n)++]));
}

static void descriptors_are_close_on_exec_and_never_leak(void **state)
{
    tst_env *env = *state;
    char path[TST_PATH_MAX];
    assert_int_equal(tst_write_file(tst_join(path, sizeof(path), env->dir_path, "f"), "abcd", 4),
                     0);
    fd_set_snapshot before, during, after;
    snapshot(&before);
    nd_handle h[32];
    int n;
    open_every_kind(env, h, &n);
    /* nd_list opens and closes a descriptor of its own */
    assert_true(nd_list(env->dir, path, sizeof(path)) > 0);
    snapshot(&during);
    int fresh = 0;
    for (int i = 0; i < during.n; i++) {
        if (had(&before, during.fds[i]))
            continue;
        fresh++;
        /* a child the application forks and execs must not inherit our files or locks */
        if (tst_fd_cloexec(during.fds[i]) != 1)
            fail_msg("descriptor %d opened by nativedir lacks FD_CLOEXEC", during.fds[i]);
    }
    assert_true(fresh >= 5); /* dir, inputs, outputs, lock at least */
    for (int i = 0; i < n; i++)
        assert_status(ND_OK, nd_close(h[i]));
    /* open and close everything many times: the descriptor table comes back as it was */
    for (int round = 0; round < 50; round++) {
        open_every_kind(env, h, &n);
        for (int i = n - 1; i >= 0; i--)
            assert_status(ND_OK, nd_close(h[i]));
    }
    snapshot(&after);
    if (after.n != before.n)
        fail_msg("%d descriptors open before, %d after closing every handle", before.n, after.n);
    for (int i = 0; i < after.n; i++)
        assert_int_equal(after.fds[i], before.fds[i]);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(double_close_every_kind, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(forged_handles, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(single_bit_changes_never_reach_an_object, tst_setup,
                                        tst_teardown),
        cmocka_unit_test_setup_teardown(wrong_kind_for_every_call, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(stale_handles_after_slot_reuse, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(null_out_pointers, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(handles_are_distinct_and_nonzero, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(thousands_of_live_handles, tst_setup, tst_teardown),
#ifndef _WIN32
        cmocka_unit_test_setup_teardown(descriptors_are_close_on_exec_and_never_leak, tst_setup,
                                        tst_teardown),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
