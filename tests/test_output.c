/*
 * test_output.c - outputs: create/overwrite, every output strategy at odd
 * sizes and chunkings reading back through every input strategy, position,
 * zlib-identical CRC-32, sync in the middle of a direct write, flush (bytes
 * reach the OS without an fsync), seek (rewrites, against a model of the
 * file), and calls after close.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifndef _WIN32
#  include <sys/resource.h>
#endif
#ifdef __GLIBC__
#  include <malloc.h>
#endif

#ifndef _WIN32
#  include <signal.h>
#endif

#include "support.h"

static const uint32_t out_flags[] = {0, ND_IO_SEQUENTIAL, ND_IO_MERGE,
                                     ND_IO_MERGE | ND_IO_SEQUENTIAL};
#define N_OUT (sizeof(out_flags) / sizeof(out_flags[0]))
static const uint32_t in_flags[] = {
    0, ND_IO_RANDOM, ND_IO_SEQUENTIAL, ND_IO_MMAP, ND_IO_MMAP | ND_IO_PRELOAD, ND_IO_MERGE};
#define N_IN (sizeof(in_flags) / sizeof(in_flags[0]))
/* sizes that cross every edge, and the exact buffer sizes (64 KiB buffered, 1 MiB direct) */
static const size_t sizes[] = {0, 1, 511, 4097, (1u << 20) + 3, 65536, 1u << 20};
#define N_SIZES (sizeof(sizes) / sizeof(sizes[0]))

enum write_mode { ONE_CALL, ODD_CHUNKS, BYTE_BY_BYTE, MIXED };

static int64_t zlib_crc(const uint8_t *data, size_t len)
{
    return (int64_t)crc32(crc32(0L, Z_NULL, 0), data, (uInt)len);
}

/* Writes data with the given chunking, checking position and CRC as it goes. */
static void write_all(nd_handle out, const uint8_t *data, size_t len, enum write_mode mode)
{
    static const size_t chunks[] = {1, 7, 4093, 3, 65537, 511, 2, 262147, 13};
    size_t at = 0, c = 0;
    while (at < len) {
        size_t n;
        if (mode == ONE_CALL) {
            n = len;
            assert_status((int64_t)n, nd_write_bytes(out, data, (int64_t)n));
        } else if (mode == BYTE_BY_BYTE || (mode == MIXED && c % 2 == 0)) {
            n = mode == MIXED ? (len - at < 100 ? len - at : 100) : 1;
            for (size_t i = 0; i < n; i++)
                assert_status(ND_OK, nd_write_byte(out, data[at + i]));
        } else {
            n = chunks[c % (sizeof(chunks) / sizeof(chunks[0]))];
            if (n > len - at)
                n = len - at;
            assert_status((int64_t)n, nd_write_bytes(out, data + at, (int64_t)n));
        }
        at += n;
        c++;
        if (c % 64 == 1 || at == len) {
            assert_status((int64_t)at, nd_output_position(out));
            assert_status(zlib_crc(data, at), nd_output_crc32(out));
        }
    }
}

static int direct_works(tst_env *env)
{
    nd_handle out;
    int32_t rc = nd_create_output(env->dir, "probe", ND_IO_REQUIRE_DIRECT | ND_IO_OVERWRITE, &out);
    if (rc == ND_OK) {
        nd_close(out);
        nd_delete_file(env->dir, "probe");
        return 1;
    }
    assert_status(ND_E_NOT_SUPPORTED, rc);
    return 0;
}

static void check_on_disk(tst_env *env, const char *name, const uint8_t *data, size_t len)
{
    char path[TST_PATH_MAX];
    size_t got = 0;
    uint8_t *disk = tst_read_file(tst_join(path, sizeof(path), env->dir_path, name), &got);
    assert_non_null(disk);
    if (got != len)
        fail_msg("%s is %lu bytes on disk, expected %lu", name, (unsigned long)got,
                 (unsigned long)len);
    if (len > 0)
        assert_memory_equal(disk, data, len);
    free(disk);
}

