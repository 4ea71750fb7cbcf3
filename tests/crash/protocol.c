/*
 * protocol.c - records nativedir's durability protocol on the crash-model
 * file system, for crash_sweep (sweep.c) to check at every cut point.
 *
 *   crash_protocol MOUNTPOINT
 *
 * Each scenario works in a directory of its own, which it opens with
 * ND_DIR_CREATE as a user would. Around every call the recorder writes a mark
 * (crashlog.h) saying what the call was and, after it returned, what it
 * promised; the bytes of version `vid` of a file are content.h's, so the
 * checker knows every byte that should be anywhere:
 *   scenario NAME PATH          a scenario starts in directory PATH
 *   E open_dir                  nd_open_dir of PATH returned
 *   E create NAME VID           nd_create_output returned: NAME holds version VID
 *   B write VID LEN             LEN more bytes of VID are about to be written
 *   E sync VID POS              nd_output_sync (or nd_fsync by name) returned:
 *                               VID's first POS bytes were promised durable
 *   E close VID, E rename A B, E delete NAME   those calls returned
 *   E sync_dir                  nd_sync_dir returned: the names are promised
 *   end NAME                    the scenario is over
 * The marks say only what a call returned; what each promise means is the
 * checker's business (sweep.c), read from the header's contract.
 *
 * The file-system calls outside nativedir (the mark file) bypass nothing:
 * negative controls run this under an LD_PRELOAD shim that turns fsyncs into
 * no-ops (noop_sync.c), and every fsync made here goes through the library.
 */
#ifndef _GNU_SOURCE
#  define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "content.h"
#include "crashlog.h"
#include "nativedir.h"

#define KiB ((int64_t)1 << 10)
#define MiB ((int64_t)1 << 20)

static const char *mnt;
static int markfd = -1;
static nd_handle dir;
static uint64_t next_vid = 1;

static void mark(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(buf) || write(markfd, buf, (size_t)n) != n) {
        perror("crash_protocol: mark");
        exit(1);
    }
}

static void check(int64_t rc, const char *what)
{
    if (rc < 0) {
        fprintf(stderr, "crash_protocol: %s: %s (%s)\n", what, nd_status_name((int32_t)rc),
                nd_last_error_message());
        exit(1);
    }
}

typedef struct {
    nd_handle h;
    uint64_t vid;
    int64_t pos;
} out;

static out create(const char *name, uint32_t flags)
{
    out o = {0, next_vid++, 0};
    check(nd_create_output(dir, name, flags, &o.h), "nd_create_output");
    if ((flags & ND_IO_REQUIRE_DIRECT) && nd_output_strategy(o.h) != ND_STRATEGY_DIRECT) {
        fprintf(stderr, "crash_protocol: '%s' is not written with direct I/O\n", name);
        exit(1);
    }
    mark("E create %s %" PRIu64 "\n", name, o.vid);
    return o;
}

/* len more bytes of the version, in one nd_write_bytes */
static void put(out *o, int64_t len)
{
    uint8_t *buf = malloc((size_t)len + 1);
    if (buf == NULL) {
        perror("malloc");
        exit(1);
    }
    content_fill(buf, (size_t)len, o->vid, (uint64_t)o->pos);
    mark("B write %" PRIu64 " %" PRId64 "\n", o->vid, len);
    int64_t n = nd_write_bytes(o->h, buf, len);
    check(n, "nd_write_bytes");
    if (n != len) {
        fprintf(stderr, "crash_protocol: nd_write_bytes wrote %" PRId64 " of %" PRId64 "\n", n,
                len);
        exit(1);
    }
    o->pos += len;
    free(buf);
}

/* len bytes in calls of `chunk` */
static void put_chunks(out *o, int64_t len, int64_t chunk)
{
    while (len > 0) {
        int64_t n = len < chunk ? len : chunk;
        put(o, n);
        len -= n;
    }
}

/* n bytes, one nd_write_byte each */
static void put_bytes(out *o, int64_t n)
{
    uint8_t *buf = malloc((size_t)n);
    content_fill(buf, (size_t)n, o->vid, (uint64_t)o->pos);
    mark("B write %" PRIu64 " %" PRId64 "\n", o->vid, n);
    for (int64_t i = 0; i < n; i++)
        check(nd_write_byte(o->h, buf[i]), "nd_write_byte");
    o->pos += n;
    free(buf);
}

static void sync_out(out *o)
{
    check(nd_output_sync(o->h), "nd_output_sync");
    mark("E sync %" PRIu64 " %" PRId64 "\n", o->vid, o->pos);
}

static void close_out(out *o)
{
    check(nd_close(o->h), "nd_close");
    mark("E close %" PRIu64 "\n", o->vid);
}

/* nd_fsync by name: the closed version's bytes */
static void fsync_name(const char *name, const out *o)
{
    check(nd_fsync(dir, name), "nd_fsync");
    mark("E sync %" PRIu64 " %" PRId64 "\n", o->vid, o->pos);
}

