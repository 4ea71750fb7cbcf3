/*
 * test_align.c - direct I/O at every alignment a file system may ask for.
 *
 * Every buffer of the direct paths (the positional reads' bounce buffer, the
 * cursor's buffer, the output's buffer and its spare) depends on the
 * direct-I/O alignment. Here the alignment is forced, through a hook of the
 * fault-injection build (native/src/fault.h), to every power of two from
 * 512 B to 8 MiB, and direct outputs and inputs are checked byte for byte
 * against a plain in-memory model: odd-sized writes, a sync mid-block, more
 * writes after it, overwrite; positional, cursor, window, clone and slice
 * reads at offsets on both sides of every alignment and buffer edge.
 *
 * Forcing a larger alignment than the file system needs is real I/O all the
 * same (a multiple of a larger power of two is a multiple of the real one);
 * forcing a smaller one would make real O_DIRECT fail, so the real alignment
 * is probed first and smaller ones are skipped with a message.
 *
 * Also here: the rule nd__os_direct_alignment applies where the file system
 * does not report STATX_DIOALIGN (st_blksize, capped; docs/design.md), both
 * through the st_blksize hook and on whatever file system the test runs in
 * (ctest runs this again inside FUSE mounts with 1 MiB and 4 MiB blocks).
 *
 * POSIX only: the Windows side caps its alignment at 64 KiB itself and runs
 * the same buffer code (file.c, cursor.c, output.c) tested here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "support.h"

#include "fault.h"
#include "os.h"

#define MIN_ALIGN ((uint32_t)512)
#define MAX_ALIGN ((uint32_t)8 << 20)
/* what the library caps st_blksize at where STATX_DIOALIGN is not reported */
#define BLKSIZE_CAP ((uint32_t)64 << 10)
/* the library's default buffer sizes (cursor.c, file.c, output.c): edges worth crossing */
#define BOUNCE_DEFAULT ((size_t)256 << 10)
#define OUT_DEFAULT ((size_t)1 << 20)

/* The smallest alignment O_DIRECT accepts in the test directory; 0 where the
 * file system refuses O_DIRECT altogether. Set by probe_real_alignment. */
static uint32_t real_align;
static const char *real_how = "?";

static size_t max_sz(size_t a, size_t b)
{
    return a > b ? a : b;
}

static size_t min_sz(size_t a, size_t b)
{
    return a < b ? a : b;
}

static int64_t zlib_crc(const uint8_t *data, size_t len)
{
    return (int64_t)crc32_z(crc32_z(0L, Z_NULL, 0), data, len);
}

/* ---- what this file system really needs ---- */

static int probe_real_alignment(void **state)
{
    (void)state;
    char root[TST_PATH_MAX], path[TST_PATH_MAX];
    if (tst_make_temp_dir(root, sizeof(root)) != 0)
        return -1;
    tst_join(path, sizeof(path), root, "probe");
    size_t len = 256u << 10;
    uint8_t *data = tst_random_buffer(len, 7);
    int ok = tst_write_file(path, data, len) == 0;
    free(data);
    real_align = 0;
#if defined(__linux__) && defined(STATX_DIOALIGN)
    struct statx sx;
    if (ok && statx(AT_FDCWD, path, 0, STATX_DIOALIGN, &sx) == 0 &&
        (sx.stx_mask & STATX_DIOALIGN) && sx.stx_dio_offset_align != 0) {
        real_align = sx.stx_dio_offset_align > sx.stx_dio_mem_align ? sx.stx_dio_offset_align
                                                                    : sx.stx_dio_mem_align;
        real_how = "statx STATX_DIOALIGN";
    }
#endif
#ifdef O_DIRECT
    if (ok && real_align == 0) {
        /* not reported: the smallest power of two an O_DIRECT read takes */
        int fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
        void *buf = NULL;
        if (fd >= 0 && posix_memalign(&buf, 64u << 10, 64u << 10) == 0) {
            for (uint32_t p = MIN_ALIGN; p <= (64u << 10) && real_align == 0; p *= 2)
                if (pread(fd, buf, p, (off_t)p) == (ssize_t)p)
                    real_align = p;
            real_how = real_align != 0 ? "probed with O_DIRECT reads (STATX_DIOALIGN not reported)"
                                       : "no O_DIRECT read of up to 64 KiB succeeds";
        } else if (fd < 0) {
            real_how = "O_DIRECT refused by this file system";
        }
        free(buf);
        if (fd >= 0)
            close(fd);
    }
#endif
    tst_remove_tree(root);
    fprintf(stderr, "test_align: O_DIRECT alignment here: %u bytes (%s)\n", (unsigned)real_align,
            real_how);
    if (real_align == 0)
        tst_loud_skip("direct I/O itself (ND_IO_MERGE falls back to drop-behind here; the "
                      "sweeps check that fallback instead)",
                      real_how);
    return ok ? 0 : -1;
}