static void every_strategy_size_and_chunking(void **state)
{
    tst_env *env = *state;
    int direct = direct_works(env);
    if (!direct)
        tst_loud_skip("ND_IO_MERGE writing with O_DIRECT", "this file system refuses O_DIRECT");
    for (size_t s = 0; s < N_SIZES; s++) {
        uint8_t *data = tst_random_buffer(sizes[s], 1000 + s);
        for (size_t o = 0; o < N_OUT; o++) {
            for (int mode = ONE_CALL; mode <= MIXED; mode++) {
                /* byte-by-byte through a megabyte says nothing more than through 4 KiB */
                if (mode == BYTE_BY_BYTE && sizes[s] > 70000)
                    continue;
                /* a hint changes the advice, not the write path: one chunking is enough */
                if ((out_flags[o] & ND_IO_SEQUENTIAL) && mode != ODD_CHUNKS)
                    continue;
                char name[64];
                snprintf(name, sizeof(name), "out_%zu_%zu_%d", sizes[s], o, mode);
                nd_handle out;
                assert_status(ND_OK, nd_create_output(env->dir, name, out_flags[o], &out));
                int32_t want = !(out_flags[o] & ND_IO_MERGE) ? ND_STRATEGY_BUFFERED
                               : direct                      ? ND_STRATEGY_DIRECT
                                                             : ND_STRATEGY_DROP_BEHIND;
                assert_status(want, nd_output_strategy(out));
                assert_status(0, nd_output_position(out));
                assert_status(0, nd_output_crc32(out));
                write_all(out, data, sizes[s], (enum write_mode)mode);
                assert_status(ND_OK, nd_close(out));
                check_on_disk(env, name, data, sizes[s]);
                int64_t len = -1;
                assert_status(ND_OK, nd_file_length(env->dir, name, &len));
                assert_int_equal(len, (int64_t)sizes[s]);
                for (size_t i = 0; i < N_IN; i++)
                    if (tst_verify_input(env->dir, name, in_flags[i], data, sizes[s]) != 0)
                        fail_msg("%s (output flags 0x%x, mode %d) read back wrong with input "
                                 "flags 0x%x",
                                 name, out_flags[o], mode, in_flags[i]);
                assert_status(ND_OK, nd_delete_file(env->dir, name));
            }
        }
        free(data);
    }
}

static void sync_then_more_writes(void **state)
{
    /* a direct output pads its tail block at sync, truncates to the logical
     * length, and must rewrite that same block when more bytes follow */
    tst_env *env = *state;
    const size_t len = 3 * 4096 + 777 + (2u << 20);
    uint8_t *data = tst_random_buffer(len, 2000);
    /* 2 MiB: nothing buffered, but a direct write may be in flight: sync waits for it */
    const size_t cuts[] = {1,     4095,        4096,           4097,     5000, 12288,
                           12289, 12289 + 777, (1u << 20) + 5, 2u << 20, len};
    for (size_t o = 0; o < N_OUT; o++) {
        nd_handle out;
        char path[TST_PATH_MAX];
        assert_status(ND_OK,
                      nd_create_output(env->dir, "synced", out_flags[o] | ND_IO_OVERWRITE, &out));
        size_t at = 0;
        for (size_t c = 0; c < sizeof(cuts) / sizeof(cuts[0]); c++) {
            assert_status((int64_t)(cuts[c] - at),
                          nd_write_bytes(out, data + at, (int64_t)(cuts[c] - at)));
            at = cuts[c];
            assert_status(ND_OK, nd_output_sync(out));
            /* after a sync the file holds exactly what was written, padding cut off */
            assert_int_equal(tst_file_size(tst_join(path, sizeof(path), env->dir_path, "synced")),
                             (int64_t)at);
            assert_status(ND_OK, nd_output_sync(out)); /* twice in a row is fine */
            assert_status((int64_t)at, nd_output_position(out));
        }
        assert_status(zlib_crc(data, len), nd_output_crc32(out));
        assert_status(ND_OK, nd_close(out));
        check_on_disk(env, "synced", data, len);
        for (size_t i = 0; i < N_IN; i++)
            assert_int_equal(tst_verify_input(env->dir, "synced", in_flags[i], data, len), 0);
    }
    free(data);
}

/* The file on disk is exactly `want` (len bytes). */
static void assert_file_is(tst_env *env, const char *name, const uint8_t *want, size_t len)
{
    int64_t flen = -1;
    assert_status(ND_OK, nd_file_length(env->dir, name, &flen));
    if (flen != (int64_t)len)
        fail_msg("nd_file_length('%s') is %lld, expected %lu", name, (long long)flen,
                 (unsigned long)len);
    check_on_disk(env, name, want, len);
}

static void flush_hands_every_byte_to_the_os(void **state)
{
    /* Lucene's IndexOutput.flush: after it the file's length is the
     * position and a reader sees every byte, for every strategy (a direct
     * output writes its unaligned tail); more writes continue the file */
    tst_env *env = *state;
    const size_t len = 3 * 4096 + 777 + (2u << 20);
    uint8_t *data = tst_random_buffer(len, 2100);
    /* 2 MiB: a direct output's full buffer was just handed to its writer, so
     * nothing is buffered but a write may still be in flight */
    const size_t cuts[] = {0,           2,     3,     4095,           4096,     4097, 5000,
                           12289 + 777, 65536, 65537, (1u << 20) + 5, 2u << 20, len};
    for (size_t o = 0; o < N_OUT; o++) {
        nd_handle out;
        assert_status(ND_OK,
                      nd_create_output(env->dir, "flushed", out_flags[o] | ND_IO_OVERWRITE, &out));
        size_t at = 0;
        for (size_t c = 0; c < sizeof(cuts) / sizeof(cuts[0]); c++) {
            assert_status((int64_t)(cuts[c] - at),
                          nd_write_bytes(out, data + at, (int64_t)(cuts[c] - at)));
            at = cuts[c];
            assert_status(ND_OK, nd_output_flush(out));
            assert_status((int64_t)at, nd_output_position(out));
            assert_file_is(env, "flushed", data, at);
            if (at > 0) /* the bytes are readable through an input of this very file */
                assert_int_equal(tst_verify_input(env->dir, "flushed", 0, data, at), 0);
            assert_status(ND_OK, nd_output_flush(out)); /* again, nothing new: still right */
            assert_file_is(env, "flushed", data, at);
            if (c % 3 == 2) { /* a sync after a flush: the same bytes, durable */
                assert_status(ND_OK, nd_output_sync(out));
                assert_file_is(env, "flushed", data, at);
            }
        }
        assert_status(zlib_crc(data, len), nd_output_crc32(out));
        assert_status(ND_OK, nd_close(out));
        assert_file_is(env, "flushed", data, len);
        for (size_t i = 0; i < N_IN; i++)
            assert_int_equal(tst_verify_input(env->dir, "flushed", in_flags[i], data, len), 0);
    }
    free(data);
}

