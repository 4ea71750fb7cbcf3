/*
 * test_ring.c - asynchronous reads: submit/reap, a full ring, timeouts, reads
 * past the end, inputs and rings closed with reads in flight, on both
 * backends (the thread pool is forced with ND_RING_FORCE_THREADS),
 * nd_read_cached, the cached first half of an asynchronous read, and
 * nd_ring_event_fd, the descriptor an event loop watches instead of a
 * blocking reap.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _WIN32
#  include <malloc.h>
#else
#  include <fcntl.h>
#  include <poll.h>
#  include <sched.h>
#  include <unistd.h>
#endif

#include "support.h"

#define FILE_LEN (4u << 20)
#define BLOCK 4096
#define DEPTH 32

typedef struct {
    tst_env env;
    uint8_t *data;
} ring_env;

static int setup(void **state)
{
    ring_env *e = calloc(1, sizeof(*e));
    void *inner = NULL;
    if (e == NULL || tst_setup(&inner) != 0)
        return -1;
    e->env = *(tst_env *)inner;
    free(inner);
    e->data = tst_random_buffer(FILE_LEN, 42);
    char path[TST_PATH_MAX];
    if (tst_write_file(tst_join(path, sizeof path, e->env.dir_path, "f"), e->data, FILE_LEN) != 0)
        return -1;
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    ring_env *e = *state;
    free(e->data);
    tst_env *copy = malloc(sizeof(*copy));
    *copy = e->env;
    void *inner = copy;
    free(e);
    return tst_teardown(&inner);
}

static const uint32_t strategies[] = {0, ND_IO_MMAP, ND_IO_MERGE};
static const uint32_t backends[] = {0, ND_RING_FORCE_THREADS};

/* Block-aligned buffers, so direct inputs take the asynchronous path too. */
static void *aligned(size_t len)
{
#ifdef _WIN32
    return _aligned_malloc(len, BLOCK);
#else
    void *p = NULL;
    return posix_memalign(&p, BLOCK, len) == 0 ? p : NULL;
#endif
}

static void aligned_free(void *p)
{
#ifdef _WIN32
    _aligned_free(p);
#else
    free(p);
#endif
}

/* Submits DEPTH random aligned reads and reaps them all, checking each. */
static void round_trip(ring_env *e, nd_handle ring, nd_handle in, uint8_t *dst, uint64_t seed)
{
    int64_t offs[DEPTH];
    for (int k = 0; k < DEPTH; k++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        offs[k] = (int64_t)((seed >> 33) % (FILE_LEN / BLOCK)) * BLOCK;
        assert_status(ND_OK, nd_ring_submit_read(ring, in, offs[k], dst + (size_t)k * BLOCK, BLOCK,
                                                 (uint64_t)k + 1000));
    }
    int got = 0;
    int seen[DEPTH] = {0};
    while (got < DEPTH) {
        uint64_t tags[DEPTH];
        int64_t res[DEPTH];
        int32_t n = nd_ring_reap(ring, tags, res, DEPTH, 5000);
        assert_true(n > 0);
        for (int j = 0; j < n; j++) {
            uint64_t k = tags[j] - 1000;
            assert_true(k < DEPTH);
            assert_int_equal(seen[k], 0);
            seen[k] = 1;
            assert_int_equal(res[j], BLOCK);
            assert_memory_equal(dst + k * BLOCK, e->data + offs[k], BLOCK);
        }
        got += n;
    }
    assert_int_equal(nd_ring_in_flight(ring), 0);
}