static void sync_dir(void)
{
    check(nd_sync_dir(dir), "nd_sync_dir");
    mark("E sync_dir\n");
}

static void rename_to(const char *from, const char *to)
{
    check(nd_rename(dir, from, to), "nd_rename");
    mark("E rename %s %s\n", from, to);
}

static void delete_file(const char *name)
{
    check(nd_delete_file(dir, name), "nd_delete_file");
    mark("E delete %s\n", name);
}

/* a whole file: create, write in chunks, sync, close, sync the directory */
static out whole(const char *name, uint32_t flags, int64_t len, int64_t chunk)
{
    out o = create(name, flags);
    put_chunks(&o, len, chunk);
    sync_out(&o);
    close_out(&o);
    sync_dir();
    return o;
}

static void begin(const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", mnt, name);
    mark("scenario %s %s\n", name, name);
    check(nd_open_dir(path, ND_DIR_CREATE, &dir), "nd_open_dir");
    mark("E open_dir\n");
}

static void end(const char *name)
{
    check(nd_close(dir), "nd_close(dir)");
    mark("end %s\n", name);
}

/* create + write + nd_output_sync + close + nd_sync_dir, in its forms */
static void scenario_create_sync(void)
{
    begin("create_sync");
    whole("a", 0, 1000, 1000);
    out b = create("b", 0);
    put(&b, 70000); /* past the 64 KiB buffer */
    sync_out(&b);
    put(&b, 3); /* a sync, a few bytes, a sync */
    sync_out(&b);
    put_chunks(&b, 7 * 29257, 29257);
    sync_out(&b);
    close_out(&b);
    sync_dir();
    out c = create("c", 0);
    put_bytes(&c, 600);
    sync_out(&c);
    close_out(&c);
    sync_dir();
    out d = create("d", 0); /* closed unsynced, then nd_fsync by name */
    put(&d, 5000);
    close_out(&d);
    fsync_name("d", &d);
    sync_dir();
    delete_file("a");
    sync_dir();
    out e = create("e", 0); /* synced, its name never: may vanish */
    put(&e, 100);
    sync_out(&e);
    close_out(&e);
    end("create_sync");
}

/* the rename protocol: a synced temporary renamed over the old file, then nd_sync_dir */
static void scenario_rename_over(void)
{
    begin("rename_over");
    whole("seg", 0, 3000, 3000);
    whole("seg.tmp", 0, 50000, 50000);
    rename_to("seg.tmp", "seg");
    sync_dir();
    out t = create("seg.tmp", 0); /* closed first, then nd_fsync by name */
    put_chunks(&t, 120000, 33333);
    close_out(&t);
    fsync_name("seg.tmp", &t);
    rename_to("seg.tmp", "seg");
    sync_dir();
    whole("seg.tmp", ND_IO_MERGE | ND_IO_REQUIRE_DIRECT, MiB + 11, 256 * KiB);
    rename_to("seg.tmp", "seg");
    sync_dir();
    /* two replacements before one nd_sync_dir: any of the three versions until it */
    out a = create("a.tmp", 0);
    put(&a, 4000);
    sync_out(&a);
    close_out(&a);
    rename_to("a.tmp", "seg");
    out b = create("b.tmp", 0);
    put(&b, 6000);
    sync_out(&b);
    close_out(&b);
    rename_to("b.tmp", "seg");
    sync_dir();
    end("rename_over");
}

/* ND_IO_MERGE outputs (direct I/O): sizes around the block and the 1 MiB
 * staging buffer, synced at unaligned positions mid-way (the tail is written
 * padded, truncated back, and rewritten by the next write) */
static void scenario_merge_direct(void)
{
    begin("merge_direct");
    const int64_t sizes[] = {0, 1, 4097, MiB + 3, 3 * MiB + 777};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        char name[32];
        snprintf(name, sizeof(name), "m%zu", i);
        out o = create(name, ND_IO_MERGE | ND_IO_REQUIRE_DIRECT);
        int64_t half = sizes[i] / 2;
        put_chunks(&o, half, 100000);
        if (half > 0)
            sync_out(&o);
        put_chunks(&o, sizes[i] - half, 100000);
        sync_out(&o);
        close_out(&o);
        sync_dir();
    }
    /* a direct log: synced again and again inside one block */
    out l = create("dlog", ND_IO_MERGE | ND_IO_REQUIRE_DIRECT);
    sync_dir();
    const int64_t steps[] = {5000, 3000, 10, 4096, 70000, 1};
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        put(&l, steps[i]);
        sync_out(&l);
    }
    close_out(&l);
    end("merge_direct");
}

