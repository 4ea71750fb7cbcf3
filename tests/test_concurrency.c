/*
 * test_concurrency.c - closing a handle while other threads use it is
 * memory-safe; clones keep reading after their parent closes; stale handles
 * never reach an object that reused their slot; one output's calls are
 * serialised. Also run under ThreadSanitizer (tsan_test_concurrency).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#ifndef _WIN32
#  include <signal.h>
#  include <time.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "support.h"

#define FILE_LEN (1u << 20)
static const uint32_t read_flags[] = {0, ND_IO_RANDOM, ND_IO_MMAP, ND_IO_MERGE};
#define N_FLAGS (sizeof(read_flags) / sizeof(read_flags[0]))

/* ---- clones reading while the parent closes ---- */

typedef struct {
    nd_handle clone;
    const uint8_t *data;
    atomic_int *started;
    int rounds;
    int errors; /* wrong bytes or unexpected statuses */
    char first_error[160];
} clone_reader;

static void reader_error(clone_reader *r, const char *what, long long v)
{
    if (r->errors++ == 0)
        snprintf(r->first_error, sizeof(r->first_error), "%s (%lld): %s", what, v,
                 nd_last_error_message());
}

static void *read_through_clone(void *arg)
{
    clone_reader *r = arg;
    uint8_t buf[4096];
    uint64_t x = (uint64_t)r->clone;
    atomic_fetch_add(r->started, 1);
    for (int round = 0; round < r->rounds; round++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int64_t pos = (int64_t)((x >> 33) % (FILE_LEN - sizeof(buf)));
        int64_t n = 1 + (int64_t)((x >> 20) % sizeof(buf));
        int64_t got = nd_read_bytes(r->clone, pos, buf, n);
        if (got != n)
            reader_error(r, "nd_read_bytes", got);
        else if (memcmp(buf, r->data + pos, (size_t)n) != 0)
            reader_error(r, "nd_read_bytes data", pos);
        if (nd_input_seek(r->clone, pos) != ND_OK)
            reader_error(r, "nd_input_seek", pos);
        int b = nd_read_byte_buffered(r->clone);
        if (b != r->data[pos])
            reader_error(r, "nd_read_byte_buffered", b);
        if (nd_read_buffered(r->clone, buf, 100) != 100 || memcmp(buf, r->data + pos + 1, 100) != 0)
            reader_error(r, "nd_read_buffered", pos + 1);
        const uint8_t *p = NULL;
        int64_t w = nd_input_window(r->clone, pos, &p);
        if (w < 1 || memcmp(p, r->data + pos, (size_t)(w < 64 ? w : 64)) != 0)
            reader_error(r, "nd_input_window", w);
    }
    /* this thread is done with its windows; the main thread closes the clone */
    if (nd_input_unpin(r->clone) != ND_OK)
        reader_error(r, "nd_input_unpin", 0);
    return NULL;
}

static void clones_read_while_parent_closes(void **state)
{
    tst_env *env = *state;
    uint8_t *data = tst_put_random(env, "f", FILE_LEN, 1);
    enum { THREADS = 4 };
    for (size_t f = 0; f < N_FLAGS; f++) {
        nd_handle parent;
        assert_status(ND_OK, nd_open_input(env->dir, "f", read_flags[f], &parent));
        clone_reader r[THREADS];
        pthread_t th[THREADS];
        atomic_int started = 0;
        for (int i = 0; i < THREADS; i++) {
            memset(&r[i], 0, sizeof(r[i]));
            assert_status(ND_OK, nd_input_clone(parent, &r[i].clone));
            r[i].data = data;
            r[i].started = &started;
            /* a direct clone refills a 256 KiB aligned buffer per cursor jump: fewer rounds */
            r[i].rounds = (read_flags[f] & ND_IO_MERGE) ? 200 : 2000;
        }
        for (int i = 0; i < THREADS; i++)
            assert_int_equal(pthread_create(&th[i], NULL, read_through_clone, &r[i]), 0);
        while (atomic_load(&started) < THREADS)
            ;
        /* the parent (and for a mapping, the handle that made it) goes away mid-read */
        assert_status(ND_OK, nd_close(parent));
        for (int i = 0; i < THREADS; i++)
            pthread_join(th[i], NULL);
        for (int i = 0; i < THREADS; i++) {
            if (r[i].errors != 0)
                fail_msg("flags 0x%x, clone %d: %d errors, first: %s", read_flags[f], i,
                         r[i].errors, r[i].first_error);
            assert_status(ND_OK, nd_close(r[i].clone));
        }
    }
    free(data);
}

/* ---- a window stays readable while another thread closes its handle ---- */

#ifndef _WIN32
static int open_fd_count(void)
{
    int fds[1024];
    return tst_open_fds(fds, 1024);
}
/* the process's descriptors are what the pin keeps open or lets go */
#  define assert_fds(n) assert_int_equal(open_fd_count(), (n))
#else
/* Windows has no descriptor table to count (its handle count moves with every thread the test
 * starts): there the cases check the bytes and the statuses only */
static int open_fd_count(void)
{
    return 0;
}
#  define assert_fds(n) ((void)(n))
#endif

typedef struct {
    nd_handle h;
    const uint8_t *data;
    int64_t pos;
    atomic_int stage; /* 1: window held (reader), 2: handle closed (main) */
    int64_t got, after;
    int wrong;
    int mapped; /* the window is the mapping: the close of the file's last handle revokes it */
} window_holder;

/* The reader's side of both cases: says it holds window p, waits until the
 * main thread has closed the handle, checks every byte of p (which must still
 * be readable: the buffer's bytes, or zeros where the last close let go of a
 * mapped file), then makes the window call that fails and lets the pin go. */
static void *read_window_after_the_close(window_holder *w, const uint8_t *p)
{
    atomic_store(&w->stage, 1);
    while (atomic_load(&w->stage) != 2)
        sched_yield();
    for (int64_t i = 0; i < w->got; i++)
        w->wrong += p[i] != (w->mapped ? 0 : w->data[w->pos + i]);
    w->after = nd_input_window(w->h, w->pos, &p);
    return NULL;
}

static void *hold_window(void *arg)
{
    window_holder *w = arg;
    const uint8_t *p = NULL;
    w->got = nd_input_window(w->h, w->pos, &p);
    return read_window_after_the_close(w, p);
}

/* For each read flag: a reader thread (`holder`) takes a window of the only
 * handle at 70001 and reads it after this thread's close, then makes one more
 * call: that call fails with ND_E_BAD_HANDLE and releases everything. */
static void window_survives_a_close(tst_env *env, uint64_t seed, void *(*holder)(void *))
{
    uint8_t *data = tst_put_random(env, "f", FILE_LEN, seed);
    for (size_t f = 0; f < N_FLAGS; f++) {
        int fds_before = open_fd_count();
        window_holder w;
        memset(&w, 0, sizeof(w));
        w.data = data;
        w.pos = 70001;
        w.mapped = (read_flags[f] & ND_IO_MMAP) != 0;
        /* the only handle: its close would free the buffer or unmap the file */
        assert_status(ND_OK, nd_open_input(env->dir, "f", read_flags[f], &w.h));
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, holder, &w), 0);
        while (atomic_load(&w.stage) != 1)
            sched_yield();
        assert_status(ND_OK, nd_close(w.h));
        assert_status(ND_E_BAD_HANDLE, nd_input_position(w.h)); /* closed for every call */
        atomic_store(&w.stage, 2);
        pthread_join(th, NULL);
        if (w.got < 1 || w.wrong != 0)
            fail_msg("flags 0x%x: window of %lld bytes, %d wrong after the close", read_flags[f],
                     (long long)w.got, w.wrong);
        assert_status(ND_E_BAD_HANDLE, w.after);
        /* the reader's failing call released everything: nothing is left to unpin */
        assert_status(ND_E_BAD_HANDLE, nd_input_unpin(w.h));
        if (fds_before >= 0)
            assert_fds(fds_before);
    }
    free(data);
}

static void window_outlives_a_close_on_another_thread(void **state)
{
    window_survives_a_close(*state, 6, hold_window);
}

/* The gap a per-thread pin left: thread A takes a window and hands the input
 * (window and all) to B without another call, as a binding hands its cursor
 * object over; B reads while A closes. The library cannot see B, so A's close
 * must not free the window: B's next window call (or nd_input_unpin) does. */
static void *read_handed_window(void *arg)
{
    window_holder *w = arg;
    const uint8_t *p = (const uint8_t *)(uintptr_t)w->after; /* A's window, handed over */
    return read_window_after_the_close(w, p);
}