/* A model of what an output with seek must leave in its file: FileStream's
 * (and RandomAccessFile's) semantics, under Lucene's IndexOutput.seek. */
typedef struct {
    uint8_t *file; /* expected content, cap bytes */
    size_t cap, end, pos;
    uLong crc; /* over every byte written, in order */
} out_model;

static void model_write(out_model *m, const uint8_t *src, size_t n)
{
    memcpy(m->file + m->pos, src, n);
    m->pos += n;
    if (m->pos > m->end)
        m->end = m->pos;
    m->crc = crc32(m->crc, src, (uInt)n);
}

static uint64_t next_rand(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* Random writes (small, or up to `big` bytes), byte writes, seeks, flushes and syncs on a file
 * of up to `cap` bytes, each checked against the model. */
static void seek_model(tst_env *env, size_t cap, size_t big, int steps, uint64_t seeds)
{
    uint8_t *src = tst_random_buffer(cap, 2200);
    for (size_t o = 0; o < N_OUT; o++) {
        for (uint64_t seed = 1; seed <= seeds; seed++) {
            out_model m = {calloc(1, cap), cap, 0, 0, crc32(0L, Z_NULL, 0)};
            assert_non_null(m.file);
            uint64_t x = seed * 0x9E3779B97F4A7C15ull + o;
            nd_handle out;
            /* a fresh file each round: the seek is under test here, not the replacing create
             * (Wine's ReOpenFile cannot reopen a handle whose file was renamed after opening) */
            nd_delete_file(env->dir, "sought");
            assert_status(ND_OK, nd_create_output(env->dir, "sought", out_flags[o], &out));
            int32_t start = nd_output_strategy(out);
            int sought = 0;
            for (int step = 0; step < steps; step++) {
                uint64_t r = next_rand(&x);
                size_t n;
                switch (r % 8) {
                case 0:
                case 1:
                case 2: /* a write: small, or big enough to fill buffers */
                    n = (r >> 8) % (r % 8 == 2 ? big : 9000);
                    if (m.pos + n > cap - 4200)
                        n = 0;
                    assert_status((int64_t)n,
                                  nd_write_bytes(out, src + (r >> 3) % 4096, (int64_t)n));
                    model_write(&m, src + (r >> 3) % 4096, n);
                    break;
                case 3: /* a few single bytes */
                    for (n = 0; n < 5 && m.pos < cap - 100; n++) {
                        assert_status(ND_OK, nd_write_byte(out, (uint8_t)(r >> (8 * n))));
                        uint8_t b = (uint8_t)(r >> (8 * n));
                        model_write(&m, &b, 1);
                    }
                    break;
                case 4:
                case 5: { /* seek back, to the end, or past it (zeros in between) */
                    size_t to = (r >> 8) % (m.end + 50);
                    if (r % 8 == 5)
                        to = m.end;
                    if (to >= cap - big - 4200)
                        to = m.end;
                    if (to > m.end) /* a gap reads as zeros: the model's calloc has them */
                        memset(m.file + m.end, 0, to - m.end);
                    assert_status(ND_OK, nd_output_seek(out, (int64_t)to));
                    sought |= to != m.pos;
                    m.pos = to;
                    break;
                }
                case 6: /* flush: the file is the model now */
                    assert_status(ND_OK, nd_output_flush(out));
                    assert_file_is(env, "sought", m.file, m.end);
                    break;
                default:
                    assert_status(ND_OK, nd_output_sync(out));
                    assert_file_is(env, "sought", m.file, m.end);
                    break;
                }
                assert_status((int64_t)m.pos, nd_output_position(out));
                assert_status((int64_t)(m.crc & 0xFFFFFFFFu), nd_output_crc32(out));
            }
            /* a direct output that moved its cursor writes drop-behind from then on */
            int32_t want = start == ND_STRATEGY_DIRECT && sought ? ND_STRATEGY_DROP_BEHIND : start;
            assert_status(want, nd_output_strategy(out));
            assert_status(ND_OK, nd_close(out));
            assert_file_is(env, "sought", m.file, m.end);
            for (size_t i = 0; i < N_IN; i++)
                if (m.end > 0)
                    assert_int_equal(
                        tst_verify_input(env->dir, "sought", in_flags[i], m.file, m.end), 0);
            free(m.file);
        }
    }
    free(src);
}

static void seek_rewrites_like_a_file_stream(void **state)
{
    seek_model(*state, 3u << 20, (1u << 20) + 7, 40, 6);
}

/* The same across buffered outputs' large pieces (2 MiB on Linux): calls of 1 B to
 * 3 MiB on files of up to 9 MiB, where buffers grow, write on their grid and get moved off it. */
static void seek_model_across_large_pieces(void **state)
{
    seek_model(*state, 9u << 20, (3u << 20) + 5, 40, 2);
}

static void seek_like_lucene_3x_term_infos(void **state)
{
    /* TermInfosWriter's close: seek(4), rewrite the 8-byte count, close */
    tst_env *env = *state;
    const size_t len = (1u << 20) + 4099;
    uint8_t *data = tst_random_buffer(len, 2300);
    for (size_t o = 0; o < N_OUT; o++) {
        nd_handle out;
        nd_delete_file(env->dir, "tis"); /* a fresh file, as Lucene's writers make (see above) */
        assert_status(ND_OK, nd_create_output(env->dir, "tis", out_flags[o], &out));
        int32_t start = nd_output_strategy(out);
        assert_status((int64_t)len, nd_write_bytes(out, data, (int64_t)len));
        assert_status(ND_OK, nd_output_seek(out, (int64_t)len)); /* here already: nothing changes */
        assert_status(start, nd_output_strategy(out));
        assert_status(ND_E_INVALID_ARGUMENT, nd_output_seek(out, -1));
        assert_status((int64_t)len, nd_output_position(out)); /* a refused seek fails nothing */
        assert_status(ND_OK, nd_output_seek(out, 4));
        assert_status(4, nd_output_position(out));
        assert_status(8, nd_write_bytes(out, "COUNT=42", 8));
        assert_status(12, nd_output_position(out));
        uLong crc =
            crc32(crc32(crc32(0L, Z_NULL, 0), data, (uInt)len), (const Bytef *)"COUNT=42", 8);
        assert_status((int64_t)crc, nd_output_crc32(out));
        assert_status(ND_OK, nd_close(out));
        memcpy(data + 4, "COUNT=42", 8);
        assert_file_is(env, "tis", data, len);
        memcpy(data + 4, data + 100, 8); /* a different patch for the next strategy */
    }
    free(data);
}

static void create_and_overwrite(void **state)
{
    tst_env *env = *state;
    char path[TST_PATH_MAX];
    tst_join(path, sizeof(path), env->dir_path, "existing");
    assert_int_equal(tst_write_file(path, "old bytes that must survive", 27), 0);
    for (size_t o = 0; o < N_OUT; o++) {
        nd_handle out = 5;
        assert_status(ND_E_EXISTS, nd_create_output(env->dir, "existing", out_flags[o], &out));
        assert_int_equal(out, 0);
        assert_message_contains("existing");
        check_on_disk(env, "existing", (const uint8_t *)"old bytes that must survive", 27);
    }
    for (size_t o = 0; o < N_OUT; o++) {
        nd_handle out;
        assert_int_equal(tst_write_file(path, "old bytes that must go away", 27), 0);
        assert_status(ND_OK,
                      nd_create_output(env->dir, "existing", out_flags[o] | ND_IO_OVERWRITE, &out));
        /* replaced from the start: the old length is gone at once */
        assert_int_equal(tst_file_size(path), 0);
        assert_status(3, nd_write_bytes(out, "new", 3));
        assert_status(ND_OK, nd_close(out));
        check_on_disk(env, "existing", (const uint8_t *)"new", 3);
    }
    /* a new file with OVERWRITE is simply created */
    nd_handle out;
    assert_status(ND_OK, nd_create_output(env->dir, "fresh", ND_IO_OVERWRITE, &out));
    assert_status(ND_OK, nd_close(out));
    assert_status(1, nd_file_exists(env->dir, "fresh"));
    /* the file exists as soon as it is created, before any byte */
    assert_status(ND_OK, nd_create_output(env->dir, "early", 0, &out));
    assert_status(1, nd_file_exists(env->dir, "early"));
    assert_status(ND_OK, nd_close(out));
    /* a directory in the way is not replaced */
    char sub[TST_PATH_MAX];
    assert_int_equal(tst_mkdir(tst_join(sub, sizeof(sub), env->dir_path, "subdir")), 0);
    assert_status(ND_E_EXISTS, nd_create_output(env->dir, "subdir", 0, &out));
    assert_int_not_equal(nd_create_output(env->dir, "subdir", ND_IO_OVERWRITE, &out), ND_OK);
    assert_message_contains("nd_create_output");
    assert_message_contains("subdir"); /* the name asked for, whatever happened inside */
    assert_int_not_equal(nd_create_output(env->dir, "subdir", ND_IO_OVERWRITE | ND_IO_MERGE, &out),
                         ND_OK);
    assert_message_contains("subdir");
    assert_true(tst_path_exists(sub));
    /* whatever OVERWRITE does inside (a temporary name, a rename), it leaves nothing
     * else behind: exactly these files, no stray temporaries */
    static const char expected[] = "early\0existing\0fresh";
    char names[256];
    assert_int_equal(nd_list(env->dir, names, sizeof(names)), (int64_t)sizeof(expected));
    assert_memory_equal(names, expected, sizeof(expected));
}

static void overwrite_keeps_old_readers_reading(void **state)
{
    /* readers of the replaced file, whatever their strategy, keep their bytes */
    tst_env *env = *state;
    char path[TST_PATH_MAX];
    uint8_t *old = tst_random_buffer(200000, 6000);
    assert_int_equal(tst_write_file(tst_join(path, sizeof(path), env->dir_path, "f"), old, 200000),
                     0);
    /* mapped readers are checked in a child process by the next case: a SIGBUS there
     * must not take the whole suite down */
    static const uint32_t flags[] = {0, ND_IO_RANDOM, ND_IO_MERGE};
    for (size_t o = 0; o < N_OUT; o++) {
        nd_handle in[3], out;
        for (int i = 0; i < 3; i++)
            assert_status(ND_OK, nd_open_input(env->dir, "f", flags[i], &in[i]));
        assert_status(ND_OK, nd_create_output(env->dir, "f", out_flags[o] | ND_IO_OVERWRITE, &out));
        assert_status(5, nd_write_bytes(out, "fresh", 5));
        assert_status(ND_OK, nd_close(out));
        check_on_disk(env, "f", (const uint8_t *)"fresh", 5);
        for (int i = 0; i < 3; i++) {
            int64_t got = nd_read_bytes(in[i], 100000, path, 1000);
            /* an error is tolerable; a crash (SIGBUS) or foreign bytes are not */
            if (got == 1000)
                assert_memory_equal(path, old + 100000, 1000);
            else
                assert_true(got < 0);
            assert_status(ND_OK, nd_close(in[i]));
        }
        assert_int_equal(
            tst_write_file(tst_join(path, sizeof(path), env->dir_path, "f"), old, 200000), 0);
    }
    free(old);
}

static void refused_flags(void **state)
{
    tst_env *env = *state;
    const uint32_t bad[] = {ND_IO_MMAP, ND_IO_PRELOAD, ND_IO_NOREUSE,
                            0x100,      0x80000000u,   ND_IO_MMAP | ND_IO_MERGE};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        nd_handle out = 5;
        assert_status(ND_E_INVALID_ARGUMENT, nd_create_output(env->dir, "never", bad[i], &out));
        assert_int_equal(out, 0);
        assert_status(0, nd_file_exists(env->dir, "never"));
    }
    nd_handle out;
    assert_status(ND_OK, nd_create_output(env->dir, "o", 0, &out));
    assert_status(ND_E_INVALID_ARGUMENT, nd_write_bytes(out, "x", -1));
    assert_status(ND_E_INVALID_ARGUMENT, nd_write_bytes(out, NULL, 5));
    assert_status(ND_OK, nd_close(out));
}

