/*
 * test_ring_files.c - the io_uring ring's registered files (posix/ring_uring.c):
 * reads from more files than its table holds, inputs closed with reads in
 * flight and files replaced on disk under the same name, every byte checked;
 * the kernel's own view of the table (/proc/self/fdinfo of the ring) and
 * inotify show that registration is used, that a file no input uses any more
 * is let go (closed, a deleted one's space freed) by the time the last
 * nd_close returns, by one ring or two, that an idle ring never wakes up, and
 * that a ring whose registration is refused (ND_RING_NO_REGISTER,
 * or a failing io_uring_register through the fault hooks) reads through plain
 * descriptors. Linux only (io_uring); elsewhere every case says it is skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

#ifdef __linux__
#  include <dirent.h>
#  include <errno.h>
#  include <poll.h>
#  include <pthread.h>
#  include <sys/inotify.h>
#  include <time.h>
#  include <unistd.h>
#endif
#ifdef ND_FAULT_INJECTION
#  include "fault.h"
#endif

#define NFILES 100 /* more than the ring's table (64 slots) */
#define FLEN (64u << 10)
#define BLOCK 4096
#define DEPTH 32

#ifdef __linux__

typedef struct {
    tst_env env;
    uint64_t seed[NFILES]; /* what file i holds now */
} files_env;

/* The 8 bytes at offset `off` (a multiple of 8) of a file made from `seed`:
 * a block can be checked without keeping every version of every file. */
static uint64_t word_at(uint64_t seed, uint64_t off)
{
    uint64_t z = seed * 0x9E3779B97F4A7C15ULL + off;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static char *fname(char *out, int i)
{
    snprintf(out, 16, "f%03d", i);
    return out;
}

static void write_file(files_env *e, int i, uint64_t seed)
{
    char name[16], path[TST_PATH_MAX];
    uint64_t *data = malloc(FLEN);
    assert_non_null(data);
    for (uint64_t k = 0; k < FLEN / 8; k++)
        data[k] = word_at(seed, k * 8);
    e->seed[i] = seed;
    /* a new file renamed over the old one, as Lucene replaces files: inputs
     * open on the old one keep reading its bytes */
    char tmp[TST_PATH_MAX];
    assert_int_equal(
        tst_write_file(tst_join(tmp, sizeof tmp, e->env.dir_path, "new.tmp"), data, FLEN), 0);
    assert_int_equal(rename(tmp, tst_join(path, sizeof path, e->env.dir_path, fname(name, i))), 0);
    free(data);
}

static int setup(void **state)
{
    files_env *e = calloc(1, sizeof(*e));
    void *inner = NULL;
    if (e == NULL || tst_setup(&inner) != 0)
        return -1;
    e->env = *(tst_env *)inner;
    free(inner);
    for (int i = 0; i < NFILES; i++)
        write_file(e, i, 1000 + (uint64_t)i);
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    files_env *e = *state;
    tst_env *copy = malloc(sizeof(*copy));
    *copy = e->env;
    void *inner = copy;
    free(e);
    return tst_teardown(&inner);
}

/* ---- the kernel's view ---- */

/* What the kernel says of the test's ring (its io_uring descriptor, found
 * when it was opened): how many slots its table has (0: none), and how many
 * hold a file under `dir`. The table is listed only when the kernel gets the
 * ring's lock at once, so a listing taken while the submitter submits is
 * retried. */
typedef struct {
    int slots;  /* UserFiles; -1: the ring's fdinfo could not be read */
    int listed; /* the slot lines were printed */
    int ours;   /* slots holding a file under dir */
} table_view;

static int ring_fd = -1; /* the io_uring descriptor of the ring open_uring opened */

/* 1 if descriptor `name` (a /proc/self/fd entry) is an io_uring instance. */
static int is_uring(const char *name)
{
    char link[300], target[256];
    snprintf(link, sizeof link, "/proc/self/fd/%s", name);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0)
        return 0;
    target[n] = '\0';
    return strcmp(target, "anon_inode:[io_uring]") == 0;
}

/* The io_uring descriptors open now, as a bitmap of the first 4096 numbers. */
static void uring_fds(uint8_t *set)
{
    memset(set, 0, 512);
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        int fd = atoi(de->d_name);
        if (fd >= 0 && fd < 4096 && is_uring(de->d_name))
            set[fd / 8] |= (uint8_t)(1u << (fd % 8));
    }
    closedir(d);
}

static table_view read_table(const char *dir)
{
    table_view v = {-1, 0, 0};
    char info[64];
    snprintf(info, sizeof info, "/proc/self/fdinfo/%d", ring_fd);
    FILE *f = ring_fd >= 0 ? fopen(info, "r") : NULL;
    if (f == NULL)
        return v;
    char line[1200];
    int in_files = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        unsigned u;
        if (sscanf(line, "UserFiles: %u", &u) == 1) {
            v.slots = (int)u;
            in_files = 1;
            continue;
        }
        if (in_files && sscanf(line, " %u: ", &u) == 1) {
            v.listed = 1;
            if (strstr(line, dir) != NULL)
                v.ours++;
        } else if (in_files) {
            in_files = 0;
        }
    }
    fclose(f);
    return v;
}

