/*
 * read.c - the single-threaded read workloads (ReadSequential,
 * ReadByteSequential, ReadRandom) for each input strategy, beside their
 * limits, and the BufferSweep that informs the core's cursor buffer sizes.
 *
 * Inputs are opened and closed outside the timed part, once per run, so a
 * mapped input pays its page faults inside the timing as a real reader would.
 * Every run checks its checksum against one computed from memory: a fast
 * wrong answer is a failure, not a result.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

enum {
    SEQ_MEMCPY,
    SEQ_PREAD,
    SEQ_PREAD_DIRECT,
    SEQ_ND_BUFFERED,
    SEQ_ND_BYTES,
    BYTE_MEMORY,
    BYTE_WINDOW,
    BYTE_CALL,
    RND_MEMCPY,
    RND_PREAD,
    RND_ND_BYTES,
    RND_ND_SEEK
};

typedef struct {
    int kind;
    uint32_t flags;  /* nativedir inputs */
    size_t chunk;    /* sequential chunk, or random read length */
    int count;       /* random reads per run */
    int64_t span;    /* random offsets are taken modulo this (size - chunk + 1) */
    uint64_t expect; /* the checksum every run must produce */
    uint8_t *buf;
    int keep_open; /* open the input once and reuse it: a long-lived reader */
    nd_handle kept;
} read_ctx;

typedef struct {
    const char *label;
    uint32_t flags;
} strategy;

static const strategy strategies[] = {
    {"buffered", 0},
    {"mapped", ND_IO_MMAP},
    {"ND_IO_MERGE", ND_IO_MERGE},
};
#define NSTRATEGIES (sizeof(strategies) / sizeof(strategies[0]))

static read_ctx ctx_of(int kind, uint32_t flags, size_t chunk, int count)
{
    read_ctx c = {0};
    c.kind = kind, c.flags = flags, c.chunk = chunk, c.count = count;
    return c;
}

static int64_t offset_at(const bench *b, const read_ctx *c, int i)
{
    return b->offsets[i] % c->span;
}

/* The checksum of a workload computed from memory. */
static uint64_t expected(const bench *b, const read_ctx *c)
{
    uint64_t sum = 0;
    switch (c->kind) {
    case BYTE_MEMORY:
    case BYTE_WINDOW: return b->byte_sum;
    case BYTE_CALL: return byte_sum(0, b->data, (size_t)c->count);
    case RND_MEMCPY:
    case RND_PREAD:
    case RND_ND_BYTES:
    case RND_ND_SEEK:
        for (int i = 0; i < c->count; i++)
            sum = fold8(sum, b->data + offset_at(b, c, i));
        return sum;
    default:
        for (int64_t off = 0; off + 8 <= b->size; off += (int64_t)c->chunk)
            sum = fold8(sum, b->data + off);
        return sum;
    }
}

