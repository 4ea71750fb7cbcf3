/*
 * prefetch.c - reads of an index that is not in memory.
 *
 * ColdPrefetch: 4-16 KiB blocks at random 4 KiB-aligned offsets of a file
 * (512 MiB by default, --prefetch-mib) that is evicted from the page cache
 * before every run (fsync + POSIX_FADV_DONTNEED, and a fresh input, so a
 * fresh mapping), read in batches of 32: without prefetch, and with
 * nd_input_prefetch of the whole batch first, mapped and buffered. The same
 * pairs again with the file cached (the mapping populated at open), where
 * prefetch must cost next to nothing (its back-off); a warm pair is measured
 * in one run, its batches alternating, so that the cache's drift between
 * runs does not decide which row wins (run_warm_pair). Beside them fio's own
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
 * with and without prefetch; then at a tenth of the file, where the cache
 * holds less of what is read again, the bare pread loop and the buffered row
 * judged against it (each row's name says its level). Each run is a child
 * process that joins the cgroup, fills it to its limit with the file's start
 * (untimed: a run starts where a long one would be, every read evicting
 * another), then reads until it has done its count of blocks or used its
 * share of the time budget, whichever comes first; the rate is of the reads
 * done. Each target's two sides (fio and the prefetch row, the bare pread
 * loop and the buffered row) run back to back (run_memcg_pair). The default
 * advice's read-around makes that row about 20x slower than the others: a
 * fixed count alone made it take minutes. The cgroup is removed at the end of
 * each level and at exit. Where no memory cgroup can be made the group says
 * so loudly and has no rows.
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
#include "memlimit.h"

#define GROUP "ColdPrefetch"
#define MEM_GROUP "LargerThanMemory"
#define RES_GROUP "PrefetchResident"
/* LargerThanMemory's timed reads, all rows and runs together (the fill of
 * each run's cgroup and the process around it come on top: about 10 s more
 * on the development machine) */
#define MEM_BUDGET_MS 30000.0
#define MEM_BUDGET_QUICK_MS 8000.0
#define MEM_MIN_RUN_MS 250.0
#define BATCH 32
#define MIN_BLOCK 4096
#define MAX_BLOCK 16384
#define FIO_ROW "fio randread 4 KiB QD32 (device limit)"