static void pause_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* The table as the kernel lists it, retried until it is listed (up to 2 s): the
 * kernel lists the table only when it can take the ring's lock at once, and on a
 * loaded machine a thread of the ring may hold it, preempted, for a while; then
 * the slot lines, or on newer kernels the whole table, are left out. */
static table_view listed_table(const char *dir)
{
    table_view v = {-1, 0, 0};
    for (int i = 0; i < 200; i++) {
        v = read_table(dir);
        if (v.slots == 0 || (v.slots > 0 && v.listed))
            return v;
        pause_ms(10);
    }
    return v;
}

/* ---- the workload ---- */

/* Opens the default ring; 0 (and a loud skip) where it is not io_uring. */
static int open_uring(nd_handle *ring)
{
    uint8_t before[512], after[512];
    uring_fds(before);
    assert_status(ND_OK, nd_ring_open(DEPTH, 0, ring));
    uring_fds(after);
    ring_fd = -1;
    for (int fd = 0; fd < 4096; fd++)
        if ((after[fd / 8] & ~before[fd / 8]) & (1u << (fd % 8)))
            ring_fd = fd;
    if (nd_ring_backend(*ring) == ND_RING_IO_URING) {
        if (ring_fd < 0)
            fail_msg("an io_uring ring, but no new io_uring descriptor in /proc/self/fd");
        return 1;
    }
    tst_loud_skip("registered files of the io_uring ring",
                  "the kernel (or emulator) refused io_uring; the ring fell back to threads");
    nd_close(*ring);
    return 0;
}

/* A read in flight: which file (and which of its contents), where, into which buffer. */
typedef struct {
    int file;
    uint64_t seed;
    int64_t off;
    int busy;
} pending;

