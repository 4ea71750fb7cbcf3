/*
 * rel_util.c - scratch directories, direct file checks and count lines.
 */
#ifndef _GNU_SOURCE
#  define _GNU_SOURCE
#endif
#include "rel_util.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *rel_mkdtemp(const char *tag)
{
    const char *base = getenv("TMPDIR");
    if (base == NULL || base[0] == '\0')
        base = "/tmp";
    size_t n = strlen(base) + strlen(tag) + 32;
    char *path = malloc(n);
    if (path == NULL)
        abort();
    snprintf(path, n, "%s/nd-%s-XXXXXX", base, tag);
    if (mkdtemp(path) == NULL) {
        fprintf(stderr, "mkdtemp %s: %s\n", path, strerror(errno));
        abort();
    }
    return path;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    if (remove(path) != 0 && errno != ENOENT)
        fprintf(stderr, "cleanup: remove %s: %s\n", path, strerror(errno));
    return 0;
}

void rel_rmtree(const char *path)
{
    if (path != NULL)
        nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

char *rel_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p == NULL)
        abort();
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

uint8_t *rel_slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return NULL;
    }
    size_t cap = (size_t)st.st_size + 1;
    uint8_t *buf = malloc(cap);
    size_t got = 0;
    while (buf != NULL) {
        if (got == cap) {
            uint8_t *grown = realloc(buf, cap * 2);
            if (grown == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + got, cap - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            free(buf);
            buf = NULL;
            break;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (buf != NULL)
        *len = got;
    return buf;
}

int rel_write_file(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, (const char *)data + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)w;
    }
    int rc = fsync(fd);
    close(fd);
    return rc == 0 ? 0 : -1;
}

int rel_file_is(const char *path, const void *data, size_t len)
{
    size_t got = 0;
    uint8_t *buf = rel_slurp(path, &got);
    int same = buf != NULL && got == len && (len == 0 || memcmp(buf, data, len) == 0);
    free(buf);
    return same;
}

/* 8 pattern bytes per hash: byte o of a stream is byte (o % 8) of word_at(o / 8) */
static uint64_t word_at(uint32_t seed, uint64_t index)
{
    uint64_t x = index * 0x9E3779B97F4A7C15ull ^ ((uint64_t)seed << 32 | seed);
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return x;
}

void rel_fill(uint8_t *dst, size_t len, uint32_t seed, uint64_t off)
{
    /* a byte is a function of (seed, offset) alone, so any range can be checked alone */
    size_t i = 0;
    while (i < len) {
        uint64_t o = off + i;
        uint64_t w = word_at(seed, o >> 3);
        for (unsigned b = (unsigned)(o & 7); b < 8 && i < len; b++, i++)
            dst[i] = (uint8_t)(w >> (8 * b));
    }
}

void rel_count(const char *case_id, long long count, const char *unit, const char *result,
               const char *what)
{
    char line[1024];
    snprintf(line, sizeof(line), "ND-REL-COUNT\t%s\t%lld\t%s\t%s\t%s\n", case_id, count, unit,
             result, what);
    fputs(line, stdout);
    fflush(stdout);
    const char *dir = getenv("ND_REL_COUNTS");
    if (dir == NULL || dir[0] == '\0')
        return;
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s.tsv", dir, case_id);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "rel_count: cannot write %s: %s\n", path, strerror(errno));
        return;
    }
    fputs(line, f);
    fclose(f);
}