static void calls_after_close(void **state)
{
    tst_env *env = *state;
    for (size_t o = 0; o < N_OUT; o++) {
        nd_handle out;
        assert_status(ND_OK,
                      nd_create_output(env->dir, "closed", out_flags[o] | ND_IO_OVERWRITE, &out));
        assert_status(5, nd_write_bytes(out, "12345", 5));
        assert_status(ND_OK, nd_close(out));
        assert_status(ND_E_BAD_HANDLE, nd_write_bytes(out, "6", 1));
        assert_status(ND_E_BAD_HANDLE, nd_write_byte(out, '6'));
        assert_status(ND_E_BAD_HANDLE, nd_output_position(out));
        assert_status(ND_E_BAD_HANDLE, nd_output_crc32(out));
        assert_status(ND_E_BAD_HANDLE, nd_output_sync(out));
        assert_status(ND_E_BAD_HANDLE, nd_output_flush(out));
        assert_status(ND_E_BAD_HANDLE, nd_output_seek(out, 0));
        assert_status(ND_E_BAD_HANDLE, nd_output_strategy(out));
        assert_status(ND_E_BAD_HANDLE, nd_close(out));
        check_on_disk(env, "closed", (const uint8_t *)"12345", 5);
    }
}

static void crc_of_known_vectors(void **state)
{
    tst_env *env = *state;
    nd_handle out;
    assert_status(ND_OK, nd_create_output(env->dir, "crc", 0, &out));
    assert_status(0, nd_output_crc32(out));
    assert_status(9, nd_write_bytes(out, "123456789", 9));
    /* the CRC-32 check value (IEEE 802.3, as zlib computes it) */
    assert_status(0xCBF43926LL, nd_output_crc32(out));
    assert_status(ND_OK, nd_close(out));
    /* the full 32-bit range comes back as a non-negative int64 */
    uint8_t ff[4] = {0xFF, 0xFF, 0xFF, 0xFF};
    assert_status(ND_OK, nd_create_output(env->dir, "crc2", 0, &out));
    assert_status(4, nd_write_bytes(out, ff, 4));
    int64_t crc = nd_output_crc32(out);
    assert_true(crc >= 0 && crc <= 0xFFFFFFFFLL);
    assert_true(crc == zlib_crc(ff, 4));
    assert_status(ND_OK, nd_close(out));
}

