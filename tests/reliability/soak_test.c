/*
 * soak_test.c - a bounded concurrency soak, built and run under
 * ThreadSanitizer: threads open, clone, slice, read (positional, cursor,
 * window, rings), write and close at once, and closers swap handles out from
 * under readers on purpose. Every result is checked: a read returns exactly
 * the right bytes or ND_E_BAD_HANDLE (its handle was closed under it), never
 * anything else; two threads appending to one output never tear a record.
 * Any ThreadSanitizer report fails the run (counted through the sanitizer's
 * report hook, and TSan's own exit code).
 *
 * usage: rel_soak_tsan [SECONDS]
 */
#ifndef _GNU_SOURCE
#  define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nativedir.h"
#include "rel_util.h"

#define NFILES 4
#define FILE_LEN (256u << 10)
#define NSLOTS 16
#define RECORD 1000

static _Atomic long sanitizer_reports;

/* Called by the sanitizer runtime after each report it prints. */
void __sanitizer_report_error_summary(const char *summary);
void __sanitizer_report_error_summary(const char *summary)
{
    atomic_fetch_add(&sanitizer_reports, 1);
    fprintf(stderr, "soak: sanitizer report: %s\n", summary);
}

static _Atomic int stop;
static _Atomic long failures, ops, reads_checked, bad_handle_races, racing_closes, closes,
    ring_reads, records;
static nd_handle base[NFILES]; /* never closed during the run: clones and slices come from them */
static _Atomic nd_handle dir_handle;
static char *root;

typedef struct {
    _Atomic nd_handle h;
    _Atomic int in_use; /* readers inside a call on h right now */
    int file;
    int64_t start, len; /* file offsets the handle covers */
    uint32_t flags;
    int kind; /* 0 open, 1 clone, 2 slice, 3 mapped open */
} slot;

static slot slots[NSLOTS];

#define FAIL(...)                                                                                  \
  do {                                                                                             \
    fprintf(stderr, "soak FAILURE %s:%d: ", __FILE__, __LINE__);                                   \
    fprintf(stderr, __VA_ARGS__);                                                                  \
    fprintf(stderr, "\n");                                                                         \
    atomic_fetch_add(&failures, 1);                                                                \
  } while (0)

static uint32_t xr(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (uint32_t)*s;
}

static char file_name[NFILES][16];

static int32_t open_slot_handle(slot *sl, nd_handle *out)
{
    switch (sl->kind) {
    case 1: return nd_input_clone(base[sl->file], out);
    case 2: return nd_input_slice(base[sl->file], sl->start, sl->len, out);
    default: {
        nd_handle d = atomic_load(&dir_handle);
        int32_t rc = nd_open_input(d, file_name[sl->file], sl->flags, out);
        if (rc == ND_E_BAD_HANDLE) /* the directory was swapped under us: use the base */
            rc = nd_input_clone(base[sl->file], out);
        return rc;
    }
    }
}

static int same_bytes(const uint8_t *got, int file, int64_t off, int64_t len)
{
    static _Thread_local uint8_t want[64 << 10];
    rel_fill(want, (size_t)len, (uint32_t)file + 1, (uint64_t)off);
    return memcmp(got, want, (size_t)len) == 0;
}