static void test_reads_every_backend_and_strategy(void **state)
{
    ring_env *e = *state;
    uint8_t *dst = aligned((size_t)DEPTH * BLOCK);
    for (size_t b = 0; b < 2; b++) {
        for (size_t s = 0; s < 3; s++) {
            nd_handle ring, in;
            assert_status(ND_OK, nd_ring_open(DEPTH, backends[b], &ring));
            /* what runs is what is reported: io_uring or threads, never ND_RING_IOCP
             * (reserved: Windows rings read on worker threads) */
            if (b == 1)
                assert_int_equal(nd_ring_backend(ring), ND_RING_THREADS);
#ifdef _WIN32
            else
                assert_int_equal(nd_ring_backend(ring), ND_RING_THREADS);
#else
            else if (nd_ring_backend(ring) != ND_RING_IO_URING)
                tst_loud_skip("io_uring backend", "the kernel refused io_uring; the default ring "
                                                  "fell back to threads");
#endif
            assert_status(ND_OK, nd_open_input(e->env.dir, "f", strategies[s], &in));
            for (uint64_t round = 0; round < 20; round++)
                round_trip(e, ring, in, dst, round * 7 + s);
            assert_status(ND_OK, nd_close(in));
            assert_status(ND_OK, nd_close(ring));
        }
    }
    aligned_free(dst);
}

static void test_unaligned_and_odd_reads(void **state)
{
    ring_env *e = *state;
    uint8_t *dst = malloc(100003);
    for (size_t b = 0; b < 2; b++) {
        for (size_t s = 0; s < 3; s++) {
            nd_handle ring, in;
            assert_status(ND_OK, nd_ring_open(4, backends[b], &ring));
            assert_status(ND_OK, nd_open_input(e->env.dir, "f", strategies[s], &in));
            assert_status(ND_OK, nd_ring_submit_read(ring, in, 12345, dst + 1, 100001, 7));
            assert_status(ND_OK, nd_ring_submit_read(ring, in, FILE_LEN - 1, dst, 1, 8));
            assert_status(ND_OK, nd_ring_submit_read(ring, in, 5, dst, 0, 9)); /* empty read */
            int got = 0;
            while (got < 3) {
                uint64_t tags[4];
                int64_t res[4];
                int32_t n = nd_ring_reap(ring, tags, res, 4, 5000);
                assert_true(n > 0);
                for (int j = 0; j < n; j++)
                    assert_int_equal(res[j], tags[j] == 7 ? 100001 : tags[j] == 8 ? 1 : 0);
                got += n;
            }
            assert_memory_equal(dst + 1, e->data + 12345,
                                100000); /* dst[0] was rewritten by tag 8 */
            assert_int_equal(dst[0], e->data[FILE_LEN - 1]);
            nd_close(in);
            nd_close(ring);
        }
    }
    free(dst);
}

static void test_full_ring_timeout_and_eof(void **state)
{
    ring_env *e = *state;
    uint8_t *dst = aligned(4 * BLOCK);
    for (size_t b = 0; b < 2; b++) {
        nd_handle ring, in;
        assert_status(ND_OK, nd_ring_open(2, backends[b], &ring));
        assert_status(ND_OK, nd_open_input(e->env.dir, "f", 0, &in));
        uint64_t tag;
        int64_t res;
        /* nothing in flight: a timed reap returns 0, a polling one too */
        assert_int_equal(nd_ring_reap(ring, &tag, &res, 1, 30), 0);
        assert_int_equal(nd_ring_reap(ring, &tag, &res, 1, 0), 0);
        /* past the end fails at submit and takes no slot */
        assert_status(ND_E_EOF, nd_ring_submit_read(ring, in, FILE_LEN - 10, dst, 11, 1));
        assert_status(ND_E_INVALID_ARGUMENT, nd_ring_submit_read(ring, in, -1, dst, 1, 1));
        assert_status(ND_E_INVALID_ARGUMENT, nd_ring_submit_read(ring, in, 0, NULL, 1, 1));
        assert_int_equal(nd_ring_in_flight(ring), 0);
        assert_status(ND_OK, nd_ring_submit_read(ring, in, 0, dst, BLOCK, 1));
        assert_status(ND_OK, nd_ring_submit_read(ring, in, BLOCK, dst + BLOCK, BLOCK, 2));
        assert_status(ND_E_BUSY, nd_ring_submit_read(ring, in, 0, dst + 2 * BLOCK, BLOCK, 3));
        assert_message_contains("reap first");
        int got = 0;
        while (got < 2) {
            int32_t n = nd_ring_reap(ring, &tag, &res, 1, 5000);
            assert_int_equal(n, 1);
            assert_int_equal(res, BLOCK);
            got++;
        }
        /* a slot is free again */
        assert_status(ND_OK, nd_ring_submit_read(ring, in, 0, dst, BLOCK, 4));
        assert_int_equal(nd_ring_reap(ring, &tag, &res, 1, 5000), 1);
        assert_int_equal(tag, 4);
        nd_close(in);
        nd_close(ring);
    }
    aligned_free(dst);
}