static uint64_t next_rand(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

static void check_done(pending *p, uint64_t slots, uint8_t *bufs, uint64_t tag, int64_t res)
{
    assert_true(tag < slots);
    pending *q = &p[tag];
    assert_true(q->busy);
    assert_int_equal(res, BLOCK);
    /* the bytes of the file the input had open, even if it was replaced since */
    for (uint64_t k = 0; k < BLOCK; k += 8) {
        uint64_t got;
        memcpy(&got, bufs + tag * BLOCK + k, 8);
        if (got != word_at(q->seed, (uint64_t)q->off + k))
            fail_msg("file %d (version %llu) at %lld: wrong bytes", q->file,
                     (unsigned long long)q->seed, (long long)q->off + (long long)k);
    }
    q->busy = 0;
}

/* `reads` reads, DEPTH in flight, each from a random one of the NFILES
 * inputs (or, with `churn` 0, from each input in turn); with `churn`, every
 * 7th completion closes an input that has reads in flight (they complete with
 * its bytes), and every third such close first replaces its file on disk
 * under the same name; the input is reopened at once. */
static void mixed_reads(files_env *e, nd_handle ring, nd_handle *in, int reads, uint64_t s,
                        int churn)
{
    uint8_t *bufs = NULL;
    assert_int_equal(posix_memalign((void **)&bufs, BLOCK, (size_t)DEPTH * BLOCK), 0);
    pending p[DEPTH] = {{0}};
    int started = 0, done = 0, closes = 0;
    while (done < reads) {
        for (uint64_t t = 0; t < DEPTH && started < reads; t++) {
            if (p[t].busy)
                continue;
            int f = churn ? (int)(next_rand(&s) % NFILES) : started % NFILES;
            p[t] = (pending){f, e->seed[f], (int64_t)(next_rand(&s) % (FLEN / BLOCK)) * BLOCK, 1};
            assert_status(ND_OK,
                          nd_ring_submit_read(ring, in[f], p[t].off, bufs + t * BLOCK, BLOCK, t));
            started++;
        }
        uint64_t tags[DEPTH];
        int64_t res[DEPTH];
        int32_t n = nd_ring_reap(ring, tags, res, DEPTH, 5000);
        assert_true(n > 0);
        for (int32_t j = 0; j < n; j++) {
            check_done(p, DEPTH, bufs, tags[j], res[j]);
            if (++done % 7 != 0 || !churn)
                continue;
            int victim = -1;
            for (uint64_t t = 0; t < DEPTH && victim < 0; t++)
                if (p[t].busy)
                    victim = p[t].file;
            if (victim < 0)
                continue;
            char name[16];
            assert_status(ND_OK, nd_close(in[victim]));
            if (++closes % 3 == 0) /* new bytes under the old name: a new file */
                write_file(e, victim, e->seed[victim] + 7919);
            assert_status(ND_OK, nd_open_input(e->env.dir, fname(name, victim), 0, &in[victim]));
        }
    }
    assert_true(closes > 0 || !churn);
    free(bufs);
}

static void open_all(files_env *e, nd_handle *in)
{
    char name[16];
    for (int i = 0; i < NFILES; i++)
        assert_status(ND_OK, nd_open_input(e->env.dir, fname(name, i), 0, &in[i]));
}

static void close_all(nd_handle *in)
{
    for (int i = 0; i < NFILES; i++)
        assert_status(ND_OK, nd_close(in[i]));
}

/* The table is used and full (more files than slots), the reads are right
 * through replacements, closes and replaced files; once no input uses a file,
 * the ring has let it go (and it is closed) when the last nd_close returns. */
static void test_registered_files(void **state)
{
    files_env *e = *state;
    nd_handle ring, in[NFILES];
    if (!open_uring(&ring))
        return;
    open_all(e, in);
    /* each of the 100 files in turn, all kept open: the least recently used
     * are replaced, and the table ends full of them */
    mixed_reads(e, ring, in, 3 * NFILES, 1, 0);
    table_view v = listed_table(e->env.dir_path);
    if (v.slots != 64) {
        /* registration was refused where the kernel allows it, or never tried */
        fail_msg("the io_uring ring's table has %d registered slots, not 64 (/proc/self/fdinfo)",
                 v.slots);
    }
    assert_true(v.listed);
    assert_int_equal(v.ours, 64);
    /* random files, closed and replaced under the reads */
    mixed_reads(e, ring, in, 4000, 1, 1);
    v = listed_table(e->env.dir_path);
    assert_true(v.ours > 0);
    close_all(in);
    /* each close let go of its file in every ring: the descriptors are gone,
     * and the kernel's table lists none of the files (an empty listing may
     * also be a listing the kernel skipped: the descriptors are what counts) */
    assert_int_equal(tst_fds_under(e->env.dir_path), 0);
    assert_int_equal(read_table(e->env.dir_path).ours, 0);
    /* and registers again when reads come back */
    open_all(e, in);
    mixed_reads(e, ring, in, 500, 2, 1);
    v = listed_table(e->env.dir_path);
    assert_true(v.ours > 0);
    close_all(in);
    assert_status(ND_OK, nd_close(ring));
    assert_int_equal(tst_fds_under(e->env.dir_path), 0);
}

/* The file whose slot a read takes is let go of with that read, not after:
 * with 65 inputs read in turn, each read registers its file in the slot of
 * the input read 64 reads before; the moment the read is reaped (polled, so
 * the caller is as fast as the submitter), that older input is closed and
 * its descriptor must be gone when nd_close returns. The submitter used to
 * hold the replaced file until after it released its lock, which a caller
 * polling for the completion could overtake (seen as 3 stray descriptors
 * under ASan in CI); in the fault build the submitter pauses after every
 * batch, so the caller always overtakes it and that order fails every round. */
static void test_replaced_file_closes_with_its_input(void **state)
{
    files_env *e = *state;
    enum { OPEN = 65 };
    int rounds = 3000;
    nd_handle ring, in[OPEN];
    if (!open_uring(&ring))
        return;
#  ifdef ND_FAULT_INJECTION
    nd__fault_set_submit_pause(2000);
    rounds = 64 + 40;
#  endif
    for (int i = 0; i < OPEN; i++) {
        char name[16];
        assert_status(ND_OK, nd_open_input(e->env.dir, fname(name, i), 0, &in[i]));
    }
    uint8_t *buf = NULL;
    assert_int_equal(posix_memalign((void **)&buf, BLOCK, BLOCK), 0);
    int strays = 0;
    for (int r = 0; r < rounds; r++) {
        int f = r % OPEN, old = (r + 1) % OPEN;
        assert_status(ND_OK, nd_ring_submit_read(ring, in[f], 0, buf, BLOCK, (uint64_t)f));
        uint64_t tag;
        int64_t res;
        int32_t n;
        while ((n = nd_ring_reap(ring, &tag, &res, 1, 0)) == 0)
            ;
        assert_int_equal(n, 1);
        assert_int_equal(res, BLOCK);
        if (r < 64) /* the table is still filling: nothing is replaced yet */
            continue;
        char name[16];
        assert_status(ND_OK, nd_close(in[old]));
        if (tst_fds_under(e->env.dir_path) != OPEN - 1)
            strays++;
        assert_status(ND_OK, nd_open_input(e->env.dir, fname(name, old), 0, &in[old]));
    }
#  ifdef ND_FAULT_INJECTION
    nd__fault_set_submit_pause(0);
#  endif
    if (strays > 0)
        fail_msg("%d of %d closes returned with the replaced file still open", strays, rounds - 64);
    for (int i = 0; i < OPEN; i++)
        assert_status(ND_OK, nd_close(in[i]));
    assert_status(ND_OK, nd_close(ring));
    assert_int_equal(tst_fds_under(e->env.dir_path), 0);
    free(buf);
}

/* Bursts of 256 reads over the 100 files in random order: the submitting
 * thread sends up to 64 per system call, so each batch names about as many
 * files as the table has slots and replaces slots while preparing it; a slot
 * that an SQE of the same batch names must not be replaced under it (with the
 * replacement policy cut down to "the first slot", this case reads wrong bytes
 * unless that rule holds). */
static void test_wide_batches(void **state)
{
    files_env *e = *state;
    enum { WIDE = 256 };
    nd_handle ring, in[NFILES];
    assert_status(ND_OK, nd_ring_open(WIDE, 0, &ring));
    if (nd_ring_backend(ring) != ND_RING_IO_URING) {
        tst_loud_skip("registered files of the io_uring ring",
                      "the kernel (or emulator) refused io_uring; the ring fell back to threads");
        nd_close(ring);
        return;
    }
    open_all(e, in);
    uint8_t *bufs = NULL;
    assert_int_equal(posix_memalign((void **)&bufs, BLOCK, (size_t)WIDE * BLOCK), 0);
    static pending p[WIDE];
    uint64_t s = 77;
    for (int round = 0; round < 20; round++) {
        for (uint64_t t = 0; t < WIDE; t++) {
            int f = (int)(next_rand(&s) % NFILES);
            p[t] = (pending){f, e->seed[f], (int64_t)(next_rand(&s) % (FLEN / BLOCK)) * BLOCK, 1};
            assert_status(ND_OK,
                          nd_ring_submit_read(ring, in[f], p[t].off, bufs + t * BLOCK, BLOCK, t));
        }
        for (int got = 0; got < WIDE;) {
            uint64_t tags[WIDE];
            int64_t res[WIDE];
            int32_t n = nd_ring_reap(ring, tags, res, WIDE, 5000);
            assert_true(n > 0);
            for (int32_t j = 0; j < n; j++)
                check_done(p, WIDE, bufs, tags[j], res[j]);
            got += n;
        }
    }
    free(bufs);
    close_all(in);
    assert_status(ND_OK, nd_close(ring));
}

/* Closing the ring while it holds registered files closes them. */
static void test_ring_close_lets_files_go(void **state)
{
    files_env *e = *state;
    nd_handle ring, in[NFILES];
    if (!open_uring(&ring))
        return;
    open_all(e, in);
    mixed_reads(e, ring, in, 300, 3, 1);
    close_all(in);
    assert_status(ND_OK, nd_close(ring)); /* before any idle sweep */
    assert_int_equal(tst_fds_under(e->env.dir_path), 0);
}

/* ND_RING_NO_REGISTER: no table, plain descriptors, the same bytes. */
static void test_opt_out(void **state)
{
    files_env *e = *state;
    nd_handle ring, in[NFILES];
    setenv("ND_RING_NO_REGISTER", "1", 1);
    int ok = open_uring(&ring);
    unsetenv("ND_RING_NO_REGISTER");
    if (!ok)
        return;
    open_all(e, in);
    mixed_reads(e, ring, in, 1000, 4, 1);
    assert_int_equal(listed_table(e->env.dir_path).slots, 0);
    close_all(in);
    assert_status(ND_OK, nd_close(ring));
}

/* ---- letting go when the last input closes ---- */

/* Watches path for the events in `mask` (inotify): -1 if it cannot. */
static int watch(const char *path, uint32_t mask)
{
    int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd >= 0 && inotify_add_watch(fd, path, mask) < 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* 1 if an event in `mask` arrives on inotify descriptor `fd` within `ms`. */
static int wait_event(int fd, uint32_t mask, int ms)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        ssize_t n = read(fd, buf, sizeof buf);
        for (ssize_t k = 0; k < n;) {
            const struct inotify_event *ev = (const struct inotify_event *)(buf + k);
            if (ev->mask & mask)
                return 1;
            k += (ssize_t)(sizeof *ev + ev->len);
        }
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        long spent = (t.tv_sec - t0.tv_sec) * 1000L + (t.tv_nsec - t0.tv_nsec) / 1000000L;
        if (spent >= ms)
            return 0;
        struct pollfd p = {fd, POLLIN, 0};
        (void)poll(&p, 1, (int)(ms - spent));
    }
}