static int reset_hooks(void **state)
{
    nd__fault_set_alignment(0);
    nd__fault_set_blksize(0);
    return tst_teardown(state);
}

/* ---- one full round of direct output and input at one alignment ---- */

static void check_disk(tst_env *env, const char *name, const uint8_t *model, size_t len)
{
    char path[TST_PATH_MAX];
    size_t got = 0;
    uint8_t *disk = tst_read_file(tst_join(path, sizeof(path), env->dir_path, name), &got);
    assert_non_null(disk);
    assert_int_equal(got, len);
    if (len > 0)
        assert_memory_equal(disk, model, len);
    free(disk);
}

static void expect_strategy(int32_t got)
{
    assert_int_equal(got, real_align != 0 ? ND_STRATEGY_DIRECT : ND_STRATEGY_DROP_BEHIND);
}

/* Writes model[0, total) in odd pieces with syncs mid-block, checking the
 * file after each sync and after the close. */
static void write_round(tst_env *env, const char *name, uint32_t a, const uint8_t *model,
                        size_t total)
{
    nd_handle out;
    assert_status(ND_OK, nd_create_output(env->dir, name, ND_IO_MERGE, &out));
    expect_strategy(nd_output_strategy(out));
    const size_t pieces[] = {
        1, 3, 100, 4095, 4097, a - 1, a + 1, 65537, 262147, 1, (size_t)a * 2 + 5};
    const size_t n_pieces = sizeof(pieces) / sizeof(pieces[0]);
    /* syncs with a partial block in the buffer (padded, then truncated): one
     * before anything went out, one past the first full buffer; more writes
     * follow each */
    const size_t syncs[] = {(size_t)a / 2 + 5, max_sz(OUT_DEFAULT, a) + (size_t)a / 4 + 3};
    size_t at = 0, next = 0;
    for (size_t i = 0; at < total; i++) {
        size_t n = min_sz(pieces[i % n_pieces], total - at);
        if (next < 2 && at + n > syncs[next])
            n = syncs[next] - at;
        if (n == 1)
            assert_status(ND_OK, nd_write_byte(out, model[at]));
        else
            assert_status((int64_t)n, nd_write_bytes(out, model + at, (int64_t)n));
        at += n;
        if (next < 2 && at == syncs[next]) {
            assert_status(ND_OK, nd_output_sync(out));
            check_disk(env, name, model, at);
            next++;
        }
        assert_status((int64_t)at, nd_output_position(out));
    }
    assert_int_equal(next, 2);
    assert_status(zlib_crc(model, total), nd_output_crc32(out));
    assert_status(ND_OK, nd_close(out));
    check_disk(env, name, model, total);
}

static void read_exact(nd_handle in, int64_t off, size_t len, const uint8_t *model, uint8_t *dst)
{
    assert_status((int64_t)len, nd_read_bytes(in, off, dst, (int64_t)len));
    if (len > 0 && memcmp(dst, model + off, len) != 0)
        fail_msg("nd_read_bytes(%lld, %zu) differs from the model", (long long)off, len);
}

/* Positional reads on both sides of the alignment and of the bounce buffer,
 * into unaligned memory (the bounce path) and aligned memory (straight). */
static void positional_round(nd_handle in, uint32_t a, const uint8_t *model, size_t len)
{
    size_t bounce = max_sz(BOUNCE_DEFAULT, a);
    uint8_t *buf = malloc(len + 1);
    assert_non_null(buf);
    uint8_t *odd = buf + 1; /* never aligned to 512 or more */
    /* (each bounced read of n bytes at s moves round_up(s % a + n, a): few enough
     * that 8 MiB alignments stay quick) */
    const int64_t offs[] = {
        0, 4097, (int64_t)a - 1, (int64_t)a + 1, (int64_t)bounce + 1, (int64_t)len - 1};
    const size_t lens[] = {1, 100, (size_t)a + 7, bounce + (size_t)a + 5};
    for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
        if (offs[i] < 0 || (size_t)offs[i] >= len)
            continue;
        for (size_t j = 0; j < sizeof(lens) / sizeof(lens[0]); j++) {
            size_t n = min_sz(lens[j], len - (size_t)offs[i]);
            read_exact(in, offs[i], n, model, odd);
        }
    }
    read_exact(in, 0, len, model, odd);          /* the whole file, unaligned memory */
    read_exact(in, (int64_t)len, 0, model, odd); /* nothing, at the end */
    uint8_t dummy;
    assert_status(ND_E_EOF, nd_read_bytes(in, (int64_t)len, &dummy, 1));
    free(buf);
    /* aligned memory, offset and length: straight into the caller's memory */
    void *al = NULL;
    assert_int_equal(posix_memalign(&al, a, (size_t)a * 2), 0);
    if (len >= (size_t)a * 2)
        read_exact(in, a, a, model, al);
    read_exact(in, 0, min_sz(len, (size_t)a * 2) / a * a, model, al);
    free(al);
}