static void window_handed_to_another_thread_outlives_its_takers_close(void **state)
{
    tst_env *env = *state;
    uint8_t *data = tst_put_random(env, "f", FILE_LEN, 9);
    for (size_t f = 0; f < N_FLAGS; f++) {
        int fds_before = open_fd_count();
        window_holder w;
        memset(&w, 0, sizeof(w));
        w.data = data;
        w.pos = 4242;
        w.mapped = (read_flags[f] & ND_IO_MMAP) != 0;
        const uint8_t *p = NULL;
        assert_status(ND_OK, nd_open_input(env->dir, "f", read_flags[f], &w.h));
        w.got = nd_input_window(w.h, w.pos, &p); /* taken here, on A */
        assert_true(w.got >= 1);
        w.after = (int64_t)(uintptr_t)p;
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, read_handed_window, &w), 0);
        while (atomic_load(&w.stage) != 1)
            sched_yield();
        assert_status(ND_OK, nd_close(w.h)); /* by the thread that took the window */
        atomic_store(&w.stage, 2);
        pthread_join(th, NULL);
        if (w.wrong != 0)
            fail_msg("flags 0x%x: %d of %lld bytes wrong after the taker's close", read_flags[f],
                     w.wrong, (long long)w.got);
        assert_status(ND_E_BAD_HANDLE, w.after);
        assert_status(ND_E_BAD_HANDLE, nd_input_unpin(w.h)); /* B's call released it all */
        if (fds_before >= 0)
            assert_fds(fds_before);
    }
    free(data);
}

static void *take_window_and_exit(void *arg)
{
    window_holder *w = arg;
    const uint8_t *p = NULL;
    w->got = nd_input_window(w->h, w->pos, &p);
    return NULL;
}

static void window_pin_is_released_by_close_or_unpin(void **state)
{
    tst_env *env = *state;
    free(tst_put_random(env, "f", FILE_LEN, 7));
    for (size_t f = 0; f < N_FLAGS; f++) {
        int fds_before = open_fd_count();
        /* closed by the thread that took the window: held until unpinned (the
         * library cannot know that this thread, not another, reads it), but the
         * descriptor goes with the close: the window is the buffer or the mapping */
        nd_handle h;
        const uint8_t *p;
        assert_status(ND_OK, nd_open_input(env->dir, "f", read_flags[f], &h));
        assert_true(nd_input_window(h, 5, &p) >= 1);
        assert_true(nd_input_window(h, 9000, &p) >= 1); /* the pin moves, it does not pile up */
        assert_status(ND_OK, nd_close(h));
        if (fds_before >= 0)
            assert_fds(fds_before); /* the pin holds no descriptor */
        assert_status(ND_OK, nd_input_unpin(h));
        assert_status(ND_E_BAD_HANDLE, nd_input_unpin(h));
        if (fds_before >= 0)
            assert_fds(fds_before);

        /* unpinned first, then closed: released by the close */
        assert_status(ND_OK, nd_open_input(env->dir, "f", read_flags[f], &h));
        assert_true(nd_input_window(h, 5, &p) >= 1);
        assert_status(ND_OK, nd_input_unpin(h));
        assert_status(ND_OK, nd_close(h));
        assert_status(ND_E_BAD_HANDLE, nd_input_unpin(h));
        if (fds_before >= 0)
            assert_fds(fds_before);

        /* taken on a thread that is gone, closed here: held until unpinned, file let go */
        window_holder w;
        memset(&w, 0, sizeof(w));
        w.pos = 123;
        assert_status(ND_OK, nd_open_input(env->dir, "f", read_flags[f], &w.h));
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, take_window_and_exit, &w), 0);
        pthread_join(th, NULL);
        assert_true(w.got >= 1);
        assert_status(ND_OK, nd_close(w.h));
        assert_status(ND_E_BAD_HANDLE, nd_close(w.h));
        assert_status(ND_E_BAD_HANDLE, nd_input_window(w.h + ((int64_t)1 << 28), 0, &p));
        if (fds_before >= 0)
            assert_fds(fds_before); /* the pin holds no descriptor */
        assert_status(ND_OK, nd_input_unpin(w.h));
        assert_status(ND_E_BAD_HANDLE, nd_input_unpin(w.h));
        if (fds_before >= 0)
            assert_fds(fds_before);

        /* unpin on an open handle: the window goes, the handle stays */
        assert_status(ND_OK, nd_open_input(env->dir, "f", read_flags[f], &h));
        assert_status(ND_OK, nd_input_unpin(h)); /* nothing pinned yet */
        assert_true(nd_input_window(h, 0, &p) >= 1);
        assert_status(ND_OK, nd_input_unpin(h));
        assert_true(nd_input_window(h, 1, &p) >= 1);
        assert_status(ND_OK, nd_close(h));
        assert_status(ND_OK, nd_input_unpin(h)); /* the close left the window pinned */
        assert_status(ND_E_BAD_HANDLE, nd_input_unpin(h));
    }
}

/* ---- a closed input lets go of its file at once, even under a pinned window ---- */

/* Every input that is not mapped: its window is its own cursor buffer, which needs no
 * descriptor. Direct where the file system allows it (ND_IO_MERGE falls back to
 * drop-behind where it does not); the mapped input keeps its mapping (the other cases). */
static const uint32_t unmapped_flags[] = {0, ND_IO_RANDOM, ND_IO_SEQUENTIAL, ND_IO_MERGE};
#define N_UNMAPPED (sizeof(unmapped_flags) / sizeof(unmapped_flags[0]))

/* Descriptors open on files of env's directory (POSIX: /proc/self/fd; Windows has none to
 * list, and there replace_file_at_once is the check: an open file refuses it) */
#ifdef _WIN32
#  define assert_files_open(env, n) ((void)(env), (void)(n))
#else
#  define assert_files_open(env, n) assert_int_equal(tst_fds_under((env)->dir_path), (n))
#endif

/* What Lucene does right after it closes a segment's inputs, and what the file's close
 * must allow: delete it, create a new file under the same name at once and read the new
 * bytes back (plain OS calls, then the library). On Windows a file still open refuses the
 * deletion, or keeps its name taken until its last handle goes. */
static void replace_file_at_once(tst_env *env, const char *name, uint64_t seed)
{
    enum { LEN = 5000 };
    char path[TST_PATH_MAX];
    uint8_t fresh[LEN], buf[LEN];
    tst_join(path, sizeof path, env->dir_path, name);
    if (tst_remove_file(path) != 0)
        fail_msg("'%s' cannot be deleted after its inputs' close", name);
    tst_fill_random(fresh, LEN, seed);
    if (tst_write_file(path, fresh, LEN) != 0)
        fail_msg("'%s' cannot be created again at once after its deletion", name);
    size_t len = 0;
    uint8_t *back = tst_read_file(path, &len);
    assert_non_null(back);
    assert_int_equal(len, LEN);
    assert_memory_equal(back, fresh, LEN);
    free(back);
    nd_handle h;
    assert_status(ND_OK, nd_open_input(env->dir, name, 0, &h));
    assert_status(LEN, nd_read_bytes(h, 0, buf, LEN));
    assert_memory_equal(buf, fresh, LEN);
    assert_status(ND_OK, nd_close(h));
}

static void closed_input_lets_go_of_its_file_under_a_pinned_window(void **state)
{
    tst_env *env = *state;
    for (size_t f = 0; f < N_UNMAPPED; f++) {
        uint8_t *data = tst_put_random(env, "f", FILE_LEN, 30 + f);
        nd_handle h;
        const uint8_t *p = NULL;
        int64_t pos = 300001;
        assert_status(ND_OK, nd_open_input(env->dir, "f", unmapped_flags[f], &h));
        int64_t n = nd_input_window(h, pos, &p);
        assert_true(n >= 1);
        assert_files_open(env, 1);
        /* closed without nd_input_unpin: the window stays, the descriptor goes */
        assert_status(ND_OK, nd_close(h));
        assert_files_open(env, 0);
        assert_memory_equal(p, data + pos, (size_t)n); /* ASan: a freed buffer would fail here */
        replace_file_at_once(env, "f", 40 + f);
        assert_memory_equal(p, data + pos, (size_t)n); /* the window is not the file */
        assert_status(ND_OK, nd_input_unpin(h));       /* frees the buffer (LeakSanitizer checks) */
        assert_status(ND_E_BAD_HANDLE, nd_input_unpin(h));
        free(data);
    }
}

/* Clones and slices share one open file: closing one (window pinned) must leave the file
 * to the others, which keep reading it; the last close lets it go. */