/* One read of `in` through `ring`, checked. */
static void read_once(files_env *e, nd_handle ring, nd_handle in, int file)
{
    uint8_t *buf = NULL;
    assert_int_equal(posix_memalign((void **)&buf, BLOCK, BLOCK), 0);
    pending p = {file, e->seed[file], 2 * BLOCK, 1};
    assert_status(ND_OK, nd_ring_submit_read(ring, in, p.off, buf, BLOCK, 0));
    uint64_t tag;
    int64_t res;
    assert_int_equal(nd_ring_reap(ring, &tag, &res, 1, 5000), 1);
    check_done(&p, 1, buf, tag, res);
    free(buf);
}

/* Polls for up to `ms` until no descriptor of the process is open on a file
 * under dir and (when `table`) the ring's table lists none of them; 1 if so.
 * The kernel lists only the slots that hold a file (and skips the listing
 * when the ring is busy), so the callers' inotify close event is the proof
 * that the kernel let go; this adds that our own descriptor is gone. */
static int let_go_within(const char *dir, int table, int ms)
{
    for (int waited = 0;; waited += 5) {
        table_view v = table ? read_table(dir) : (table_view){0, 0, 0};
        if (tst_fds_under(dir) == 0 && v.slots >= 0 && v.ours == 0)
            return 1;
        if (waited >= ms)
            return 0;
        pause_ms(5);
    }
}