static void test_bad_arguments_and_handles(void **state)
{
    ring_env *e = *state;
    nd_handle ring, in;
    assert_status(ND_E_INVALID_ARGUMENT, nd_ring_open(0, 0, &ring));
    assert_status(ND_E_INVALID_ARGUMENT, nd_ring_open(4097, 0, &ring));
    assert_status(ND_E_INVALID_ARGUMENT, nd_ring_open(4, 0x80, &ring));
    assert_status(ND_E_INVALID_ARGUMENT, nd_ring_open(4, 0, NULL));
    assert_status(ND_OK, nd_ring_open(4, 0, &ring));
    assert_status(ND_OK, nd_open_input(e->env.dir, "f", 0, &in));
    uint64_t tag;
    int64_t res;
    uint8_t b[8];
    assert_status(ND_E_INVALID_ARGUMENT, nd_ring_reap(ring, NULL, &res, 1, 0));
    assert_status(ND_E_INVALID_ARGUMENT, nd_ring_reap(ring, &tag, NULL, 1, 0));
    assert_status(ND_E_INVALID_ARGUMENT, nd_ring_reap(ring, &tag, &res, 0, 0));
    assert_status(ND_E_INVALID_ARGUMENT, nd_ring_reap(ring, &tag, &res, 1, -2));
    /* wrong kinds both ways */
    assert_status(ND_E_BAD_HANDLE, nd_ring_submit_read(in, in, 0, b, 1, 0));
    assert_status(ND_E_BAD_HANDLE, nd_ring_submit_read(ring, ring, 0, b, 1, 0));
    assert_status(ND_E_BAD_HANDLE, nd_ring_submit_read(ring, e->env.dir, 0, b, 1, 0));
    assert_status(ND_E_BAD_HANDLE, nd_ring_backend(in));
    assert_status(ND_E_BAD_HANDLE, nd_ring_reap(e->env.dir, &tag, &res, 1, 0));
    assert_int_equal(nd_ring_in_flight(ring), 0); /* failed submits took no slot */
    assert_status(ND_OK, nd_close(ring));
    assert_status(ND_E_BAD_HANDLE, nd_close(ring));
    assert_status(ND_E_BAD_HANDLE, nd_ring_submit_read(ring, in, 0, b, 1, 0));
    assert_status(ND_E_BAD_HANDLE, nd_ring_reap(ring, &tag, &res, 1, 0));
    assert_status(ND_E_BAD_HANDLE, nd_ring_in_flight(ring));
    nd_close(in);
}

/* Reads keep the input alive: closing it with reads in flight is safe and the
 * reads complete with the right bytes. */
static void test_close_input_with_reads_in_flight(void **state)
{
    ring_env *e = *state;
    uint8_t *dst = aligned((size_t)DEPTH * BLOCK);
    for (size_t b = 0; b < 2; b++) {
        for (size_t s = 0; s < 3; s++) {
            nd_handle ring, in;
            assert_status(ND_OK, nd_ring_open(DEPTH, backends[b], &ring));
            assert_status(ND_OK, nd_open_input(e->env.dir, "f", strategies[s], &in));
            for (int k = 0; k < DEPTH; k++)
                assert_status(ND_OK, nd_ring_submit_read(ring, in, (int64_t)k * BLOCK * 3,
                                                         dst + (size_t)k * BLOCK, BLOCK, k));
            assert_status(ND_OK, nd_close(in));
            int got = 0;
            while (got < DEPTH) {
                uint64_t tags[DEPTH];
                int64_t res[DEPTH];
                int32_t n = nd_ring_reap(ring, tags, res, DEPTH, 5000);
                assert_true(n > 0);
                for (int j = 0; j < n; j++) {
                    assert_int_equal(res[j], BLOCK);
                    assert_memory_equal(dst + tags[j] * BLOCK, e->data + tags[j] * BLOCK * 3,
                                        BLOCK);
                }
                got += n;
            }
            assert_status(ND_OK, nd_close(ring));
        }
    }
    aligned_free(dst);
}