static void closing_a_clone_leaves_the_file_to_the_others(void **state)
{
    tst_env *env = *state;
    for (size_t f = 0; f < N_UNMAPPED; f++) {
        uint8_t *data = tst_put_random(env, "f", FILE_LEN, 50 + f);
        enum { SLICE_AT = 8192 };
        nd_handle h, c, s;
        const uint8_t *ph, *pc, *ps;
        uint8_t buf[3000];
        assert_status(ND_OK, nd_open_input(env->dir, "f", unmapped_flags[f], &h));
        assert_status(ND_OK, nd_input_clone(h, &c));
        assert_status(ND_OK, nd_input_slice(h, SLICE_AT, FILE_LEN - 2 * SLICE_AT, &s));
        int64_t nh = nd_input_window(h, 1000, &ph);
        int64_t nc = nd_input_window(c, 200000, &pc);
        int64_t ns = nd_input_window(s, 500000, &ps);
        assert_true(nh >= 1 && nc >= 1 && ns >= 1);
        assert_files_open(env, 1); /* one descriptor for all three */

        assert_status(ND_OK, nd_close(c));
        assert_files_open(env, 1);
        assert_status(sizeof buf, nd_read_bytes(h, 700000, buf, sizeof buf));
        assert_memory_equal(buf, data + 700000, sizeof buf);
        assert_status(sizeof buf, nd_read_bytes(s, 600000, buf, sizeof buf));
        assert_memory_equal(buf, data + SLICE_AT + 600000, sizeof buf);
        assert_true(nd_input_window(h, 900000, &ph) >= 1); /* the parent's cursor refills */
        assert_memory_equal(ph, data + 900000, 64);

        assert_status(ND_OK, nd_close(h));
        assert_files_open(env, 1); /* the slice still reads it */
        assert_status(sizeof buf, nd_read_bytes(s, 100, buf, sizeof buf));
        assert_memory_equal(buf, data + SLICE_AT + 100, sizeof buf);

        assert_status(ND_OK, nd_close(s));
        assert_files_open(env, 0);
        assert_memory_equal(pc, data + 200000, (size_t)nc);
        assert_memory_equal(ps, data + SLICE_AT + 500000, (size_t)ns);
        assert_memory_equal(ph, data + 900000, 64);
        replace_file_at_once(env, "f", 60 + f);
        assert_status(ND_OK, nd_input_unpin(c));
        assert_status(ND_OK, nd_input_unpin(h));
        assert_status(ND_OK, nd_input_unpin(s));
        free(data);
    }
}

/* ---- the last close of a file lets go of it at once, whatever windows are pinned ---- */

static const uint32_t mapped_flags[] = {ND_IO_MMAP, ND_IO_MMAP | ND_IO_RANDOM,
                                        ND_IO_MMAP | ND_IO_SEQUENTIAL, ND_IO_MMAP | ND_IO_PRELOAD};
#define N_MAPPED (sizeof(mapped_flags) / sizeof(mapped_flags[0]))

/* Mappings of files of env's directory (Linux: /proc/self/maps; elsewhere replace_file_at_once
 * and removing the folder are the checks: Windows refuses both while a view holds the file) */
#ifdef _WIN32
#  define assert_maps(env, n) ((void)(env), (void)(n))
#else
#  define assert_maps(env, n) assert_int_equal(tst_maps_under((env)->dir_path), (n))
#endif

static size_t nonzero_bytes(const uint8_t *p, int64_t n)
{
    size_t bad = 0;
    for (int64_t i = 0; i < n; i++)
        bad += p[i] != 0;
    return bad;
}

/* A mapped file read through an input, a clone and a slice, each closed with its window
 * pinned: the file stays mapped (and the windows read it) while any of them is open; the
 * last close lets go of it before it returns (no mapping of it is left, it can be deleted
 * and created again), the windows still read, zeros now, and their addresses go with the
 * last unpin. */
static void last_close_of_a_mapped_file_lets_go_of_it_under_pinned_windows(void **state)
{
    tst_env *env = *state;
    for (size_t f = 0; f < N_MAPPED; f++) {
        uint8_t *data = tst_put_random(env, "f", FILE_LEN, 90 + f);
        enum { SLICE_AT = 8192, SHOWN = 4096 };
        nd_handle h, c, s;
        const uint8_t *ph, *pc, *ps;
        assert_status(ND_OK, nd_open_input(env->dir, "f", mapped_flags[f], &h));
        assert_status(ND_OK, nd_input_clone(h, &c));
        assert_status(ND_OK, nd_input_slice(h, SLICE_AT, FILE_LEN - 2 * SLICE_AT, &s));
        assert_true(nd_input_window(h, 1000, &ph) >= SHOWN);
        assert_true(nd_input_window(c, 200000, &pc) >= SHOWN);
        assert_true(nd_input_window(s, 500000, &ps) >= SHOWN);
        assert_maps(env, 1);

        assert_status(ND_OK, nd_close(c));
        assert_status(ND_OK, nd_close(h));
        assert_maps(env, 1); /* the slice still reads it, and so do the closed ones' windows */
        assert_memory_equal(pc, data + 200000, SHOWN);
        assert_memory_equal(ph, data + 1000, SHOWN);

        assert_status(ND_OK, nd_close(s));
        assert_maps(env, 0);
        assert_files_open(env, 0);
        if (nonzero_bytes(ph, SHOWN) + nonzero_bytes(pc, SHOWN) + nonzero_bytes(ps, SHOWN) != 0)
            fail_msg("flags 0x%x: a window of the released file still reads its bytes",
                     mapped_flags[f]);
        replace_file_at_once(env, "f", 100 + f);
        assert_int_equal(0, nonzero_bytes(ps, SHOWN)); /* the window is not the new file */

        assert_status(ND_OK, nd_input_unpin(c));
        assert_status(ND_OK, nd_input_unpin(h));
        assert_int_equal(1, tst_address_mapped(ps)); /* the slice's pin keeps the addresses */
        assert_status(ND_OK, nd_input_unpin(s));
        assert_int_equal(0, tst_address_mapped(ps));
        free(data);
    }
}

/* What an input is used for before its handles close. */
enum {
    USE_READS,
    USE_WINDOWS,
    USE_CLONES,
    USE_RING,
    USE_RING_THREADS,
    USE_HINTS,
    USE_DELETED, /* deleted while open (Windows: moved aside while mapped), window pinned */
    N_USES
};
static const char *const use_names[N_USES] = {"reads",
                                              "pinned windows",
                                              "clones and slices",
                                              "ring reads",
                                              "thread-pool ring reads",
                                              "prefetch and advice",
                                              "deleted while open"};
static const uint32_t every_flags[] = {0,
                                       ND_IO_RANDOM,
                                       ND_IO_SEQUENTIAL,
                                       ND_IO_MERGE,
                                       ND_IO_MMAP,
                                       ND_IO_MMAP | ND_IO_RANDOM,
                                       ND_IO_MMAP | ND_IO_SEQUENTIAL,
                                       ND_IO_MMAP | ND_IO_PRELOAD};
#define N_EVERY (sizeof(every_flags) / sizeof(every_flags[0]))

typedef struct {
    char dir[TST_PATH_MAX], file[TST_PATH_MAX];
    nd_handle pinned[3]; /* inputs closed with a window pinned, unpinned after the checks */
    int npinned;
    nd_handle kept; /* the negative control's input, left open */
} release_case;

/* Opens a folder of its own holding "f", reads it the way `use` says through inputs opened
 * with `flags`, then closes every handle (the directory's too), except one input when
 * `keep` (the negative control). Windows are left pinned where the use takes them. */