/* Closing the last input on a file closes it, though the ring read it
 * through a registered descriptor: when nd_close returns, the process's
 * descriptor is gone, the kernel has dropped its last reference (inotify's
 * close event) and its table no longer lists the file (the ring used to keep
 * it for up to 16 s, until a timed sweep). */
static void test_close_lets_go_at_once(void **state)
{
    files_env *e = *state;
    nd_handle ring, in;
    if (!open_uring(&ring))
        return;
    char name[16], path[TST_PATH_MAX];
    tst_join(path, sizeof path, e->env.dir_path, fname(name, 5));
    int ino = watch(path, IN_CLOSE_NOWRITE);
    assert_true(ino >= 0);
    for (int round = 0; round < 3; round++) {
        assert_status(ND_OK, nd_open_input(e->env.dir, name, 0, &in));
        read_once(e, ring, in, 5);
        table_view v = listed_table(e->env.dir_path);
        if (v.ours != 1) /* read through the table */
            fail_msg("round %d: the ring's table lists %d of our files (%d slots, listing %s)",
                     round, v.ours, v.slots, v.listed ? "shown" : "not shown in 2 s");
        /* an input still open keeps its file, whatever the ring does meanwhile */
        pause_ms(50);
        assert_int_equal(tst_fds_under(e->env.dir_path), 1);
        assert_false(wait_event(ino, IN_CLOSE_NOWRITE, 0));
        assert_status(ND_OK, nd_close(in));
        /* the kernel's last reference to the open file is gone: it reports the close */
        assert_true(wait_event(ino, IN_CLOSE_NOWRITE, 0));
        assert_true(let_go_within(e->env.dir_path, 1, 0));
    }
    close(ino);
    assert_status(ND_OK, nd_close(ring));
}

/* Lucene deletes the files a merge replaced while readers still have them
 * open, and expects their space back once the last reader closes: a file
 * deleted while open and read through the ring is gone from the disk when
 * its last input's nd_close returns (inotify's IN_DELETE_SELF comes when the
 * last reference to the deleted file goes, and its blocks with it). */
static void test_deleted_file_space_returns(void **state)
{
    files_env *e = *state;
    nd_handle ring, in, clone;
    if (!open_uring(&ring))
        return;
    char name[16], path[TST_PATH_MAX];
    tst_join(path, sizeof path, e->env.dir_path, fname(name, 9));
    int ino = watch(path, IN_DELETE_SELF);
    assert_true(ino >= 0);
    assert_status(ND_OK, nd_open_input(e->env.dir, name, 0, &in));
    assert_status(ND_OK, nd_input_clone(in, &clone));
    assert_int_equal(unlink(path), 0);
    read_once(e, ring, in, 9);
    read_once(e, ring, clone, 9);
    assert_status(ND_OK, nd_close(in));
    pause_ms(50);
    assert_false(wait_event(ino, IN_DELETE_SELF, 0)); /* the clone still reads it */
    read_once(e, ring, clone, 9);
    assert_status(ND_OK, nd_close(clone));
    assert_true(wait_event(ino, IN_DELETE_SELF, 0));
    assert_true(let_go_within(e->env.dir_path, 1, 0));
    close(ino);
    assert_status(ND_OK, nd_close(ring));
}

/* Two rings hold one file in their tables: closing its input makes both let
 * go before nd_close returns, and closing either ring first, then the input,
 * leaves no descriptor behind either. */
static void test_two_rings_one_file(void **state)
{
    files_env *e = *state;
    char name[16], path[TST_PATH_MAX];
    tst_join(path, sizeof path, e->env.dir_path, fname(name, 11));
    int ino = watch(path, IN_CLOSE_NOWRITE);
    assert_true(ino >= 0);
    /* order 0: the input closes with both rings open; 1 and 2: ring 0 or ring
     * 1 closes first, then the input, then the other ring */
    for (int order = 0; order < 3; order++) {
        nd_handle ring[2], in;
        if (!open_uring(&ring[0]))
            break;
        assert_status(ND_OK, nd_ring_open(DEPTH, 0, &ring[1]));
        assert_int_equal(nd_ring_backend(ring[1]), ND_RING_IO_URING);
        assert_status(ND_OK, nd_open_input(e->env.dir, name, 0, &in));
        for (int k = 0; k < 4; k++)
            read_once(e, ring[k % 2], in, 11);
        int first = order == 0 ? -1 : order - 1;
        if (first >= 0) {
            assert_status(ND_OK, nd_close(ring[first]));
            assert_int_equal(tst_fds_under(e->env.dir_path), 1); /* the input keeps it */
            read_once(e, ring[1 - first], in, 11);
        }
        assert_status(ND_OK, nd_close(in));
        assert_true(wait_event(ino, IN_CLOSE_NOWRITE, 0));
        assert_true(let_go_within(e->env.dir_path, 0, 0));
        for (int k = 0; k < 2; k++)
            if (k != first)
                assert_status(ND_OK, nd_close(ring[k]));
        assert_false(wait_event(ino, IN_CLOSE_NOWRITE, 0)); /* one close per open */
    }
    close(ino);
}