/* Closing the ring with reads in flight waits for them: afterwards nothing
 * writes into the buffers, so freeing them is safe (ASan checks this). */
static void test_close_ring_with_reads_in_flight(void **state)
{
    ring_env *e = *state;
    for (size_t b = 0; b < 2; b++) {
        for (int round = 0; round < 10; round++) {
            nd_handle ring, in;
            uint8_t *dst = aligned((size_t)DEPTH * BLOCK);
            assert_status(ND_OK, nd_ring_open(DEPTH, backends[b], &ring));
            assert_status(ND_OK, nd_open_input(e->env.dir, "f", 0, &in));
            for (int k = 0; k < DEPTH; k++)
                assert_status(ND_OK, nd_ring_submit_read(ring, in, (int64_t)k * BLOCK,
                                                         dst + (size_t)k * BLOCK, BLOCK, k));
            assert_status(ND_OK, nd_close(ring));
            aligned_free(dst);
            assert_status(ND_OK, nd_close(in));
        }
    }
}

typedef struct {
    nd_handle ring;
    int32_t result;
} reaper_arg;

static void *blocked_reaper(void *p)
{
    reaper_arg *a = p;
    uint64_t tag;
    int64_t res;
    a->result = nd_ring_reap(a->ring, &tag, &res, 1, -1);
    return NULL;
}

/* A reaper waiting without a time limit is woken by nd_close. */
static void test_close_wakes_a_blocked_reaper(void **state)
{
    (void)state;
    for (size_t b = 0; b < 2; b++) {
        reaper_arg a = {0, 99};
        assert_status(ND_OK, nd_ring_open(4, backends[b], &a.ring));
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, blocked_reaper, &a), 0);
        /* let it block (if it has not yet, it sees the closed ring instead) */
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
        assert_status(ND_OK, nd_close(a.ring));
        assert_int_equal(pthread_join(t, NULL), 0);
        assert_true(a.result == 0 || a.result == ND_E_BAD_HANDLE);
    }
}

/* Reaps exactly one completion and checks it is `tag` with `len` bytes. */
static void reap_one(nd_handle ring, uint64_t tag, int64_t len)
{
    uint64_t t;
    int64_t res;
    assert_int_equal(nd_ring_reap(ring, &t, &res, 1, 5000), 1);
    assert_int_equal(t, tag);
    assert_int_equal(res, len);
}

/* nd_read_cached copies cached and mapped bytes and nothing of a direct
 * input; what it leaves, a ring read completes. */
static void test_read_cached(void **state)
{
    ring_env *e = *state;
    /* Linux reads the page cache without waiting (RWF_NOWAIT); where the OS,
     * an old kernel or an emulator cannot, a buffered input copies nothing */
    const int cache_only = tst_cache_only_reads(e->env.dir_path, "f");
    if (!cache_only)
        tst_loud_skip("nd_read_cached of a buffered input",
                      "this OS or emulator has no read that refuses to wait; only 0 is checked");
    uint8_t *dst = aligned(2 * 100003);
    for (size_t s = 0; s < 3; s++) {
        nd_handle ring, in;
        assert_status(ND_OK, nd_ring_open(4, 0, &ring));
        assert_status(ND_OK, nd_open_input(e->env.dir, "f", strategies[s], &in));
        int32_t strategy = nd_input_strategy(in);
        memset(dst, 0, 2 * 100003);
        int64_t got = nd_read_cached(in, 12345, dst + 1, 100001);
        if (strategy == ND_STRATEGY_MAPPED) {
            assert_int_equal(got, 100001);
        } else if (strategy == ND_STRATEGY_BUFFERED) {
            /* the test just wrote the file: it is cached */
            assert_int_equal(got, cache_only ? 100001 : 0);
        } else {
            assert_int_equal(got, 0); /* direct and drop-behind never read the cache */
        }
        if (got < 100001) {
            assert_status(
                ND_OK, nd_ring_submit_read(ring, in, 12345 + got, dst + 1 + got, 100001 - got, 7));
            reap_one(ring, 7, 100001 - got);
        }
        assert_memory_equal(dst + 1, e->data + 12345, 100001);
        assert_int_equal(nd_read_cached(in, FILE_LEN, dst, 0), 0);
        got = nd_read_cached(in, FILE_LEN - 1, dst, 1);
        if (strategy == ND_STRATEGY_MAPPED)
            assert_int_equal(got, 1);
        else if (strategy == ND_STRATEGY_BUFFERED)
            assert_int_equal(got, cache_only ? 1 : 0);
        else
            assert_int_equal(got, 0);
        /* slices read their own bytes */
        nd_handle slice;
        assert_status(ND_OK, nd_input_slice(in, 1000, 5000, &slice));
        got = nd_read_cached(slice, 10, dst, 100);
        if (got == 100)
            assert_memory_equal(dst, e->data + 1010, 100);
        else
            assert_int_equal(got, 0);
        assert_status(ND_E_EOF, nd_read_cached(slice, 4990, dst, 11));
        nd_close(slice);
        nd_close(in);
        nd_close(ring);
    }
    aligned_free(dst);
}