static void *reader(void *arg)
{
    uint64_t seed = (uint64_t)(uintptr_t)arg * 7919 + 1;
    static _Thread_local uint8_t buf[64 << 10];
    while (!atomic_load(&stop)) {
        slot *sl = &slots[xr(&seed) % NSLOTS];
        atomic_fetch_add(&sl->in_use, 1);
        nd_handle h = atomic_load(&sl->h);
        int64_t len = 1 + xr(&seed) % (sizeof(buf) - 1);
        if (len > sl->len)
            len = sl->len;
        int64_t off = xr(&seed) % (uint64_t)(sl->len - len + 1);
        int64_t got = nd_read_bytes(h, off, buf, len);
        atomic_fetch_sub(&sl->in_use, 1);
        atomic_fetch_add(&ops, 1);
        if (got == ND_E_BAD_HANDLE) {
            atomic_fetch_add(&bad_handle_races, 1);
        } else if (got != len) {
            FAIL("nd_read_bytes on slot %ld: %lld (%s)", (long)(sl - slots), (long long)got,
                 nd_last_error_message());
        } else if (!same_bytes(buf, sl->file, sl->start + off, len)) {
            FAIL("nd_read_bytes on slot %ld: wrong bytes at %lld", (long)(sl - slots),
                 (long long)off);
        } else {
            atomic_fetch_add(&reads_checked, 1);
        }

        /* cursor calls on a clone of our own, made from a handle others may close */
        nd_handle c;
        int32_t rc = nd_input_clone(atomic_load(&sl->h), &c);
        if (rc == ND_E_BAD_HANDLE) {
            atomic_fetch_add(&bad_handle_races, 1);
            continue;
        }
        if (rc != ND_OK) {
            FAIL("nd_input_clone: %s", nd_last_error_message());
            continue;
        }
        int64_t pos = xr(&seed) % (uint64_t)sl->len;
        int64_t n = sl->len - pos < 3000 ? sl->len - pos : 3000;
        if (nd_input_seek(c, pos) != ND_OK || nd_read_buffered(c, buf, n) != n ||
            !same_bytes(buf, sl->file, sl->start + pos, n))
            FAIL("cursor read on a clone: %s", nd_last_error_message());
        const uint8_t *w = NULL;
        int64_t avail = nd_input_window(c, pos, &w);
        if (avail < 1 || !same_bytes(w, sl->file, sl->start + pos, avail < 512 ? avail : 512))
            FAIL("window on a clone: %lld %s", (long long)avail, nd_last_error_message());
        int32_t b = nd_read_byte_buffered(c);
        if (pos + n < sl->len ? b < 0 : b != ND_E_EOF)
            FAIL("nd_read_byte_buffered: %d", b);
        if (nd_close(c) != ND_OK)
            FAIL("close of our own clone");
        atomic_fetch_add(&ops, 5);
        atomic_fetch_add(&reads_checked, 2);
    }
    return NULL;
}

/* Swaps a fresh handle into a slot and closes the old one, readers or not. */
static void *closer(void *arg)
{
    uint64_t seed = (uint64_t)(uintptr_t)arg * 104729 + 3;
    while (!atomic_load(&stop)) {
        slot *sl = &slots[xr(&seed) % NSLOTS];
        nd_handle fresh;
        int32_t rc = open_slot_handle(sl, &fresh);
        if (rc != ND_OK) {
            FAIL("reopen slot: %s", nd_last_error_message());
            continue;
        }
        nd_handle old = atomic_exchange(&sl->h, fresh);
        if (atomic_load(&sl->in_use) > 0)
            atomic_fetch_add(&racing_closes, 1);
        if (nd_close(old) != ND_OK)
            FAIL("nd_close of a swapped-out handle: %s", nd_last_error_message());
        if (nd_close(old) != ND_E_BAD_HANDLE)
            FAIL("a second close did not say ND_E_BAD_HANDLE");
        atomic_fetch_add(&closes, 1);
        atomic_fetch_add(&ops, 3);
        /* now and then the directory handle too: inputs opened through it keep working */
        if (xr(&seed) % 64 == 0) {
            nd_handle d;
            if (nd_open_dir(root, 0, &d) != ND_OK) {
                FAIL("nd_open_dir: %s", nd_last_error_message());
                continue;
            }
            nd_handle od = atomic_exchange(&dir_handle, d);
            if (nd_close(od) != ND_OK)
                FAIL("close of a swapped-out directory");
            atomic_fetch_add(&ops, 2);
        }
    }
    return NULL;
}

/* Two threads append records to one output; a third syncs and asks its position. */
static nd_handle shared_out;

static void *appender(void *arg)
{
    uint8_t tag = (uint8_t)(uintptr_t)arg;
    uint8_t rec[RECORD];
    memset(rec, tag, sizeof(rec));
    long n = 0;
    while (!atomic_load(&stop) && n < 5000) {
        int64_t rc = nd_write_bytes(shared_out, rec, sizeof(rec));
        if (rc != (int64_t)sizeof(rec))
            FAIL("shared nd_write_bytes: %lld %s", (long long)rc, nd_last_error_message());
        n++;
        atomic_fetch_add(&records, 1);
        atomic_fetch_add(&ops, 1);
        if (n % 97 == 0 && nd_output_position(shared_out) < 0)
            FAIL("nd_output_position");
    }
    return NULL;
}