static void require_direct_output_here(void **state)
{
    tst_env *env = *state;
    nd_handle out;
    int32_t rc = nd_create_output(env->dir, "direct", ND_IO_REQUIRE_DIRECT, &out);
    if (rc == ND_E_NOT_SUPPORTED) {
        tst_loud_skip("ND_IO_REQUIRE_DIRECT output succeeding",
                      "the test directory refuses O_DIRECT");
        assert_status(0, nd_file_exists(env->dir, "direct"));
        return;
    }
    assert_status(ND_OK, rc);
    assert_status(ND_STRATEGY_DIRECT, nd_output_strategy(out));
    uint8_t *data = tst_random_buffer(10007, 3000);
    write_all(out, data, 10007, ODD_CHUNKS);
    assert_status(ND_OK, nd_close(out));
    check_on_disk(env, "direct", data, 10007);
    free(data);
}

/* nd_output_buffer_size is the one place an output's buffer size is chosen
 * (bindings that collect small writes size their buffer with it): 64 KiB for
 * a buffered output, growing with its file where the OS gains from large
 * writes, never past 2 MiB; at least the 1 MiB staging buffer for a direct
 * one; refused for what is not an output. */
static void buffer_size_is_what_the_output_collects(void **state)
{
    tst_env *env = *state;
    enum { LEN = 6 << 20, STEP = 64 << 10 };
    uint8_t *data = malloc(LEN);
    assert_non_null(data);
    for (size_t i = 0; i < LEN; i++)
        data[i] = (uint8_t)(i * 2654435761u >> 11);
    nd_handle out, in;
    assert_status(ND_OK, nd_create_output(env->dir, "buffered", 0, &out));
    assert_int_equal(nd_output_strategy(out), ND_STRATEGY_BUFFERED);
    assert_int_equal(nd_output_buffer_size(out), 64 << 10);
    int64_t last = nd_output_buffer_size(out);
    for (size_t at = 0; at < LEN; at += STEP) {
        assert_status(STEP, nd_write_bytes(out, data + at, STEP));
        int64_t now = nd_output_buffer_size(out);
        assert_true(now >= last && now <= (2 << 20) && (now & (now - 1)) == 0);
        last = now;
    }
#if defined(__linux__)
    assert_int_equal(last, 2 << 20); /* grew with the file: large writes, large folios */
#else
    assert_int_equal(last, 64 << 10);
#endif
    assert_status(ND_OK, nd_close(out));
    check_on_disk(env, "buffered", data, LEN);
    if (direct_works(env)) {
        assert_status(ND_OK, nd_create_output(env->dir, "direct", ND_IO_MERGE, &out));
        assert_int_equal(nd_output_strategy(out), ND_STRATEGY_DIRECT);
        int64_t size = nd_output_buffer_size(out);
        assert_true(size >= (1 << 20) && size % 512 == 0);
        assert_status(ND_OK, nd_close(out));
    } else {
        tst_loud_skip("a direct output's buffer size", "this file system refuses O_DIRECT");
    }
    assert_status(ND_OK, nd_open_input(env->dir, "buffered", 0, &in));
    assert_status(ND_E_BAD_HANDLE, nd_output_buffer_size(in));
    tst_assert_message_contains("nd_output_buffer_size: ", __FILE__, __LINE__);
    assert_status(ND_OK, nd_close(in));
    assert_status(ND_E_BAD_HANDLE, nd_output_buffer_size(out)); /* closed */
    free(data);
}

