/*
 * nd_bench.c - the C benchmark of the workload of record: a 64 MiB file
 * written and read through each of nativedir's strategies, each beside the
 * limit measured in the same run (memcpy, raw pread, raw O_DIRECT, a byte
 * loop over memory). Prints a table and writes $ND_BENCH_OUT/c.json in the
 * format every language's benchmark shares (bench/runner.py merges them).
 *
 *   nd_bench [--quick] [--size-mib N] [--runs N] [--dir PATH] [--out DIR]
 *            [--chunk-kib N] [--random-reads N] [--ring-mib N] [--ring-reads N]
 *            [--only GROUP,GROUP...]
 *
 * The file lives on a real disk (default: a directory under the build tree,
 * or $ND_BENCH_DIR): direct I/O and the page-cache figures mean nothing on
 * tmpfs, so the benchmark says so loudly when it finds itself there.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"

#ifndef ND_BENCH_DEFAULT_DIR
#  define ND_BENCH_DEFAULT_DIR "bench-scratch"
#endif
#ifndef ND_BENCH_DEFAULT_OUT
#  define ND_BENCH_DEFAULT_OUT "build/bench/results"
#endif

static bench B;

static void usage(void)
{
    fputs("usage: nd_bench [--quick] [--size-mib N] [--runs N] [--dir PATH] [--out DIR]\n"
          "                [--chunk-kib N] [--random-reads N] [--ring-mib N] [--ring-reads N]\n"
          "                [--prefetch-mib N] [--prefetch-reads N] [--only GROUP,GROUP...]\n"
          "  --quick        4 MiB, 3 runs: checks that everything runs, measures nothing\n"
          "  --ring-mib N   RingRandomQD32's file (default 1024; kept in --dir between runs)\n"
          "  --ring-reads N its 4 KiB reads per run at QD1 (default 8192; 4x that at QD32)\n"
          "  --prefetch-mib N   ColdPrefetch's file (default 512; kept in --dir between runs)\n"
          "  --prefetch-reads N its 4-16 KiB reads per cold run (default 4096)\n"
          "  --dir PATH     where the scratch directory goes (default $ND_BENCH_DIR, else\n"
          "                 " ND_BENCH_DEFAULT_DIR ")\n"
          "  --out DIR      where c.json goes (default $ND_BENCH_OUT, else\n"
          "                 " ND_BENCH_DEFAULT_OUT ")\n"
          "  --only GROUPS  Write,ReadSequential,ReadByteSequential,ReadRandom,\n"
          "                 ConcurrentCloneReads,BufferSweep,RingRandomQD32,\n"
          "                 ColdPrefetch (and LargerThanMemory, run with it),\n"
          "                 FreshMapScan\n",
          stderr);
    exit(2);
}

static long number(const char *opt, const char *v, long lo, long hi)
{
    char *end;
    errno = 0;
    long n = v != NULL ? strtol(v, &end, 10) : 0;
    if (v == NULL || errno != 0 || *end != '\0' || n < lo || n > hi)
        die("%s wants a number from %ld to %ld", opt, lo, hi);
    return n;
}

static void mkdirs(const char *path)
{
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        mkdir(tmp, 0755);
        *p = '/';
    }
    if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
        die("cannot create %s: %s", path, strerror(errno));
}

static void cleanup(void)
{
    if (B.nd_dir != 0)
        nd_close(B.nd_dir);
    if (B.file_map != NULL)
        munmap((void *)B.file_map, (size_t)B.size);
    if (B.work_fd > 0) {
        unlinkat(B.work_fd, DATA_NAME, 0);
        unlinkat(B.work_fd, WRITE_NAME, 0);
        unlinkat(B.work_fd, MAP_NAME, 0);
        close(B.work_fd);
        rmdir(B.work);
    }
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t next_random(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* The data, the offsets, and the file of record on disk and in the cache. */
static void prepare(bench *b)
{
    b->data = aligned_or_die(4096, (size_t)b->size);
    for (int64_t i = 0; i < b->size; i += 8) {
        uint64_t v = next_random();
        memcpy(b->data + i, &v, 8);
    }
    b->offsets = malloc(2 * (size_t)b->random_reads * sizeof(int64_t));
    if (b->offsets == NULL)
        die("out of memory");
    for (int i = 0; i < 2 * b->random_reads; i++)
        b->offsets[i] = (int64_t)(next_random() % (uint64_t)(b->size - 64 + 1));
    b->byte_sum = byte_sum(0, b->data, (size_t)b->size);

    int fd = openat(b->work_fd, DATA_NAME, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        die("create %s/%s: %s", b->work, DATA_NAME, strerror(errno));
    for (int64_t off = 0; off < b->size;) {
        ssize_t n = pwrite(fd, b->data + off, (size_t)(b->size - off), off);
        if (n <= 0)
            die("write %s: %s", DATA_NAME, strerror(errno));
        off += n;
    }
    if (fsync(fd) != 0)
        die("fsync %s: %s", DATA_NAME, strerror(errno));
    b->dio_align = dio_alignment(fd);
    /* direct I/O from a buffer aligned only to the sector is legal but can be far
     * slower (the block layer splits or bounces it): a limit must be the fast case */
    long page = sysconf(_SC_PAGESIZE);
    b->buf_align = b->dio_align > (uint32_t)page ? b->dio_align : (uint32_t)page;
    b->fs_type = fs_type_name(fd);
    close(fd);
    /* the read workloads compare against memory: start them with the file cached */
    fd = openat(b->work_fd, DATA_NAME, O_RDONLY | O_CLOEXEC);
    for (int64_t off = 0; off < b->size; off += 1 << 20) {
        uint8_t tmp[4096];
        if (pread(fd, tmp, sizeof(tmp), off) < 0)
            die("read %s: %s", DATA_NAME, strerror(errno));
    }
    posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED);
    /* a mapping of our own reaches the page-cache pages' cache lines (see cold_caches) */
    void *m = mmap(NULL, (size_t)b->size, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (m == MAP_FAILED)
        die("mmap %s: %s", DATA_NAME, strerror(errno));
    b->file_map = m;
    uint8_t *all = aligned_or_die(4096, 1 << 20);
    for (int64_t off = 0; off < b->size; off += 1 << 20)
        if (pread(fd, all, 1 << 20, off) < 0)
            die("read %s: %s", DATA_NAME, strerror(errno));
    free(all);
    close(fd);
    nd_check(nd_open_dir(b->work, 0, &b->nd_dir), "nd_open_dir");
}

/* The targets, decided once every ratio is known. */
static void apply_targets(void)
{
    static const struct {
        const char *group, *name;
        double limit;
    } ratio_targets[] = {
        {"ReadSequential", "nd_read_buffered (mapped)", 1.3},
        {"ReadSequential", "nd_read_bytes (mapped)", 1.3},
        {"ReadSequential", "nd_read_bytes (mapped, kept open)", 1.3},
        {"ReadByteSequential", "nd_input_window loop (mapped)", 1.5},
        {"ReadByteSequential", "nd_input_window loop (buffered)", 1.5},
        {"ReadRandom", "nd_read_bytes (buffered)", 1.15},
    };
    for (size_t i = 0; i < sizeof(ratio_targets) / sizeof(ratio_targets[0]); i++) {
        row *r = bench_find(ratio_targets[i].group, ratio_targets[i].name);
        if (r != NULL)
            bench_target_ratio(r, ratio_targets[i].limit);
    }
    bench_concurrent_targets();
    bench_ring_targets();
    bench_prefetch_targets();
    bench_fresh_map_targets();
    row *r = bench_find("WriteSync", "nd_write_bytes+nd_output_sync (ND_IO_MERGE)");
    if (r != NULL) {
        snprintf(r->target, sizeof(r->target), "<= 1.25, cached < 5%%");
        double v = bench_judged_ratio(r);
        r->met = v >= 0 && v <= 1.25 && r->cached_pct >= 0 && r->cached_pct < 5.0;
    }
    r = bench_find("WriteSync", "nd_write_bytes+nd_output_sync (buffered)");
    if (r != NULL) {
        snprintf(r->target, sizeof(r->target), "cached ~100%%");
        r->met = r->cached_pct >= 90.0;
    }
}

static int wanted(const char *only, const char *group)
{
    if (only == NULL)
        return 1;
    size_t n = strlen(group);
    for (const char *p = only; (p = strstr(p, group)) != NULL; p += n)
        if ((p == only || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    bench *b = &B;
    long size_mib = 64, runs = 9, chunk_kib = 64, random_reads = 100000;
    long ring_mib = 1024, ring_reads = 8192, prefetch_mib = 512, prefetch_reads = 4096;
    int quick = 0;
    const char *only = NULL;
    b->dir = getenv("ND_BENCH_DIR") && *getenv("ND_BENCH_DIR") ? getenv("ND_BENCH_DIR")
                                                               : ND_BENCH_DEFAULT_DIR;
    b->out_dir = getenv("ND_BENCH_OUT") && *getenv("ND_BENCH_OUT") ? getenv("ND_BENCH_OUT")
                                                                   : ND_BENCH_DEFAULT_OUT;
    for (int i = 0, n = 0; i < argc && n < (int)sizeof(b->command); i++)
        n += snprintf(b->command + n, sizeof(b->command) - (size_t)n, "%s%s", i ? " " : "",
                      i ? argv[i] : "nd_bench");
    int explicit_size = 0, explicit_runs = 0, explicit_random = 0, explicit_ring = 0,
        explicit_ring_reads = 0, explicit_prefetch = 0, explicit_prefetch_reads = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--quick") == 0) {
            quick = 1;
            continue;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
            usage();
        if (v == NULL)
            usage();
        i++;
        if (strcmp(a, "--size-mib") == 0)
            size_mib = number(a, v, 1, 1 << 16), explicit_size = 1;
        else if (strcmp(a, "--runs") == 0)
            runs = number(a, v, 1, BENCH_MAX_RUNS), explicit_runs = 1;
        else if (strcmp(a, "--chunk-kib") == 0)
            chunk_kib = number(a, v, 4, 1 << 20);
        else if (strcmp(a, "--random-reads") == 0)
            random_reads = number(a, v, 100, 10000000), explicit_random = 1;
        else if (strcmp(a, "--ring-mib") == 0)
            ring_mib = number(a, v, 1, 1 << 20), explicit_ring = 1;
        else if (strcmp(a, "--ring-reads") == 0)
            ring_reads = number(a, v, 32, 1 << 22), explicit_ring_reads = 1;
        else if (strcmp(a, "--prefetch-mib") == 0)
            prefetch_mib = number(a, v, 1, 1 << 20), explicit_prefetch = 1;
        else if (strcmp(a, "--prefetch-reads") == 0)
            prefetch_reads = number(a, v, 32, 1 << 22), explicit_prefetch_reads = 1;
        else if (strcmp(a, "--dir") == 0)
            b->dir = v;
        else if (strcmp(a, "--out") == 0)
            b->out_dir = v;
        else if (strcmp(a, "--only") == 0)
            only = v;
        else
            usage();
    }
    if (only != NULL) {
        static const char *known[] = {
            "Write",          "ReadSequential",       "ReadByteSequential",
            "ReadRandom",     "ConcurrentCloneReads", "BufferSweep",
            "RingRandomQD32", "ColdPrefetch",         "FreshMapScan"};
        const size_t nknown = sizeof(known) / sizeof(known[0]);
        char list[512];
        snprintf(list, sizeof(list), "%s", only);
        for (char *save, *g = strtok_r(list, ",", &save); g; g = strtok_r(NULL, ",", &save)) {
            size_t k = 0;
            while (k < nknown && strcmp(g, known[k]) != 0)
                k++;
            if (k == nknown)
                die("--only: unknown group '%s'", g);
        }
    }
    if (quick) {
        size_mib = explicit_size ? size_mib : 4;
        runs = explicit_runs ? runs : 3;
        random_reads = explicit_random ? random_reads : 5000;
        ring_mib = explicit_ring ? ring_mib : 16;
        ring_reads = explicit_ring_reads ? ring_reads : 256;
        /* a tenth of it is still enough page cache for a run's child to live in */
        prefetch_mib = explicit_prefetch ? prefetch_mib : 80;
        prefetch_reads = explicit_prefetch_reads ? prefetch_reads : 256;
    }
    b->quick = quick;
    b->size = (int64_t)size_mib << 20;
    b->runs = (int)runs;
    b->chunk = (size_t)chunk_kib << 10;
    b->random_reads = (int)random_reads;
    b->direct_random = random_reads < 2000 ? (int)random_reads : 2000;
    b->ring_size = (int64_t)ring_mib << 20;
    b->ring_reads = (int)ring_reads;
    b->prefetch_size = (int64_t)prefetch_mib << 20;
    b->prefetch_reads = (int)prefetch_reads;
    if ((int64_t)b->chunk > b->size)
        die("--chunk-kib is larger than the file");

    mkdirs(b->dir);
    mkdirs(b->out_dir);
    snprintf(b->work, sizeof(b->work), "%s/nd-bench-XXXXXX", b->dir);
    if (mkdtemp(b->work) == NULL)
        die("mkdtemp in %s: %s", b->dir, strerror(errno));
    b->work_fd = open(b->work, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (b->work_fd < 0)
        die("open %s: %s", b->work, strerror(errno));
    atexit(cleanup);
    prepare(b);
    /* every workload reads and writes whole chunks, O_DIRECT ones included */
    if (b->chunk % b->dio_align != 0 || b->size % (int64_t)b->chunk != 0)
        die("--chunk-kib must be a multiple of %u bytes and divide the file size", b->dio_align);
    if (strcmp(b->fs_type, "tmpfs") == 0)
        fprintf(stderr,
                "\nnd_bench: WARNING: %s is on tmpfs: no direct I/O, no device, and the "
                "page-cache figures mean nothing. Use --dir on a real disk.\n\n",
                b->work);
    fprintf(stderr, "nd_bench: %lld MiB on %s (%s, O_DIRECT alignment %u), %d runs + warm-up\n",
            (long long)size_mib, b->work, b->fs_type, b->dio_align, b->runs);

    b->ncpus = bench_cpu_speeds(b->cpu_speed[0], BENCH_MAX_CPUS);
    if (wanted(only, "Write"))
        bench_write(b);
    if (wanted(only, "ReadSequential"))
        bench_read_sequential(b);
    if (wanted(only, "ReadByteSequential"))
        bench_read_bytes(b);
    if (wanted(only, "ReadRandom"))
        bench_read_random(b);
    if (wanted(only, "ConcurrentCloneReads"))
        bench_concurrent(b);
    if (wanted(only, "BufferSweep"))
        bench_buffer_sweep(b);
    if (wanted(only, "RingRandomQD32"))
        bench_ring(b);
    if (wanted(only, "ColdPrefetch"))
        bench_prefetch(b);
    if (wanted(only, "FreshMapScan"))
        bench_fresh_map(b);

    bench_cpu_speeds(b->cpu_speed[1], b->ncpus);
    bench_finish_ratios();
    apply_targets();
    bench_print_table(b);
    bench_print_misses();
    char path[4200];
    snprintf(path, sizeof(path), "%s/c.json", b->out_dir);
    if (bench_write_json(b, path) != 0)
        die("cannot write %s: %s", path, strerror(errno));
    printf("\nresults: %s\n", path);
    if (quick)
        printf("(--quick: a smoke run on a small file; these numbers are not measurements)\n");
    return 0;
}
