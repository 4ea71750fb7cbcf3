/*
 * memlimit.h - a memory cgroup for a benchmark: the one piece of code every
 * suite's memory-limited rows go through (nd_bench links it; the other
 * languages run the nd_memlimit program built from it).
 *
 * The page cache a process faults in is charged to its memory cgroup, so a
 * file of N bytes read by a process in a cgroup limited to N/4 behaves as on
 * a machine with a quarter of the memory. cgroup v1's memory controller
 * (memory.limit_in_bytes) or cgroup v2 (memory.max), whichever the machine
 * has; the cgroup is made as a child of the caller's own memory cgroup where
 * that is allowed, else of the hierarchy's root.
 *
 * Every function returns 0, or -1 with the reason in cg->error.
 */
#ifndef ND_MEMLIMIT_H
#define ND_MEMLIMIT_H

#include <stdint.h>
#include <sys/types.h>

typedef struct {
    char dir[512];   /* the cgroup's directory; "" when none */
    int v2;          /* 1: cgroup v2 files (memory.max), 0: v1 (memory.limit_in_bytes) */
    int made;        /* 1: ndml_create made it (ndml_remove removes it) */
    char error[700]; /* why the last call failed */
} ndml_cgroup;

typedef struct {
    int64_t limit;      /* bytes; -1: none */
    int64_t usage;      /* everything charged now (v1 memory.usage_in_bytes, v2 memory.current) */
    int64_t peak;       /* the most charged at once (v1 memory.max_usage_in_bytes, v2
                           memory.peak); -1 where the kernel does not say */
    int64_t file;       /* of usage, the page cache of files (v1 stat total_cache, v2 stat
                           file, each less shmem: the kernel counts shared memory as cache, but
                           it is a process's own memory and no eviction drops it) */
    int64_t shmem;      /* shared memory (tmpfs, memfd: e.g. a JIT's double-mapped code) */
    int64_t anon;       /* of usage, anonymous memory (v1 stat total_rss, v2 stat anon) */
    int64_t limit_hits; /* times the limit was reached (v1 memory.failcnt, v2 events max) */
    int64_t oom_kills;  /* processes the OOM killer ended in it (v1 oom_control, v2 events) */
} ndml_stat;

/* Makes a fresh cgroup named `tag`-<pid> with no limit yet. */
int ndml_create(ndml_cgroup *cg, const char *tag);
/* Takes an existing cgroup's directory (e.g. $ND_MEMLIMIT_CGROUP); not removed by ndml_remove. */
int ndml_attach(ndml_cgroup *cg, const char *dir);
/* Limits the cgroup to `bytes` (-1: no limit). Lowering it below what is
 * charged makes the kernel reclaim first (page cache goes; anonymous memory
 * cannot without swap, and then the call fails). */
int ndml_set_limit(ndml_cgroup *cg, int64_t bytes);
/* Moves process `pid` (0: the caller) into the cgroup; its children follow. */
int ndml_join(ndml_cgroup *cg, pid_t pid);
int ndml_read_stat(ndml_cgroup *cg, ndml_stat *st);
/* Ends the processes still in the cgroup (only what was started in it) and
 * removes it; its page cache moves to the parent. A no-op on attached or
 * removed cgroups. */
int ndml_remove(ndml_cgroup *cg);

/* Drops the page-cache pages of `path` (a file, or every regular file of a
 * directory, not recursing): fsync (dirty pages cannot be dropped), then
 * POSIX_FADV_DONTNEED, as the cold rows of nd_bench do. Pages a live mapping
 * holds stay: *cached_after (may be NULL) says how many bytes are still
 * resident, *bytes (may be NULL) how many the files hold. 0, or -1 with the
 * reason in `why`. */
int ndml_evict(const char *path, int64_t *bytes, int64_t *cached_after, char *why, size_t why_len);
/* The same without the drop (drop 0): how much of `path` is in the page cache. */
int ndml_residency(const char *path, int drop, int64_t *bytes, int64_t *cached_after, char *why,
                   size_t why_len);

#endif
