/*
 * bench.h - what the parts of nd_bench share: the configuration, the shared
 * test data, result rows and the measuring loop.
 *
 * Every workload is measured beside its limit in the same process and the
 * same run, so ratios stay meaningful on a noisy, shared machine where
 * absolute times do not.
 */
#ifndef ND_BENCH_H
#define ND_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "nativedir.h"

#define BENCH_MAX_RUNS 101
#define BENCH_MAX_ROWS 128
#define BENCH_MAX_CPUS 64 /* CPUs whose speed the report shows */

typedef struct {
    int64_t size;          /* bytes of the file of record */
    int runs;              /* timed runs per row (a warm-up run comes first) */
    size_t chunk;          /* write and sequential read chunk */
    int random_reads;      /* 64-byte reads per ReadRandom run (and per thread) */
    int direct_random;     /* fewer for direct I/O, whose reads each reach the device */
    int64_t ring_size;     /* RingRandomQD32's file (kept between runs in `dir`) */
    int ring_reads;        /* 4 KiB reads per RingRandomQD32 run at QD1 (x4 at QD32) */
    int64_t prefetch_size; /* ColdPrefetch's and LargerThanMemory's file (kept in `dir`) */
    int prefetch_reads;    /* 4-16 KiB reads per cold ColdPrefetch run */
    int quick;
    const char *dir;     /* parent of the scratch directory */
    const char *out_dir; /* where c.json goes */
    char command[1024];  /* this run's command line, for the report */

    char work[4096];    /* the scratch directory (created, removed at exit) */
    int work_fd;        /* O_DIRECTORY descriptor of it, for raw baselines */
    nd_handle nd_dir;   /* the same directory through nativedir */
    uint32_t dio_align; /* what raw O_DIRECT needs here */
    uint32_t buf_align; /* dio_align, at least a page: the fast case for direct I/O */
    const char *fs_type;
    /* each CPU's speed at a spin loop, relative to the fastest, at the start and
     * the end of the run (sys.c, bench_cpu_speeds); 0: a CPU this process may not use */
    int ncpus;
    double cpu_speed[2][BENCH_MAX_CPUS];

    uint8_t *data;           /* the file's bytes, in memory (aligned for O_DIRECT) */
    const uint8_t *file_map; /* the data file mapped, only to flush its cached lines */
    int64_t *offsets;        /* 2 * random_reads random offsets, each + 64 <= size */
    uint64_t byte_sum;       /* byte_sum() over data: every byte loop must get it */
    uint64_t random_sum;     /* fold of the 64-byte reads at offsets[0..random_reads) */
} bench;

#define NOT_SET (-1.0)

typedef struct {
    const char *group;
    char name[96];
    char baseline[96]; /* "" when this row is its group's baseline */
    char target[64];   /* "" when the row has no target */
    char note[400];
    double ms[BENCH_MAX_RUNS];
    double cached[BENCH_MAX_RUNS]; /* % of the file in the page cache after the run */
    double cpu[BENCH_MAX_RUNS];    /* CPU time of the run: what being descheduled cannot inflate */
    int n;
    double median, min, max, ratio;
    double cached_pct;   /* median of cached[], NOT_SET if not measured */
    double speedup;      /* baseline median / this median, for thread scaling rows */
    double speedup_cpus; /* the same against one thread on each CPU, per round (concurrent.c) */
    double cpu_median, cpu_ratio; /* cpu_ratio: against the baseline's cpu_median */
    double paired; /* median over rounds of (this run / the baseline's run in that round) */
    double scale;  /* times are multiplied by it (a measured subset scaled up); 0 = 1 */
    int met;       /* 1, 0, or -1 (no target) */
    /* A rate row (unit set, e.g. "IOPS") reports ops per second, higher is
     * better: statistics() turns each run's time and ops[] into a rate, so
     * ms[] and median..max hold rates and ratio is this rate / the baseline's. */
    const char *unit; /* NULL: milliseconds */
    /* A per-call time row (unit "ns/call", lower is better): statistics()
     * divides each run's time and CPU time by its ops[], so ms[] and
     * median..max hold nanoseconds per operation and cpu_median CPU ns per
     * operation. Not a rate: it is the rate rows' exception. */
    int per_op_ns;
    double ops[BENCH_MAX_RUNS];
    double cpu_us_per_op; /* rate rows: median CPU microseconds per operation */
    /* A second comparison beside the baseline (e.g. the device's limit, when
     * the baseline is the synchronous reads): "" when there is none. */
    char also[96];
    char also_target[32];
    double also_ratio;  /* this median / also's median, NOT_SET if unknown */
    double also_paired; /* median of the per-round ratios to also, NOT_SET if unknown */
    int also_met;       /* 1, 0, or -1 (no target) */
    /* The share of the file the page cache may hold (a memory cgroup's limit),
     * in per cent: the summary takes the tightest judged level; NOT_SET when
     * the row has no such limit. */
    double limit_pct;
} row;

/* What one run reports beside its wall time. */
typedef struct {
    double cpu;    /* CPU milliseconds of the timed part (all its threads) */
    double cached; /* % of the written file left in the page cache, or NOT_SET */
    double ops;    /* rate rows: operations done in the timed part */
} run_out;

/* One run of a workload: does its own untimed setup and teardown and returns
 * the wall milliseconds of the timed part only. */
typedef double (*run_fn)(bench *b, void *ctx, run_out *out);

