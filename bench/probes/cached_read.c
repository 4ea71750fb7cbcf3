/*
 * cached_read.c - what a cached read that must not block costs against
 * one that may (the question behind the .NET ReadAsync row's margin:
 * nd_read_cached is one preadv2(RWF_NOWAIT), FileStream.Read one pread;
 * docs/benchmarks.md).
 *
 *   nd_probe_cached_read FILE [ROUNDS]
 *
 * Reads FILE (in the page cache: the probe reads it once first) front to back
 * in 4 KiB reads, in each of these ways, the order rotating round by round:
 *   pread                 what FileStream.Read and nd_read_bytes issue
 *   preadv                the same through one iovec
 *   preadv2 flags 0       the vectored entry with flags, no flag set
 *   preadv2 RWF_NOWAIT    what nd_read_cached issues
 * Prints each way's median time and its median per-round ratio to pread, with
 * the 10th-90th percentile of that ratio. Not a ctest test: it measures, it
 * does not judge.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define BLOCK 4096
#define WAYS 4
#define MAX_ROUNDS 201

static const char *names[WAYS] = {"pread", "preadv", "preadv2 flags 0", "preadv2 RWF_NOWAIT"};

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* one pass over the file; returns the bytes read (all of them, or the probe is wrong) */
static off_t pass(int fd, off_t len, int way, char *buf)
{
    off_t got = 0;
    for (off_t off = 0; off < len; off += BLOCK) {
        struct iovec v = {buf, BLOCK};
        ssize_t n;
        switch (way) {
        case 0: n = pread(fd, buf, BLOCK, off); break;
        case 1: n = preadv(fd, &v, 1, off); break;
        case 2: n = preadv2(fd, &v, 1, off, 0); break;
        default: n = preadv2(fd, &v, 1, off, RWF_NOWAIT); break;
        }
        if (n <= 0)
            break;
        got += n;
    }
    return got;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE [ROUNDS]\n", argv[0]);
        return 2;
    }
    int rounds = argc > 2 ? atoi(argv[2]) : 31;
    if (rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "ROUNDS: 1 to %d\n", MAX_ROUNDS);
        return 2;
    }
    int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    off_t len = lseek(fd, 0, SEEK_END);
    static char buf[BLOCK] __attribute__((aligned(BLOCK)));
    static double t[WAYS][MAX_ROUNDS], ratio[WAYS][MAX_ROUNDS];
    if (pass(fd, len, 0, buf) != len) { /* into the page cache, and a check */
        fprintf(stderr, "%s: short read\n", argv[1]);
        return 1;
    }
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < WAYS; k++) {
            int way = (k + r) % WAYS;
            double t0 = now_ms();
            off_t got = pass(fd, len, way, buf);
            t[way][r] = now_ms() - t0;
            if (got != len) { /* RWF_NOWAIT found a page not cached: not the case measured */
                fprintf(stderr, "%s: %s read %lld of %lld bytes (not all cached?)\n", argv[1],
                        names[way], (long long)got, (long long)len);
                return 1;
            }
        }
        for (int w = 0; w < WAYS; w++)
            ratio[w][r] = t[w][r] / t[0][r];
    }
    printf("%lld bytes in %d-byte reads, %d rounds\n", (long long)len, BLOCK, rounds);
    for (int w = 0; w < WAYS; w++) {
        qsort(t[w], (size_t)rounds, sizeof(double), cmp_double);
        qsort(ratio[w], (size_t)rounds, sizeof(double), cmp_double);
        printf("%-20s median %8.2f ms (%6.0f ns/read)  per-round ratio to pread %.3f (p10 %.3f, "
               "p90 %.3f)\n",
               names[w], t[w][rounds / 2], t[w][rounds / 2] * 1e6 / (double)(len / BLOCK),
               ratio[w][rounds / 2], ratio[w][rounds / 10], ratio[w][rounds - 1 - rounds / 10]);
    }
    close(fd);
    return 0;
}
