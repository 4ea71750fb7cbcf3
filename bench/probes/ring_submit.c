/*
 * ring_submit.c - how a burst of reads should be sent to io_uring (the
 * design question behind submit_batch in native/src/posix/ring_uring.c;
 * docs/design.md, "Asynchronous reads").
 *
 *   nd_probe_ring FILE [READS] [ROUNDS] [CPU]
 *
 * One thread, on one CPU (CPU, else the lowest this process may use, as
 * nd_bench runs fio and the ring rows), keeps 32 random 4 KiB O_DIRECT reads of FILE in
 * flight through one io_uring with FILE registered, as fio --registerfiles
 * does: it waits for a completion, refills every slot that came back, and
 * sends the refills in one of three ways, the order rotating round by round:
 *   burst     one io_uring_enter for every refill of a wake-up
 *   each      one io_uring_enter per read (fio's default, iodepth_batch_submit=1)
 *   doubling  calls of 1, 2, 4, ... reads (what the ring's submitter does)
 * Prints each way's median rate and its per-round ratio to `each`, and the
 * CPU each spent per read. FILE: any file of a few hundred MiB or more on the
 * disk to measure (nd_bench's RingRandomQD32 leaves nd-ring-1024m.dat in its
 * scratch folder). Not a ctest test: it measures, it does not judge.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define QD 32
#define BLOCK 4096
#define MAX_ROUNDS 64

enum { BURST, EACH, DOUBLING, WAYS };
static const char *const way_name[WAYS] = {"burst", "each", "doubling"};

static double clock_ms(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void die(const char *what, int err)
{
    fprintf(stderr, "nd_probe_ring: %s: %s\n", what, strerror(err));
    exit(1);
}

static void submit_or_die(struct io_uring *ring)
{
    int rc = io_uring_submit(ring);
    if (rc < 0)
        die("io_uring_submit", -rc);
}

/* One round: `reads` reads at offs[], sent the `way` way; returns the rate
 * (reads a second) and adds the CPU it took to *cpu_ms. */
static double run(int fd, const int64_t *offs, int reads, int way, uint8_t *bufs, double *cpu_ms)
{
    struct io_uring ring;
    int rc = io_uring_queue_init(QD * 2, &ring, 0);
    if (rc < 0)
        die("io_uring_queue_init", -rc);
    if ((rc = io_uring_register_files(&ring, &fd, 1)) < 0)
        die("io_uring_register_files", -rc);
    double c0 = clock_ms(CLOCK_PROCESS_CPUTIME_ID), t0 = clock_ms(CLOCK_MONOTONIC);
    int next = 0, done = 0;
    uint32_t free_slots[QD];
    int nfree = QD;
    for (int i = 0; i < QD; i++)
        free_slots[i] = (uint32_t)i;
    while (done < reads) {
        /* refill every free slot, sending as `way` says */
        int prepared = 0, chunk = 1;
        while (nfree > 0 && next < reads) {
            uint32_t slot = free_slots[--nfree];
            struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
            io_uring_prep_read(sqe, 0, bufs + (size_t)slot * BLOCK, BLOCK, (uint64_t)offs[next++]);
            sqe->flags |= IOSQE_FIXED_FILE;
            io_uring_sqe_set_data64(sqe, slot);
            prepared++;
            if (way == EACH || (way == DOUBLING && prepared == chunk)) {
                submit_or_die(&ring);
                prepared = 0;
                chunk *= 2;
            }
        }
        if (prepared > 0)
            submit_or_die(&ring);
        struct io_uring_cqe *cqe;
        if ((rc = io_uring_wait_cqe(&ring, &cqe)) < 0)
            die("io_uring_wait_cqe", -rc);
        unsigned head, seen = 0;
        io_uring_for_each_cqe(&ring, head, cqe)
        {
            if (cqe->res != BLOCK)
                die("read", cqe->res < 0 ? -cqe->res : EIO);
            free_slots[nfree++] = (uint32_t)io_uring_cqe_get_data64(cqe);
            seen++;
        }
        io_uring_cq_advance(&ring, seen);
        done += (int)seen;
    }
    double ms = clock_ms(CLOCK_MONOTONIC) - t0;
    *cpu_ms += clock_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
    io_uring_queue_exit(&ring);
    return reads / ms * 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: nd_probe_ring FILE [READS] [ROUNDS] [CPU]\n");
        return 2;
    }
    int reads = argc > 2 ? atoi(argv[2]) : 32768;
    int rounds = argc > 3 ? atoi(argv[3]) : 5;
    if (reads < QD || rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "nd_probe_ring: READS >= %d, ROUNDS 1..%d\n", QD, MAX_ROUNDS);
        return 2;
    }
    int fd = open(argv[1], O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (fd < 0)
        die(argv[1], errno);
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)BLOCK * QD * 4)
        die("the file is too small", EINVAL);
    cpu_set_t one, all;
    int pin = argc > 4 ? atoi(argv[4]) : -1;
    if (pin < 0 && sched_getaffinity(0, sizeof(all), &all) == 0)
        for (int c = CPU_SETSIZE - 1; c >= 0; c--)
            pin = CPU_ISSET(c, &all) ? c : pin;
    CPU_ZERO(&one);
    CPU_SET(pin < 0 ? 0 : pin, &one);
    if (sched_setaffinity(0, sizeof(one), &one) != 0)
        die("sched_setaffinity", errno);
    int64_t *offs = malloc((size_t)reads * sizeof(int64_t));
    uint8_t *bufs = aligned_alloc(BLOCK, (size_t)QD * BLOCK);
    if (offs == NULL || bufs == NULL)
        die("malloc", ENOMEM);
    uint64_t s = 0x2545F4914F6CDD1Dull, blocks = (uint64_t)st.st_size / BLOCK;
    for (int i = 0; i < reads; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        offs[i] = (int64_t)(s % blocks) * BLOCK;
    }
    double rate[WAYS][MAX_ROUNDS], ratio[WAYS][MAX_ROUNDS], cpu[WAYS] = {0};
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    (void)run(fd, offs, reads / 4, EACH, bufs, &(double){0}); /* warm-up */
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < WAYS; k++) {
            int way = (r + k) % WAYS;
            rate[way][r] = run(fd, offs, reads, way, bufs, &cpu[way]);
        }
    printf("%d random 4 KiB O_DIRECT reads of %s, %d in flight, one thread on CPU %d, %d rounds\n",
           reads, argv[1], QD, sched_getcpu(), rounds);
    printf("  %-9s %12s %10s %10s %14s\n", "way", "median/s", "min", "max", "vs each/round");
    for (int w = 0; w < WAYS; w++) /* before median() sorts the rates */
        for (int r = 0; r < rounds; r++)
            ratio[w][r] = rate[w][r] / rate[EACH][r];
    for (int w = 0; w < WAYS; w++) {
        double lo = rate[w][0], hi = rate[w][0];
        for (int r = 1; r < rounds; r++)
            lo = rate[w][r] < lo ? rate[w][r] : lo, hi = rate[w][r] > hi ? rate[w][r] : hi;
        double cpu_us = cpu[w] * 1e3 / ((double)reads * rounds);
        printf("  %-9s %12.0f %10.0f %10.0f %14.3f   cpu %.2f us/read\n", way_name[w],
               median(rate[w], rounds), lo, hi, median(ratio[w], rounds), cpu_us);
    }
    free(offs);
    free(bufs);
    close(fd);
    return 0;
}