/* Pages dropped from the cache: what nd_read_cached could not copy arrives
 * through the ring, and the bytes are right either way. */
static void test_read_cached_uncached(void **state)
{
    ring_env *e = *state;
    uint8_t *dst = aligned(1 << 20);
    int partial = 0;
    for (int round = 0; round < 8; round++) {
        nd_handle ring, in;
        int64_t off = (int64_t)round * (1 << 18) + 100;
        assert_status(ND_OK, nd_ring_open(4, 0, &ring));
        assert_status(ND_OK, nd_open_input(e->env.dir, "f", ND_IO_RANDOM, &in));
        tst_drop_cache(e->env.dir_path, "f");
        int64_t got = nd_read_cached(in, off, dst, 1 << 20);
        assert_true(got >= 0 && got <= (1 << 20));
        partial += got < (1 << 20);
        if (got < (1 << 20)) {
            assert_status(ND_OK,
                          nd_ring_submit_read(ring, in, off + got, dst + got, (1 << 20) - got, 77));
            reap_one(ring, 77, (1 << 20) - got);
        }
        assert_memory_equal(dst, e->data + off, 1 << 20);
        nd_close(in);
        nd_close(ring);
    }
#if defined(__linux__)
    assert_true(partial > 0); /* the cache drop made at least one read wait for the device */
#endif
    aligned_free(dst);
}

typedef struct {
    nd_handle ring, input;
    int64_t off;
    uint8_t *dst;
    int32_t rc;
} submit_arg;

static void *submit_and_exit(void *p)
{
    submit_arg *a = p;
    a->rc = nd_ring_submit_read(a->ring, a->input, a->off, a->dst, 1 << 20, 5);
    return NULL; /* the thread ends with its read still in flight */
}

/* A read must not depend on the thread that submitted it: managed runtimes
 * retire their pool threads at will. Uncached buffered reads are the ones the
 * kernel cannot finish at once (io_uring would hand them to workers tied to
 * the submitting thread); each is submitted by a thread that exits at once. */
static void test_submitting_thread_may_exit(void **state)
{
    ring_env *e = *state;
    uint8_t *dst = aligned(1 << 20);
    for (size_t b = 0; b < 2; b++) {
        nd_handle ring, in;
        assert_status(ND_OK, nd_ring_open(4, backends[b], &ring));
        assert_status(ND_OK, nd_open_input(e->env.dir, "f", 0, &in));
        for (int round = 0; round < 6; round++) {
            tst_drop_cache(e->env.dir_path, "f");
            submit_arg a = {ring, in, (int64_t)round * 400000 + 3, dst, 99};
            pthread_t t;
            assert_int_equal(pthread_create(&t, NULL, submit_and_exit, &a), 0);
            assert_int_equal(pthread_join(t, NULL), 0);
            assert_status(ND_OK, a.rc);
            reap_one(ring, 5, 1 << 20);
            assert_memory_equal(dst, e->data + a.off, 1 << 20);
        }
        nd_close(in);
        nd_close(ring);
    }
    aligned_free(dst);
}

