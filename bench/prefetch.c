/*
 * prefetch.c - reads of an index that is not in memory.
 *
 * ColdPrefetch: 4-16 KiB blocks at random 4 KiB-aligned offsets of a file
 * (512 MiB by default, --prefetch-mib) that is evicted from the page cache
 * before every run (fsync + POSIX_FADV_DONTNEED, and a fresh input, so a
 * fresh mapping), read in batches of 32: without prefetch, and with
 * nd_input_prefetch of the whole batch first, mapped and buffered. The same
 * pairs again with the file cached (the mapping populated at open), where
 * prefetch must cost next to nothing (its back-off). Beside them fio's own
 * random-read rate at queue depth 32 on the same file. Rates in blocks per
 * second. Targets: prefetch >= 3x no prefetch cold, >= 1/1.1 of it warm.
 *
 * PrefetchResident: what a prefetch of a block that is already in memory
 * costs, in nanoseconds a call over a long run of calls (so the back-off's
 * occasional residency look is amortised as it is in a search), mapped and
 * buffered, beside a call that only looks its handle up. Target: < 1000 ns.
 *
 * LargerThanMemory: the same random reads inside a memory cgroup limited to
 * a quarter of the file (the page cache counts against it), so the working
 * set does not fit: mapped (random and default advice), buffered and direct,
 * with and without prefetch. Each run is a child process that joins the
 * cgroup, fills it to its limit with the file's first quarter (untimed: a run
 * starts where a long one would be, every read evicting another), then reads
 * until it has done its count of blocks or used its share of the group's time
 * budget, whichever comes first; the rate is of the reads done. The default
 * advice's read-around makes that row about 20x slower than the others: a
 * fixed count alone made it take minutes. The cgroup is removed at the end of
 * the group and at exit. Where no memory cgroup can be made the group says so
 * loudly and has no rows.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define GROUP "ColdPrefetch"
#define MEM_GROUP "LargerThanMemory"
#define RES_GROUP "PrefetchResident"
/* LargerThanMemory's timed reads, all rows and runs together (the fill of
 * each run's cgroup and the process around it come on top: about 20 s more
 * on the development machine) */
#define MEM_BUDGET_MS 50000.0
#define MEM_BUDGET_QUICK_MS 8000.0
#define MEM_MIN_RUN_MS 250.0
#define BATCH 32
#define MIN_BLOCK 4096
#define MAX_BLOCK 16384
#define FIO_ROW "fio randread 4 KiB QD32 (device limit)"

static struct {
    char name[64];    /* the file, in b->dir: kept between runs */
    char path[4200];
    int dirfd;
    nd_handle nd_dir;
    int64_t size;
    int64_t *offsets; /* one sequence for every row */
    int32_t *lens;
    int reads;        /* per cold run */
    int warm_reads;   /* per warm run */
    int mem_reads;    /* per LargerThanMemory run, at most */
    double mem_run_ms; /* per LargerThanMemory run, at most (its timed reads) */
    int res_calls;    /* prefetch calls per PrefetchResident run */
    char cgroup[512]; /* the memory cgroup's directory, "" when none */
    char limit_file[64];
    char fio_engine[16];
} P;

static void check_block(const uint8_t *p, int64_t off, int32_t len, const char *who)
{
    uint64_t a, z;
    memcpy(&a, p, 8);
    memcpy(&z, p + len - 8, 8);
    if (a != pattern_word(off) || z != pattern_word(off + len - 8))
        die("%s: %s read wrong bytes at offset %lld", GROUP, who, (long long)off);
}