/* The cursor: seeks next to every edge, small and bypassing reads, bytes,
 * windows; then whole scans through the buffer and through windows. */
static void cursor_round(nd_handle in, uint32_t a, const uint8_t *model, size_t len)
{
    size_t cap = max_sz(BOUNCE_DEFAULT, a);
    uint8_t *buf = malloc(len + 1);
    assert_non_null(buf);
    const int64_t pos[] = {
        0, 4097, (int64_t)a - 1, (int64_t)a + 1, (int64_t)cap + 3, (int64_t)len - 5};
    for (size_t i = 0; i < sizeof(pos) / sizeof(pos[0]); i++) {
        if (pos[i] < 0 || (size_t)pos[i] >= len)
            continue;
        size_t p = (size_t)pos[i];
        assert_status(ND_OK, nd_input_seek(in, pos[i]));
        assert_int_equal(nd_read_byte_buffered(in), model[p]);
        p++;
        const size_t reads[] = {100, (64u << 10) + 3, 5};
        for (size_t r = 0; r < 3; r++) {
            size_t n = min_sz(reads[r], len - p);
            assert_status((int64_t)n, nd_read_buffered(in, buf, (int64_t)n));
            if (n > 0 && memcmp(buf, model + p, n) != 0)
                fail_msg("nd_read_buffered(%zu) at %zu differs from the model", n, p);
            p += n;
        }
        assert_status((int64_t)p, nd_input_position(in));
        const uint8_t *w = NULL;
        int64_t got = nd_input_window(in, pos[i], &w);
        assert_true(got >= 1 && (size_t)got <= len - (size_t)pos[i]);
        if (memcmp(w, model + pos[i], (size_t)got) != 0)
            fail_msg("nd_input_window(%lld) differs from the model", (long long)pos[i]);
    }
    /* a whole scan in odd small reads (each through the cursor's buffer) */
    assert_status(ND_OK, nd_input_seek(in, 0));
    for (size_t p = 0; p < len;) {
        size_t n = min_sz(4093, len - p);
        assert_status((int64_t)n, nd_read_buffered(in, buf + p, (int64_t)n));
        p += n;
    }
    if (len > 0 && memcmp(buf, model, len) != 0)
        fail_msg("a cursor scan differs from the model");
    assert_status(ND_E_EOF, nd_read_byte_buffered(in));
    /* windows from every position they end at */
    for (size_t p = 0; p < len;) {
        const uint8_t *w = NULL;
        int64_t got = nd_input_window(in, (int64_t)p, &w);
        assert_true(got >= 1 && (size_t)got <= len - p);
        if (memcmp(w, model + p, (size_t)got) != 0)
            fail_msg("nd_input_window(%zu) differs from the model", p);
        p += (size_t)got;
    }
    free(buf);
}