static struct {
    char name[64]; /* the file, in b->dir: kept between runs */
    char path[4200];
    int dirfd;
    nd_handle nd_dir;
    int64_t size;
    int64_t *offsets; /* one sequence for every row */
    int32_t *lens;
    int reads;         /* per cold run */
    int warm_reads;    /* per warm run */
    int mem_reads;     /* per LargerThanMemory run, at most */
    double mem_run_ms; /* per LargerThanMemory run, at most (its timed reads) */
    int64_t cache;     /* the page cache LargerThanMemory's level allows, in bytes */
    int res_calls;     /* prefetch calls per PrefetchResident run */
    ndml_cgroup cg;    /* LargerThanMemory's memory cgroup (memlimit.c) */
    pid_t owner;       /* the process that made it (a child's exit must not remove it) */
    int64_t fio_own;   /* the memory fio itself holds, added to the limit of its runs */
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

/* Reads blocks [at, at + n) of the sequence, prefetched first when asked. */
static void read_batch(nd_handle in, int at, int n, int prefetch, uint8_t *buf, const char *who)
{
    if (prefetch)
        for (int j = at; j < at + n; j++)
            nd_check(nd_input_prefetch(in, P.offsets[j], P.lens[j]), "nd_input_prefetch");
    for (int j = at; j < at + n; j++) {
        nd_check(nd_read_bytes(in, P.offsets[j], buf, P.lens[j]), "nd_read_bytes");
        check_block(buf, P.offsets[j], P.lens[j], who);
    }
}

/* Reads `count` blocks of the sequence in batches of BATCH, each batch
 * prefetched first when asked, and stops after the batch that reaches
 * `deadline` (now_ms() time; 0: none). Returns the blocks read. */
static int read_batches(nd_handle in, int count, int prefetch, uint8_t *buf, const char *who,
                        double deadline)
{
    int at = 0;
    for (; at < count && (deadline <= 0 || at == 0 || now_ms() < deadline); at += BATCH)
        read_batch(in, at, count - at < BATCH ? count - at : BATCH, prefetch, buf, who);
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

/* nativedir's reads, a bare pread loop, fio, and the probe of fio's own memory */
enum { PF_ND, PF_RAW, PF_FIO, PF_PROBE };

/* Two rows measured together (a warm pair; LargerThanMemory's fio and best
 * rows): the last measurement, [0] the row without prefetch (or fio), [1] the
 * one with. */
typedef struct {
    int fresh; /* measured this round; the other row has yet to take its half */
    int flip;  /* LargerThanMemory: which row ran first in the last measurement */
    double ms[2], cpu[2], ops[2], cached[2];
    /* LargerThanMemory: each row's reads */
    uint32_t flags[2];
    int prefetch[2];
    int kind[2];
    const char *who[2];
} pf_pair;

typedef struct {
    uint32_t flags;
    int prefetch;
    int cold; /* evicted before the run; else cached, the mapping populated */
    int kind; /* PF_ND, PF_RAW or PF_FIO (LargerThanMemory's baselines) */
    const char *who;
    uint8_t *buf;
    pf_pair *pair; /* the shared measurement of a row measured with another */
    int slot;      /* which of its pair's two rows this is (0 or 1) */
} pf_ctx;

/* `budget_ms` 0: all `count` reads */
static double timed_reads(pf_ctx *c, int count, double budget_ms, run_out *out)
{
    nd_handle in;
    uint32_t flags = c->flags | (!c->cold && (c->flags & ND_IO_MMAP) ? ND_IO_PRELOAD : 0);
    nd_check(nd_open_input(P.nd_dir, P.name, flags, &in), "nd_open_input");
    double c0 = cpu_ms(), t0 = now_ms();
    int done =
        read_batches(in, count, c->prefetch, c->buf, c->who, budget_ms > 0 ? t0 + budget_ms : 0);
    double ms = now_ms() - t0;
    out->cpu = cpu_ms() - c0;
    out->ops = done;
    nd_check(nd_close(in), "nd_close");
    return ms;
}

static double run_pf_row(bench *b, void *vctx, run_out *out)
{
    pf_ctx *c = vctx;
    evict(P.dirfd, P.name);
    double ms = timed_reads(c, P.reads, 0, out);
    out->cached = cached_percent(P.dirfd, P.name);
    return ms;
}

/* The two warm rows of a strategy are measured in one run, batch by batch
 * in ABBA order (0 1 1 0 0 1 1 0 ...: each first as often as second), each
 * half of the reads, on one input. A prefetch of resident blocks costs 1-2%;
 * the cache's own drift is larger (the first pass of reads after the file is
 * reloaded from the device is about 15% faster than the later ones, and
 * re-reading a cached file slows the mapped reads after it by about 10%), so
 * two rows run one after the other measured mostly which of them ran first. */
static void measure_warm_pair(pf_ctx *c)
{
    pf_pair *p = c->pair;
    if (cached_percent(P.dirfd, P.name) < 100.0)
        warm_file();
    memset(p->ms, 0, sizeof(p->ms));
    memset(p->cpu, 0, sizeof(p->cpu));
    memset(p->ops, 0, sizeof(p->ops));
    nd_handle in;
    uint32_t flags = c->flags | ((c->flags & ND_IO_MMAP) ? ND_IO_PRELOAD : 0);
    nd_check(nd_open_input(P.nd_dir, P.name, flags, &in), "nd_open_input");
    for (int at = 0, batch = 0; at < P.warm_reads; at += BATCH, batch++) {
        int v = (batch ^ (batch >> 1)) & 1; /* 1: this batch is prefetched */
        int n = P.warm_reads - at < BATCH ? P.warm_reads - at : BATCH;
        double c0 = cpu_ms(), t0 = now_ms();
        read_batch(in, at, n, v, c->buf, c->who);
        p->ms[v] += now_ms() - t0;
        p->cpu[v] += cpu_ms() - c0;
        p->ops[v] += n;
    }
    nd_check(nd_close(in), "nd_close");
    p->cached[0] = p->cached[1] = cached_percent(P.dirfd, P.name);
}

/* A row's half of its pair's last measurement. */
static double take_half(const pf_pair *p, int slot, run_out *out)
{
    out->cpu = p->cpu[slot];
    out->ops = p->ops[slot];
    out->cached = p->cached[slot];
    return p->ms[slot];
}

/* Whichever row of the pair runs first in a round measures both; the other
 * takes its half of that measurement (every round runs each row once). */
static double run_warm_pair(bench *b, void *vctx, run_out *out)
{
    pf_ctx *c = vctx;
    pf_pair *p = c->pair;
    if (!p->fresh)
        measure_warm_pair(c);
    p->fresh = !p->fresh;
    return take_half(p, c->slot, out);
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

/* ---- the memory cgroup (memlimit.c: the code nd_memlimit runs for every other suite) ---- */

static void cgroup_remove(void)
{
    if (P.cg.dir[0] == '\0' || getpid() != P.owner)
        return;
    /* its tasks are gone (each run's child is waited for); the page cache
     * charged to it moves to the parent as the directory goes */
    if (ndml_remove(&P.cg) != 0)
        fprintf(stderr, "nd_bench: %s: WARNING: %s\n", MEM_GROUP, P.cg.error);
}

/* Makes the cgroup limited to `limit` bytes; 0, or -1 with the reason printed. */
static int cgroup_make(int64_t limit)
{
    if (ndml_create(&P.cg, "nd-bench") == 0 && ndml_set_limit(&P.cg, limit) == 0) {
        P.owner = getpid();
        return 0;
    }
    fprintf(stderr,
            "\nnd_bench: %s: SKIPPED, NO RESULTS: %s. Run as root on a machine with the "
            "memory controller.\n\n",
            MEM_GROUP, P.cg.error);
    if (P.cg.made) {
        P.owner = getpid();
        cgroup_remove();
    }
    return -1;
}

/* In the child, once it is in the cgroup: reads as much of the file's start
 * as the level allows (the cgroup's limit), so that the page cache charged to
 * it is full before the timed reads start. 0, or -1 with the reason printed. */
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
    for (int64_t off = 0; rc == 0 && off < P.cache; off += CHUNK)
        if (pread(fd, buf, CHUNK, off) <= 0) {
            fprintf(stderr, "nd_bench: %s: read %s: %s\n", MEM_GROUP, P.path, strerror(errno));
            rc = -1;
        }
    free(buf);
    close(fd);
    return rc;
}

/* In a run's child: joins the cgroup and limits it to the page-cache budget
 * (the level's share of the file) plus the memory the child holds besides
 * page cache (next to nothing: cgroups charge a process's pages to the cgroup
 * that was its own when they were touched, and the fork's are nd_bench's) plus
 * `extra` (the memory fio will hold), so that every row gets the same page
 * cache whatever its own size; `extra` -1: no limit (the probe of fio). */
static int join_cgroup(int64_t extra)
{
    ndml_stat st;
    if (ndml_join(&P.cg, 0) != 0 || ndml_read_stat(&P.cg, &st) != 0)
        return -1;
    int64_t own = st.usage - (st.file > 0 ? st.file : 0);
    return ndml_set_limit(&P.cg, extra < 0 ? -1 : P.cache + (own > 0 ? own : 0) + extra);
}

/* The baseline: what a program without nativedir does, one pread(2) per
 * block on a descriptor with the OS's default advice, in the same batches,
 * deadline and checks as read_batches. */
static double raw_reads(pf_ctx *c, int count, double budget_ms, run_out *out)
{
    int fd = openat(P.dirfd, P.name, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        die("open %s: %s", P.path, strerror(errno));
    double c0 = cpu_ms(), t0 = now_ms(), deadline = t0 + budget_ms;
    int at = 0;
    for (; at < count && (at == 0 || now_ms() < deadline); at += BATCH)
        for (int j = at; j < at + BATCH && j < count; j++) {
            if (pread(fd, c->buf, (size_t)P.lens[j], P.offsets[j]) != P.lens[j])
                die("%s: pread %s: %s", MEM_GROUP, P.path, strerror(errno));
            check_block(c->buf, P.offsets[j], P.lens[j], c->who);
        }
    double ms = now_ms() - t0;
    out->cpu = cpu_ms() - c0;
    out->ops = at < count ? at : count;
    close(fd);
    return ms;
}

/* fio on the same file, through the page cache of the same cgroup: blocks of
 * 4, 8, 12 or 16 KiB (equal shares) at random 4 KiB-aligned offsets, 32 in
 * flight, the run's share of the budget; --invalidate=0 keeps the fill, and
 * fio's default fadvise_hint gives the file POSIX_FADV_RANDOM, as
 * ND_IO_RANDOM does. What the page cache and the device give a program
 * that keeps 32 reads in flight: the limit for the prefetching row. */
static double fio_reads(run_out *out, int probe)
{
    char a_file[4300], a_engine[64], a_ios[64], a_time[64];
    snprintf(a_file, sizeof(a_file), "--filename=%s", P.path);
    snprintf(a_engine, sizeof(a_engine), "--ioengine=%s", P.fio_engine);
    snprintf(a_ios, sizeof(a_ios), "--number_ios=%d", P.mem_reads);
    snprintf(a_time, sizeof(a_time), "--runtime=%.0fms", P.mem_run_ms);
    const char *job[] = {"--name=nd-ltm-limit",
                         a_file,
                         "--readonly",
                         "--rw=randread",
                         "--bssplit=4k/25:8k/25:12k/25:16k/25",
                         "--blockalign=4k",
                         probe ? "--direct=1" : "--direct=0",
                         "--invalidate=0",
                         "--iodepth=32",
                         a_engine,
                         probe ? "--number_ios=256" : a_ios,
                         a_time,
                         "--norandommap",
                         "--randrepeat=1",
                         NULL};
    fio_result res = {0};
    if (bench_fio_job(job, &res) != 0) {
        fprintf(stderr, "nd_bench: %s: fio failed on %s\n", MEM_GROUP, P.path);
        return -1;
    }
    out->ops = res.total_ios;
    out->cpu = res.cpu_ms;
    return res.total_ios * 1e3 / res.iops; /* so that the row's rate is fio's own */
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
        double res[3] = {-1, 0, 0};
        if (join_cgroup(c->kind == PF_PROBE ? -1 : c->kind == PF_FIO ? P.fio_own : 0) != 0)
            fprintf(stderr, "nd_bench: %s: %s\n", MEM_GROUP, P.cg.error);
        else if (c->kind == PF_PROBE) {
            run_out o = {0};
            ndml_stat st;
            if (fio_reads(&o, 1) >= 0 && ndml_read_stat(&P.cg, &st) == 0 && st.peak > 0)
                res[0] = (double)st.peak; /* direct reads: what fio itself holds */
        } else if (fill_cgroup() == 0) {
            run_out o = {0};
            res[0] = c->kind == PF_FIO   ? fio_reads(&o, 0)
                     : c->kind == PF_RAW ? raw_reads(c, P.mem_reads, P.mem_run_ms, &o)
                                         : timed_reads(c, P.mem_reads, P.mem_run_ms, &o);
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
        die("%s: %s: the child in cgroup %s failed (status 0x%x)", MEM_GROUP, c->who, P.cg.dir,
            status);
    out->cpu = res[1];
    out->ops = res[2];
    out->cached = cached_percent(P.dirfd, P.name);
    return res[0];
}

/* A LargerThanMemory row with a target and its baseline (the best row and
 * fio, the buffered row and the bare pread loop) run back to back in each
 * round, first one then the other (AB BA AB ...): both are bound by the CPU's
 * reclaim of the cgroup's pages, and on this kind of virtual machine the
 * host's share of the CPUs drifts by a third within a minute, so two runs
 * seconds apart compared mostly when they ran (the buffered row against the
 * pread loop at a tenth of the file, each in its own place in the round:
 * per-round ratios of 0.52 to 1.20, median 0.83, for the same system call). */
static double run_memcg_pair(bench *b, void *vctx, run_out *out)
{
    pf_ctx *c = vctx;
    pf_pair *p = c->pair;
    if (!p->fresh) {
        for (int i = 0; i < 2; i++) {
            int slot = i ^ p->flip;
            pf_ctx one = *c; /* its buffer; the slot's reads */
            one.flags = p->flags[slot];
            one.prefetch = p->prefetch[slot];
            one.kind = p->kind[slot];
            one.who = p->who[slot];
            one.pair = NULL;
            run_out o = {0};
            p->ms[slot] = run_memcg_row(b, &one, &o);
            p->cpu[slot] = o.cpu;
            p->ops[slot] = o.ops;
            p->cached[slot] = o.cached;
        }
        p->flip = !p->flip;
    }
    p->fresh = !p->fresh;
    return take_half(p, c->slot, out);
}

/* ---- rows ---- */

static void free_ctx(void *vctx)
{
    free(((pf_ctx *)vctx)->buf);
}

static row *queue(const char *group, const char *name, const char *baseline, pf_ctx c, run_fn fn,
                  const char *note)
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
        snprintf(note, sizeof(note),
                 "fio --rw=randread --bs=4k --direct=1 --iodepth=32 "
                 "--ioengine=%s, %d reads of the same file",
                 P.fio_engine, P.reads * 4);
        queue(GROUP, FIO_ROW, cold_rows[0][0], (pf_ctx){0}, run_fio_row, note);
    } else {
        P.fio_engine[0] = '\0';
        fprintf(stderr,
                "\nnd_bench: %s: WARNING: fio is missing or failed (scripts/deps.sh "
                "installs it): the device's QD32 rate is MISSING from the group\n\n",
                GROUP);
    }
    static pf_pair pairs[2];
    for (int s = 0; s < 2; s++) {
        uint32_t flags = ND_IO_RANDOM | (s == 0 ? ND_IO_MMAP : 0);
        snprintf(note, sizeof(note),
                 "%d reads of 4-16 KiB in batches of %d, %lld MiB file evicted "
                 "before each run, a fresh input each run",
                 P.reads, BATCH, mib);
        queue(GROUP, cold_rows[s][0], s == 0 ? NULL : cold_rows[0][0],
              (pf_ctx){flags, 0, 1, 0, NULL, NULL, NULL, 0}, run_pf_row, note);
        queue(GROUP, cold_rows[s][1], cold_rows[s][0],
              (pf_ctx){flags, 1, 1, 0, NULL, NULL, NULL, 0}, run_pf_row, note);
        pairs[s] = (pf_pair){0};
        snprintf(note, sizeof(note),
                 "%d reads of 4-16 KiB in batches of %d, %lld MiB file cached%s; in one run "
                 "with its pair, batches alternating (ABBA)",
                 P.warm_reads / 2, BATCH, mib, s == 0 ? ", mapping populated at open" : "");
        queue(GROUP, warm_rows[s][0], NULL, (pf_ctx){flags, 0, 0, 0, NULL, NULL, &pairs[s], 0},
              run_warm_pair, note);
        queue(GROUP, warm_rows[s][1], warm_rows[s][0],
              (pf_ctx){flags, 1, 0, 0, NULL, NULL, &pairs[s], 1}, run_warm_pair, note);
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
        snprintf(r->note, sizeof(r->note),
                 "%d calls a run over the %d blocks of 4-16 KiB of the "
                 "warm rows, %lld MiB file cached (mapped: populated at open)",
                 P.res_calls, P.warm_reads, (long long)(P.size >> 20));
        bench_queue(r, run_res_row, &ctx[i], sizeof(ctx[i]), NULL);
    }
    bench_run_queued(b);
}

#define RAW_ROW "raw pread (default advice)"
#define FIO_LTM_ROW "fio randread QD32 through the page cache"
#define BEST_ROW "buffered (ND_IO_RANDOM), prefetch each batch"
#define BUFFERED_ROW "buffered (ND_IO_RANDOM)"
/* The levels of page cache the group runs at, in per cent of the file: every
 * row at the first; at the tighter one only the bare pread loop and the row
 * judged against it, whose target must hold wherever memory is short */
static const int mem_levels[] = {25, 10};

/* A row's name at a level: "<row>, <pct>% of the file in memory". */
static const char *at_level(char *out, size_t n, const char *row_name, int pct)
{
    snprintf(out, n, "%s, %d%% of the file in memory", row_name, pct);
    return out;
}

static void memcg_group(bench *b, int pct, int every_row)
{
    int64_t limit = P.size * pct / 100;
    if (cgroup_make(limit) != 0)
        return;
    P.cache = limit;
    /* pair: the row is measured back to back with the other of its pair
     * (run_memcg_pair), each target's two sides: 0 the bare pread loop and the
     * buffered row, 1 fio and the best row; -1 alone */
    static const struct {
        const char *name;
        uint32_t flags;
        int prefetch, kind, every_level, pair, slot;
    } rows[] = {
        {RAW_ROW, 0, 0, PF_RAW, 1, 0, 0},
        {FIO_LTM_ROW, 0, 0, PF_FIO, 0, 1, 0},
        {BUFFERED_ROW, ND_IO_RANDOM, 0, PF_ND, 1, 0, 1},
        {BEST_ROW, ND_IO_RANDOM, 1, PF_ND, 0, 1, 1},
        {"mapped (ND_IO_RANDOM)", ND_IO_MMAP | ND_IO_RANDOM, 0, PF_ND, 0, -1, 0},
        {"mapped (ND_IO_RANDOM), prefetch each batch", ND_IO_MMAP | ND_IO_RANDOM, 1, PF_ND, 0, -1,
         0},
        {"mapped (default advice)", ND_IO_MMAP, 0, PF_ND, 0, -1, 0},
        {"direct (ND_IO_MERGE)", ND_IO_MERGE | ND_IO_REQUIRE_DIRECT | ND_IO_RANDOM, 0, PF_ND, 0, -1,
         0},
    };
    enum { NROWS = sizeof(rows) / sizeof(rows[0]), DIRECT = NROWS - 1 };
    nd_handle probe;
    int direct = every_row && nd_open_input(P.nd_dir, P.name, rows[DIRECT].flags, &probe) == ND_OK;
    if (direct)
        nd_close(probe);
    int fio = every_row && P.fio_engine[0] != '\0';
    if (fio) {
        /* fio's own memory (a few MiB of buffers and shared state), measured
         * once with direct reads, goes on top of its runs' limit */
        pf_ctx probe_ctx = {0, 0, 0, PF_PROBE, "fio probe", NULL, NULL, 0};
        run_out o = {0};
        P.fio_own = 0;
        double peak = run_memcg_row(b, &probe_ctx, &o);
        P.fio_own = (int64_t)peak;
        fprintf(stderr,
                "nd_bench: %s: fio holds %.1f MiB of its own: its runs' limit is that "
                "much higher\n",
                MEM_GROUP, peak / (1 << 20));
    }
    /* the budget shared by every run of every row at the level with them
     * all, warm-up included; a level with fewer rows keeps that run length */
    if (P.mem_run_ms <= 0) {
        int nrows = NROWS - !direct - !fio;
        P.mem_run_ms = (b->quick ? MEM_BUDGET_QUICK_MS : MEM_BUDGET_MS) / (nrows * (b->runs + 1));
        if (P.mem_run_ms < MEM_MIN_RUN_MS)
            P.mem_run_ms = MEM_MIN_RUN_MS;
    }
    static pf_pair pairs[2];
    memset(pairs, 0, sizeof(pairs));
    char note[240], name[96], base[96];
    snprintf(note, sizeof(note),
             "up to %d reads of 4-16 KiB in batches of %d or %.0f ms a run, "
             "%lld MiB file evicted, a memory cgroup (v%d) of the process's own memory + %lld MiB, "
             "filled with the file's first %d%%",
             P.mem_reads, BATCH, P.mem_run_ms, (long long)(P.size >> 20), P.cg.v2 ? 2 : 1,
             (long long)(limit >> 20), pct);
    at_level(base, sizeof(base), rows[0].name, pct);
    for (size_t i = 0; i < NROWS; i++) {
        if (!every_row && !rows[i].every_level)
            continue;
        if (i == DIRECT && !direct) {
            fprintf(stderr, "nd_bench: %s: no direct row: %s refuses O_DIRECT\n", MEM_GROUP,
                    P.path);
            continue;
        }
        if (rows[i].kind == PF_FIO && !fio) {
            fprintf(stderr,
                    "\nnd_bench: %s: WARNING: fio is missing or failed (scripts/deps.sh "
                    "installs it): its row is MISSING and the prefetch row's target is "
                    "not met\n\n",
                    MEM_GROUP);
            continue;
        }
        at_level(name, sizeof(name), rows[i].name, pct);
        /* a target's two sides: one pair, measured together (run_memcg_pair);
         * fio's pair only where fio runs */
        pf_pair *pair =
            rows[i].pair >= 0 && (rows[i].pair == 0 || fio) ? &pairs[rows[i].pair] : NULL;
        int slot = rows[i].slot;
        if (pair != NULL) {
            pair->flags[slot] = rows[i].flags;
            pair->prefetch[slot] = rows[i].prefetch;
            pair->kind[slot] = rows[i].kind;
            pair->who[slot] = rows[i].name;
        }
        row *r = queue(
            MEM_GROUP, name, i == 0 ? NULL : base,
            (pf_ctx){rows[i].flags, rows[i].prefetch, 1, rows[i].kind, NULL, NULL, pair, slot},
            pair != NULL ? run_memcg_pair : run_memcg_row, note);
        r->limit_pct = pct;
        if (strcmp(rows[i].name, BEST_ROW) == 0)
            at_level(r->also, sizeof(r->also), FIO_LTM_ROW, pct);
        if (pair != NULL) {
            size_t len = strlen(r->note);
            snprintf(r->note + len, sizeof(r->note) - len,
                     "; run back to back with the %s row, each first in every other round",
                     rows[i].kind == PF_FIO   ? "prefetch"
                     : rows[i].kind == PF_RAW ? "buffered"
                     : rows[i].prefetch       ? "fio"
                                              : "raw pread");
        }
        if (rows[i].kind == PF_FIO) {
            size_t len = strlen(r->note);
            snprintf(r->note + len, sizeof(r->note) - len,
                     "; fio --direct=0 --iodepth=32 "
                     "--ioengine=%s --invalidate=0 in the cgroup",
                     P.fio_engine);
        }
    }
    fprintf(stderr,
            "nd_bench: %s: cgroup %s limited to %lld MiB (%d%% of the file), up to %d reads or "
            "%.0f ms per run\n",
            MEM_GROUP, P.cg.dir, (long long)(limit >> 20), pct, P.mem_reads, P.mem_run_ms);
    bench_run_queued(b);
    cgroup_remove();
}

void bench_prefetch(bench *b)
{
    P.size = b->prefetch_size;
    P.reads = b->prefetch_reads;
    P.warm_reads = P.reads * 16;
    P.res_calls = b->quick ? 1 << 16 : 1 << 21;
    /* enough blocks to touch about twice the quarter of the file the first level caches */
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
        fprintf(stderr,
                "\nnd_bench: %s: ERROR: %s is on tmpfs: nothing is ever evicted to a "
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
    for (size_t i = 0; i < sizeof(mem_levels) / sizeof(mem_levels[0]); i++)
        memcg_group(b, mem_levels[i], i == 0);
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
    /* once the working set does not fit: nativedir's buffered reads cost no more
     * than the bare system call, and the strategy it recommends (buffered,
     * ND_IO_RANDOM, prefetch of each batch) gets what the page cache and the
     * device give 32 reads in flight */
    char name[96];
    for (size_t i = 0; i < sizeof(mem_levels) / sizeof(mem_levels[0]); i++) {
        row *r = bench_find(MEM_GROUP, at_level(name, sizeof(name), BUFFERED_ROW, mem_levels[i]));
        if (r != NULL) {
            snprintf(r->target, sizeof(r->target), ">= 0.90 of raw pread");
            r->met = bench_judged_ratio(r) >= 0.90;
        }
        r = bench_find(MEM_GROUP, at_level(name, sizeof(name), BEST_ROW, mem_levels[i]));
        if (r != NULL) {
            snprintf(r->target, sizeof(r->target), ">= 0.90 of fio QD32 (per round)");
            snprintf(r->also_target, sizeof(r->also_target), ">= 0.90 per round");
            double fio_ratio = r->also_paired >= 0 ? r->also_paired : r->also_ratio;
            r->also_met = r->met = fio_ratio >= 0.90; /* unknown (fio missing) is not met */
        }
    }
    row *r;
    for (int i = 1; i < 3; i++) {
        r = bench_find(RES_GROUP, res_rows[i]);
        if (r != NULL) {
            snprintf(r->target, sizeof(r->target), "< 1000 ns a call");
            r->met = r->n > 0 && r->median < 1000.0;
        }
    }
}
