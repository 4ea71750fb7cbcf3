/*
 * concurrent.c - ConcurrentCloneReads: two threads, each reading through its
 * own clone of one input, against one thread doing the same total work on
 * one clone. The ratio of the two times is the scaling the library allows;
 * anything shared on the read path (a lock, a contended cache line) shows
 * up here and nowhere else.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

typedef struct {
    int sequential; /* else 64-byte reads at random offsets, through the cursor */
    uint32_t flags;
    int threads;
    int raw;        /* pread on one shared descriptor: the machine's own scaling */
} conc_ctx;

typedef struct {
    bench *b;
    const conc_ctx *c;
    nd_handle clone;
    int fd;
    int first, count; /* random: offsets[first .. first+count) */
    int scans;        /* sequential: whole-file scans */
    uint64_t sum;
    double t_start, t_end; /* timed inside: on 2 cores the main thread may not run at all */
    double cpu;            /* this worker's CPU time: more in total with 2 threads = contention */
    pthread_barrier_t *start;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    bench *b = w->b;
    uint8_t *buf = aligned_or_die(4096, b->chunk);
    uint64_t sum = 0;
    pthread_barrier_wait(w->start);
    w->t_start = now_ms();
    double c0 = cpu_ms();
    if (w->c->raw) {
        for (int i = w->first; i < w->first + w->count; i++) {
            if (pread(w->fd, buf, 64, b->offsets[i]) != 64)
                die("pread failed");
            sum = fold8(sum, buf);
        }
    } else if (w->c->sequential) {
        for (int s = 0; s < w->scans; s++) {
            nd_check(nd_input_seek(w->clone, 0), "nd_input_seek");
            for (int64_t off = 0; off < b->size; off += (int64_t)b->chunk) {
                nd_check(nd_read_buffered(w->clone, buf, (int64_t)b->chunk), "nd_read_buffered");
                sum = fold8(sum, buf);
            }
        }
    } else {
        for (int i = w->first; i < w->first + w->count; i++) {
            nd_check(nd_input_seek(w->clone, b->offsets[i]), "nd_input_seek");
            nd_check(nd_read_buffered(w->clone, buf, 64), "nd_read_buffered");
            sum = fold8(sum, buf);
        }
    }
    w->t_end = now_ms();
    w->cpu = cpu_ms() - c0;
    w->sum = sum;
    free(buf);
    return NULL;
}

static uint64_t expected(const bench *b, const worker *w)
{
    uint64_t sum = 0;
    if (w->c->sequential && !w->c->raw) {
        for (int s = 0; s < w->scans; s++)
            for (int64_t off = 0; off < b->size; off += (int64_t)b->chunk)
                sum = fold8(sum, b->data + off);
    } else {
        for (int i = w->first; i < w->first + w->count; i++)
            sum = fold8(sum, b->data + b->offsets[i]);
    }
    return sum;
}

static double run_concurrent(bench *b, void *vctx, run_out *out)
{
    const conc_ctx *c = vctx;
    worker w[2];
    pthread_t t[2];
    pthread_barrier_t start;
    nd_handle parent = 0;
    int fd = -1;
    if (c->raw) {
        fd = openat(b->work_fd, DATA_NAME, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            die("open %s failed", DATA_NAME);
    } else {
        nd_check(nd_open_input(b->nd_dir, DATA_NAME, c->flags, &parent), "nd_open_input");
    }
    /* both configurations do the same total work: two threads split it */
    int total = 2 * b->random_reads;
    pthread_barrier_init(&start, NULL, (unsigned)c->threads + 1);
    for (int i = 0; i < c->threads; i++) {
        w[i] = (worker){.b = b, .c = c, .first = i * total / c->threads,
                        .count = total / c->threads, .scans = 2 / c->threads, .start = &start,
                        .fd = fd};
        if (!c->raw)
            nd_check(nd_input_clone(parent, &w[i].clone), "nd_input_clone");
    }
    cold_caches(b);
    for (int i = 0; i < c->threads; i++)
        if (pthread_create(&t[i], NULL, work, &w[i]) != 0)
            die("pthread_create failed");
    pthread_barrier_wait(&start);
    double first = 0, last = 0;
    for (int i = 0; i < c->threads; i++) {
        pthread_join(t[i], NULL);
        first = i == 0 || w[i].t_start < first ? w[i].t_start : first;
        last = i == 0 || w[i].t_end > last ? w[i].t_end : last;
    }
    double ms = last - first;
    out->cpu = 0;
    for (int i = 0; i < c->threads; i++)
        out->cpu += w[i].cpu;
    pthread_barrier_destroy(&start);
    for (int i = 0; i < c->threads; i++) {
        if (!c->raw)
            nd_check(nd_close(w[i].clone), "nd_close(clone)");
        if (w[i].sum != expected(b, &w[i]))
            die("ConcurrentCloneReads: thread %d read wrong bytes", i);
    }
    if (c->raw)
        close(fd);
    else
        nd_check(nd_close(parent), "nd_close(input)");
    return ms;
}

static void pair(bench *b, const char *what, const char *label, int sequential, uint32_t flags,
                 int raw, const char *note)
{
    char one[96], two[96];
    snprintf(one, sizeof(one), "%s (%s) 1 thread", what, label);
    snprintf(two, sizeof(two), "%s (%s) 2 threads%s", what, label, raw ? "" : ", clone each");
    conc_ctx c1 = {sequential, flags, 1, raw}, c2 = {sequential, flags, 2, raw};
    row *r = bench_row("ConcurrentCloneReads", one, NULL);
    snprintf(r->note, sizeof(r->note), "%s", note);
    bench_queue(r, run_concurrent, &c1, sizeof(c1), NULL);
    r = bench_row("ConcurrentCloneReads", two, one);
    snprintf(r->note, sizeof(r->note), "%s", note);
    bench_queue(r, run_concurrent, &c2, sizeof(c2), NULL);
}

void bench_concurrent(bench *b)
{
    char note[160];
    snprintf(note, sizeof(note),
             "%d x nd_input_seek + 64-byte nd_read_buffered in all, split over the threads",
             2 * b->random_reads);
    pair(b, "random", "buffered", 0, ND_IO_RANDOM, 0, note);
    pair(b, "random", "mapped", 0, ND_IO_MMAP | ND_IO_RANDOM, 0, note);
    snprintf(note, sizeof(note),
             "%d x 64-byte pread on one shared descriptor in all: how far this machine scales",
             2 * b->random_reads);
    pair(b, "random", "raw pread", 0, 0, 1, note);
    snprintf(note, sizeof(note), "2 whole-file scans in %zu KiB nd_read_buffered, split over the threads",
             b->chunk >> 10);
    pair(b, "sequential", "buffered", 1, ND_IO_SEQUENTIAL, 0, note);
    pair(b, "sequential", "mapped", 1, ND_IO_MMAP | ND_IO_SEQUENTIAL, 0, note);
    pair(b, "sequential", "ND_IO_MERGE", 1, ND_IO_MERGE, 0, note);
    bench_run_queued(b);
}
