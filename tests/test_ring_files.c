/*
 * test_ring_files.c - the io_uring ring's registered files (posix/ring_uring.c):
 * reads from more files than its table holds, inputs closed with reads in
 * flight and files replaced on disk under the same name, every byte checked;
 * the kernel's own view of the table (/proc/self/fdinfo of the ring) shows
 * that registration is used, that a file no input uses any more is let go
 * (closed), and that a ring whose registration is refused (ND_RING_NO_REGISTER,
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
    assert_int_equal(tst_write_file(tst_join(tmp, sizeof tmp, e->env.dir_path, "new.tmp"), data,
                                    FLEN),
                     0);
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

/* The table as the kernel lists it, retried until it is listed (up to 2 s). */
static table_view listed_table(const char *dir)
{
    table_view v = {-1, 0, 0};
    for (int i = 0; i < 200; i++) {
        v = read_table(dir);
        if (v.slots <= 0 || v.listed)
            return v;
        pause_ms(10);
    }
    return v;
}

/* Descriptors of this process open on a file under dir. */
static int fds_under(const char *dir)
{
    int count = 0;
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        char link[300], target[TST_PATH_MAX];
        snprintf(link, sizeof link, "/proc/self/fd/%s", de->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        /* the files in dir, not dir itself (the test's directory handle) */
        if (strncmp(target, dir, strlen(dir)) == 0 && target[strlen(dir)] == '/')
            count++;
    }
    closedir(d);
    return count;
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
            assert_status(ND_OK, nd_ring_submit_read(ring, in[f], p[t].off, bufs + t * BLOCK,
                                                     BLOCK, t));
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
 * the ring lets it go (within its idle sweep, 1 s) and closes it. */
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
    /* the ring goes idle, sweeps (at once, then after 1, 2, 4... s), and
     * closes what no input uses: the descriptors are gone, and the kernel's
     * table lists none of the files (an empty listing may also be a listing
     * the kernel skipped: the descriptors are what counts) */
    int left = -1, fds = -1;
    for (int i = 0; i < 1000; i++) {
        v = read_table(e->env.dir_path);
        left = v.ours;
        fds = fds_under(e->env.dir_path);
        if (left == 0 && fds == 0)
            break;
        pause_ms(20);
    }
    assert_int_equal(left, 0);
    assert_int_equal(fds, 0);
    /* and registers again when reads come back */
    open_all(e, in);
    mixed_reads(e, ring, in, 500, 2, 1);
    v = listed_table(e->env.dir_path);
    assert_true(v.ours > 0);
    close_all(in);
    assert_status(ND_OK, nd_close(ring));
    assert_int_equal(fds_under(e->env.dir_path), 0);
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
            assert_status(ND_OK, nd_ring_submit_read(ring, in[f], p[t].off, bufs + t * BLOCK,
                                                     BLOCK, t));
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
    assert_int_equal(fds_under(e->env.dir_path), 0);
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
    assert_int_equal(read_table(e->env.dir_path).slots, 0);
    close_all(in);
    assert_status(ND_OK, nd_close(ring));
}

#ifdef ND_FAULT_INJECTION
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
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_registered_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wide_batches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ring_close_lets_files_go, setup, teardown),
        cmocka_unit_test_setup_teardown(test_opt_out, setup, teardown),
#ifdef ND_FAULT_INJECTION
        cmocka_unit_test_setup_teardown(test_register_fails, setup, teardown),
#endif
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
