/*
 * fresh_map.c - FreshMapScan: a file written through nativedir's
 * buffered output in an application's usual small pieces, then opened mapped
 * and scanned once, against memcpy of the same bytes from memory. Lucene maps
 * every segment file right after writing it, so this is paid on every flush.
 *
 * What the pieces decide is the page cache's folio size: a small write leaves
 * small folios, each of which costs a fault (or a batch of PTEs) when a fresh
 * mapping first touches it; 2 MiB-aligned writes leave 2 MiB folios (where the
 * file system keeps large folios), mapped with one PMD each. The control row
 * writes the file with one pwrite, which leaves the largest folios the page
 * cache makes, so it shows what the scan costs when the writer is not at fault.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench.h"

enum { FM_MEMCPY, FM_ND_PIECES, FM_ONE_PWRITE };

typedef struct {
    int kind;
    size_t piece; /* FM_ND_PIECES: the nd_write_bytes call size */
    size_t chunk; /* the scan copies this much at a time */
    uint64_t expect;
    uint8_t *buf;
} fm_ctx;

/* One 8-byte fold per page of each chunk copied: the scan reaches every page,
 * and a page of the wrong bytes changes the sum. */
static uint64_t fold_pages(uint64_t sum, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i + 8 <= n; i += 4096)
        sum = fold8(sum, p + i);
    return sum;
}

static void write_file(bench *b, const fm_ctx *c)
{
    unlinkat(b->work_fd, MAP_NAME, 0);
    if (c->kind == FM_ND_PIECES) {
        nd_handle out;
        nd_check(nd_create_output(b->nd_dir, MAP_NAME, 0, &out), "nd_create_output");
        for (int64_t off = 0; off < b->size; off += (int64_t)c->piece) {
            int64_t n = b->size - off < (int64_t)c->piece ? b->size - off : (int64_t)c->piece;
            nd_check(nd_write_bytes(out, b->data + off, n), "nd_write_bytes");
        }
        nd_check(nd_close(out), "nd_close(output)");
        return;
    }
    int fd = openat(b->work_fd, MAP_NAME, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        die("create %s: %s", MAP_NAME, strerror(errno));
    for (int64_t off = 0; off < b->size;) {
        ssize_t n = pwrite(fd, b->data + off, (size_t)(b->size - off), off);
        if (n <= 0)
            die("write %s: %s", MAP_NAME, n < 0 ? strerror(errno) : "wrote nothing");
        off += n;
    }
    close(fd);
}

static double run_fresh_map(bench *b, void *vctx, run_out *out)
{
    fm_ctx *c = vctx;
    /* untimed: the file is written (and left in the page cache as the writer left it) */
    if (c->kind != FM_MEMCPY)
        write_file(b, c);
    cold_caches(b);
    if (c->kind != FM_MEMCPY)
        cold_file(b->work_fd, MAP_NAME, b->size);
    uint64_t sum = 0;
    double c0 = cpu_ms();
    double t0 = now_ms();
    if (c->kind == FM_MEMCPY) {
        for (int64_t off = 0; off < b->size; off += (int64_t)c->chunk) {
            memcpy(c->buf, b->data + off, c->chunk);
            sum = fold_pages(sum, c->buf, c->chunk);
        }
    } else {
        /* what a reader that opens the new file and scans it once pays: the
         * mapping, its first-touch faults, and its unmapping at close */
        nd_handle in;
        nd_check(nd_open_input(b->nd_dir, MAP_NAME, ND_IO_MMAP, &in), "nd_open_input");
        if (nd_input_strategy(in) != ND_STRATEGY_MAPPED)
            die("FreshMapScan: %s did not map (strategy %d)", MAP_NAME, nd_input_strategy(in));
        for (int64_t off = 0; off < b->size; off += (int64_t)c->chunk) {
            nd_check(nd_read_bytes(in, off, c->buf, (int64_t)c->chunk), "nd_read_bytes");
            sum = fold_pages(sum, c->buf, c->chunk);
        }
        nd_check(nd_close(in), "nd_close(input)");
    }
    double ms = now_ms() - t0;
    out->cpu = cpu_ms() - c0;
    if (sum != c->expect)
        die("FreshMapScan: read wrong bytes (checksum %llx, expected %llx)",
            (unsigned long long)sum, (unsigned long long)c->expect);
    return ms;
}

static void free_fm(void *ctx)
{
    free(((fm_ctx *)ctx)->buf);
}

static row *queue_fm(bench *b, const char *name, const char *base, fm_ctx c, const char *note)
{
    c.chunk = b->chunk;
    c.buf = aligned_or_die(4096, c.chunk);
    c.expect = 0;
    for (int64_t off = 0; off < b->size; off += (int64_t)c.chunk)
        c.expect = fold_pages(c.expect, b->data + off, c.chunk);
    row *r = bench_row("FreshMapScan", name, base);
    snprintf(r->note, sizeof(r->note), "%s", note);
    bench_queue(r, run_fresh_map, &c, sizeof(c), free_fm);
    return r;
}

void bench_fresh_map(bench *b)
{
    char limit[96], name[96], note[200];
    snprintf(limit, sizeof(limit), "memcpy from memory (%zu KiB chunks)", b->chunk >> 10);
    queue_fm(b, limit, NULL, (fm_ctx){FM_MEMCPY, 0, 0, 0, NULL}, "warm anonymous buffer");
    static const size_t pieces[] = {8u << 10, 64u << 10};
    for (size_t i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++) {
        snprintf(name, sizeof(name), "fresh mapping, written by nd_write_bytes %zu KiB",
                 pieces[i] >> 10);
        snprintf(note, sizeof(note),
                 "buffered output, %zu KiB calls, closed; then (timed) open mapped, copy out in "
                 "%zu KiB reads, close",
                 pieces[i] >> 10, b->chunk >> 10);
        queue_fm(b, name, limit, (fm_ctx){FM_ND_PIECES, pieces[i], 0, 0, NULL}, note);
    }
    snprintf(note, sizeof(note),
             "control: the file written by one pwrite (the largest folios the page cache "
             "makes), then scanned the same way");
    queue_fm(b, "fresh mapping, written by one pwrite", limit,
             (fm_ctx){FM_ONE_PWRITE, 0, 0, 0, NULL}, note);
    bench_run_queued(b);
    unlinkat(b->work_fd, MAP_NAME, 0);
}

void bench_fresh_map_targets(void)
{
    static const size_t pieces[] = {8u << 10, 64u << 10};
    char name[96];
    for (size_t i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++) {
        snprintf(name, sizeof(name), "fresh mapping, written by nd_write_bytes %zu KiB",
                 pieces[i] >> 10);
        row *r = bench_find("FreshMapScan", name);
        if (r != NULL)
            bench_target_ratio(r, 1.5);
    }
}