static int file_is_ready(void)
{
    int fd = openat(P.dirfd, P.name, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    int ok = fstat(fd, &st) == 0 && st.st_size == P.size;
    for (int i = 0; ok && i < 16; i++) {
        int64_t off = (int64_t)(pattern_word(i) % (uint64_t)(P.size / 8)) * 8;
        uint64_t v;
        ok = pread(fd, &v, 8, off) == 8 && v == pattern_word(off);
    }
    close(fd);
    return ok;
}

/* Written with O_DIRECT where the file system takes it, so that making the
 * file does not fill the page cache. */
static void make_file(void)
{
    if (file_is_ready())
        return;
    fprintf(stderr, "nd_bench: %s: writing %s (%lld MiB, kept for later runs)\n", GROUP, P.path,
            (long long)(P.size >> 20));
    int fd = openat(P.dirfd, P.name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_DIRECT, 0644);
    if (fd < 0 && errno == EINVAL)
        fd = openat(P.dirfd, P.name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        die("create %s: %s", P.path, strerror(errno));
    write_pattern_file(fd, P.path, P.size);
    if (!file_is_ready())
        die("%s: %s does not read back as written", GROUP, P.path);
}

/* Reads `count` blocks of the sequence in batches of BATCH, each batch
 * prefetched first when asked, and stops after the batch that reaches
 * `deadline` (now_ms() time; 0: none). Returns the blocks read. */
static int read_batches(nd_handle in, int count, int prefetch, uint8_t *buf, const char *who,
                        double deadline)
{
    int at = 0;
    for (; at < count && (deadline <= 0 || at == 0 || now_ms() < deadline); at += BATCH) {
        int n = count - at < BATCH ? count - at : BATCH;
        if (prefetch)
            for (int j = at; j < at + n; j++)
                nd_check(nd_input_prefetch(in, P.offsets[j], P.lens[j]), "nd_input_prefetch");
        for (int j = at; j < at + n; j++) {
            nd_check(nd_read_bytes(in, P.offsets[j], buf, P.lens[j]), "nd_read_bytes");
            check_block(buf, P.offsets[j], P.lens[j], who);
        }
    }
    return at < count ? at : count;
}

static void warm_file(void)
{
    int fd = openat(P.dirfd, P.name, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        die("open %s: %s", P.path, strerror(errno));
    uint8_t *buf = aligned_or_die(4096, 1 << 20);
    for (int64_t off = 0; off < P.size; off += 1 << 20)
        if (pread(fd, buf, 1 << 20, off) < 0)
            die("read %s: %s", P.path, strerror(errno));
    free(buf);
    close(fd);
}

typedef struct {
    uint32_t flags;
    int prefetch;
    int cold;     /* evicted before the run; else cached, the mapping populated */
    int memcg;    /* run in a child inside the memory cgroup */
    const char *who;
    uint8_t *buf;
} pf_ctx;

/* `budget_ms` 0: all `count` reads */
static double timed_reads(pf_ctx *c, int count, double budget_ms, run_out *out)
{
    nd_handle in;
    uint32_t flags = c->flags | (!c->cold && (c->flags & ND_IO_MMAP) ? ND_IO_PRELOAD : 0);
    nd_check(nd_open_input(P.nd_dir, P.name, flags, &in), "nd_open_input");
    double c0 = cpu_ms(), t0 = now_ms();
    int done = read_batches(in, count, c->prefetch, c->buf, c->who, budget_ms > 0 ? t0 + budget_ms : 0);
    double ms = now_ms() - t0;
    out->cpu = cpu_ms() - c0;
    out->ops = done;
    nd_check(nd_close(in), "nd_close");
    return ms;
}

static double run_pf_row(bench *b, void *vctx, run_out *out)
{
    pf_ctx *c = vctx;
    if (c->cold)
        evict(P.dirfd, P.name);
    else
        warm_file();
    double ms = timed_reads(c, c->cold ? P.reads : P.warm_reads, 0, out);
    out->cached = cached_percent(P.dirfd, P.name);
    return ms;
}

static double run_fio_row(bench *b, void *vctx, run_out *out)
{
    fio_result res = {0};
    evict(P.dirfd, P.name);
    if (bench_fio_randread(P.path, P.reads * 4, P.fio_engine, sizeof(P.fio_engine), &res) != 0)
        die("%s: fio failed on %s", GROUP, P.path);
    out->ops = res.total_ios;
    out->cpu = res.cpu_ms;
    out->cached = cached_percent(P.dirfd, P.name);
    return res.total_ios * 1e3 / res.iops; /* so the row's rate is fio's own */
}

/* ---- the memory cgroup ---- */

static void cgroup_remove(void)
{
    if (P.cgroup[0] == '\0')
        return;
    /* its tasks are gone (each run's child is waited for); the page cache
     * charged to it moves to the parent as the directory goes */
    for (int i = 0; i < 50 && rmdir(P.cgroup) != 0 && errno == EBUSY; i++) {
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
    }
    if (access(P.cgroup, F_OK) == 0)
        fprintf(stderr, "nd_bench: %s: WARNING: could not remove cgroup %s: %s\n", MEM_GROUP,
                P.cgroup, strerror(errno));
    P.cgroup[0] = '\0';
}

static int write_text(const char *dir, const char *file, const char *text)
{
    char path[700];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    int e = errno;
    close(fd);
    errno = e;
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* Makes the cgroup limited to `limit` bytes; 0, or -1 with the reason printed. */
static int cgroup_make(int64_t limit)
{
    static const struct {
        const char *root, *limit_file, *what;
    } kinds[] = {
        {"/sys/fs/cgroup/memory", "memory.limit_in_bytes", "cgroup v1"},
        {"/sys/fs/cgroup", "memory.max", "cgroup v2"},
    };
    char why[600] = "no memory controller mounted at /sys/fs/cgroup/memory or /sys/fs/cgroup";
    for (size_t k = 0; k < 2; k++) {
        char probe[256];
        snprintf(probe, sizeof(probe), "%s/cgroup.procs", kinds[k].root);
        if (access(probe, F_OK) != 0)
            continue;
        snprintf(P.cgroup, sizeof(P.cgroup), "%s/nd-bench-%d", kinds[k].root, (int)getpid());
        if (mkdir(P.cgroup, 0755) != 0) {
            snprintf(why, sizeof(why), "%s: mkdir %s: %s", kinds[k].what, P.cgroup, strerror(errno));
            P.cgroup[0] = '\0';
            continue;
        }
        char text[32];
        snprintf(text, sizeof(text), "%lld", (long long)limit);
        if (write_text(P.cgroup, kinds[k].limit_file, text) == 0) {
            snprintf(P.limit_file, sizeof(P.limit_file), "%s", kinds[k].limit_file);
            return 0;
        }
        /* cgroup v2 without the memory controller enabled for children */
        snprintf(why, sizeof(why), "%s: cannot set %s/%s: %s", kinds[k].what, P.cgroup,
                 kinds[k].limit_file, strerror(errno));
        cgroup_remove();
    }
    fprintf(stderr, "\nnd_bench: %s: SKIPPED, NO RESULTS: cannot make a memory cgroup (%s). "
                    "Run as root on a machine with the memory controller.\n\n", MEM_GROUP, why);
    return -1;
}

/* In the child, once it is in the cgroup: reads the file's first quarter (the
 * cgroup's limit) so that the page cache charged to it is full before the
 * timed reads start. 0, or -1 with the reason printed. */
static int fill_cgroup(void)
{
    int fd = openat(P.dirfd, P.name, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "nd_bench: %s: open %s: %s\n", MEM_GROUP, P.path, strerror(errno));
        return -1;
    }
    enum { CHUNK = 1 << 20 };
    uint8_t *buf = aligned_or_die(4096, CHUNK);
    int rc = 0;
    for (int64_t off = 0; rc == 0 && off < P.size / 4; off += CHUNK)
        if (pread(fd, buf, CHUNK, off) <= 0) {
            fprintf(stderr, "nd_bench: %s: read %s: %s\n", MEM_GROUP, P.path, strerror(errno));
            rc = -1;
        }
    free(buf);
    close(fd);
    return rc;
}

static double run_memcg_row(bench *b, void *vctx, run_out *out)
{
    pf_ctx *c = vctx;
    evict(P.dirfd, P.name);
    int fds[2];
    if (pipe(fds) != 0)
        die("pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        die("fork: %s", strerror(errno));
    if (pid == 0) {
        close(fds[0]);
        char me[32];
        snprintf(me, sizeof(me), "%d", (int)getpid());
        double res[3] = {-1, 0, 0};
        if (write_text(P.cgroup, "cgroup.procs", me) == 0 && fill_cgroup() == 0) {
            run_out o = {0};
            res[0] = timed_reads(c, P.mem_reads, P.mem_run_ms, &o);
            res[1] = o.cpu;
            res[2] = o.ops;
        }
        ssize_t n = write(fds[1], res, sizeof(res));
        _exit(n == (ssize_t)sizeof(res) && res[0] >= 0 ? 0 : 1);
    }
    close(fds[1]);
    double res[3] = {-1, 0, 0};
    ssize_t n = read(fds[0], res, sizeof(res));
    close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (n != (ssize_t)sizeof(res) || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || res[0] < 0)
        die("%s: %s: the child in cgroup %s failed (status 0x%x)", MEM_GROUP, c->who, P.cgroup,
            status);
    out->cpu = res[1];
    out->ops = res[2];
    out->cached = cached_percent(P.dirfd, P.name);
    return res[0];
}

/* ---- rows ---- */

static void free_ctx(void *vctx)
{
    free(((pf_ctx *)vctx)->buf);
}

static row *queue(const char *group, const char *name, const char *baseline, pf_ctx c,
                  run_fn fn, const char *note)
{
    c.buf = aligned_or_die(4096, MAX_BLOCK);
    row *r = bench_row(group, name, baseline);
    r->unit = "IOPS";
    c.who = r->name;
    snprintf(r->note, sizeof(r->note), "%s", note);
    if (fn == run_pf_row && c.cold && P.fio_engine[0] != '\0')
        snprintf(r->also, sizeof(r->also), "%s", FIO_ROW);
    bench_queue(r, fn, &c, sizeof(c), free_ctx);
    return r;
}

static const char *const cold_rows[][2] = {
    {"mapped, no prefetch (cold)", "mapped, prefetch each batch (cold)"},
    {"buffered, no prefetch (cold)", "buffered, prefetch each batch (cold)"},
};
static const char *const warm_rows[][2] = {
    {"mapped, no prefetch (warm)", "mapped, prefetch each batch (warm)"},
    {"buffered, no prefetch (warm)", "buffered, prefetch each batch (warm)"},
};

static void cold_prefetch_group(bench *b)
{
    char note[240];
    long long mib = (long long)(P.size >> 20);
    fio_result probe = {0};
    /* one short fio run decides whether the device limit can be had at all */
    if (bench_fio_randread(P.path, 64, P.fio_engine, sizeof(P.fio_engine), &probe) == 0) {
        snprintf(note, sizeof(note), "fio --rw=randread --bs=4k --direct=1 --iodepth=32 "
                 "--ioengine=%s, %d reads of the same file", P.fio_engine, P.reads * 4);
        queue(GROUP, FIO_ROW, cold_rows[0][0], (pf_ctx){0}, run_fio_row, note);
    } else {
        P.fio_engine[0] = '\0';
        fprintf(stderr, "\nnd_bench: %s: WARNING: fio is missing or failed (scripts/deps.sh "
                        "installs it): the device's QD32 rate is MISSING from the group\n\n", GROUP);
    }
    for (int s = 0; s < 2; s++) {
        uint32_t flags = ND_IO_RANDOM | (s == 0 ? ND_IO_MMAP : 0);
        snprintf(note, sizeof(note), "%d reads of 4-16 KiB in batches of %d, %lld MiB file evicted "
                 "before each run, a fresh input each run", P.reads, BATCH, mib);
        queue(GROUP, cold_rows[s][0], s == 0 ? NULL : cold_rows[0][0],
              (pf_ctx){flags, 0, 1, 0, NULL, NULL}, run_pf_row, note);
        queue(GROUP, cold_rows[s][1], cold_rows[s][0], (pf_ctx){flags, 1, 1, 0, NULL, NULL},
              run_pf_row, note);
        snprintf(note, sizeof(note), "%d reads of 4-16 KiB in batches of %d, %lld MiB file cached%s",
                 P.warm_reads, BATCH, mib, s == 0 ? ", mapping populated at open" : "");
        queue(GROUP, warm_rows[s][0], NULL, (pf_ctx){flags, 0, 0, 0, NULL, NULL},
              run_pf_row, note);
        queue(GROUP, warm_rows[s][1], warm_rows[s][0], (pf_ctx){flags, 1, 0, 0, NULL, NULL},
              run_pf_row, note);
    }
    fprintf(stderr, "nd_bench: %s: %lld MiB file %s, %d cold and %d warm reads per run\n", GROUP,
            mib, P.path, P.reads, P.warm_reads);
    bench_run_queued(b);
}

/* ---- PrefetchResident ---- */

typedef struct {
    uint32_t flags;
    int prefetch; /* else the floor: nd_input_length, a call that only looks its handle up */
} res_ctx;

static const char *const res_rows[] = {
    "nd_input_length (any call's floor: a handle look-up)",
    "mapped, prefetch of a resident block",
    "buffered, prefetch of a resident block",
};

static double run_res_row(bench *b, void *vctx, run_out *out)
{
    res_ctx *c = vctx;
    warm_file();
    nd_handle in;
    uint32_t flags = c->flags | (c->flags & ND_IO_MMAP ? ND_IO_PRELOAD : 0);
    nd_check(nd_open_input(P.nd_dir, P.name, flags, &in), "nd_open_input");
    int n = P.warm_reads; /* the blocks of the sequence, all resident */
    int64_t len = 0;
    double c0 = cpu_ms(), t0 = now_ms();
    if (c->prefetch) {
        for (int i = 0, j = 0; i < P.res_calls; i++, j = j + 1 < n ? j + 1 : 0) {
            int32_t rc = nd_input_prefetch(in, P.offsets[j], P.lens[j]);
            if (__builtin_expect(rc != ND_OK, 0))
                nd_check(rc, "nd_input_prefetch");
        }
    } else {
        for (int i = 0; i < P.res_calls; i++) {
            int32_t rc = nd_input_length(in, &len);
            if (__builtin_expect(rc != ND_OK, 0))
                nd_check(rc, "nd_input_length");
            if (__builtin_expect(len != P.size, 0))
                die("%s: nd_input_length says %lld, not %lld", RES_GROUP, (long long)len,
                    (long long)P.size);
        }
    }
    double ms = now_ms() - t0;
    out->cpu = cpu_ms() - c0;
    out->ops = P.res_calls;
    nd_check(nd_close(in), "nd_close");
    /* a row is only what it says if the blocks stayed resident */
    out->cached = cached_percent(P.dirfd, P.name);
    return ms;
}

static void resident_group(bench *b)
{
    static const res_ctx ctx[] = {
        {ND_IO_MMAP | ND_IO_RANDOM, 0},
        {ND_IO_MMAP | ND_IO_RANDOM, 1},
        {ND_IO_RANDOM, 1},
    };
    for (int i = 0; i < 3; i++) {
        row *r = bench_row(RES_GROUP, res_rows[i], i == 0 ? NULL : res_rows[0]);
        r->unit = "ns/call";
        r->per_op_ns = 1;
        snprintf(r->note, sizeof(r->note), "%d calls a run over the %d blocks of 4-16 KiB of the "
                 "warm rows, %lld MiB file cached (mapped: populated at open)", P.res_calls,
                 P.warm_reads, (long long)(P.size >> 20));
        bench_queue(r, run_res_row, &ctx[i], sizeof(ctx[i]), NULL);
    }
    bench_run_queued(b);
}

static void memcg_group(bench *b)
{
    int64_t limit = P.size / 4;
    if (cgroup_make(limit) != 0)
        return;
    static const struct {
        const char *name;
        uint32_t flags;
        int prefetch;
    } rows[] = {
        {"buffered (ND_IO_RANDOM)", ND_IO_RANDOM, 0},
        {"buffered (ND_IO_RANDOM), prefetch each batch", ND_IO_RANDOM, 1},
        {"mapped (ND_IO_RANDOM)", ND_IO_MMAP | ND_IO_RANDOM, 0},
        {"mapped (ND_IO_RANDOM), prefetch each batch", ND_IO_MMAP | ND_IO_RANDOM, 1},
        {"mapped (default advice)", ND_IO_MMAP, 0},
        {"direct (ND_IO_MERGE)", ND_IO_MERGE | ND_IO_REQUIRE_DIRECT | ND_IO_RANDOM, 0},
    };
    nd_handle probe;
    int direct = nd_open_input(P.nd_dir, P.name, rows[5].flags, &probe) == ND_OK;
    if (direct)
        nd_close(probe);
    /* the group's budget shared by every run of every row, warm-up included */
    int nrows = direct ? 6 : 5;
    P.mem_run_ms = (b->quick ? MEM_BUDGET_QUICK_MS : MEM_BUDGET_MS) / (nrows * (b->runs + 1));
    if (P.mem_run_ms < MEM_MIN_RUN_MS)
        P.mem_run_ms = MEM_MIN_RUN_MS;
    char note[240];
    snprintf(note, sizeof(note), "up to %d reads of 4-16 KiB in batches of %d or %.0f ms a run, "
             "%lld MiB file evicted, a memory cgroup of %lld MiB (%s) filled with its first quarter",
             P.mem_reads, BATCH, P.mem_run_ms, (long long)(P.size >> 20), (long long)(limit >> 20),
             P.limit_file);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        if (i == 5 && !direct) {
            fprintf(stderr, "nd_bench: %s: no direct row: %s refuses O_DIRECT\n", MEM_GROUP, P.path);
            continue;
        }
        queue(MEM_GROUP, rows[i].name, i == 0 ? NULL : rows[0].name,
              (pf_ctx){rows[i].flags, rows[i].prefetch, 1, 1, NULL, NULL}, run_memcg_row, note);
    }
    fprintf(stderr, "nd_bench: %s: cgroup %s limited to %lld MiB, up to %d reads or %.0f ms per "
            "run\n", MEM_GROUP, P.cgroup, (long long)(limit >> 20), P.mem_reads, P.mem_run_ms);
    bench_run_queued(b);
    cgroup_remove();
}

void bench_prefetch(bench *b)
{
    P.size = b->prefetch_size;
    P.reads = b->prefetch_reads;
    P.warm_reads = P.reads * 16;
    P.res_calls = b->quick ? 1 << 16 : 1 << 21;
    /* enough blocks to touch about twice the cgroup's quarter of the file */
    int64_t mem = P.size / 2 / ((MIN_BLOCK + MAX_BLOCK) / 2);
    P.mem_reads = (int)(mem < P.reads ? P.reads : mem > 4 * P.reads ? 4 * P.reads : mem);
    int n = P.warm_reads > P.mem_reads ? P.warm_reads : P.mem_reads;
    /* the cold runs must not find their blocks cached by a neighbour in the same
     * run: the file is at least 4x what a cold run touches */
    if ((int64_t)P.reads * MAX_BLOCK * 4 > P.size)
        die("%s: --prefetch-reads %d of up to 16 KiB need a file of at least %lld MiB", GROUP,
            P.reads, (long long)((int64_t)P.reads * MAX_BLOCK * 4 >> 20) + 1);
    snprintf(P.name, sizeof(P.name), "nd-prefetch-%lldm.dat", (long long)(P.size >> 20));
    snprintf(P.path, sizeof(P.path), "%s/%s", b->dir, P.name);
    P.dirfd = open(b->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (P.dirfd < 0)
        die("open %s: %s", b->dir, strerror(errno));
    if (strcmp(fs_type_name(P.dirfd), "tmpfs") == 0) {
        fprintf(stderr, "\nnd_bench: %s: ERROR: %s is on tmpfs: nothing is ever evicted to a "
                        "device; the group has NO RESULTS here. Use --dir on a real disk.\n\n",
                GROUP, b->dir);
        close(P.dirfd);
        return;
    }
    make_file();
    nd_check(nd_open_dir(b->dir, 0, &P.nd_dir), "nd_open_dir");
    P.offsets = malloc((size_t)n * sizeof(int64_t));
    P.lens = malloc((size_t)n * sizeof(int32_t));
    if (P.offsets == NULL || P.lens == NULL)
        die("out of memory");
    uint64_t s = 0x853C49E6748FEA9Bull;
    uint64_t pages = (uint64_t)(P.size - MAX_BLOCK) / 4096;
    for (int i = 0; i < n; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        P.offsets[i] = (int64_t)(s % pages) * 4096;
        P.lens[i] = (int32_t)(MIN_BLOCK * (1 + (s >> 40) % 4)); /* 4, 8, 12 or 16 KiB */
    }
    atexit(cgroup_remove); /* a die() inside the group must not leave the cgroup behind */
    cold_prefetch_group(b);
    resident_group(b);
    memcg_group(b);
    free(P.offsets);
    free(P.lens);
    nd_check(nd_close(P.nd_dir), "nd_close(dir)");
    close(P.dirfd);
}

void bench_prefetch_targets(void)
{
    for (int s = 0; s < 2; s++) {
        row *r = bench_find(GROUP, cold_rows[s][1]);
        if (r != NULL) {
            snprintf(r->target, sizeof(r->target), ">= 3x no prefetch");
            r->met = bench_judged_ratio(r) >= 3.0;
        }
        r = bench_find(GROUP, warm_rows[s][1]);
        if (r != NULL) {
            /* rates: within 1.1x of the time is at least 1/1.1 of the rate */
            snprintf(r->target, sizeof(r->target), ">= 0.91 (time <= 1.1x)");
            r->met = bench_judged_ratio(r) >= 1.0 / 1.1;
        }
    }
    for (int i = 1; i < 3; i++) {
        row *r = bench_find(RES_GROUP, res_rows[i]);
        if (r != NULL) {
            snprintf(r->target, sizeof(r->target), "< 1000 ns a call");
            r->met = r->n > 0 && r->median < 1000.0;
        }
    }
}