static void use_then_close(tst_env *env, uint32_t flags, int use, int keep, release_case *rc)
{
    static int serial;
    char sub[64];
    memset(rc, 0, sizeof(*rc));
    snprintf(sub, sizeof sub, "release-%d", serial++);
    tst_join(rc->dir, sizeof rc->dir, env->root, sub);
    assert_int_equal(0, tst_mkdir(rc->dir));
    tst_join(rc->file, sizeof rc->file, rc->dir, "f");
    uint8_t *data = tst_random_buffer(FILE_LEN, 200 + (uint64_t)use);
    assert_int_equal(0, tst_write_file(rc->file, data, FILE_LEN));
    nd_handle dir, in, more[2] = {0, 0}, ring = 0;
    assert_status(ND_OK, nd_open_dir(rc->dir, 0, &dir));
    assert_status(ND_OK, nd_open_input(dir, "f", flags, &in));
    uint8_t buf[8192];
    const uint8_t *p;
    assert_status(sizeof buf, nd_read_bytes(in, 12345, buf, sizeof buf));
    assert_memory_equal(buf, data + 12345, sizeof buf);
    switch (use) {
    case USE_WINDOWS:
        assert_true(nd_input_window(in, 777, &p) >= 1);
        assert_int_equal(p[0], data[777]);
        rc->pinned[rc->npinned++] = in;
        break;
    case USE_CLONES:
        assert_status(ND_OK, nd_input_clone(in, &more[0]));
        assert_status(ND_OK, nd_input_slice(in, 4096, 65536, &more[1]));
        assert_true(nd_input_window(more[0], 5000, &p) >= 1);
        assert_true(nd_read_buffered(more[1], buf, 100) == 100);
        assert_memory_equal(buf, data + 4096, 100);
        rc->pinned[rc->npinned++] = more[0];
        break;
    case USE_RING:
    case USE_RING_THREADS: {
        uint64_t tag;
        int64_t res;
        assert_status(ND_OK,
                      nd_ring_open(4, use == USE_RING_THREADS ? ND_RING_FORCE_THREADS : 0, &ring));
        static uint8_t into[3][4096]; /* one destination per read in flight */
        for (int i = 0; i < 3; i++)
            assert_status(ND_OK,
                          nd_ring_submit_read(ring, in, 65536 * i, into[i], 4096, (uint64_t)i));
        for (int i = 0; i < 3; i++) {
            assert_status(1, nd_ring_reap(ring, &tag, &res, 1, 10000));
            assert_status(4096, res);
            assert_memory_equal(into[tag], data + 65536 * (int64_t)tag, 4096);
        }
        break;
    }
    case USE_HINTS:
        assert_status(ND_OK, nd_input_prefetch(in, 0, FILE_LEN));
        assert_status(ND_OK, nd_input_advise(in, ND_IO_RANDOM));
        break;
    case USE_DELETED:
        assert_true(nd_input_window(in, 99, &p) >= 1);
        rc->pinned[rc->npinned++] = in;
        assert_status(ND_OK, nd_delete_file(dir, "f"));
        assert_status(0, nd_file_exists(dir, "f"));
        assert_status(sizeof buf, nd_read_bytes(in, 500000, buf, sizeof buf)); /* still reads */
        assert_memory_equal(buf, data + 500000, sizeof buf);
        break;
    default: break;
    }
    for (int i = 0; i < 2; i++)
        if (more[i] != 0)
            assert_status(ND_OK, nd_close(more[i]));
    if (keep)
        rc->kept = in;
    else
        assert_status(ND_OK, nd_close(in));
    assert_status(ND_OK, nd_close(dir));
    /* a ring that read the file stays open: the file must not wait for it */
    rc->pinned[rc->npinned++] = ring; /* closed after the checks (nd_input_unpin fails on it) */
    free(data);
}

/* What "let go of" means, checked with the OS's own calls: nothing of the process has the
 * file open or mapped (Linux), it can be deleted and its folder removed (every OS). The
 * number of checks that failed. */
static int release_failures(const release_case *rc, char *why, size_t cap)
{
    int failed = 0;
    why[0] = '\0';
#ifndef _WIN32
    int fds = tst_fds_under(rc->dir), maps = tst_maps_under(rc->dir);
    if (fds != 0 || maps != 0) {
        snprintf(why, cap, "%d descriptors and %d mappings of it left; ", fds, maps);
        failed++;
    }
#endif
    if (tst_path_exists(rc->file) && tst_remove_file(rc->file) != 0) {
        snprintf(why + strlen(why), cap - strlen(why), "deleting it failed; ");
        failed++;
    } else if (tst_rmdir(rc->dir) != 0) {
        snprintf(why + strlen(why), cap - strlen(why), "removing its folder failed");
        failed++;
    }
    return failed;
}

static void finish(release_case *rc)
{
    for (int i = 0; i < rc->npinned; i++) {
        nd_handle h = rc->pinned[i];
        if (h != 0 && nd_input_unpin(h) != ND_OK)
            assert_status(ND_OK, nd_close(h)); /* the ring */
    }
    if (rc->kept != 0)
        assert_status(ND_OK, nd_close(rc->kept));
    (void)tst_remove_file(rc->file);
    (void)tst_rmdir(rc->dir);
}

/* Every kind of input, used every way, then closed: its file and folder are free the
 * moment the last nd_close returns, before any window is unpinned or ring closed. The
 * negative control keeps one input open, and the same checks must then fail. */
static void last_close_releases_every_kind_of_input(void **state)
{
    tst_env *env = *state;
    char why[256];
    for (size_t f = 0; f < N_EVERY; f++)
        for (int use = 0; use < N_USES; use++) {
            release_case rc;
            use_then_close(env, every_flags[f], use, 0, &rc);
            if (release_failures(&rc, why, sizeof why) != 0)
                fail_msg("flags 0x%x, %s: the file is not released at its last close: %s",
                         every_flags[f], use_names[use], why);
            finish(&rc);

            use_then_close(env, every_flags[f], use, 1, &rc); /* the negative control */
            if (release_failures(&rc, why, sizeof why) == 0)
                fail_msg("flags 0x%x, %s: an input left open passed the release checks",
                         every_flags[f], use_names[use]);
            finish(&rc);
        }
}

/* A ring read in flight is a call like any other: closing its input (window pinned) leaves
 * the file to the read, which returns the right bytes, and the reap, the last user, lets go
 * of the file (io_uring: the ring's registered slot too), so no descriptor is left after it. */
static void ring_read_in_flight_keeps_the_file_of_a_closed_pinned_input(void **state)
{
    tst_env *env = *state;
    uint8_t *data = tst_put_random(env, "f", FILE_LEN, 80);
    static const uint32_t backends[] = {0, ND_RING_FORCE_THREADS};
    for (size_t b = 0; b < 2; b++) {
        for (size_t f = 0; f < N_UNMAPPED; f++) {
            nd_handle ring, h;
            const uint8_t *p;
            uint8_t buf[8192];
            assert_status(ND_OK, nd_ring_open(4, backends[b], &ring));
            assert_status(ND_OK, nd_open_input(env->dir, "f", unmapped_flags[f], &h));
            int64_t n = nd_input_window(h, 4096, &p);
            assert_true(n >= 1);
            assert_status(ND_OK, nd_ring_submit_read(ring, h, 65536, buf, sizeof buf, 5));
            assert_status(ND_OK, nd_close(h));
            uint64_t tag = 0;
            int64_t result = 0;
            assert_status(1, nd_ring_reap(ring, &tag, &result, 1, 10000));
            assert_int_equal(tag, 5);
            assert_status(sizeof buf, result);
            assert_memory_equal(buf, data + 65536, sizeof buf);
            assert_files_open(env, 0); /* the reap let go of it, pin or not */
            assert_memory_equal(p, data + 4096, (size_t)(n < 512 ? n : 512));
            assert_status(ND_OK, nd_input_unpin(h));
            assert_status(ND_OK, nd_close(ring));
        }
    }
    free(data);
}

/* One thread reads a pinned input positionally while another closes it; then the closer
 * opens another file, which takes the lowest free descriptor number: a descriptor closed
 * under a read in flight would be that number, and the read would return the other
 * file's bytes (or fail with an I/O error). Every read must return the right bytes or
 * ND_E_BAD_HANDLE. */
typedef struct {
    nd_handle h;
    const uint8_t *data;
    atomic_int started;
    long ok;
    int wrong, ended;
    int64_t other;
} pread_racer;

static void *pread_until_closed(void *arg)
{
    pread_racer *r = arg;
    uint8_t buf[4096];
    uint64_t x = (uint64_t)r->h;
    for (long i = 0; i < 10000000L; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int64_t pos = (int64_t)((x >> 33) % (FILE_LEN - sizeof buf));
        int64_t n = 1 + (int64_t)((x >> 17) % sizeof buf);
        int64_t got = nd_read_bytes(r->h, pos, buf, n);
        if (got == ND_E_BAD_HANDLE) {
            r->ended = 1;
            break;
        }
        if (got != n) {
            r->other = got;
            break;
        }
        r->wrong += memcmp(buf, r->data + pos, (size_t)n) != 0;
        r->ok++;
        atomic_store(&r->started, 1);
    }
    return NULL;
}

/* In odd rounds a third thread releases the pin just after the close, racing the reader's
 * last call for who finds the pin alone (the handle table's hand-over between them). */
typedef struct {
    nd_handle h;
    atomic_int go;
    int32_t rc;
} unpinner;

static void *unpin_when_told(void *arg)
{
    unpinner *u = arg;
    while (atomic_load(&u->go) == 0)
        sched_yield();
    u->rc = nd_input_unpin(u->h);
    return NULL;
}