static void test_read_cached_errors(void **state)
{
    ring_env *e = *state;
    uint8_t dst[16];
    nd_handle in, ring;
    assert_status(ND_OK, nd_open_input(e->env.dir, "f", 0, &in));
    assert_status(ND_OK, nd_ring_open(1, 0, &ring));
    assert_status(ND_E_EOF, nd_read_cached(in, FILE_LEN - 1, dst, 2));
    assert_message_contains("nd_read_cached");
    assert_status(ND_E_INVALID_ARGUMENT, nd_read_cached(in, -1, dst, 1));
    assert_status(ND_E_INVALID_ARGUMENT, nd_read_cached(in, 0, dst, -1));
    assert_status(ND_E_INVALID_ARGUMENT, nd_read_cached(in, 0, NULL, 1));
    assert_status(ND_E_BAD_HANDLE, nd_read_cached(ring, 0, dst, 1));
    assert_status(ND_E_BAD_HANDLE, nd_read_cached(e->env.dir, 0, dst, 1));
    assert_status(ND_OK, nd_close(in));
    assert_status(ND_E_BAD_HANDLE, nd_read_cached(in, 0, dst, 1));
    assert_message_contains("nd_read_cached");
    nd_close(ring);
}

#ifndef _WIN32
/* poll(2) on the event descriptor, as an event loop's selector does: 1 if it
 * became readable within timeout_ms, 0 if not. */
static int wait_event(int fd, int timeout_ms)
{
    struct pollfd p = {fd, POLLIN, 0};
    int n;
    do
        n = poll(&p, 1, timeout_ms);
    while (n < 0 && errno == EINTR);
    assert_true(n >= 0);
    return n > 0 && (p.revents & POLLIN) != 0;
}

/* The protocol's read: up to 8 bytes, EAGAIN when another reaper took them. */
static void reset_event(int fd)
{
    uint8_t v[8];
    ssize_t n = read(fd, v, sizeof v);
    assert_true(n > 0 || (n < 0 && errno == EAGAIN));
}

/* The descriptor: one per ring, non-blocking, close-on-exec, readable once
 * at first (for completions that came before it), quiet with nothing in
 * flight, closed with the ring. */
static void test_event_fd_descriptor(void **state)
{
    (void)state;
    for (size_t b = 0; b < 2; b++) {
        nd_handle ring;
        assert_status(ND_OK, nd_ring_open(4, backends[b], &ring));
        int fd = nd_ring_event_fd(ring);
        assert_true(fd >= 0);
        assert_int_equal(nd_ring_event_fd(ring), fd);
        assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
        assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
        assert_true(wait_event(fd, 5000));
        reset_event(fd);
        /* the control: with nothing signalled the wait times out, so the
         * waits the other tests pass are the ring's signals */
        assert_false(wait_event(fd, 50));
        uint8_t v[8];
        assert_true(read(fd, v, sizeof v) < 0 && errno == EAGAIN);
        assert_status(ND_OK, nd_close(ring));
        assert_int_equal(fcntl(fd, F_GETFD), -1);
        assert_int_equal(errno, EBADF);
        assert_status(ND_E_BAD_HANDLE, nd_ring_event_fd(ring));
        assert_message_contains("nd_ring_event_fd");
    }
}

typedef struct {
    int64_t off;
    int64_t len;
} ev_read;

/* A read for slot k of an event loop: random offset and length (1 B to 8 KiB);
 * for a direct input every other one block-aligned, so that both its kernel
 * reads and its reads done at submit are covered. */
static ev_read next_read(uint64_t *seed, int direct, int k)
{
    *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
    uint64_t r = *seed >> 16;
    ev_read v;
    if (direct && k % 2 == 0) {
        v.len = BLOCK;
        v.off = (int64_t)(r % (FILE_LEN / BLOCK)) * BLOCK;
    } else {
        v.len = 1 + (int64_t)(r % (2 * BLOCK));
        v.off = (int64_t)((r >> 20) % (uint64_t)(FILE_LEN - (uint64_t)v.len + 1));
    }
    return v;
}