static void pread_exact(int fd, void *dst, size_t len, int64_t off)
{
    uint8_t *p = dst;
    while (len > 0) {
        ssize_t n = pread(fd, p, len, off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            die("pread at %lld: %s", (long long)off, n < 0 ? strerror(errno) : "end of file");
        p += n;
        off += n;
        len -= (size_t)n;
    }
}

static double run_read(bench *b, void *vctx, run_out *out)
{
    read_ctx *c = vctx;
    int fd = -1;
    nd_handle in = 0;
    uint64_t sum = 0;
    int64_t size = b->size;
    size_t ck = c->chunk;
    if (c->kind == SEQ_PREAD || c->kind == SEQ_PREAD_DIRECT || c->kind == RND_PREAD) {
        fd = openat(b->work_fd, DATA_NAME,
                    O_RDONLY | O_CLOEXEC | (c->kind == SEQ_PREAD_DIRECT ? O_DIRECT : 0));
        if (fd < 0)
            die("open %s: %s", DATA_NAME, strerror(errno));
    } else if (c->kind != SEQ_MEMCPY && c->kind != BYTE_MEMORY && c->kind != RND_MEMCPY) {
        if (c->kept == 0)
            nd_check(nd_open_input(b->nd_dir, DATA_NAME, c->flags, &in), "nd_open_input");
        else
            in = c->kept;
        if (c->keep_open) {
            c->kept = in;
            nd_check(nd_input_seek(in, 0), "nd_input_seek");
        }
    }

    cold_caches(b);
    double c0 = cpu_ms();
    double t0 = now_ms();
    switch (c->kind) {
    case SEQ_MEMCPY:
        for (int64_t off = 0; off < size; off += (int64_t)ck) {
            memcpy(c->buf, b->data + off, ck);
            sum = fold8(sum, c->buf);
        }
        break;
    case SEQ_PREAD:
    case SEQ_PREAD_DIRECT:
        for (int64_t off = 0; off < size; off += (int64_t)ck) {
            pread_exact(fd, c->buf, ck, off);
            sum = fold8(sum, c->buf);
        }
        break;
    case SEQ_ND_BUFFERED:
        for (int64_t off = 0; off < size; off += (int64_t)ck) {
            nd_check(nd_read_buffered(in, c->buf, (int64_t)ck), "nd_read_buffered");
            sum = fold8(sum, c->buf);
        }
        break;
    case SEQ_ND_BYTES:
        for (int64_t off = 0; off < size; off += (int64_t)ck) {
            nd_check(nd_read_bytes(in, off, c->buf, (int64_t)ck), "nd_read_bytes");
            sum = fold8(sum, c->buf);
        }
        break;
    case BYTE_MEMORY: sum = byte_sum(0, b->data, (size_t)size); break;
    case BYTE_WINDOW:
        /* what a binding does: one native call per window, plain loads inside it */
        for (int64_t pos = 0; pos < size;) {
            const uint8_t *p;
            int64_t n = nd_input_window(in, pos, &p);
            nd_check(n, "nd_input_window");
            sum = byte_sum(sum, p, (size_t)n);
            pos += n;
        }
        break;
    case BYTE_CALL:
        for (int64_t i = 0; i < c->count; i++) {
            int32_t v = nd_read_byte_buffered(in);
            if (v < 0)
                nd_check(v, "nd_read_byte_buffered");
            sum = sum * 31 + (uint8_t)v;
        }
        break;
    case RND_MEMCPY:
        for (int i = 0; i < c->count; i++) {
            memcpy(c->buf, b->data + offset_at(b, c, i), ck);
            sum = fold8(sum, c->buf);
        }
        break;
    case RND_PREAD:
        for (int i = 0; i < c->count; i++) {
            pread_exact(fd, c->buf, ck, offset_at(b, c, i));
            sum = fold8(sum, c->buf);
        }
        break;
    case RND_ND_BYTES:
        for (int i = 0; i < c->count; i++) {
            nd_check(nd_read_bytes(in, offset_at(b, c, i), c->buf, (int64_t)ck), "nd_read_bytes");
            sum = fold8(sum, c->buf);
        }
        break;
    case RND_ND_SEEK:
        for (int i = 0; i < c->count; i++) {
            nd_check(nd_input_seek(in, offset_at(b, c, i)), "nd_input_seek");
            nd_check(nd_read_buffered(in, c->buf, (int64_t)ck), "nd_read_buffered");
            sum = fold8(sum, c->buf);
        }
        break;
    }
    double ms = now_ms() - t0;
    out->cpu = cpu_ms() - c0;

    if (fd >= 0)
        close(fd);
    if (in != 0 && !c->keep_open) {
        nd_check(nd_input_unpin(in), "nd_input_unpin"); /* a close leaves a window pinned */
        nd_check(nd_close(in), "nd_close(input)");
    }
    if (sum != c->expect)
        die("workload %d read wrong bytes: checksum %llx, expected %llx", c->kind,
            (unsigned long long)sum, (unsigned long long)c->expect);
    return ms;
}

static void free_buf(void *ctx)
{
    read_ctx *c = ctx;
    free(c->buf);
    if (c->kept != 0)
        nd_check(nd_close(c->kept), "nd_close(input)");
}

static row *measure_read(bench *b, const char *group, const char *name, const char *base,
                         read_ctx c, const char *note)
{
    if (c.span == 0)
        c.span = b->size - (int64_t)c.chunk + 1;
    c.expect = expected(b, &c);
    c.buf = aligned_or_die(b->buf_align, c.chunk > 4096 ? c.chunk : 4096);
    row *r = bench_row(group, name, base);
    if (note != NULL)
        snprintf(r->note, sizeof(r->note), "%s", note);
    bench_queue(r, run_read, &c, sizeof(c), free_buf);
    return r;
}

static void check_strategy(bench *b, const strategy *s)
{
    nd_handle in;
    nd_check(nd_open_input(b->nd_dir, DATA_NAME, s->flags, &in), "nd_open_input");
    int st = nd_input_strategy(in);
    nd_close(in);
    if (s->flags & ND_IO_MERGE && st != ND_STRATEGY_DIRECT)
        fprintf(stderr, "nd_bench: note: ND_IO_MERGE reads here are not direct (strategy %d)\n",
                st);
}

/* Queues the nd_read_buffered and nd_read_bytes rows of one strategy. */
static void queue_sequential(bench *b, const strategy *s, const char *limit, const char *note)
{
    char name[96];
    uint32_t flags = s->flags | ND_IO_SEQUENTIAL;
    check_strategy(b, s);
    snprintf(name, sizeof(name), "nd_read_buffered (%s)", s->label);
    measure_read(b, "ReadSequential", name, limit, ctx_of(SEQ_ND_BUFFERED, flags, b->chunk, 0),
                 note);
    snprintf(name, sizeof(name), "nd_read_bytes (%s)", s->label);
    measure_read(b, "ReadSequential", name, limit, ctx_of(SEQ_ND_BYTES, flags, b->chunk, 0), note);
}

void bench_read_sequential(bench *b)
{
    const char *g = "ReadSequential";
    char limit[96], name[96], note[96];
    size_t ck = b->chunk;
    snprintf(note, sizeof(note), "whole file in %zu KiB reads, page cache warm", ck >> 10);
    snprintf(limit, sizeof(limit), "memcpy from memory (%zu KiB chunks)", ck >> 10);
    measure_read(b, g, limit, NULL, ctx_of(SEQ_MEMCPY, 0, ck, 0), note);
    snprintf(name, sizeof(name), "raw pread loop %zu KiB", ck >> 10);
    measure_read(b, g, name, limit, ctx_of(SEQ_PREAD, 0, ck, 0), note);
    for (size_t i = 0; i < NSTRATEGIES; i++)
        if (!(strategies[i].flags & ND_IO_MERGE))
            queue_sequential(b, &strategies[i], limit, note);
    /* the steady state of a search engine: the input stays open between scans, so
     * the mapping's page faults are paid once, not per scan */
    read_ctx kept = ctx_of(SEQ_ND_BYTES, ND_IO_MMAP | ND_IO_SEQUENTIAL, ck, 0);
    kept.keep_open = 1;
    measure_read(b, g, "nd_read_bytes (mapped, kept open)", limit, kept,
                 "input opened once and reused across runs (no page faults after the first)");
    bench_run_queued(b);
    /* Direct reads in their own rounds: on this VM a 64 MiB O_DIRECT scan of the
     * file makes the next fresh mapping of it 25-40% slower to fault in (measured
     * with the rows in either order), which would land on whichever mapped row
     * happened to follow one; the memory-speed rows above are not interleaved with
     * device-speed ones. */
    snprintf(name, sizeof(name), "raw O_DIRECT pread loop %zu KiB", ck >> 10);
    measure_read(b, g, name, limit, ctx_of(SEQ_PREAD_DIRECT, 0, ck, 0),
                 "the device's own limit for the direct strategy");
    for (size_t i = 0; i < NSTRATEGIES; i++)
        if (strategies[i].flags & ND_IO_MERGE)
            queue_sequential(b, &strategies[i], limit, note);
    bench_run_queued(b);
}

void bench_read_bytes(bench *b)
{
    const char *g = "ReadByteSequential";
    const char *limit = "byte loop over memory";
    const char *note = "sum = sum*31 + byte over every byte";
    char name[96];
    measure_read(b, g, limit, NULL, ctx_of(BYTE_MEMORY, 0, 1, 0), note);
    for (size_t i = 0; i < NSTRATEGIES; i++) {
        uint32_t flags = strategies[i].flags | ND_IO_SEQUENTIAL;
        snprintf(name, sizeof(name), "nd_input_window loop (%s)", strategies[i].label);
        measure_read(b, g, name, limit, ctx_of(BYTE_WINDOW, flags, 1, 0), note);
    }
    for (size_t i = 0; i < NSTRATEGIES; i++) {
        uint32_t flags = strategies[i].flags | ND_IO_SEQUENTIAL;
        snprintf(name, sizeof(name), "nd_read_byte_buffered (%s)", strategies[i].label);
        /* a call per byte is slow by design: a sixteenth of the file, scaled, says it */
        row *r = measure_read(b, g, name, limit, ctx_of(BYTE_CALL, flags, 1, (int)(b->size / 16)),
                              "one native call per byte (what bindings must not do); "
                              "a sixteenth of the file measured, time scaled to all of it");
        r->scale = 16;
    }
    bench_run_queued(b);
}

void bench_read_random(bench *b)
{
    const char *g = "ReadRandom";
    const char *limit = "raw pread loop";
    char name[96], note[160];
    int n = b->random_reads;
    snprintf(note, sizeof(note), "%d reads of 64 bytes at random offsets, page cache warm", n);
    measure_read(b, g, limit, NULL, ctx_of(RND_PREAD, 0, 64, n), note);
    measure_read(b, g, "memcpy from memory", limit, ctx_of(RND_MEMCPY, 0, 64, n), note);
    for (size_t i = 0; i < NSTRATEGIES; i++) {
        const strategy *s = &strategies[i];
        read_ctx c = ctx_of(RND_ND_BYTES, s->flags | ND_IO_RANDOM, 64, n);
        snprintf(name, sizeof(name), "nd_read_bytes (%s)", s->label);
        if (s->flags & ND_IO_MERGE) {
            /* every direct read reaches the device: measure fewer, report the same
             * count's time so the ratio stays comparable */
            c.count = b->direct_random < n ? b->direct_random : n;
            snprintf(note, sizeof(note),
                     "%d reads measured, time scaled to %d; each read goes to the device", c.count,
                     n);
            row *r = measure_read(b, g, name, limit, c, note);
            r->scale = (double)n / c.count;
        } else {
            measure_read(b, g, name, limit, c, NULL);
        }
    }
    measure_read(b, g, "nd_input_seek+nd_read_buffered (buffered)", limit,
                 ctx_of(RND_ND_SEEK, ND_IO_RANDOM, 64, n),
                 "through the cursor buffer (ND_IO_RANDOM): fills a whole buffer per read");
    bench_run_queued(b);
}

void bench_buffer_sweep(bench *b)
{
    static const size_t sizes[] = {4u << 10, 16u << 10, 64u << 10, 256u << 10};
    const char *g = "BufferSweep";
    char limit[96], name[96];
    snprintf(limit, sizeof(limit), "memcpy from memory (64 KiB chunks)");
    measure_read(b, g, limit, NULL, ctx_of(SEQ_MEMCPY, 0, 64u << 10, 0),
                 "informative: sequential scan cost per pread size");
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        if ((int64_t)sizes[i] > b->size)
            continue;
        snprintf(name, sizeof(name), "sequential pread %zu KiB", sizes[i] >> 10);
        measure_read(b, g, name, limit, ctx_of(SEQ_PREAD, 0, sizes[i], 0), NULL);
    }

    bench_run_queued(b);

    /* the other side of the choice: what a random reader pays for each size */
    g = "BufferSweepRandom";
    int n = b->random_reads < 20000 ? b->random_reads : 20000;
    char note[128];
    snprintf(note, sizeof(note), "informative: %d preads at random offsets, per read size", n);
    snprintf(limit, sizeof(limit), "random pread 64 B");
    measure_read(b, g, limit, NULL, ctx_of(RND_PREAD, 0, 64, n), note);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        if ((int64_t)sizes[i] > b->size)
            continue;
        snprintf(name, sizeof(name), "random pread %zu KiB", sizes[i] >> 10);
        measure_read(b, g, name, limit, ctx_of(RND_PREAD, 0, sizes[i], n), note);
    }
    bench_run_queued(b);
}