static void close_races_positional_reads_under_a_pin(void **state)
{
    tst_env *env = *state;
    uint8_t *data = tst_put_random(env, "f", FILE_LEN, 70);
    uint8_t *other = tst_put_random(env, "g", FILE_LEN, 71);
    enum { ROUNDS = 300 };
    for (int round = 0; round < ROUNDS; round++) {
        uint32_t flags = unmapped_flags[round % N_UNMAPPED];
        pread_racer r;
        memset(&r, 0, sizeof r);
        r.data = data;
        assert_status(ND_OK, nd_open_input(env->dir, "f", flags, &r.h));
        const uint8_t *p;
        int64_t at = (int64_t)round * 3001;
        int64_t n = nd_input_window(r.h, at, &p); /* the pin: the close runs the let-go path */
        assert_true(n >= 1);
        pthread_t th, un;
        unpinner u = {.h = r.h, .go = 0, .rc = 1};
        assert_int_equal(pthread_create(&th, NULL, pread_until_closed, &r), 0);
        if (round % 2)
            assert_int_equal(pthread_create(&un, NULL, unpin_when_told, &u), 0);
        while (atomic_load(&r.started) == 0)
            sched_yield();
        for (volatile int spin = 0; spin < (round % 16) * 500; spin++)
            ;
        assert_status(ND_OK, nd_close(r.h));
        assert_memory_equal(p, data + at, (size_t)(n < 256 ? n : 256));
        atomic_store(&u.go, 1);
        nd_handle g;
        uint8_t buf[512];
        assert_status(ND_OK, nd_open_input(env->dir, "g", flags, &g));
        for (int i = 0; i < 8; i++) {
            assert_status(sizeof buf, nd_read_bytes(g, i * 1000, buf, sizeof buf));
            assert_memory_equal(buf, other + i * 1000, sizeof buf);
        }
        pthread_join(th, NULL);
        if (round % 2)
            pthread_join(un, NULL);
        if (r.wrong != 0 || r.other != 0 || !r.ended)
            fail_msg("round %d, flags 0x%x: %d wrong of %ld reads, status %lld, ended %d", round,
                     flags, r.wrong, r.ok, (long long)r.other, r.ended);
        if (round % 2) { /* the pin was there for the other thread to release */
            assert_status(ND_OK, u.rc);
            assert_status(ND_E_BAD_HANDLE, nd_input_unpin(r.h));
        } else {
            assert_status(ND_OK, nd_input_unpin(r.h));
        }
        assert_status(ND_OK, nd_close(g));
        assert_files_open(env, 0);
    }
    free(data);
    free(other);
}

typedef struct {
    nd_handle h;
    const uint8_t *data;
    atomic_int *started;
    long windows, bytes;
    int wrong, ended_bad_handle;
    int mapped; /* a byte may read 0 once the last close revoked the mapping */
    int64_t other;
} window_reader;

static void *read_windows_until_closed(void *arg)
{
    window_reader *r = arg;
    uint64_t x = (uint64_t)(uintptr_t)r;
    atomic_fetch_add(r->started, 1);
    for (long i = 0; i < 20000000L; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int64_t pos = (int64_t)((x >> 33) % FILE_LEN);
        const uint8_t *p = NULL;
        int64_t n = nd_input_window(r->h, pos, &p);
        if (n == ND_E_BAD_HANDLE) {
            r->ended_bad_handle = 1;
            break;
        }
        if (n < 1) {
            r->other = n;
            break;
        }
        /* byte by byte, as a binding's ReadByte does: a close lands in here */
        int64_t stop = n < 4096 ? n : 4096;
        for (int64_t k = 0; k < stop; k++)
            r->wrong += p[k] != r->data[pos + k] && !(r->mapped && p[k] == 0);
        r->windows++;
        r->bytes += stop;
    }
    return NULL;
}

static void closes_race_window_readers(void **state)
{
    /* every handle of the file (each reader's clone and the parent) is closed by
     * the main thread while the readers are inside their windows */
    tst_env *env = *state;
    uint8_t *data = tst_put_random(env, "f", FILE_LEN, 8);
    enum { THREADS = 4 };
    for (size_t f = 0; f < N_FLAGS; f++) {
        int fds_before = open_fd_count();
        nd_handle parent;
        assert_status(ND_OK, nd_open_input(env->dir, "f", read_flags[f], &parent));
        window_reader r[THREADS];
        pthread_t th[THREADS];
        atomic_int started = 0;
        for (int i = 0; i < THREADS; i++) {
            memset(&r[i], 0, sizeof(r[i]));
            assert_status(ND_OK, nd_input_clone(parent, &r[i].h));
            r[i].data = data;
            r[i].started = &started;
            r[i].mapped = (read_flags[f] & ND_IO_MMAP) != 0;
            assert_int_equal(pthread_create(&th[i], NULL, read_windows_until_closed, &r[i]), 0);
        }
        while (atomic_load(&started) < THREADS)
            sched_yield();
        for (volatile int spin = 0; spin < 200000; spin++)
            ;
        assert_status(ND_OK, nd_close(parent));
        for (int i = 0; i < THREADS; i++)
            assert_status(ND_OK, nd_close(r[i].h));
        for (int i = 0; i < THREADS; i++) {
            pthread_join(th[i], NULL);
            if (r[i].wrong != 0 || r[i].other != 0 || !r[i].ended_bad_handle)
                fail_msg("flags 0x%x, reader %d: %d wrong of %ld bytes, status %lld, ended %d",
                         read_flags[f], i, r[i].wrong, r[i].bytes, (long long)r[i].other,
                         r[i].ended_bad_handle);
            assert_status(ND_E_BAD_HANDLE, nd_input_unpin(r[i].h)); /* all released */
        }
        if (fds_before >= 0)
            assert_fds(fds_before);
    }
    free(data);
}

/* ---- one shared handle closed under positional readers ---- */

typedef struct {
    nd_handle h;
    const uint8_t *data;
    atomic_int *started;
    long ok, bad_handle, other;
    int wrong_data, came_back;
} shared_reader;

static void *read_shared(void *arg)
{
    shared_reader *r = arg;
    uint8_t buf[8192];
    uint64_t x = (uint64_t)(uintptr_t)r;
    int closed_seen = 0;
    atomic_fetch_add(r->started, 1);
    /* read until the close is seen, then well past it: every later call must fail
     * cleanly (the cap only keeps a broken close from hanging the suite) */
    for (long i = 0; i < 50000000L && r->bad_handle < 2000; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int64_t pos = (int64_t)((x >> 33) % (FILE_LEN - sizeof(buf)));
        int64_t n = 1 + (int64_t)((x >> 17) % sizeof(buf));
        int64_t got = nd_read_bytes(r->h, pos, buf, n);
        if (got == n) {
            r->ok++;
            if (closed_seen)
                r->came_back = 1; /* a closed handle must stay closed */
            if (memcmp(buf, r->data + pos, (size_t)n) != 0)
                r->wrong_data++;
        } else if (got == ND_E_BAD_HANDLE) {
            r->bad_handle++;
            closed_seen = 1;
        } else {
            r->other++;
        }
    }
    return NULL;
}

static void shared_handle_closed_under_readers(void **state)
{
    tst_env *env = *state;
    uint8_t *data = tst_put_random(env, "f", FILE_LEN, 2);
    enum { THREADS = 4 };
    for (size_t f = 0; f < N_FLAGS; f++) {
        for (int rep = 0; rep < 3; rep++) {
            nd_handle h;
            assert_status(ND_OK, nd_open_input(env->dir, "f", read_flags[f], &h));
            shared_reader r[THREADS];
            pthread_t th[THREADS];
            atomic_int started = 0;
            for (int i = 0; i < THREADS; i++) {
                memset(&r[i], 0, sizeof(r[i]));
                r[i].h = h;
                r[i].data = data;
                r[i].started = &started;
                assert_int_equal(pthread_create(&th[i], NULL, read_shared, &r[i]), 0);
            }
            while (atomic_load(&started) < THREADS)
                ;
            /* close at a different moment each repetition */
            for (volatile int spin = 0; spin < rep * 20000; spin++)
                ;
            assert_status(ND_OK, nd_close(h));
            for (int i = 0; i < THREADS; i++)
                pthread_join(th[i], NULL);
            for (int i = 0; i < THREADS; i++) {
                assert_int_equal(r[i].wrong_data, 0);
                assert_int_equal(r[i].other, 0);
                assert_int_equal(r[i].came_back, 0);
                assert_true(r[i].bad_handle > 0); /* every thread saw the close */
            }
            assert_status(ND_E_BAD_HANDLE, nd_close(h));
        }
    }
    free(data);
}

/* ---- slot reuse under churn: stale handles never reach a new object ---- */

enum { CHURN_THREADS = 4, CHURN_ROUNDS = 1500, RECENT = 64 };

typedef struct {
    tst_env *env;
    int id;
    _Atomic nd_handle *recent; /* shared ring of recently closed handles, all threads */
    atomic_uint *recent_next;
    int stale_reached, own_wrong, failures;
} churner;

