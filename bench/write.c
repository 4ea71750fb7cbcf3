/*
 * write.c - Write and WriteSync: the file of record written in chunks through
 * nativedir's outputs, beside raw write() and raw O_DIRECT writes, with the
 * share of the file each leaves in the page cache.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

enum { W_ND, W_RAW, W_RAW_DIRECT };

typedef struct {
    int kind;
    uint32_t flags; /* nativedir outputs */
    int sync;
    size_t chunk;
    row *r; /* whose note names the strategy nativedir chose */
} write_ctx;

static void write_all(int fd, const uint8_t *p, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            die("write: %s", n < 0 ? strerror(errno) : "wrote nothing");
        p += n;
        len -= (size_t)n;
    }
}

static const char *strategy_name(int s)
{
    switch (s) {
    case ND_STRATEGY_BUFFERED: return "buffered";
    case ND_STRATEGY_DIRECT: return "direct";
    case ND_STRATEGY_DROP_BEHIND: return "drop-behind (O_DIRECT refused)";
    default: return "unknown";
    }
}

static double run_write(bench *b, void *vctx, run_out *out)
{
    write_ctx *c = vctx;
    /* each run starts from no file and a clean cache, so runs are independent */
    unlinkat(b->work_fd, WRITE_NAME, 0);
    cold_caches(b);
    double c0 = cpu_ms();
    double t0 = now_ms();
    if (c->kind == W_ND) {
        nd_handle out;
        nd_check(nd_create_output(b->nd_dir, WRITE_NAME, c->flags, &out), "nd_create_output");
        snprintf(c->r->note, sizeof(c->r->note), "%zu KiB chunks; strategy %s", c->chunk >> 10,
                 strategy_name(nd_output_strategy(out)));
        for (int64_t off = 0; off < b->size; off += (int64_t)c->chunk) {
            int64_t n = b->size - off < (int64_t)c->chunk ? b->size - off : (int64_t)c->chunk;
            nd_check(nd_write_bytes(out, b->data + off, n), "nd_write_bytes");
        }
        if (c->sync)
            nd_check(nd_output_sync(out), "nd_output_sync");
        nd_check(nd_close(out), "nd_close(output)");
    } else {
        int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
        if (c->kind == W_RAW_DIRECT)
            flags |= O_DIRECT;
        int fd = openat(b->work_fd, WRITE_NAME, flags, 0644);
        if (fd < 0)
            die("open %s%s: %s", WRITE_NAME, c->kind == W_RAW_DIRECT ? " O_DIRECT" : "",
                strerror(errno));
        /* the data is aligned and the size a multiple of the chunk: O_DIRECT straight
         * from it, no staging copy, which is the device's own limit */
        for (int64_t off = 0; off < b->size; off += (int64_t)c->chunk) {
            size_t n = b->size - off < (int64_t)c->chunk ? (size_t)(b->size - off) : c->chunk;
            write_all(fd, b->data + off, n);
        }
        if (c->sync && fsync(fd) != 0)
            die("fsync: %s", strerror(errno));
        close(fd);
    }
    double ms = now_ms() - t0;
    out->cpu = cpu_ms() - c0;
    out->cached = cached_percent(b->work_fd, WRITE_NAME);
    evict(b->work_fd, WRITE_NAME);
    return ms;
}

static row *measure_write(bench *b, const char *group, const char *name, const char *base,
                          write_ctx c)
{
    row *r = bench_row(group, name, base);
    c.r = r;
    if (c.kind != W_ND)
        snprintf(r->note, sizeof(r->note), "%zu KiB chunks%s", c.chunk >> 10,
                 c.kind == W_RAW_DIRECT ? "; page-aligned buffer" : "");
    bench_queue(r, run_write, &c, sizeof(c), NULL);
    return r;
}

void bench_write(bench *b)
{
    char raw[96], raw_direct[96], name[96];
    size_t ck = b->chunk;
    size_t big = (size_t)1 << 20; /* 1 MiB direct writes keep a device streaming */
    if ((int64_t)big > b->size)
        big = (size_t)b->size;

    snprintf(raw, sizeof(raw), "raw write() %zu KiB", ck >> 10);
    measure_write(b, "Write", raw, NULL, (write_ctx){W_RAW, 0, 0, ck, NULL});
    measure_write(b, "Write", "nd_write_bytes (buffered)", raw,
                  (write_ctx){W_ND, ND_IO_OVERWRITE, 0, ck, NULL});
    measure_write(b, "Write", "nd_write_bytes (ND_IO_MERGE)", raw,
                  (write_ctx){W_ND, ND_IO_OVERWRITE | ND_IO_MERGE, 0, ck, NULL});
    bench_run_queued(b);

    snprintf(raw_direct, sizeof(raw_direct), "raw O_DIRECT write+fsync %zu KiB", big >> 10);
    measure_write(b, "WriteSync", raw_direct, NULL, (write_ctx){W_RAW_DIRECT, 0, 1, big, NULL});
    if (ck != big) {
        snprintf(name, sizeof(name), "raw O_DIRECT write+fsync %zu KiB", ck >> 10);
        measure_write(b, "WriteSync", name, raw_direct, (write_ctx){W_RAW_DIRECT, 0, 1, ck, NULL});
    }
    snprintf(name, sizeof(name), "raw write()+fsync %zu KiB", ck >> 10);
    measure_write(b, "WriteSync", name, raw_direct, (write_ctx){W_RAW, 0, 1, ck, NULL});
    measure_write(b, "WriteSync", "nd_write_bytes+nd_output_sync (buffered)", raw_direct,
                  (write_ctx){W_ND, ND_IO_OVERWRITE, 1, ck, NULL});
    measure_write(b, "WriteSync", "nd_write_bytes+nd_output_sync (ND_IO_MERGE)", raw_direct,
                  (write_ctx){W_ND, ND_IO_OVERWRITE | ND_IO_MERGE, 1, ck, NULL});
    bench_run_queued(b);
}