/* Threads of this process, as a bitmap of tids below 1 << 22 (callers only
 * compare two of them). */
static void tids(uint8_t *set, size_t cap)
{
    memset(set, 0, cap);
    DIR *d = opendir("/proc/self/task");
    if (d == NULL)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        long t = atol(de->d_name);
        if (t > 0 && (size_t)t / 8 < cap)
            set[t / 8] |= (uint8_t)(1u << (t % 8));
    }
    closedir(d);
}

/* The voluntary context switches of the threads in `set` (-1: unreadable). */
static long switches(const uint8_t *set, size_t cap)
{
    long sum = 0;
    for (size_t t = 0; t < cap * 8; t++) {
        if (!(set[t / 8] & (1u << (t % 8))))
            continue;
        char p[64], line[256];
        snprintf(p, sizeof p, "/proc/self/task/%zu/status", t);
        FILE *f = fopen(p, "r");
        if (f == NULL)
            return -1;
        long v = -1;
        while (fgets(line, sizeof line, f) != NULL)
            if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1)
                break;
        fclose(f);
        if (v < 0)
            return -1;
        sum += v;
    }
    return sum;
}

/* An idle ring holding a registered file that an input still uses never
 * wakes up: its threads make no context switch in 2.5 s (the ring used to
 * wake after 1 s, then 2, 4... to look for files to let go). */
static void test_idle_ring_sleeps(void **state)
{
    files_env *e = *state;
    enum { CAP = (1 << 22) / 8 };
    static uint8_t before[CAP], after[CAP];
    nd_handle ring, in;
    tids(before, CAP);
    if (!open_uring(&ring))
        return;
    tids(after, CAP);
    int ring_threads = 0;
    for (size_t i = 0; i < CAP; i++) {
        after[i] &= (uint8_t)~before[i];
        for (int b = 0; b < 8; b++)
            ring_threads += (after[i] >> b) & 1;
    }
    assert_true(ring_threads > 0); /* the submitter */
    char name[16];
    assert_status(ND_OK, nd_open_input(e->env.dir, fname(name, 3), 0, &in));
    read_once(e, ring, in, 3);
    assert_int_equal(listed_table(e->env.dir_path).ours, 1);
    pause_ms(100); /* whatever the read's completion left to do */
    long s0 = switches(after, CAP);
    assert_true(s0 >= 0);
    pause_ms(2500);
    long s1 = switches(after, CAP);
    if (s1 != s0)
        fail_msg("the idle ring's threads switched %ld times in 2.5 s", s1 - s0);
    assert_status(ND_OK, nd_close(in));
    assert_true(let_go_within(e->env.dir_path, 1, 0));
    assert_status(ND_OK, nd_close(ring));
}

/* ---- two rings letting go of shared files at once ---- */

#  define SHARED                                                                                   \
    80 /* files both rings read, through clones of one input each: more than a table holds */
#  define ROUNDS 10

typedef struct {
    files_env *e;
    nd_handle ring;
    nd_handle clone[SHARED];
    uint64_t seed;
    pthread_barrier_t *start, *done;
} sharer;

/* One thread of the race: per round, reads random blocks of the shared files
 * through its own ring (so both rings register them, and replace slots all
 * the time: there are more files than slots), closing one clone after each
 * burst in random order. The
 * last clone of a file closed on either thread makes both rings let go while
 * the other ring may be preparing a batch. */
static void *sharer_main(void *arg)
{
    sharer *s = arg;
    files_env *e = s->e;
    uint8_t *buf = NULL;
    if (posix_memalign((void **)&buf, BLOCK, (size_t)DEPTH * BLOCK) != 0)
        return (void *)1;
    intptr_t bad = 0;
    for (int round = 0; round < ROUNDS; round++) {
        pthread_barrier_wait(s->start);
        int closed[SHARED] = {0}, left = SHARED;
        while (left > 0 && bad == 0) {
            int n = 0;
            int file[DEPTH];
            int64_t off[DEPTH];
            for (int tries = 0; tries < DEPTH && bad == 0; tries++) {
                int f = (int)(next_rand(&s->seed) % SHARED);
                if (closed[f])
                    continue;
                file[n] = f;
                off[n] = (int64_t)(next_rand(&s->seed) % (FLEN / BLOCK)) * BLOCK;
                if (nd_ring_submit_read(s->ring, s->clone[f], off[n], buf + n * BLOCK, BLOCK,
                                        (uint64_t)n) != ND_OK)
                    bad = 2;
                else
                    n++;
            }
            for (int got = 0; got < n && bad == 0;) {
                uint64_t tags[DEPTH];
                int64_t res[DEPTH];
                int32_t k = nd_ring_reap(s->ring, tags, res, DEPTH, 5000);
                if (k <= 0)
                    bad = 3;
                for (int32_t j = 0; j < k; j++) {
                    uint64_t t = tags[j], w;
                    memcpy(&w, buf + t * BLOCK, 8);
                    if (res[j] != BLOCK || w != word_at(e->seed[file[t]], (uint64_t)off[t]))
                        bad = 4;
                }
                got += k > 0 ? k : 0;
            }
            int f = (int)(next_rand(&s->seed) % SHARED); /* one clone closed per burst */
            if (!closed[f]) {
                closed[f] = 1;
                left--;
                if (nd_close(s->clone[f]) != ND_OK)
                    bad = 5;
            }
        }
        pthread_barrier_wait(s->done);
    }
    free(buf);
    return (void *)bad;
}