static void *churn(void *arg)
{
    churner *c = arg;
    char name[16];
    snprintf(name, sizeof(name), "t%d", c->id);
    for (int round = 0; round < CHURN_ROUNDS; round++) {
        nd_handle h;
        uint32_t flags = round % 2 ? ND_IO_MMAP : 0;
        if (nd_open_input(c->env->dir, name, flags, &h) != ND_OK) {
            c->failures++;
            continue;
        }
        /* our file holds our id in every byte: any other byte means a wrong object */
        uint8_t b[4];
        if (nd_read_bytes(h, round % 60, b, 4) != 4 || b[0] != c->id || b[3] != c->id)
            c->own_wrong++;
        /* handles closed by anyone, possibly in the very slot we now hold */
        for (int k = 0; k < 8; k++) {
            unsigned idx = (atomic_load(c->recent_next) - 1u - (unsigned)k) % RECENT;
            nd_handle stale = atomic_load(&c->recent[idx]);
            if (stale == 0 || stale == h)
                continue;
            if (nd_read_bytes(stale, 0, b, 1) != ND_E_BAD_HANDLE)
                c->stale_reached++;
            if (nd_input_position(stale) != ND_E_BAD_HANDLE)
                c->stale_reached++;
        }
        if (round % 250 == 0) {
            /* a burst of live clones: with every thread doing it the table grows new
             * chunks while the others look handles up */
            nd_handle burst[300];
            for (int k = 0; k < 300; k++)
                if (nd_input_clone(h, &burst[k]) != ND_OK)
                    burst[k] = 0, c->failures++;
            for (int k = 0; k < 300; k++) {
                if (burst[k] != 0 && nd_read_byte_buffered(burst[k]) != c->id)
                    c->own_wrong++;
                nd_close(burst[k]);
            }
        }
        if (nd_close(h) != ND_OK)
            c->failures++;
        unsigned slot = atomic_fetch_add(c->recent_next, 1u) % RECENT;
        atomic_store(&c->recent[slot], h);
        if (nd_close(h) != ND_E_BAD_HANDLE)
            c->stale_reached++;
    }
    return NULL;
}

static void stale_handles_under_slot_churn(void **state)
{
    tst_env *env = *state;
    _Atomic nd_handle recent[RECENT];
    atomic_uint next = RECENT;
    for (int i = 0; i < RECENT; i++)
        atomic_init(&recent[i], 0);
    churner c[CHURN_THREADS];
    pthread_t th[CHURN_THREADS];
    for (int i = 0; i < CHURN_THREADS; i++) {
        char name[16], path[TST_PATH_MAX];
        uint8_t bytes[64];
        memset(bytes, i + 1, sizeof(bytes));
        snprintf(name, sizeof(name), "t%d", i + 1);
        assert_int_equal(
            tst_write_file(tst_join(path, sizeof(path), env->dir_path, name), bytes, 64), 0);
        c[i] = (churner){env, i + 1, recent, &next, 0, 0, 0};
    }
    for (int i = 0; i < CHURN_THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, churn, &c[i]), 0);
    for (int i = 0; i < CHURN_THREADS; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < CHURN_THREADS; i++) {
        assert_int_equal(c[i].failures, 0);
        assert_int_equal(c[i].own_wrong, 0);
        assert_int_equal(c[i].stale_reached, 0);
    }
}

/* ---- one output, several writers; and a close under them ---- */

/* 4.4 MB in all: a direct output fills four of its 1 MiB buffers, so its writer
 * thread has two writes queued while the callers write on (this file runs
 * under ThreadSanitizer too) */
enum { WRITERS = 4, CHUNK = 1000, CHUNKS_EACH = 1100 };

typedef struct {
    nd_handle out;
    int id;
    int until_closed; /* write until the handle is closed instead of CHUNKS_EACH times */
    atomic_int *started;
    long written, bad_handle, other;
} writer;

static void *write_chunks(void *arg)
{
    writer *w = arg;
    uint8_t chunk[CHUNK];
    memset(chunk, 'A' + w->id, sizeof(chunk));
    if (w->started != NULL)
        atomic_fetch_add(w->started, 1);
    for (long i = 0; w->until_closed ? (w->bad_handle < 50 && i < 2000000L) : i < CHUNKS_EACH;
         i++) {
        int64_t rc = nd_write_bytes(w->out, chunk, CHUNK);
        if (rc == CHUNK)
            w->written += CHUNK;
        else if (rc == ND_E_BAD_HANDLE)
            w->bad_handle++;
        else
            w->other++;
    }
    return NULL;
}

static void check_whole_chunks(tst_env *env, const char *name, long expected_len, int64_t crc)
{
    char path[TST_PATH_MAX];
    size_t len = 0;
    uint8_t *data = tst_read_file(tst_join(path, sizeof(path), env->dir_path, name), &len);
    assert_non_null(data);
    assert_int_equal((long)len, expected_len);
    /* each call's bytes land together: no chunk is torn by another writer */
    for (size_t at = 0; at < len; at += CHUNK)
        for (size_t i = 1; i < CHUNK; i++)
            if (data[at + i] != data[at])
                fail_msg("%s: chunk at %lu torn at +%lu", name, (unsigned long)at,
                         (unsigned long)i);
    if (crc >= 0)
        assert_true(crc == (int64_t)crc32(crc32(0L, Z_NULL, 0), data, (uInt)len));
    free(data);
}

static void writers_share_one_output(void **state)
{
    tst_env *env = *state;
    const uint32_t flags[] = {0, ND_IO_MERGE};
    for (size_t f = 0; f < 2; f++) {
        nd_handle out;
        char name[16];
        snprintf(name, sizeof(name), "w%zu", f);
        assert_status(ND_OK, nd_create_output(env->dir, name, flags[f], &out));
        writer w[WRITERS];
        pthread_t th[WRITERS];
        for (int i = 0; i < WRITERS; i++) {
            w[i] = (writer){out, i, 0, NULL, 0, 0, 0};
            assert_int_equal(pthread_create(&th[i], NULL, write_chunks, &w[i]), 0);
        }
        for (int i = 0; i < WRITERS; i++)
            pthread_join(th[i], NULL);
        const long total = (long)WRITERS * CHUNK * CHUNKS_EACH;
        assert_status(total, nd_output_position(out));
        int64_t crc = nd_output_crc32(out);
        assert_status(ND_OK, nd_close(out));
        check_whole_chunks(env, name, total, crc);
    }
}

static void output_closed_under_writers(void **state)
{
    tst_env *env = *state;
    const uint32_t flags[] = {0, ND_IO_MERGE};
    /* repeated: a writer blocked on the output's lock while close runs is the window */
    for (size_t f = 0; f < 2 * 8; f++) {
        nd_handle out;
        char name[16];
        snprintf(name, sizeof(name), "c%zu", f);
        assert_status(ND_OK, nd_create_output(env->dir, name, flags[f % 2], &out));
        writer w[WRITERS];
        pthread_t th[WRITERS];
        atomic_int started = 0;
        for (int i = 0; i < WRITERS; i++) {
            w[i] = (writer){out, i, 1, &started, 0, 0, 0};
            assert_int_equal(pthread_create(&th[i], NULL, write_chunks, &w[i]), 0);
        }
        while (atomic_load(&started) < WRITERS)
            ;
        for (volatile int spin = 0; spin < (int)f * 5000; spin++)
            ;
        assert_status(ND_OK, nd_close(out));
        long written = 0;
        for (int i = 0; i < WRITERS; i++) {
            pthread_join(th[i], NULL);
            assert_int_equal(w[i].other, 0);
            assert_true(w[i].bad_handle > 0);
            written += w[i].written;
        }
        /* every write that reported success is in the file, and nothing else */
        check_whole_chunks(env, name, written, -1);
        assert_status(ND_E_BAD_HANDLE, nd_write_bytes(out, "x", 1));
    }
}

/* ---- many submitters, one reaper ---- */

enum { SUBMITTERS = 3, READS_EACH = 600, READ_LEN = 512 };

typedef struct {
    nd_handle ring, in;
    int id;
    uint8_t (*dst)[READ_LEN]; /* one buffer per read: each stays valid until reaped */
    int64_t *offsets;
    long busy, failed;
} submitter;

static void *submit_reads(void *arg)
{
    submitter *s = arg;
    uint64_t x = 1234567 + (uint64_t)s->id;
    for (int i = 0; i < READS_EACH; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int64_t off = (int64_t)((x >> 33) % (FILE_LEN - READ_LEN));
        s->offsets[i] = off;
        uint64_t tag = (uint64_t)s->id * READS_EACH + (uint64_t)i;
        int32_t rc;
        while ((rc = nd_ring_submit_read(s->ring, s->in, off, s->dst[i], READ_LEN, tag)) ==
               ND_E_BUSY) {
            s->busy++; /* the reaper frees slots; try again */
            sched_yield();
        }
        if (rc != ND_OK)
            s->failed++;
    }
    return NULL;
}