/* An event loop: `total` reads, `depth` in flight, driven by the descriptor
 * alone (poll, the protocol's read, reaps that never wait), each checked
 * against the file; a slot is refilled as soon as its read is reaped. A
 * completion left unsignalled stalls it and fails the test. */
static void event_loop(ring_env *e, nd_handle ring, nd_handle in, int direct, int depth, int total,
                       uint64_t seed, uint8_t *bufs)
{
    int fd = nd_ring_event_fd(ring);
    assert_true(fd >= 0);
    ev_read slot[DEPTH];
    int next = 0, done = 0;
    for (int k = 0; k < depth && next < total; k++, next++) {
        slot[k] = next_read(&seed, direct, next);
        assert_status(ND_OK,
                      nd_ring_submit_read(ring, in, slot[k].off, bufs + (size_t)k * 2 * BLOCK,
                                          slot[k].len, (uint64_t)k));
    }
    while (done < total) {
        if (!wait_event(fd, 10000))
            fail_msg("no signal in 10 s with %d reads in flight (ring %d)", nd_ring_in_flight(ring),
                     nd_ring_backend(ring));
        reset_event(fd);
        for (;;) {
            uint64_t tags[5]; /* fewer than in flight: the protocol's "until fewer than max" */
            int64_t res[5];
            int32_t n = nd_ring_reap(ring, tags, res, 5, 0);
            assert_true(n >= 0);
            for (int j = 0; j < n; j++) {
                int k = (int)tags[j];
                assert_true(k >= 0 && k < depth);
                assert_int_equal(res[j], slot[k].len);
                uint8_t *dst = bufs + (size_t)k * 2 * BLOCK;
                assert_memory_equal(dst, e->data + slot[k].off, (size_t)slot[k].len);
                done++;
                if (next < total) {
                    slot[k] = next_read(&seed, direct, next++);
                    assert_status(ND_OK, nd_ring_submit_read(ring, in, slot[k].off, dst,
                                                             slot[k].len, (uint64_t)k));
                }
            }
            if (n < 5)
                break;
        }
    }
    assert_int_equal(nd_ring_in_flight(ring), 0);
}

/* Every backend and strategy, at depth 1, 5 and 32, from a cold file. */
static void test_event_fd_drives_an_event_loop(void **state)
{
    ring_env *e = *state;
    uint8_t *bufs = aligned((size_t)DEPTH * 2 * BLOCK);
    static const int depths[] = {1, 5, DEPTH};
    for (size_t b = 0; b < 2; b++) {
        for (size_t s = 0; s < 3; s++) {
            for (size_t d = 0; d < 3; d++) {
                nd_handle ring, in;
                tst_drop_cache(e->env.dir_path, "f");
                assert_status(ND_OK, nd_ring_open(DEPTH, backends[b], &ring));
                assert_status(ND_OK, nd_open_input(e->env.dir, "f", strategies[s], &in));
                event_loop(e, ring, in, strategies[s] == ND_IO_MERGE, depths[d], 300,
                           b * 100 + s * 10 + d, bufs);
                assert_status(ND_OK, nd_close(in));
                assert_status(ND_OK, nd_close(ring));
            }
        }
    }
    aligned_free(bufs);
}

typedef struct {
    ring_env *e;
    nd_handle ring, in;
    uint8_t *bufs;
    int total;
    _Atomic int
        reaped; /* the reaper's count: a slot k is free again once read k - DEPTH is reaped */
} submitter_arg;

static void *submit_all(void *p)
{
    submitter_arg *a = p;
    for (int i = 0; i < a->total; i++) {
        while (i - atomic_load(&a->reaped) >= DEPTH)
            sched_yield();
        int64_t off = (int64_t)((uint64_t)i * 7919 % (FILE_LEN / BLOCK)) * BLOCK;
        int32_t rc = nd_ring_submit_read(a->ring, a->in, off, a->bufs + (size_t)(i % DEPTH) * BLOCK,
                                         BLOCK, (uint64_t)i);
        if (rc != ND_OK)
            return (void *)(intptr_t)rc;
    }
    return NULL;
}