/* Counts inotify's open and close-nowrite events on dir's files (0 if the
 * queue overflowed: the caller then has no count to compare). */
static int count_events(int fd, long *opens, long *closes)
{
    char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
        for (ssize_t k = 0; k < n;) {
            const struct inotify_event *ev = (const struct inotify_event *)(buf + k);
            if (ev->mask & IN_Q_OVERFLOW)
                return 0;
            if (ev->mask & IN_OPEN)
                ++*opens;
            if (ev->mask & IN_CLOSE_NOWRITE)
                ++*closes;
            k += (ssize_t)(sizeof *ev + ev->len);
        }
    }
    return 1;
}

/* Two threads, each with its own ring, read shared files through clones of
 * one input per file and close them in random order, round after round: when
 * a round ends every file is closed (no descriptor left, one close event per
 * open), and every read was right. The threads race the sweeps of both
 * rings against each other's submissions (TSan watches this in tsan_). */
static void test_two_rings_race(void **state)
{
    files_env *e = *state;
    /* static: a failed assertion leaves the test with the threads still
     * waiting on the barriers */
    static sharer s[2];
    static pthread_barrier_t start, done;
    pthread_barrier_init(&start, NULL, 3);
    pthread_barrier_init(&done, NULL, 3);
    for (int k = 0; k < 2; k++) {
        s[k] = (sharer){e, 0, {0}, 11 + (uint64_t)k, &start, &done};
        if (k == 0 ? !open_uring(&s[k].ring) : nd_ring_open(DEPTH, 0, &s[k].ring) != ND_OK) {
            if (k == 1)
                nd_close(s[0].ring);
            return;
        }
    }
    int ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    assert_true(ino >= 0);
    assert_true(inotify_add_watch(ino, e->env.dir_path, IN_OPEN | IN_CLOSE_NOWRITE) >= 0);
    pthread_t th[2];
    for (int k = 0; k < 2; k++)
        assert_int_equal(pthread_create(&th[k], NULL, sharer_main, &s[k]), 0);
    long opens = 0, closes = 0;
    int counted = 1;
    for (int round = 0; round < ROUNDS; round++) {
        char name[16];
        for (int f = 0; f < SHARED; f++) {
            nd_handle in;
            assert_status(ND_OK, nd_open_input(e->env.dir, fname(name, f), 0, &in));
            for (int k = 0; k < 2; k++)
                assert_status(ND_OK, nd_input_clone(in, &s[k].clone[f]));
            assert_status(ND_OK, nd_close(in)); /* the clones hold the file */
        }
        pthread_barrier_wait(&start);
        pthread_barrier_wait(&done);
        assert_int_equal(tst_fds_under(e->env.dir_path), 0);
        counted = counted && count_events(ino, &opens, &closes);
        if (counted && opens != closes)
            fail_msg("round %d: %ld opens, %ld closes (a ring kept a file)", round, opens, closes);
    }
    for (int k = 0; k < 2; k++) {
        void *bad = NULL;
        assert_int_equal(pthread_join(th[k], &bad), 0);
        if (bad != NULL)
            fail_msg("thread %d failed: %ld", k, (long)(intptr_t)bad);
        assert_status(ND_OK, nd_close(s[k].ring));
    }
    assert_true(opens >= ROUNDS * SHARED || !counted);
    close(ino);
    pthread_barrier_destroy(&start);
    pthread_barrier_destroy(&done);
}

#  ifdef ND_FAULT_INJECTION
/* io_uring_register failing (memory, seccomp, an emulator): the table's
 * registration at open, or the first file's, turns registration off for the
 * ring, which reads through plain descriptors and never tries again. */