static void many_submitters_one_reaper(void **state)
{
    tst_env *env = *state;
    uint8_t *data = tst_put_random(env, "f", FILE_LEN, 6);
    static const uint32_t backends[] = {0, ND_RING_FORCE_THREADS};
    static const uint32_t flags[] = {0, ND_IO_MMAP, ND_IO_MERGE};
    enum { TOTAL = SUBMITTERS * READS_EACH };
    uint8_t(*dst)[READ_LEN] = malloc((size_t)TOTAL * READ_LEN);
    int64_t *offsets = malloc(TOTAL * sizeof(int64_t));
    int *seen = malloc(TOTAL * sizeof(int));
    assert_non_null(dst);
    assert_non_null(offsets);
    assert_non_null(seen);
    for (size_t b = 0; b < 2; b++) {
        for (size_t f = 0; f < 3; f++) {
            nd_handle ring, in;
            assert_status(ND_OK, nd_ring_open(16, backends[b], &ring));
            assert_status(ND_OK, nd_open_input(env->dir, "f", flags[f], &in));
            memset(seen, 0, TOTAL * sizeof(int));
            submitter s[SUBMITTERS];
            pthread_t th[SUBMITTERS];
            for (int i = 0; i < SUBMITTERS; i++) {
                s[i] =
                    (submitter){ring, in, i, dst + i * READS_EACH, offsets + i * READS_EACH, 0, 0};
                assert_int_equal(pthread_create(&th[i], NULL, submit_reads, &s[i]), 0);
            }
            /* this thread reaps everything, in whatever order it completes */
            int done = 0, wrong = 0, errors = 0, idle = 0;
            while (done < TOTAL) {
                uint64_t tags[8];
                int64_t results[8];
                int32_t n = nd_ring_reap(ring, tags, results, 8, 2000);
                /* a 0 may come early (see reap_survives_signals); several in a row
                 * with reads outstanding means completions were lost */
                if (n < 0 || (n == 0 && ++idle > 3)) {
                    fail_msg("backend %u flags 0x%x: reap returned %d after %d of %d completions",
                             (unsigned)backends[b], flags[f], n, done, TOTAL);
                }
                if (n > 0)
                    idle = 0;
                for (int k = 0; k < n; k++) {
                    uint64_t t = tags[k];
                    if (t >= TOTAL || seen[t]++) {
                        wrong++;
                        continue;
                    }
                    if (results[k] != READ_LEN)
                        errors++;
                    else if (memcmp(dst[t], data + offsets[t], READ_LEN) != 0)
                        wrong++;
                }
                done += n;
            }
            for (int i = 0; i < SUBMITTERS; i++) {
                pthread_join(th[i], NULL);
                assert_int_equal(s[i].failed, 0);
            }
            assert_int_equal(wrong, 0);
            assert_int_equal(errors, 0);
            assert_status(0, nd_ring_in_flight(ring));
            assert_status(ND_OK, nd_close(ring));
            assert_status(ND_OK, nd_close(in));
        }
    }
    free(seen);
    free(offsets);
    free(dst);
    free(data);
}

/* ---- several threads replacing one name at once ---- */

typedef struct {
    tst_env *env;
    int id;
    int32_t status;
    char why[300]; /* the failing thread's own last error */
} replacer;

static void *replace_name(void *arg)
{
    replacer *r = arg;
    uint8_t bytes[20000];
    memset(bytes, 'a' + r->id, sizeof(bytes));
    for (int i = 0; i < 30 && r->status == ND_OK; i++) {
        nd_handle out;
        r->status = nd_create_output(r->env->dir, "segments.gen",
                                     ND_IO_OVERWRITE | (i % 2 ? ND_IO_MERGE : 0), &out);
        if (r->status != ND_OK)
            break;
        if (nd_write_bytes(out, bytes, sizeof(bytes)) != (int64_t)sizeof(bytes))
            r->status = ND_E_IO;
        int32_t closed = nd_close(out);
        if (r->status == ND_OK)
            r->status = closed;
    }
    if (r->status != ND_OK)
        snprintf(r->why, sizeof(r->why), "%s", nd_last_error_message());
    return NULL;
}

static void concurrent_overwrites_of_one_name(void **state)
{
    /* last one wins, whole: never a mix of writers, never a stray temporary */
    tst_env *env = *state;
    enum { N = 4 };
    replacer r[N];
    pthread_t th[N];
    for (int i = 0; i < N; i++) {
        r[i] = (replacer){env, i, ND_OK, ""};
        assert_int_equal(pthread_create(&th[i], NULL, replace_name, &r[i]), 0);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        if (r[i].status != ND_OK)
            fail_msg("replacer %d: %s: %s", i, nd_status_name(r[i].status), r[i].why);
    }
    char path[TST_PATH_MAX];
    size_t len = 0;
    uint8_t *data =
        tst_read_file(tst_join(path, sizeof(path), env->dir_path, "segments.gen"), &len);
    assert_non_null(data);
    assert_int_equal(len, 20000);
    for (size_t i = 1; i < len; i++)
        if (data[i] != data[0])
            fail_msg("segments.gen mixes writers '%c' and '%c' at %lu", data[0], data[i],
                     (unsigned long)i);
    free(data);
    assert_int_equal(nd_list(env->dir, NULL, 0), (int64_t)sizeof("segments.gen"));
}

/* ---- racing creators ---- */

typedef struct {
    tst_env *env;
    char path[TST_PATH_MAX];
    atomic_int *go;
    int32_t dir_status, out_status;
} creator;

static void *create_racing(void *arg)
{
    creator *c = arg;
    while (!atomic_load(c->go))
        ;
    nd_handle d, out;
    c->dir_status = nd_open_dir(c->path, ND_DIR_CREATE, &d);
    if (c->dir_status == ND_OK)
        nd_close(d);
    c->out_status = nd_create_output(c->env->dir, "only-one", 0, &out);
    if (c->out_status == ND_OK)
        c->out_status = nd_close(out);
    return NULL;
}

static void racing_creators(void **state)
{
    /* every ND_DIR_CREATE of one missing path succeeds; of N creates without
     * OVERWRITE exactly one wins and the others get ND_E_EXISTS */
    tst_env *env = *state;
    enum { N = 8 };
    for (int round = 0; round < 5; round++) {
        creator c[N];
        pthread_t th[N];
        atomic_int go = 0;
        char sub[64];
        snprintf(sub, sizeof(sub), "r%d/a/b/c", round);
        nd_delete_file(env->dir, "only-one");
        for (int i = 0; i < N; i++) {
            c[i].env = env;
            tst_join(c[i].path, sizeof(c[i].path), env->root, sub);
            c[i].go = &go;
            assert_int_equal(pthread_create(&th[i], NULL, create_racing, &c[i]), 0);
        }
        atomic_store(&go, 1);
        int winners = 0;
        for (int i = 0; i < N; i++) {
            pthread_join(th[i], NULL);
            assert_status(ND_OK, c[i].dir_status);
            if (c[i].out_status == ND_OK)
                winners++;
            else
                assert_status(ND_E_EXISTS, c[i].out_status);
        }
        assert_int_equal(winners, 1);
    }
}

/* ---- one cursor misused by two threads: refused, never torn ---- */

typedef struct {
    nd_handle h;
    long ok, refused, other;
} cursor_user;

static void *use_cursor(void *arg)
{
    cursor_user *u = arg;
    uint8_t buf[300];
    for (int i = 0; i < 20000; i++) {
        int64_t rc = i % 3 ? nd_read_byte_buffered(u->h) : nd_read_buffered(u->h, buf, 300);
        if (rc >= 0)
            u->ok++;
        else if (rc == ND_E_INVALID_ARGUMENT || rc == ND_E_EOF)
            u->refused++; /* EOF: the other thread moved the shared cursor to the end */
        else
            u->other++;
        if (rc == ND_E_EOF)
            nd_input_seek(u->h, 0);
    }
    return NULL;
}

static void shared_cursor_is_refused_not_torn(void **state)
{
    tst_env *env = *state;
    free(tst_put_random(env, "f", 100000, 3));
    for (size_t f = 0; f < N_FLAGS; f++) {
        nd_handle h;
        assert_status(ND_OK, nd_open_input(env->dir, "f", read_flags[f], &h));
        cursor_user u[2] = {{h, 0, 0, 0}, {h, 0, 0, 0}};
        pthread_t th[2];
        for (int i = 0; i < 2; i++)
            assert_int_equal(pthread_create(&th[i], NULL, use_cursor, &u[i]), 0);
        for (int i = 0; i < 2; i++)
            pthread_join(th[i], NULL);
        assert_int_equal(u[0].other + u[1].other, 0);
        assert_true(u[0].ok + u[1].ok > 0);
        int64_t pos = nd_input_position(h);
        assert_true(pos >= 0 && pos <= 100000);
        assert_status(ND_OK, nd_close(h));
    }
}

/* ---- one cursor user beside positional readers on the same handle ---- */