/* One thread submits while another waits on the descriptor and reaps, as an
 * event loop does with reads handed in from other threads (ThreadSanitizer
 * checks the hand-offs). Reads complete in order of their tags' slots only
 * by chance; each is checked once. */
static void test_event_fd_with_a_submitting_thread(void **state)
{
    ring_env *e = *state;
    uint8_t *bufs = aligned((size_t)DEPTH * BLOCK);
    for (size_t b = 0; b < 2; b++) {
        submitter_arg a = {e, 0, 0, bufs, 2000, 0};
        assert_status(ND_OK, nd_ring_open(DEPTH, backends[b], &a.ring));
        assert_status(ND_OK, nd_open_input(e->env.dir, "f", ND_IO_MERGE, &a.in));
        int fd = nd_ring_event_fd(a.ring);
        assert_true(fd >= 0);
        char *seen = calloc((size_t)a.total, 1);
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, submit_all, &a), 0);
        int done = 0;
        while (done < a.total) {
            if (!wait_event(fd, 10000))
                fail_msg("no signal in 10 s after %d of %d reads", done, a.total);
            reset_event(fd);
            int32_t n;
            do {
                uint64_t tags[DEPTH];
                int64_t res[DEPTH];
                n = nd_ring_reap(a.ring, tags, res, DEPTH, 0);
                assert_true(n >= 0);
                for (int j = 0; j < n; j++) {
                    int i = (int)tags[j];
                    assert_true(i >= 0 && i < a.total && !seen[i]);
                    seen[i] = 1;
                    assert_int_equal(res[j], BLOCK);
                    int64_t off = (int64_t)((uint64_t)i * 7919 % (FILE_LEN / BLOCK)) * BLOCK;
                    assert_memory_equal(bufs + (size_t)(i % DEPTH) * BLOCK, e->data + off, BLOCK);
                }
                done += n;
                /* completions arrive in any order: a slot is free once every
                 * read before it is reaped, which the count says when all are */
                int low = 0;
                while (low < a.total && seen[low])
                    low++;
                atomic_store(&a.reaped, low);
            } while (n == DEPTH);
        }
        void *rc;
        assert_int_equal(pthread_join(t, &rc), 0);
        assert_true(rc == NULL);
        free(seen);
        assert_status(ND_OK, nd_close(a.in));
        assert_status(ND_OK, nd_close(a.ring));
    }
    aligned_free(bufs);
}
#else
/* Windows: no descriptor an event loop could watch; the caller reaps on a thread. */
static void test_event_fd_not_on_windows(void **state)
{
    (void)state;
    for (size_t b = 0; b < 2; b++) {
        nd_handle ring;
        assert_status(ND_OK, nd_ring_open(4, backends[b], &ring));
        assert_status(ND_E_NOT_SUPPORTED, nd_ring_event_fd(ring));
        assert_message_contains("nd_ring_event_fd");
        assert_status(ND_OK, nd_close(ring));
    }
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_every_backend_and_strategy),
        cmocka_unit_test(test_unaligned_and_odd_reads),
        cmocka_unit_test(test_full_ring_timeout_and_eof),
        cmocka_unit_test(test_bad_arguments_and_handles),
        cmocka_unit_test(test_close_input_with_reads_in_flight),
        cmocka_unit_test(test_close_ring_with_reads_in_flight),
        cmocka_unit_test(test_close_wakes_a_blocked_reaper),
        cmocka_unit_test(test_read_cached),
        cmocka_unit_test(test_read_cached_uncached),
        cmocka_unit_test(test_read_cached_errors),
        cmocka_unit_test(test_submitting_thread_may_exit),
#ifndef _WIN32
        cmocka_unit_test(test_event_fd_descriptor),
        cmocka_unit_test(test_event_fd_drives_an_event_loop),
        cmocka_unit_test(test_event_fd_with_a_submitting_thread),
#else
        cmocka_unit_test(test_event_fd_not_on_windows),
#endif
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