static void read_round(tst_env *env, const char *name, uint32_t a, const uint8_t *model, size_t len)
{
    nd_handle in, clone, slice, inner;
    assert_status(ND_OK, nd_open_input(env->dir, name, ND_IO_MERGE, &in));
    expect_strategy(nd_input_strategy(in));
    positional_round(in, a, model, len);
    cursor_round(in, a, model, len);
    /* a clone has its own cursor (and buffer) and reads the same */
    assert_status(ND_OK, nd_input_seek(in, 3));
    assert_status(ND_OK, nd_input_clone(in, &clone));
    uint8_t piece[1000];
    assert_status(ND_OK, nd_input_seek(clone, (int64_t)a + 1));
    assert_status(1000, nd_read_buffered(clone, piece, 1000));
    assert_memory_equal(piece, model + a + 1, 1000);
    assert_status(3, nd_input_position(in));
    assert_int_equal(nd_read_byte_buffered(in), model[3]);
    read_exact(clone, 4097, 1000, model, piece);
    nd_close(clone);
    /* a slice at an odd offset, and a slice of it: their own model is model + off */
    size_t off = 4097, slen = len - 8193;
    assert_status(ND_OK, nd_input_slice(in, (int64_t)off, (int64_t)slen, &slice));
    positional_round(slice, a, model + off, slen);
    cursor_round(slice, a, model + off, slen);
    size_t off2 = (size_t)a + 1 < slen / 2 ? (size_t)a + 1 : 3;
    assert_status(ND_OK, nd_input_slice(slice, (int64_t)off2, (int64_t)(slen - off2 - 1), &inner));
    size_t ilen = slen - off2 - 1;
    read_exact(inner, 0, min_sz(1000, ilen), model + off + off2, piece);
    read_exact(inner, (int64_t)ilen - 1, 1, model + off + off2, piece);
    assert_status(ND_OK, nd_input_seek(inner, (int64_t)ilen - 100));
    assert_status(100, nd_read_buffered(inner, piece, 100));
    assert_memory_equal(piece, model + off + off2 + ilen - 100, 100);
    uint8_t b;
    assert_status(ND_E_EOF, nd_read_bytes(inner, (int64_t)(slen - off2 - 1), &b, 1));
    nd_close(inner);
    nd_close(slice);
    nd_close(in);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Everything, at alignment `a` (as the library will see it when opening). */
static void full_round(tst_env *env, uint32_t a, uint64_t seed)
{
    double t0 = now_s();
    fprintf(stderr, "test_align: alignment %u ...\n", (unsigned)a); /* a failure below is at a */
    char name[64];
    snprintf(name, sizeof(name), "f%u", (unsigned)a);
    /* past one output buffer (max(1 MiB, a)), so that both the buffer and its
     * spare are written from, ending mid-block */
    size_t total = max_sz(OUT_DEFAULT, a) + (size_t)a / 2 + 12347;
    uint8_t *model = tst_random_buffer(total, seed);
    write_round(env, name, a, model, total);
    read_round(env, name, a, model, total);
    /* overwrite with less: the old length must not survive */
    size_t total2 = (size_t)a + 3 * 4097 + 3;
    uint8_t *model2 = tst_random_buffer(total2, seed + 1);
    nd_handle out;
    assert_status(ND_OK, nd_create_output(env->dir, name, ND_IO_MERGE | ND_IO_OVERWRITE, &out));
    expect_strategy(nd_output_strategy(out));
    assert_status((int64_t)total2, nd_write_bytes(out, model2, (int64_t)total2));
    assert_status(ND_OK, nd_output_sync(out));
    assert_status(ND_OK, nd_write_byte(out, 0x5a));
    assert_status(ND_OK, nd_close(out));
    model2 = realloc(model2, total2 + 1);
    assert_non_null(model2);
    model2[total2++] = 0x5a;
    check_disk(env, name, model2, total2);
    nd_handle in;
    assert_status(ND_OK, nd_open_input(env->dir, name, ND_IO_MERGE, &in));
    expect_strategy(nd_input_strategy(in));
    uint8_t *back = malloc(total2 + 1);
    assert_non_null(back);
    read_exact(in, 4097, 100, model2, back + 1);
    read_exact(in, (int64_t)a - 1, total2 - a + 1, model2, back + 1);
    read_exact(in, 0, total2, model2, back + 1);
    for (size_t p = 0; p < total2;) {
        size_t n = min_sz(4093, total2 - p);
        assert_status((int64_t)n, nd_read_buffered(in, back + p, (int64_t)n));
        p += n;
    }
    assert_memory_equal(back, model2, total2);
    assert_status(ND_E_EOF, nd_read_byte_buffered(in));
    free(back);
    nd_close(in);
    assert_status(ND_OK, nd_delete_file(env->dir, name));
    free(model2);
    free(model);
    fprintf(stderr, "test_align: alignment %u: %zu + %zu bytes written and read back, %.2f s\n",
            (unsigned)a, total, total2, now_s() - t0);
}

/* ---- the cases ---- */

/* Every power of two from 512 B to 8 MiB as the alignment itself. */
static void every_forced_alignment(void **state)
{
    tst_env *env = *state;
    int ran = 0;
    for (uint32_t a = MIN_ALIGN; a <= MAX_ALIGN; a *= 2) {
        if (a < real_align) {
            fprintf(stderr, "test_align: alignment %u skipped: below this file system's %u\n",
                    (unsigned)a, (unsigned)real_align);
            continue;
        }
        nd__fault_set_alignment(a);
        full_round(env, a, a);
        ran++;
    }
    nd__fault_set_alignment(0);
    /* every file system this runs on needs at most 64 KiB: 64 KiB .. 8 MiB always run */
    assert_true(ran >= 8);
}

static uint32_t rule_for(uint32_t blksize)
{
    if (blksize < 512 || (blksize & (blksize - 1)) != 0)
        return 4096;
    return blksize > BLKSIZE_CAP ? BLKSIZE_CAP : blksize;
}

static uint32_t library_alignment(tst_env *env, const char *name)
{
    char path[TST_PATH_MAX];
    uint8_t byte = 1;
    tst_join(path, sizeof(path), env->dir_path, name);
    assert_int_equal(tst_write_file(path, &byte, 1), 0);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    uint32_t a = nd__os_direct_alignment((nd_os_file)fd);
    close(fd);
    unlink(path);
    return a;
}

/* Where STATX_DIOALIGN is not reported, st_blksize stands in, capped: every
 * block size (1 MiB and 4 MiB are NFS's and CephFS's) gives an alignment the
 * buffers hold, and the I/O is right with it. */
static void blksize_without_dioalign(void **state)
{
    tst_env *env = *state;
    /* sizes no alignment can be made of: the safe default */
    const uint32_t odd[] = {1, 100, 511, 1536, 3u << 20};
    for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
        nd__fault_set_blksize(odd[i]);
        assert_int_equal(library_alignment(env, "rule"), rule_for(odd[i]));
    }
    uint32_t last = 0;
    for (uint32_t b = MIN_ALIGN; b <= MAX_ALIGN; b *= 2) {
        nd__fault_set_blksize(b);
        uint32_t a = library_alignment(env, "rule");
        assert_int_equal(a, rule_for(b));
        if (a == last)
            continue; /* the I/O at this alignment ran already */
        last = a;
        if (a < real_align) {
            fprintf(stderr,
                    "test_align: st_blksize %u (alignment %u) skipped: below this file "
                    "system's %u\n",
                    (unsigned)b, (unsigned)a, (unsigned)real_align);
            continue;
        }
        full_round(env, a, b + 1);
    }
    nd__fault_set_blksize(0);
}