typedef struct {
    nd_handle h;
    const uint8_t *data;
    int cursor; /* 1: windows and buffered reads; 0: positional reads */
    atomic_int *stop;
    long rounds, errors;
} mixed_user;

static void *mixed(void *arg)
{
    mixed_user *u = arg;
    uint8_t buf[512];
    uint64_t x = (uint64_t)(uintptr_t)u;
    while (!atomic_load(u->stop) || u->rounds < 100) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int64_t pos = (int64_t)((x >> 33) % (FILE_LEN - sizeof(buf)));
        if (u->cursor) {
            const uint8_t *p = NULL;
            int64_t n = nd_input_window(u->h, pos, &p);
            if (n < 1 || p[0] != u->data[pos])
                u->errors++;
            if (nd_input_seek(u->h, pos) != ND_OK || nd_read_buffered(u->h, buf, 300) != 300 ||
                memcmp(buf, u->data + pos, 300) != 0)
                u->errors++;
        } else {
            if (nd_read_bytes(u->h, pos, buf, sizeof(buf)) != (int64_t)sizeof(buf) ||
                memcmp(buf, u->data + pos, sizeof(buf)) != 0)
                u->errors++;
        }
        u->rounds++;
    }
    if (u->cursor && nd_input_unpin(u->h) != ND_OK) /* done with its windows: main closes */
        u->errors++;
    return NULL;
}

static void positional_readers_beside_a_cursor(void **state)
{
    /* the contract: positional calls are thread-safe on one handle, cursor calls
     * belong to one thread; the two together must not disturb each other */
    tst_env *env = *state;
    uint8_t *data = tst_put_random(env, "f", FILE_LEN, 4);
    for (size_t f = 0; f < N_FLAGS; f++) {
        nd_handle h;
        assert_status(ND_OK, nd_open_input(env->dir, "f", read_flags[f], &h));
        atomic_int stop = 0;
        mixed_user u[3] = {
            {h, data, 1, &stop, 0, 0}, {h, data, 0, &stop, 0, 0}, {h, data, 0, &stop, 0, 0}};
        pthread_t th[3];
        for (int i = 0; i < 3; i++)
            assert_int_equal(pthread_create(&th[i], NULL, mixed, &u[i]), 0);
        for (volatile int spin = 0; spin < 2000000; spin++)
            ;
        atomic_store(&stop, 1);
        for (int i = 0; i < 3; i++) {
            pthread_join(th[i], NULL);
            if (u[i].errors != 0)
                fail_msg("flags 0x%x, %s thread: %ld of %ld rounds wrong", read_flags[f],
                         u[i].cursor ? "cursor" : "positional", u[i].errors, u[i].rounds);
        }
        assert_status(ND_OK, nd_close(h));
    }
    free(data);
}

#ifndef _WIN32
/* POSIX only: signals. Managed runtimes interrupt threads with signals (the
 * .NET runtime suspends threads that way), so a blocked reap must not turn a
 * signal into an error or into an early "nothing arrived". */
static void on_signal(int sig)
{
    (void)sig;
}

typedef struct {
    nd_handle ring;
    int32_t timeout_ms;
    int32_t got;
    int64_t result;
    uint64_t tag;
    double seconds;
    atomic_int *in_reap;
} reaper;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *reap_once(void *arg)
{
    reaper *r = arg;
    double t0 = now_seconds();
    atomic_store(r->in_reap, 1);
    r->got = nd_ring_reap(r->ring, &r->tag, &r->result, 1, r->timeout_ms);
    r->seconds = now_seconds() - t0;
    return NULL;
}

static void reap_survives_signals(void **state)
{
    tst_env *env = *state;
    uint8_t *data = tst_put_random(env, "f", 4096, 5);
    struct sigaction sa, old;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal; /* no SA_RESTART: every blocking call sees EINTR */
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
    nd_handle in;
    assert_status(ND_OK, nd_open_input(env->dir, "f", 0, &in));
    static const uint32_t backends[] = {0, ND_RING_FORCE_THREADS};
    int early = 0;
    for (size_t b = 0; b < 2; b++) {
        nd_handle ring;
        assert_status(ND_OK, nd_ring_open(4, backends[b], &ring));
        for (int with_timeout = 0; with_timeout < 2; with_timeout++) {
            atomic_int in_reap = 0;
            reaper r = {ring, with_timeout ? 400 : -1, -99, 0, 0, 0, &in_reap};
            pthread_t th;
            assert_int_equal(pthread_create(&th, NULL, reap_once, &r), 0);
            while (!atomic_load(&in_reap))
                ;
            /* a storm of signals at the blocked reaper for ~250 ms */
            double t0 = now_seconds();
            while (now_seconds() - t0 < 0.25) {
                pthread_kill(th, SIGUSR1);
                struct timespec pause = {0, 1000000};
                nanosleep(&pause, NULL);
            }
            uint8_t buf[100];
            if (!with_timeout) /* only the untimed reap gets a completion to wait for */
                assert_status(ND_OK, nd_ring_submit_read(ring, in, 10, buf, 100, 77));
            pthread_join(th, NULL);
            if (with_timeout) {
                /* nothing was submitted: it must wait out (most of) its 400 ms, not
                 * return "nothing arrived" at the first signal */
                assert_status(0, r.got);
                if (r.seconds < 0.3) { /* both backends are checked before failing */
                    fprintf(stderr,
                            "backend %s: a 400 ms reap returned 0 after %.0f ms of signals\n",
                            b ? "threads" : "default", r.seconds * 1000);
                    early++;
                }
            } else {
                assert_status(1, r.got);
                assert_int_equal(r.tag, 77);
                assert_int_equal(r.result, 100);
                assert_memory_equal(buf, data + 10, 100);
            }
        }
        assert_status(ND_OK, nd_close(ring));
    }
    assert_status(ND_OK, nd_close(in));
    sigaction(SIGUSR1, &old, NULL);
    free(data);
    assert_int_equal(early, 0);
}
#endif

/* nd_input_read_from's window is pinned as nd_input_window's: a reader holding
 * the window a read returned reads it after another thread's close without a
 * fault (the buffer's bytes, a revoked mapping's zeros), and its next
 * read_from fails with ND_E_BAD_HANDLE and lets the pin go. */
static void *hold_window_of_a_read(void *arg)
{
    window_holder *w = arg;
    const uint8_t *p = NULL;
    uint8_t head[7];
    w->got = nd_input_read_from(w->h, w->pos - 7, head, 7, &p);
    w->wrong = memcmp(head, w->data + w->pos - 7, 7) != 0;
    atomic_store(&w->stage, 1);
    while (atomic_load(&w->stage) != 2)
        sched_yield();
    for (int64_t i = 0; i < w->got; i++)
        w->wrong += p[i] != (w->mapped ? 0 : w->data[w->pos + i]);
    w->after = nd_input_read_from(w->h, w->pos, head, 1, &p);
    return NULL;
}

static void read_from_window_outlives_a_close_on_another_thread(void **state)
{
    window_survives_a_close(*state, 16, hold_window_of_a_read);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(clones_read_while_parent_closes, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(window_outlives_a_close_on_another_thread, tst_setup,
                                        tst_teardown),
        cmocka_unit_test_setup_teardown(read_from_window_outlives_a_close_on_another_thread,
                                        tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(window_pin_is_released_by_close_or_unpin, tst_setup,
                                        tst_teardown),
        cmocka_unit_test_setup_teardown(window_handed_to_another_thread_outlives_its_takers_close,
                                        tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(closed_input_lets_go_of_its_file_under_a_pinned_window,
                                        tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(
            last_close_of_a_mapped_file_lets_go_of_it_under_pinned_windows, tst_setup,
            tst_teardown),
        cmocka_unit_test_setup_teardown(last_close_releases_every_kind_of_input, tst_setup,
                                        tst_teardown),
        cmocka_unit_test_setup_teardown(closing_a_clone_leaves_the_file_to_the_others, tst_setup,
                                        tst_teardown),
        cmocka_unit_test_setup_teardown(close_races_positional_reads_under_a_pin, tst_setup,
                                        tst_teardown),
        cmocka_unit_test_setup_teardown(ring_read_in_flight_keeps_the_file_of_a_closed_pinned_input,
                                        tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(closes_race_window_readers, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(shared_handle_closed_under_readers, tst_setup,
                                        tst_teardown),
        cmocka_unit_test_setup_teardown(stale_handles_under_slot_churn, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(writers_share_one_output, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(output_closed_under_writers, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(shared_cursor_is_refused_not_torn, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(concurrent_overwrites_of_one_name, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(racing_creators, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(many_submitters_one_reaper, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(positional_readers_beside_a_cursor, tst_setup,
                                        tst_teardown),
#ifndef _WIN32
        cmocka_unit_test_setup_teardown(reap_survives_signals, tst_setup, tst_teardown),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