#ifndef _WIN32
/* POSIX only: Windows refuses to truncate a mapped file at all, so there the
 * same case is an error from nd_create_output, never a crash. */
static int overwrite_mapped_child(void *ctx)
{
    tst_env *env = ctx;
    uint8_t *data = tst_random_buffer(1u << 20, 5000);
    char path[TST_PATH_MAX];
    if (tst_write_file(tst_join(path, sizeof(path), env->dir_path, "mapped"), data, 1u << 20) != 0)
        return 1;
    nd_handle in, out;
    if (nd_open_input(env->dir, "mapped", ND_IO_MMAP, &in) != ND_OK)
        return 2;
    /* the library replaces a file it has mapped itself */
    if (nd_create_output(env->dir, "mapped", ND_IO_OVERWRITE, &out) != ND_OK)
        return 3;
    if (nd_write_bytes(out, "x", 1) != 1 || nd_close(out) != ND_OK)
        return 4;
    /* the old reader must get its bytes or a status; a SIGBUS here kills the child */
    uint8_t buf[4096];
    int64_t rc = nd_read_bytes(in, 512 * 1024, buf, sizeof(buf));
    if (rc == (int64_t)sizeof(buf) && memcmp(buf, data + 512 * 1024, sizeof(buf)) != 0)
        return 5; /* neither the old bytes nor an error: garbage */
    const uint8_t *p = NULL;
    int64_t n = nd_input_window(in, 700000, &p);
    if (n > 0 && p[0] != data[700000])
        return 6;
    nd_close(in);
    free(data);
    return 0;
}