/* No hook at all: the alignment the library takes here, by its own rule
 * (STATX_DIOALIGN where reported, else st_blksize capped), and the I/O with
 * it. Inside the FUSE mounts (st_blksize 1 MiB, 4 MiB, no DIOALIGN) this is
 * the defect as a user meets it. */
static void this_file_systems_alignment(void **state)
{
    tst_env *env = *state;
    char path[TST_PATH_MAX];
    uint8_t byte = 1;
    tst_join(path, sizeof(path), env->dir_path, "fs");
    assert_int_equal(tst_write_file(path, &byte, 1), 0);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    uint32_t expected = 0;
    const char *how = "statx STATX_DIOALIGN";
#if defined(__linux__) && defined(STATX_DIOALIGN)
    struct statx sx;
    if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 && (sx.stx_mask & STATX_DIOALIGN) &&
        sx.stx_dio_offset_align != 0)
        expected = sx.stx_dio_offset_align > sx.stx_dio_mem_align ? sx.stx_dio_offset_align
                                                                  : sx.stx_dio_mem_align;
#endif
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    if (expected == 0) {
        expected = rule_for((uint32_t)st.st_blksize);
        how = "st_blksize, capped";
    }
    uint32_t a = nd__os_direct_alignment((nd_os_file)fd);
    close(fd);
    fprintf(stderr, "test_align: st_blksize %lld here; the library aligns direct I/O to %u (%s)\n",
            (long long)st.st_blksize, (unsigned)a, how);
    assert_int_equal(a, expected);
    assert_true(a >= MIN_ALIGN && (a & (a - 1)) == 0);
    if (real_align != 0)
        assert_true(a % real_align == 0); /* enough for what O_DIRECT really needs */
    full_round(env, a, 99);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(this_file_systems_alignment, tst_setup, reset_hooks),
        cmocka_unit_test_setup_teardown(every_forced_alignment, tst_setup, reset_hooks),
        cmocka_unit_test_setup_teardown(blksize_without_dioalign, tst_setup, reset_hooks),
    };
    return cmocka_run_group_tests(tests, probe_real_alignment, NULL);
}