/* ---- report.c ---- */
row *bench_row(const char *group, const char *name, const char *baseline);
/* Queues fn on a copy of ctx (ctx_size bytes; `done` frees what it owns)
 * for row r. bench_run_queued() then runs one warm-up of each, and b->runs
 * rounds in which every queued row runs once, starting at a different row
 * each round: rows compared with each other see the same machine load,
 * which on a shared machine matters more than anything else. */
void bench_queue(row *r, run_fn fn, const void *ctx, size_t ctx_size, void (*done)(void *ctx));
void bench_run_queued(bench *b);
/* computes ratios (and speed-ups) against each row's baseline in its group */
void bench_finish_ratios(void);
double bench_median(const double *v, int n);
/* the ratio a target is judged on: the per-round (paired) ratio, else the
 * ratio of the medians */
double bench_judged_ratio(const row *r);
/* sets r's target to "<= limit" on bench_judged_ratio and whether it was met */
void bench_target_ratio(row *r, double limit);
void bench_print_table(const bench *b);
/* every row that missed its target, with its and its baselines' figures round by round */
void bench_print_misses(void);
int bench_write_json(const bench *b, const char *path);
row *bench_find(const char *group, const char *name);

/* ---- sys.c ---- */
double now_ms(void);
double cpu_ms(void);                                /* this thread's CPU time */
uint32_t dio_alignment(int fd);                     /* statx STATX_DIOALIGN, else st_blksize */
const char *fs_type_name(int fd);                   /* "ext4", "tmpfs", ... */
double cached_percent(int dirfd, const char *name); /* mincore on a fresh mapping */
void evict(int dirfd, const char *name);            /* fsync, then drop the file's pages */
/* Flushes the first size bytes of a file's page-cache pages out of the CPU
 * caches through a mapping of its own (which leaves the page cache as it was). */
void cold_file(int dirfd, const char *name, int64_t size);
/* Flushes the data and the file's page-cache pages out of the CPU caches, so
 * that every run (limit or library) starts from memory: with a last-level
 * cache as large as the file, whichever row ran just before would otherwise
 * decide who reads from cache and who from DRAM. */
void cold_caches(const bench *b);
void *aligned_or_die(size_t align, size_t size);
/* The content of the files the ring and prefetch groups keep between runs: each 8-byte word is
 * a function of its offset, so any block read can be checked without the file in memory. */
uint64_t pattern_word(int64_t off);
/* Fills fd (opened for writing, O_DIRECT or not) with size bytes of that pattern in 1 MiB
 * aligned writes, fsyncs and closes it; dies on any failure. */
void write_pattern_file(int fd, const char *path, int64_t size);
void die(const char *fmt, ...);
void nd_check(int64_t rc, const char *what); /* dies with nativedir's message on rc < 0 */

/* Dependent checksum: each step needs the previous one, so the compiler can
 * neither drop nor vectorise a byte loop built on it. Not inlined, so every
 * byte loop (in memory or through a window) runs the same machine code. */
uint64_t byte_sum(uint64_t sum, const uint8_t *p, size_t n);
static inline uint64_t fold8(uint64_t sum, const uint8_t *p)
{
    uint64_t v;
    __builtin_memcpy(&v, p, 8);
    return sum * 31 + v;
}

/* ---- workloads ---- */
void bench_write(bench *b);
void bench_read_sequential(bench *b);
void bench_read_bytes(bench *b);
void bench_read_random(bench *b);
void bench_concurrent(bench *b);
void bench_concurrent_targets(void); /* its scaling targets, once every ratio is known */
void bench_buffer_sweep(bench *b);
void bench_ring(bench *b);     /* ring.c: RingRandomQD32 */
void bench_ring_targets(void); /* its targets, once every ratio is known */
void bench_prefetch(bench *b); /* prefetch.c: ColdPrefetch, LargerThanMemory */
void bench_prefetch_targets(void);
void bench_fresh_map(bench *b); /* fresh_map.c: FreshMapScan */
void bench_fresh_map_targets(void);

/* ring.c: fio's rate for `count` 4 KiB O_DIRECT random reads of `path` at
 * queue depth 32 (io_uring, else libaio: *engine says which); -1 without fio
 * or when it fails. */
typedef struct {
    double iops, total_ios, cpu_ms;
} fio_result;
int bench_fio_randread(const char *path, int count, char *engine, size_t cap, fio_result *res);
/* ring.c: runs fio with `job` (its options, NULL-terminated) and JSON output;
 * 0 and *res, or -1 without fio or when it fails */
int bench_fio_job(const char *const *job, fio_result *res);

/* sys.c: fills speed[0..max) with each CPU's speed at a fixed spin loop,
 * relative to the fastest (0 for CPUs this process may not run on); returns
 * how many CPUs it looked at. */
int bench_cpu_speeds(double *speed, int max);
/* sys.c: pins the calling thread (and the threads and processes it starts
 * from now on) to CPU `cpu`; 0 on success. */
int bench_pin_cpu(int cpu);
/* sys.c: one run of fn with the calling thread (and the threads it starts) on
 * CPU `cpu`, its CPUs given back after; where it cannot pin, dies if `must`,
 * else runs unpinned. */
double bench_run_on_cpu(int cpu, int must, run_fn fn, bench *b, void *ctx, run_out *out);

#define DATA_NAME "r.dat"  /* the file every read workload reads */
#define WRITE_NAME "w.dat" /* the file every write workload writes */
#define MAP_NAME "m.dat"   /* FreshMapScan's file, written and mapped each run */

#endif /* ND_BENCH_H */