static void overwriting_a_mapped_file_never_crashes_its_reader(void **state)
{
    tst_env *env = *state;
    int rc = tst_run_child(overwrite_mapped_child, env);
    if (rc == 128 + SIGBUS)
        fail_msg("a mapped reader died of SIGBUS after nd_create_output(ND_IO_OVERWRITE) truncated "
                 "its file: OVERWRITE should replace the file (new inode), not truncate it");
    assert_int_equal(rc, 0);
}

/* POSIX only (Linux mount namespaces): ramfs refuses O_DIRECT. */
static int ramfs_outputs(const char *mnt, void *ctx)
{
    (void)ctx;
    nd_handle dir, out;
    if (nd_open_dir(mnt, 0, &dir) != ND_OK)
        return 2;
    int32_t rc = nd_create_output(dir, "req", ND_IO_REQUIRE_DIRECT, &out);
    if (rc != ND_E_NOT_SUPPORTED) {
        fprintf(stderr, "REQUIRE_DIRECT output on ramfs: %s\n", nd_status_name(rc));
        return 3;
    }
    int leftover = nd_file_exists(dir, "req") != 0;
    if (leftover) /* reported at the end: the fallback below is worth checking too */
        fprintf(stderr, "a refused REQUIRE_DIRECT create left the file behind\n");
    rc = nd_create_output(dir, "merge", ND_IO_MERGE, &out);
    if (rc != ND_OK) {
        fprintf(stderr, "MERGE output on ramfs: %s: %s\n", nd_status_name(rc),
                nd_last_error_message());
        return 5;
    }
    if (nd_output_strategy(out) != ND_STRATEGY_DROP_BEHIND)
        return 6;
    uint8_t *data = tst_random_buffer(300001, 4000);
    if (nd_write_bytes(out, data, 300001) != 300001 || nd_output_sync(out) != ND_OK ||
        nd_write_bytes(out, data, 0) != 0 || nd_close(out) != ND_OK)
        return 7;
    if (tst_verify_input(dir, "merge", 0, data, 300001) != 0)
        return 8;
    /* and with OVERWRITE over an existing file */
    rc = nd_create_output(dir, "merge", ND_IO_MERGE | ND_IO_OVERWRITE, &out);
    if (rc != ND_OK) {
        fprintf(stderr, "MERGE|OVERWRITE output on ramfs: %s\n", nd_status_name(rc));
        return 9;
    }
    if (nd_write_bytes(out, data, 5) != 5 || nd_close(out) != ND_OK)
        return 10;
    if (tst_verify_input(dir, "merge", ND_IO_MMAP, data, 5) != 0)
        return 11;
    free(data);
    nd_close(dir);
    return leftover ? 4 : 0;
}

/* tmpfs takes O_DIRECT (Linux 6.6+) without a block device under it: the
 * alignment it reports, and the strategies chosen there, must still round-trip. */
static int tmpfs_round_trip(const char *mnt, void *ctx)
{
    (void)ctx;
    nd_handle dir;
    if (nd_open_dir(mnt, 0, &dir) != ND_OK)
        return 2;
    const size_t len = (1u << 20) + 3;
    uint8_t *data = tst_random_buffer(len, 7000);
    for (size_t o = 0; o < N_OUT; o++) {
        nd_handle out;
        char name[16];
        snprintf(name, sizeof(name), "t%zu", o);
        if (nd_create_output(dir, name, out_flags[o], &out) != ND_OK)
            return 10 + (int)o;
        if (nd_write_bytes(out, data, 5000) != 5000 || nd_output_sync(out) != ND_OK ||
            nd_write_bytes(out, data + 5000, (int64_t)len - 5000) != (int64_t)len - 5000)
            return 20 + (int)o;
        if (nd_output_crc32(out) != zlib_crc(data, len) || nd_close(out) != ND_OK)
            return 30 + (int)o;
        for (size_t i = 0; i < N_IN; i++)
            if (tst_verify_input(dir, name, in_flags[i], data, len) != 0) {
                fprintf(stderr, "tmpfs: output flags 0x%x, input flags 0x%x\n", out_flags[o],
                        in_flags[i]);
                return 40 + (int)o;
            }
    }
    free(data);
    nd_close(dir);
    return 0;
}

/* Writes `len` bytes in 64 KiB calls to a new output made with `flags`, closes
 * it, and returns the minor page faults the process took meanwhile. */
static long faults_writing(tst_env *env, const char *name, uint32_t flags, const uint8_t *data,
                           size_t len, void **pin)
{
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    nd_handle out;
    assert_status(ND_OK, nd_create_output(env->dir, name, flags | ND_IO_OVERWRITE, &out));
    for (size_t at = 0; at < len; at += 64 << 10)
        assert_int_equal(nd_write_bytes(out, data + at, 64 << 10), 64 << 10);
    *pin = malloc(4096); /* an application's allocation made meanwhile */
    assert_status(ND_OK, nd_close(out));
    getrusage(RUSAGE_SELF, &after);
    check_on_disk(env, name, data, len);
    return after.ru_minflt - before.ru_minflt;
}

