/*
 * crash_writer.c - the process the crash test kills (and the strace test
 * traces). It runs the durable-write protocol a search engine uses and tells
 * its parent, on stdout, each step only after the library acknowledged it:
 *
 *   S <gen> <bytes>  log-<gen>.bin holds <bytes> bytes, synced (nd_output_sync)
 *   P <v>            state.tmp holds version <v> in full, synced and closed
 *   R <v>            state was renamed over and the directory synced: version <v>
 *
 * usage: crash_writer DIR GEN FIRST_VERSION SEED [ROUNDS]   (ROUNDS 0 = until killed)
 * The log's bytes are rel_fill(seed = GEN); an odd GEN writes it as a merge
 * (direct I/O) output. A state file is self-describing (see state_bytes).
 */
#ifndef _GNU_SOURCE
#  define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crash_format.h"
#include "nativedir.h"
#include "rel_util.h"

static void ack(const char *line)
{
    size_t n = strlen(line);
    /* one write per line: pipe writes this small are atomic, so a kill never tears a line */
    if (write(1, line, n) != (ssize_t)n)
        _exit(3);
}

static void die(const char *what, int64_t rc)
{
    fprintf(stderr, "crash_writer: %s: %s: %s\n", what, nd_status_name((int32_t)rc),
            nd_last_error_message());
    exit(2);
}

static uint64_t rng;
static uint32_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: crash_writer DIR GEN FIRST_VERSION SEED [ROUNDS]\n");
        return 2;
    }
    const char *path = argv[1];
    long gen = atol(argv[2]);
    long version = atol(argv[3]);
    rng = strtoull(argv[4], NULL, 10) * 2654435761u + 1;
    long rounds = argc > 5 ? atol(argv[5]) : 0;

    nd_handle dir, log;
    int64_t rc;
    if ((rc = nd_open_dir(path, 0, &dir)) != ND_OK)
        die("nd_open_dir", rc);
    char log_name[64];
    snprintf(log_name, sizeof(log_name), "log-%ld.bin", gen);
    uint32_t log_flags = (gen & 1) ? ND_IO_MERGE : 0;
    if ((rc = nd_create_output(dir, log_name, log_flags | ND_IO_OVERWRITE, &log)) != ND_OK)
        die("nd_create_output log", rc);
    if ((rc = nd_sync_dir(dir)) != ND_OK) /* the log's name is durable before its bytes count */
        die("nd_sync_dir", rc);

#define RECORD_MAX (96u << 10)
    static uint8_t buf[RECORD_MAX > STATE_MAX ? RECORD_MAX : STATE_MAX];
    char line[64];
    int64_t logged = 0;
    for (long round = 0; rounds == 0 || round < rounds; round++) {
        /* a record of 1 byte .. 96 KiB: crosses the 64 KiB buffer and direct blocks */
        size_t n = 1 + next_rand() % RECORD_MAX;
        rel_fill(buf, n, (uint32_t)gen, (uint64_t)logged);
        if ((rc = nd_write_bytes(log, buf, (int64_t)n)) != (int64_t)n)
            die("nd_write_bytes log", rc);
        logged += (int64_t)n;
        if ((rc = nd_output_sync(log)) != ND_OK)
            die("nd_output_sync log", rc);
        snprintf(line, sizeof(line), "S %ld %lld\n", gen, (long long)logged);
        ack(line);

        /* replace `state` atomically: write aside, sync, close, rename, sync the directory */
        size_t len = state_bytes(buf, version, next_rand());
        nd_handle tmp;
        if ((rc = nd_create_output(dir, "state.tmp", ND_IO_OVERWRITE, &tmp)) != ND_OK)
            die("nd_create_output state.tmp", rc);
        /* in two pieces so a kill can land between them */
        if ((rc = nd_write_bytes(tmp, buf, (int64_t)(len / 2))) < 0 ||
            (rc = nd_write_bytes(tmp, buf + len / 2, (int64_t)(len - len / 2))) < 0)
            die("nd_write_bytes state.tmp", rc);
        if ((rc = nd_output_sync(tmp)) != ND_OK)
            die("nd_output_sync state.tmp", rc);
        if ((rc = nd_close(tmp)) != ND_OK)
            die("nd_close state.tmp", rc);
        snprintf(line, sizeof(line), "P %ld\n", version);
        ack(line);
        if ((rc = nd_rename(dir, "state.tmp", "state")) != ND_OK)
            die("nd_rename", rc);
        if ((rc = nd_sync_dir(dir)) != ND_OK)
            die("nd_sync_dir", rc);
        snprintf(line, sizeof(line), "R %ld\n", version);
        ack(line);
        version++;
    }
    if ((rc = nd_close(log)) != ND_OK)
        die("nd_close log", rc);
    nd_close(dir);
    return 0;
}