static void *ringer(void *arg)
{
    (void)arg;
    uint64_t seed = 99;
    nd_handle ring;
    if (nd_ring_open(8, 0, &ring) != ND_OK) {
        FAIL("nd_ring_open: %s", nd_last_error_message());
        return NULL;
    }
    static uint8_t bufs[8][8192];
    int64_t want_len[8];
    int file_of[8];
    int64_t off_of[8];
    int busy[8] = {0};
    while (!atomic_load(&stop)) {
        for (int i = 0; i < 8; i++) {
            if (busy[i])
                continue;
            slot *sl = &slots[xr(&seed) % NSLOTS];
            int64_t len = 1 + xr(&seed) % 8192;
            if (len > sl->len)
                len = sl->len;
            int64_t off = xr(&seed) % (uint64_t)(sl->len - len + 1);
            /* the slot's handle may be closed right after: the read must still complete */
            int32_t rc =
                nd_ring_submit_read(ring, atomic_load(&sl->h), off, bufs[i], len, (uint64_t)i);
            if (rc == ND_OK) {
                busy[i] = 1;
                want_len[i] = len;
                file_of[i] = sl->file;
                off_of[i] = sl->start + off;
            } else if (rc == ND_E_BAD_HANDLE) {
                atomic_fetch_add(&bad_handle_races, 1);
            } else if (rc != ND_E_BUSY) {
                FAIL("nd_ring_submit_read: %s", nd_last_error_message());
            }
        }
        uint64_t tags[8];
        int64_t res[8];
        int32_t n = nd_ring_reap(ring, tags, res, 8, 1000);
        if (n < 0)
            FAIL("nd_ring_reap: %s", nd_last_error_message());
        for (int k = 0; k < n; k++) {
            int i = (int)tags[k];
            if (i < 0 || i >= 8 || !busy[i]) {
                FAIL("ring: unknown tag %llu", (unsigned long long)tags[k]);
                continue;
            }
            if (res[k] != want_len[i] || !same_bytes(bufs[i], file_of[i], off_of[i], res[k]))
                FAIL("ring read: %lld of %lld", (long long)res[k], (long long)want_len[i]);
            busy[i] = 0;
            atomic_fetch_add(&ring_reads, 1);
            atomic_fetch_add(&ops, 2);
        }
    }
    if (nd_close(ring) != ND_OK) /* waits for reads in flight */
        FAIL("nd_close(ring)");
    return NULL;
}