/* An output's large buffers (a direct output's two 1 MiB buffers, a buffered
 * one's 2 MiB) outlive it for the next output (buffers.c): the second of two
 * outputs written alike takes almost no page faults, where fresh buffers take
 * one per 4 KiB page (512 for 2 MiB) every time. */
static void the_next_output_reuses_the_buffers(void **state)
{
    tst_env *env = *state;
    enum { LEN = 8 << 20 };
    uint8_t *data = malloc(LEN);
    assert_non_null(data);
    for (size_t i = 0; i < LEN; i++)
        data[i] = (uint8_t)(i * 2654435761u >> 13);
#  ifdef __GLIBC__
    /* as in the .NET process where this was measured (every output's buffers
     * came from fresh pages): blocks this large go back to the OS when freed,
     * instead of whatever this test's earlier allocations left in the heap */
    mallopt(M_MMAP_THRESHOLD, 128 << 10);
    mallopt(M_TRIM_THRESHOLD, 128 << 10);
    malloc_trim(0); /* what earlier tests left free goes back too */
#  endif
    /* the control: what 2 MiB of fresh memory costs here (an emulator may
     * count no faults at all, and then nothing can be shown) */
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    volatile uint8_t *fresh[2]; /* 1 MiB each, as the buffers: too small for a huge page */
    for (int b = 0; b < 2; b++) {
        fresh[b] = malloc(1 << 20);
        assert_non_null((void *)fresh[b]);
        for (size_t i = 0; i < (1 << 20); i += 4096)
            fresh[b][i] = 1;
    }
    getrusage(RUSAGE_SELF, &after);
    free((void *)fresh[0]);
    free((void *)fresh[1]);
    long control = after.ru_minflt - before.ru_minflt;
    if (control < 256) {
        tst_loud_skip("an output's buffers reused by the next",
                      "fresh memory takes no counted page faults here");
        free(data);
        return;
    }
    const uint32_t kinds[] = {0, ND_IO_MERGE};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        if (kinds[k] == ND_IO_MERGE && !direct_works(env)) {
            tst_loud_skip("a direct output's buffers reused", "this file system refuses O_DIRECT");
            continue;
        }
        void *pins[2];
        (void)faults_writing(env, "first", kinds[k], data, LEN, &pins[0]);
        long second = faults_writing(env, "second", kinds[k], data, LEN, &pins[1]);
        free(pins[0]);
        free(pins[1]);
        if (second >= control / 4)
            fail_msg(
                "flags %u: the second output took %ld page faults (2 MiB of fresh memory: %ld)",
                kinds[k], second, control);
    }
    free(data);
}

static void every_strategy_on_tmpfs(void **state)
{
    (void)state;
    int rc = tst_with_private_mount("tmpfs", "size=64m", tmpfs_round_trip, NULL);
    if (rc == TST_NO_MOUNT) {
        tst_loud_skip("outputs and inputs on tmpfs", "no private tmpfs mount is possible here");
        skip();
    }
    assert_int_equal(rc, 0);
}

static void merge_falls_back_where_direct_is_refused(void **state)
{
    (void)state;
    int rc = tst_with_private_mount("ramfs", NULL, ramfs_outputs, NULL);
    if (rc == TST_NO_MOUNT) {
        tst_loud_skip("ND_IO_MERGE / REQUIRE_DIRECT outputs where O_DIRECT is refused",
                      "no private ramfs mount is possible here (needs root or user namespaces)");
        skip();
    }
    assert_int_equal(rc, 0);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(every_strategy_size_and_chunking, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(sync_then_more_writes, tst_setup, tst_teardown),
#ifndef _WIN32
        cmocka_unit_test_setup_teardown(the_next_output_reuses_the_buffers, tst_setup,
                                        tst_teardown),
#endif
        cmocka_unit_test_setup_teardown(buffer_size_is_what_the_output_collects, tst_setup,
                                        tst_teardown),
        cmocka_unit_test_setup_teardown(flush_hands_every_byte_to_the_os, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(seek_rewrites_like_a_file_stream, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(seek_model_across_large_pieces, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(seek_like_lucene_3x_term_infos, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(create_and_overwrite, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(overwrite_keeps_old_readers_reading, tst_setup,
                                        tst_teardown),
        cmocka_unit_test_setup_teardown(refused_flags, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(calls_after_close, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(crc_of_known_vectors, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(require_direct_output_here, tst_setup, tst_teardown),
#ifndef _WIN32
        cmocka_unit_test_setup_teardown(overwriting_a_mapped_file_never_crashes_its_reader,
                                        tst_setup, tst_teardown),
        cmocka_unit_test(merge_falls_back_where_direct_is_refused),
        cmocka_unit_test(every_strategy_on_tmpfs),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
