/*
 * memory.c - what the page cache the process may use is doing (os.h,
 * nd__os_memory): Linux's memory cgroup statistics, v2 or v1, of the
 * cgroup the process runs in (its page cache, charged to it, is what its
 * limit bounds), or the machine's where the process has no memory cgroup
 * of its own; macOS tells none of it.
 */
#if !defined(_GNU_SOURCE)
#  define _GNU_SOURCE /* CLOCK_MONOTONIC_COARSE */
#endif
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../internal.h"
#include "posix.h"

int64_t nd__os_clock_ns(void)
{
    struct timespec t;
#if defined(CLOCK_MONOTONIC_COARSE)
    clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
#else
    clock_gettime(CLOCK_MONOTONIC, &t);
#endif
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

#if defined(__linux__)

/* Reads a small pseudo-file whole (they are generated on read) into buf. */
static ssize_t slurp(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t n = 0;
    ssize_t r;
    while (n + 1 < cap && (r = read(fd, buf + n, cap - 1 - n)) > 0)
        n += (size_t)r;
    close(fd);
    buf[n] = '\0';
    return (ssize_t)n;
}

/* The next line of text after p, or NULL at the end. */
static const char *next_line(const char *p)
{
    const char *nl = strchr(p, '\n');
    return nl != NULL && nl[1] != '\0' ? nl + 1 : NULL;
}

/* The value of `key` (a line "key value" or "key: value") in text, or -1. */
static int64_t field(const char *text, const char *key)
{
    size_t klen = strlen(key);
    for (const char *p = text; p != NULL; p = next_line(p))
        if (strncmp(p, key, klen) == 0 && (p[klen] == ' ' || p[klen] == ':'))
            return strtoll(p + klen + 1, NULL, 10); /* strtoll skips the blanks */
    return -1;
}

/* Where the statistics are read: the files of the process's memory cgroup. */
typedef struct {
    char used[512], limit[512]; /* memory.current / usage_in_bytes, memory.max / limit_in_bytes */
    int v1;                     /* v1 names its hierarchical counters total_* */
} cgroup_files;

/* Finds the process's memory cgroup and reads its memory.stat into text; 0 if
 * it has none (v2's root has no memory.stat). Looked up at every sample, not
 * once: a process may be moved to another cgroup (a child that a supervisor
 * or a test puts under a limit of its own after the library was used), and
 * the counters of the cgroup it left no longer describe its cache. Lines of
 * /proc/self/cgroup are "id:controllers:path": v2's is "0::path", v1's
 * memory controller "n:memory:path" (possibly with others named too). */
static int read_cgroup(cgroup_files *f, char *text, size_t cap)
{
    char cg[4096], stat[512];
    if (slurp("/proc/self/cgroup", cg, sizeof cg) <= 0)
        return 0;
    for (const char *line = cg; line != NULL; line = next_line(line)) {
        const char *c1 = strchr(line, ':');
        const char *c2 = c1 != NULL ? strchr(c1 + 1, ':') : NULL;
        if (c2 == NULL)
            continue;
        int v2 = c2 == c1 + 1 && strncmp(line, "0:", 2) == 0;
        const char *mem = strstr(c1, "memory");
        int v1 = !v2 && mem != NULL && mem < c2 && (mem[-1] == ':' || mem[-1] == ',') &&
                 (mem[6] == ':' || mem[6] == ',');
        if (!v1 && !v2)
            continue;
        int len = (int)strcspn(c2 + 1, "\n");
        const char *base = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
        const char *sep = len > 0 && c2[len] == '/' ? "" : "/";
        snprintf(stat, sizeof stat, "%s%.*s%smemory.stat", base, len, c2 + 1, sep);
        if (slurp(stat, text, cap) <= 0)
            continue;
        snprintf(f->used, sizeof f->used, "%s%.*s%s%s", base, len, c2 + 1, sep,
                 v2 ? "memory.current" : "memory.usage_in_bytes");
        snprintf(f->limit, sizeof f->limit, "%s%.*s%s%s", base, len, c2 + 1, sep,
                 v2 ? "memory.max" : "memory.limit_in_bytes");
        f->v1 = v1;
        return 1;
    }
    return 0;
}

/* The machine's memory (/proc/meminfo) as a limit: all of it, in use all but
 * what is free (the page cache counted, as a cgroup's usage counts it), and
 * the page cache; 0, or -1 where it cannot be read. */
static int machine(char *text, size_t cap, int64_t *limit, int64_t *used, int64_t *cache)
{
    if (slurp("/proc/meminfo", text, cap) <= 0)
        return -1;
    int64_t total = field(text, "MemTotal"), free = field(text, "MemFree");
    int64_t cached = field(text, "Cached");
    if (total < 0 || free < 0 || cached < 0)
        return -1;
    *limit = total * 1024; /* kB */
    *used = (total - free) * 1024;
    *cache = cached * 1024;
    return 0;
}

int32_t nd__os_memory(nd_os_memory *out)
{
    static __thread char text[8192];
    cgroup_files f;
    int64_t refaults, majflt, cache, used, limit = -1;
    char num[64];
    if (read_cgroup(&f, text, sizeof text)) {
        refaults = field(text, f.v1 ? "total_workingset_refault_file" : "workingset_refault_file");
        if (refaults < 0) /* kernels before 5.9 count file and anon refaults together */
            refaults = field(text, f.v1 ? "total_workingset_refault" : "workingset_refault");
        majflt = field(text, f.v1 ? "total_pgmajfault" : "pgmajfault");
        cache = field(text, f.v1 ? "total_cache" : "file");
        used = slurp(f.used, num, sizeof num) > 0 ? strtoll(num, NULL, 10) : -1;
        /* no limit: v2 says "max", v1 a number near 2^63 */
        if (slurp(f.limit, num, sizeof num) > 0 && strncmp(num, "max", 3) != 0 &&
            strtoull(num, NULL, 10) < (1ull << 62))
            limit = strtoll(num, NULL, 10);
        /* A cgroup without a limit (a systemd service's, by default) has the
         * machine's: its cache is under pressure only when the machine's is,
         * and the pages it reads back may have been evicted by a limit it no
         * longer has, or a cgroup it has left. Its own counters stay. */
        if (limit < 0)
            (void)machine(text, sizeof text, &limit, &used, &cache); /* else it stays -1 */
    } else {
        if (slurp("/proc/vmstat", text, sizeof text) <= 0)
            return ND_E_NOT_SUPPORTED;
        refaults = field(text, "workingset_refault_file");
        if (refaults < 0)
            refaults = field(text, "workingset_refault");
        majflt = field(text, "pgmajfault");
        if (refaults < 0 || majflt < 0 || machine(text, sizeof text, &limit, &used, &cache) != 0)
            return ND_E_NOT_SUPPORTED;
    }
    if (refaults < 0 || majflt < 0 || cache < 0 || used < 0)
        return ND_E_NOT_SUPPORTED;
    out->refaults = (uint64_t)refaults;
    out->major_faults = (uint64_t)majflt;
    out->cache_bytes = (uint64_t)cache;
    out->used = used;
    out->limit = limit;
    return ND_OK;
}

#else

int32_t nd__os_memory(nd_os_memory *out)
{
    (void)out;
    return ND_E_NOT_SUPPORTED;
}

#endif