static void *lister(void *arg)
{
    (void)arg;
    char buf[4096];
    while (!atomic_load(&stop)) {
        nd_handle d = atomic_load(&dir_handle);
        int64_t need = nd_list(d, buf, sizeof(buf));
        if (need < 0 && need != ND_E_BAD_HANDLE)
            FAIL("nd_list: %s", nd_last_error_message());
        int64_t len;
        int32_t rc = nd_file_length(d, file_name[0], &len);
        if (rc != ND_E_BAD_HANDLE && (rc != ND_OK || len != FILE_LEN))
            FAIL("nd_file_length: %d", rc);
        atomic_fetch_add(&ops, 2);
        usleep(200);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 20;
    root = rel_mkdtemp("soak");
    nd_handle d;
    if (nd_open_dir(root, 0, &d) != ND_OK)
        return 2;
    atomic_store(&dir_handle, d);
    uint8_t *data = malloc(FILE_LEN);
    for (int f = 0; f < NFILES; f++) {
        snprintf(file_name[f], sizeof(file_name[f]), "seg%d.bin", f);
        rel_fill(data, FILE_LEN, (uint32_t)f + 1, 0);
        nd_handle o;
        if (nd_create_output(d, file_name[f], f == 3 ? ND_IO_MERGE : 0, &o) != ND_OK ||
            nd_write_bytes(o, data, FILE_LEN) != FILE_LEN || nd_close(o) != ND_OK)
            return 2;
        if (nd_open_input(d, file_name[f], f == 2 ? ND_IO_MMAP : 0, &base[f]) != ND_OK)
            return 2;
    }
    free(data);
    static const uint32_t flag_of[] = {0, ND_IO_RANDOM, ND_IO_MERGE, ND_IO_MMAP};
    for (int i = 0; i < NSLOTS; i++) {
        slot *sl = &slots[i];
        sl->file = i % NFILES;
        sl->kind = i / NFILES % 4;
        sl->flags = sl->kind == 3 ? ND_IO_MMAP : flag_of[i % 4];
        sl->start = sl->kind == 2 ? 1000 + 777 * i : 0;
        sl->len = sl->kind == 2 ? 50000 + 1000 * (int64_t)i : (int64_t)FILE_LEN;
        nd_handle h;
        if (open_slot_handle(sl, &h) != ND_OK) {
            fprintf(stderr, "soak: setup: %s\n", nd_last_error_message());
            return 2;
        }
        atomic_store(&sl->h, h);
    }
    if (nd_create_output(d, "shared.bin", 0, &shared_out) != ND_OK)
        return 2;

    pthread_t t[10];
    int n = 0;
    for (int i = 0; i < 4; i++)
        pthread_create(&t[n++], NULL, reader, (void *)(uintptr_t)(i + 1));
    for (int i = 0; i < 2; i++)
        pthread_create(&t[n++], NULL, closer, (void *)(uintptr_t)(i + 1));
    pthread_create(&t[n++], NULL, appender, (void *)(uintptr_t)'A');
    pthread_create(&t[n++], NULL, appender, (void *)(uintptr_t)'B');
    pthread_create(&t[n++], NULL, ringer, NULL);
    pthread_create(&t[n++], NULL, lister, NULL);
    struct timespec ts = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
    nanosleep(&ts, NULL);
    atomic_store(&stop, 1);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);

    /* the shared output: whole records only, as many as were acknowledged */
    if (nd_output_sync(shared_out) != ND_OK || nd_close(shared_out) != ND_OK)
        FAIL("shared output: %s", nd_last_error_message());
    char *p = rel_join(root, "shared.bin");
    size_t len = 0;
    uint8_t *all = rel_slurp(p, &len);
    free(p);
    if (all == NULL || len != (size_t)atomic_load(&records) * RECORD)
        FAIL("shared output holds %zu bytes for %ld records", len, atomic_load(&records));
    for (size_t r = 0; all != NULL && r + RECORD <= len; r += RECORD)
        for (size_t k = 1; k < RECORD; k++)
            if (all[r + k] != all[r] || (all[r] != 'A' && all[r] != 'B')) {
                FAIL("record at %zu is torn", r);
                break;
            }
    free(all);
    for (int i = 0; i < NSLOTS; i++)
        if (nd_close(atomic_load(&slots[i].h)) != ND_OK)
            FAIL("final close of slot %d", i);
    for (int f = 0; f < NFILES; f++)
        nd_close(base[f]);
    nd_close(atomic_load(&dir_handle));
    rel_rmtree(root);
    free(root);

    long reports = atomic_load(&sanitizer_reports);
    long bad = atomic_load(&failures);
    const char *result = bad == 0 && reports == 0 ? "pass" : "fail";
    printf("soak: %.0f s, %ld calls, %ld reads checked, %ld ring reads, %ld records appended by "
           "2 threads, %ld closes (%ld while a read was inside), %ld reads lost the race "
           "(ND_E_BAD_HANDLE); %ld failures, %ld sanitizer reports\n",
           seconds, atomic_load(&ops), atomic_load(&reads_checked), atomic_load(&ring_reads),
           atomic_load(&records), atomic_load(&closes), atomic_load(&racing_closes),
           atomic_load(&bad_handle_races), bad, reports);
    char what[400];
    snprintf(what, sizeof(what),
             "10 threads for %.0f s under ThreadSanitizer: open/clone/slice/read/window/ring/"
             "append/close; %ld reads checked byte for byte, %ld sanitizer reports",
             seconds, atomic_load(&reads_checked), reports);
    rel_count("tsan_ops", atomic_load(&ops), "calls", result, what);
    snprintf(what, sizeof(what),
             "handles closed while another thread was inside a read on them (%ld closes in "
             "all; %ld calls got ND_E_BAD_HANDLE, none crashed or read wrong bytes)",
             atomic_load(&closes), atomic_load(&bad_handle_races));
    rel_count("tsan_close_races", atomic_load(&racing_closes), "racing closes", result, what);
    return bad == 0 && reports == 0 ? 0 : 1;
}