static void test_register_fails(void **state)
{
    files_env *e = *state;
    for (long nth = 1; nth <= 2; nth++) {
        nd_handle ring, in[NFILES];
        nd__fault_set(ND_FAULT_REGISTER, nth, ENOMEM, ND_FAULT_MODE_FAIL);
        int ok = open_uring(&ring);
        if (!ok) {
            nd__fault_clear();
            return;
        }
        open_all(e, in);
        mixed_reads(e, ring, in, 1000, 5 + (uint64_t)nth, 1);
        assert_int_equal(nd__fault_injected(ND_FAULT_REGISTER), 1);
        /* nothing tried after the failure */
        assert_int_equal(nd__fault_calls(ND_FAULT_REGISTER), nth);
        table_view v = listed_table(e->env.dir_path);
        if (nth == 1) {
            assert_int_equal(v.slots, 0); /* no table */
        } else {
            assert_int_equal(v.slots, 64); /* a table, empty */
            assert_int_equal(v.ours, 0);
        }
        nd__fault_clear();
        close_all(in);
        assert_status(ND_OK, nd_close(ring));
    }
}

/* The submitter sends a burst of reads in calls of 1, 2, 4, ... SQEs (the
 * device starts on the first while the rest go). A burst of 31 therefore
 * takes five io_uring_submit calls; when the nth is refused, the reads of the
 * calls before it complete with their bytes, the refused call's and every
 * later one's fail with its error, each read is reported once, and the ring
 * reads on. The submitter pauses after each burst, so the 31 reads handed to
 * it while it sleeps after the first read's burst make one burst. */
static void test_submit_fails_mid_burst(void **state)
{
    files_env *e = *state;
    nd_handle ring, in[NFILES];
    if (!open_uring(&ring))
        return;
    open_all(e, in);
    uint8_t *bufs = NULL;
    assert_int_equal(posix_memalign((void **)&bufs, BLOCK, (size_t)DEPTH * BLOCK), 0);
    nd__fault_set_submit_pause(50000);
    for (long nth = 0; nth <= 5; nth++) { /* 0: nothing refused, the calls counted */
        pending p[DEPTH] = {{0}};
        uint64_t tags[DEPTH];
        int64_t res[DEPTH];
        for (uint64_t t = 0; t < DEPTH; t++) {
            int f = (int)((t * 7 + (uint64_t)nth) % NFILES);
            p[t] = (pending){f, e->seed[f], (int64_t)((t + (uint64_t)nth) % (FLEN / BLOCK)) * BLOCK,
                             1};
            assert_status(ND_OK,
                          nd_ring_submit_read(ring, in[f], p[t].off, bufs + t * BLOCK, BLOCK, t));
            if (t > 0)
                continue;
            /* the first read alone: once it is back, the submitter sleeps */
            assert_int_equal(nd_ring_reap(ring, tags, res, 1, 5000), 1);
            check_done(p, DEPTH, bufs, tags[0], res[0]);
            nd__fault_clear();
            if (nth > 0)
                nd__fault_set(ND_FAULT_SUBMIT, nth, ENOMEM, ND_FAULT_MODE_FAIL);
        }
        int ok = 0, failed = 0;
        while (ok + failed < DEPTH - 1) {
            int32_t n = nd_ring_reap(ring, tags, res, DEPTH, 5000);
            assert_true(n > 0);
            for (int32_t j = 0; j < n; j++) {
                if (res[j] >= 0) {
                    check_done(p, DEPTH, bufs, tags[j], res[j]);
                    ok++;
                    continue;
                }
                assert_true(tags[j] < DEPTH && p[tags[j]].busy);
                assert_int_equal(res[j], ND_E_NO_MEMORY);
                p[tags[j]].busy = 0;
                failed++;
            }
        }
        assert_int_equal(nd_ring_in_flight(ring), 0);
        if (nth == 0) {
            assert_int_equal(nd__fault_calls(ND_FAULT_SUBMIT), 5); /* 1 + 2 + 4 + 8 + 16 */
            assert_int_equal(failed, 0);
        } else {
            assert_int_equal(nd__fault_injected(ND_FAULT_SUBMIT), 1);
            assert_int_equal(ok, (1 << (nth - 1)) - 1); /* the calls before the nth */
        }
        nd__fault_clear();
    }
    nd__fault_set_submit_pause(0);
    mixed_reads(e, ring, in, 300, 11, 0); /* and it reads on */
    free(bufs);
    close_all(in);
    assert_status(ND_OK, nd_close(ring));
}
#  endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_registered_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replaced_file_closes_with_its_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wide_batches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ring_close_lets_files_go, setup, teardown),
        cmocka_unit_test_setup_teardown(test_opt_out, setup, teardown),
        cmocka_unit_test_setup_teardown(test_close_lets_go_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deleted_file_space_returns, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_rings_one_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idle_ring_sleeps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_rings_race, setup, teardown),
#  ifdef ND_FAULT_INJECTION
        cmocka_unit_test_setup_teardown(test_register_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_submit_fails_mid_burst, setup, teardown),
#  endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* !__linux__ */

int main(void)
{
    tst_loud_skip("registered files of the io_uring ring (test_ring_files)",
                  "io_uring is Linux only; this platform's rings use the thread pool");
    return 0;
}

#endif