/* ND_IO_OVERWRITE: a new file made aside and renamed over the old one by the create */
static void scenario_overwrite(void)
{
    begin("overwrite");
    whole("state", 0, 2000, 2000);
    whole("state", ND_IO_OVERWRITE, 30000, 7000);
    whole("state", ND_IO_OVERWRITE | ND_IO_MERGE | ND_IO_REQUIRE_DIRECT, MiB + 5, 300000);
    out a = create("state", ND_IO_OVERWRITE); /* replaced twice before one nd_sync_dir */
    put(&a, 500);
    sync_out(&a);
    close_out(&a);
    whole("state", ND_IO_OVERWRITE, 800, 800);
    out b = create("state", ND_IO_OVERWRITE); /* the replacement made durable before its bytes */
    sync_dir();
    put_chunks(&b, 4000, 1000);
    sync_out(&b);
    close_out(&b);
    sync_dir();
    end("overwrite");
}

/* outputs larger than their buffers: a buffered one growing from 64 KiB to
 * 2 MiB, and single calls larger than the direct 1 MiB and buffered 2 MiB */
static void scenario_large(void)
{
    begin("large");
    out big = create("big", 0);
    put_chunks(&big, MiB + 1, 300000);
    sync_out(&big);
    put_chunks(&big, 3 * MiB + 6, 300000);
    sync_out(&big);
    put_chunks(&big, MiB + 116, 300000);
    sync_out(&big);
    close_out(&big);
    sync_dir();
    whole("one_direct", ND_IO_MERGE | ND_IO_REQUIRE_DIRECT, 5 * MiB / 2 + 9, 5 * MiB / 2 + 9);
    whole("one_buffered", 0, 3 * MiB + 1, 3 * MiB + 1);
    end("large");
}

/* a log appended and synced over and over, its name durable from the start:
 * torn writes land under a final name here */
static void scenario_append_log(void)
{
    begin("append_log");
    for (int direct = 0; direct < 2; direct++) {
        out l = create(direct ? "dlog" : "log", direct ? ND_IO_MERGE | ND_IO_REQUIRE_DIRECT : 0);
        sync_out(&l);
        sync_dir();
        uint64_t x = 12345 + (uint64_t)direct;
        for (int i = 0; i < 64; i++) {
            x = content_mix(x);
            put(&l, 1 + (int64_t)(x % 80000));
            if (i % 3 == 1) /* two writes before one sync: either may tear */
                put(&l, 1 + (int64_t)(x >> 40) % 9000);
            sync_out(&l);
        }
        close_out(&l);
    }
    end("append_log");
}

/* The sequences that take another path on Windows (native/src/windows/):
 * replacing a file that readers hold open or mapped (a rename, a replacing
 * create), deleting a mapped file and creating the name again. POSIX does
 * them in one step; the contract is the same on both. */
static void scenario_held_targets(void)
{
    begin("held_targets");
    out old = whole("seg", 0, 10000, 10000);
    nd_handle mapped, plain;
    check(nd_open_input(dir, "seg", ND_IO_MMAP, &mapped), "nd_open_input(mmap)");
    check(nd_open_input(dir, "seg", 0, &plain), "nd_open_input");
    whole("seg.new", 0, 20000, 20000);
    rename_to("seg.new", "seg");
    sync_dir();
    /* the readers keep the old file */
    uint8_t got[10000], want[10000];
    content_fill(want, sizeof(want), old.vid, 0);
    check(nd_read_bytes(mapped, 0, got, sizeof(got)), "nd_read_bytes(mmap)");
    if (memcmp(got, want, sizeof(got)) != 0) {
        fprintf(stderr, "crash_protocol: a mapped reader lost the replaced file's bytes\n");
        exit(1);
    }
    check(nd_read_bytes(plain, 0, got, sizeof(got)), "nd_read_bytes");
    if (memcmp(got, want, sizeof(got)) != 0) {
        fprintf(stderr, "crash_protocol: a reader lost the replaced file's bytes\n");
        exit(1);
    }
    check(nd_close(plain), "nd_close(input)");
    check(nd_close(mapped), "nd_close(input)");
    check(nd_open_input(dir, "seg", ND_IO_MMAP, &mapped), "nd_open_input(mmap)");
    delete_file("seg"); /* while mapped */
    sync_dir();
    whole("seg", 0, 7000, 7000);
    nd_handle again;
    check(nd_open_input(dir, "seg", ND_IO_MMAP, &again), "nd_open_input(mmap)");
    whole("seg", ND_IO_OVERWRITE, 9000, 9000); /* a replacing create over a mapped file */
    check(nd_close(again), "nd_close(input)");
    check(nd_close(mapped), "nd_close(input)");
    end("held_targets");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: crash_protocol MOUNTPOINT\n");
        return 2;
    }
    mnt = argv[1];
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", mnt, CL_MARK_NAME);
    markfd = open(path, O_WRONLY | O_CLOEXEC);
    if (markfd < 0) {
        perror(path);
        return 1;
    }
    scenario_create_sync();
    scenario_rename_over();
    scenario_merge_direct();
    scenario_overwrite();
    scenario_large();
    scenario_append_log();
    scenario_held_targets();
    close(markfd);
    return 0;
}
