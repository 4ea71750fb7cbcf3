/*
 * direct_writer.c - which way of keeping an O_DIRECT write in flight
 * lets a writer's CPU work overlap the device (the design question behind
 * native/src/posix/writer.c; docs/benchmarks.md, "Direct writes").
 *
 *   nd_probe_writer DIR [ROUNDS] [CPU_US]
 *
 * Each round writes a fresh 64 MiB file in 1 MiB O_DIRECT writes and fsyncs
 * it, in each of these ways, the order rotating round by round:
 *   raw           pwrite loop, nothing else (the device's limit)
 *   sync+cpu      pwrite, then CPU_US of CPU work (a direct output without overlap)
 *   thread+cpu    the pwrite on a second thread while the caller works
 *   thread+cpu, 2 queued  the same with the next write queued before the last
 *                 is done: the thread goes from one pwrite to the next without
 *                 waiting to be woken
 *   uring+cpu     the write submitted to io_uring while the caller works
 *   uring+cpu, preallocated  the same into a file fallocate()d first (no extending writes)
 * The CPU work stands for an output's checksum and copy of the next buffer
 * (~0.3 ms per MiB with zlib's CRC). Prints each way's median time and its
 * per-round ratio to raw. Not a ctest test: it measures, it does not judge.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FILE_BYTES ((long)64 << 20)
#define CHUNK ((size_t)1 << 20)
#define MAX_ROUNDS 64

static const char *dir;
static double cpu_us = 300;
static unsigned char *bufs[3];

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void die(const char *what)
{
    perror(what);
    exit(1);
}

/* Busy CPU work for cpu_us microseconds (the stand-in for CRC + copy). */
static void work(void)
{
    double until = now_ms() + cpu_us / 1e3;
    volatile unsigned long x = 0;
    while (now_ms() < until)
        for (int i = 0; i < 1000; i++)
            x += (unsigned long)i;
}

static int fresh(const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT | O_CLOEXEC, 0644);
    if (fd < 0)
        die("open O_DIRECT");
    return fd;
}

static void put(int fd, const void *buf, long off)
{
    if (pwrite(fd, buf, CHUNK, off) != (ssize_t)CHUNK)
        die("pwrite");
}

static void finish(int fd)
{
    if (fsync(fd) != 0)
        die("fsync");
    close(fd);
}

static void way_raw(void)
{
    int fd = fresh("raw");
    for (long off = 0; off < FILE_BYTES; off += (long)CHUNK)
        put(fd, bufs[0], off);
    finish(fd);
}

static void way_sync(void)
{
    int fd = fresh("sync");
    for (long off = 0; off < FILE_BYTES; off += (long)CHUNK) {
        put(fd, bufs[0], off);
        work();
    }
    finish(fd);
}

/* The writer thread takes offsets from a queue (a semaphore counts them) and
 * posts `done` per write; the caller keeps up to `depth` writes queued. */
static struct {
    sem_t go, done;
    int fd, stop;
    long queue[4];
    unsigned head, tail;
} th;

static void *thread_loop(void *arg)
{
    (void)arg;
    for (;;) {
        sem_wait(&th.go);
        if (th.stop)
            return NULL;
        long off = th.queue[th.head++ % 4];
        put(th.fd, bufs[(off / (long)CHUNK) % 3], off);
        sem_post(&th.done);
    }
}

static void threaded(const char *name, int depth)
{
    th.fd = fresh(name);
    th.stop = 0;
    th.head = th.tail = 0;
    sem_init(&th.go, 0, 0);
    sem_init(&th.done, 0, 0);
    pthread_t t;
    if (pthread_create(&t, NULL, thread_loop, NULL) != 0)
        die("pthread_create");
    int in_flight = 0;
    for (long off = 0; off < FILE_BYTES; off += (long)CHUNK) {
        if (in_flight == depth) /* its buffer is the one to fill next */
            sem_wait(&th.done), in_flight--;
        th.queue[th.tail++ % 4] = off;
        sem_post(&th.go);
        in_flight++;
        work();
    }
    while (in_flight-- > 0)
        sem_wait(&th.done);
    th.stop = 1;
    sem_post(&th.go);
    pthread_join(t, NULL);
    finish(th.fd);
}

static void way_thread(void)
{
    threaded("thread", 1);
}

static void way_thread2(void)
{
    threaded("thread2", 2);
}

static void uring(const char *name, int preallocate)
{
    int fd = fresh(name);
    if (preallocate && fallocate(fd, 0, 0, FILE_BYTES) != 0)
        die("fallocate");
    struct io_uring ring;
    if (io_uring_queue_init(2, &ring, 0) < 0)
        die("io_uring_queue_init");
    for (long off = 0; off < FILE_BYTES; off += (long)CHUNK) {
        struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
        io_uring_prep_write(sqe, fd, bufs[(off / (long)CHUNK) & 1], (unsigned)CHUNK, (__u64)off);
        io_uring_submit(&ring);
        work();
        struct io_uring_cqe *cqe;
        if (io_uring_wait_cqe(&ring, &cqe) != 0 || cqe->res != (int)CHUNK)
            die("io_uring write");
        io_uring_cqe_seen(&ring, cqe);
    }
    io_uring_queue_exit(&ring);
    finish(fd);
}

static void way_uring(void)
{
    uring("uring", 0);
}

static void way_uring_prealloc(void)
{
    uring("uring-prealloc", 1);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR [ROUNDS] [CPU_US]\n", argv[0]);
        return 2;
    }
    dir = argv[1];
    int rounds = argc > 2 ? atoi(argv[2]) : 9;
    if (rounds < 1 || rounds > MAX_ROUNDS)
        rounds = 9;
    if (argc > 3)
        cpu_us = atof(argv[3]);
    for (int i = 0; i < 3; i++) {
        bufs[i] = aligned_alloc(4096, CHUNK);
        if (bufs[i] == NULL)
            die("aligned_alloc");
        memset(bufs[i], 'a' + i, CHUNK);
    }
    static const struct {
        const char *name;
        void (*run)(void);
    } ways[] = {{"raw", way_raw},           {"sync+cpu", way_sync},
                {"thread+cpu", way_thread}, {"thread+cpu, 2 queued", way_thread2},
                {"uring+cpu", way_uring},   {"uring+cpu, preallocated", way_uring_prealloc}};
    enum { WAYS = sizeof(ways) / sizeof(ways[0]) };
    static double t[WAYS][MAX_ROUNDS];
    for (int r = -1; r < rounds; r++) /* round -1 warms up, untimed */
        for (int i = 0; i < WAYS; i++) {
            int k = (i + (r < 0 ? 0 : r)) % WAYS;
            double t0 = now_ms();
            ways[k].run();
            if (r >= 0)
                t[k][r] = now_ms() - t0;
        }
    printf("64 MiB in 1 MiB O_DIRECT writes + fsync, %d rounds, %.0f us of CPU per write\n", rounds,
           cpu_us);
    for (int k = 0; k < WAYS; k++) {
        double ratio[MAX_ROUNDS];
        for (int r = 0; r < rounds; r++)
            ratio[r] = t[k][r] / t[0][r];
        qsort(ratio, (size_t)rounds, sizeof(double), by_value);
        qsort(t[k], (size_t)rounds, sizeof(double), by_value);
        printf("%-24s median %7.1f ms (%.1f-%.1f)  per-round ratio to raw %.3f (%.3f-%.3f)\n",
               ways[k].name, t[k][rounds / 2], t[k][0], t[k][rounds - 1], ratio[rounds / 2],
               ratio[0], ratio[rounds - 1]);
    }
    return 0;
}
