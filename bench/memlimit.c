/*
 * memlimit.c - the memory cgroup of memlimit.h, on Linux's cgroup v1 memory
 * controller or cgroup v2.
 *
 * Where the cgroup goes: a child of the caller's own memory cgroup first (so
 * a benchmark run inside a container or a session's cgroup stays inside it,
 * its limits nesting), else a child of the hierarchy's root. cgroup v2 allows
 * the memory controller in a child only where the parent enables it for its
 * children, which a parent holding processes may not (the "no internal
 * processes" rule): then the own-cgroup try fails and the root is tried.
 */
#include "memlimit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int fail(ndml_cgroup *cg, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cg->error, sizeof(cg->error), fmt, ap);
    va_end(ap);
    return -1;
}

static const char *limit_file(const ndml_cgroup *cg)
{
    return cg->v2 ? "memory.max" : "memory.limit_in_bytes";
}

/* Writes `text` to dir/file; 0, or -1 with errno set. */
static int write_text(const char *dir, const char *file, const char *text)
{
    char path[700];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t len = strlen(text);
    ssize_t n = write(fd, text, len);
    int e = errno;
    close(fd);
    errno = e;
    return n == (ssize_t)len ? 0 : -1;
}

/* Reads dir/file into buf (NUL-terminated); its length, or -1 with errno set. */
static ssize_t read_text(const char *dir, const char *file, char *buf, size_t size)
{
    char path[700];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, size - 1);
    int e = errno;
    close(fd);
    errno = e;
    if (n < 0)
        return -1;
    buf[n] = '\0';
    return n;
}

/* A number file: "max" (v2) and v1's huge "no limit" value read as -1. */
static int64_t read_number(const char *dir, const char *file)
{
    char buf[64];
    if (read_text(dir, file, buf, sizeof(buf)) <= 0)
        return -1;
    if (strncmp(buf, "max", 3) == 0)
        return -1;
    long long v = strtoll(buf, NULL, 10);
    return v >= (1LL << 62) ? -1 : (int64_t)v;
}

/* The value of `key` in a "key value" file (memory.stat, memory.events), or -1. */
static int64_t read_key(const char *dir, const char *file, const char *key)
{
    char buf[8192];
    if (read_text(dir, file, buf, sizeof(buf)) <= 0)
        return -1;
    size_t klen = strlen(key);
    for (char *line = buf; line != NULL && *line != '\0';) {
        char *next = strchr(line, '\n');
        if (strncmp(line, key, klen) == 0 && line[klen] == ' ')
            return (int64_t)strtoll(line + klen + 1, NULL, 10);
        line = next != NULL ? next + 1 : NULL;
    }
    return -1;
}

/* dst = a + sep + b; 0, or -1 when it does not fit */
static int join(char *dst, size_t cap, const char *a, const char *sep, const char *b)
{
    size_t la = strlen(a), ls = strlen(sep), lb = strlen(b);
    if (la + ls + lb + 1 > cap)
        return -1;
    memcpy(dst, a, la);
    memcpy(dst + la, sep, ls);
    memcpy(dst + la + ls, b, lb + 1);
    return 0;
}

typedef struct {
    char mount[256]; /* where the hierarchy is mounted; "" when absent */
    char own[256];   /* the caller's cgroup in it ("/" for the root) */
} hierarchy;

/* The v1 memory hierarchy and the v2 one, from /proc/self/mounts and /proc/self/cgroup. */
static void find_hierarchies(hierarchy *v1, hierarchy *v2)
{
    memset(v1, 0, sizeof(*v1));
    memset(v2, 0, sizeof(*v2));
    FILE *f = fopen("/proc/self/mounts", "re");
    if (f != NULL) {
        char dev[256], mnt[256], type[64], opts[512];
        while (fscanf(f, "%255s %255s %63s %511s %*d %*d", dev, mnt, type, opts) == 4) {
            if (strcmp(type, "cgroup2") == 0 && v2->mount[0] == '\0')
                snprintf(v2->mount, sizeof(v2->mount), "%s", mnt);
            if (strcmp(type, "cgroup") == 0 && v1->mount[0] == '\0') {
                for (char *save = NULL, *o = strtok_r(opts, ",", &save); o != NULL;
                     o = strtok_r(NULL, ",", &save))
                    if (strcmp(o, "memory") == 0)
                        snprintf(v1->mount, sizeof(v1->mount), "%s", mnt);
            }
        }
        fclose(f);
    }
    f = fopen("/proc/self/cgroup", "re");
    if (f != NULL) {
        char line[1024];
        while (fgets(line, sizeof(line), f) != NULL) {
            line[strcspn(line, "\n")] = '\0';
            char *c1 = strchr(line, ':'), *c2 = c1 != NULL ? strchr(c1 + 1, ':') : NULL;
            if (c2 == NULL)
                continue;
            *c2 = '\0';
            const char *controllers = c1 + 1, *path = c2 + 1;
            if (controllers[0] == '\0') {
                snprintf(v2->own, sizeof(v2->own), "%s", path);
                continue;
            }
            char list[256];
            snprintf(list, sizeof(list), "%s", controllers);
            for (char *save = NULL, *o = strtok_r(list, ",", &save); o != NULL;
                 o = strtok_r(NULL, ",", &save))
                if (strcmp(o, "memory") == 0)
                    snprintf(v1->own, sizeof(v1->own), "%s", path);
        }
        fclose(f);
    }
}

/* Tries to make parent/name with a writable limit file. */
static int try_make(ndml_cgroup *cg, const char *parent, const char *name, int v2)
{
    struct stat st;
    if (stat(parent, &st) != 0)
        return fail(cg, "%s: %s", parent, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return fail(cg, "%s: not a directory", parent);
    if (join(cg->dir, sizeof(cg->dir), parent, "/", name) != 0)
        return fail(cg, "%s: path too long", parent);
    cg->v2 = v2;
    if (mkdir(cg->dir, 0755) != 0) {
        int e = errno;
        cg->dir[0] = '\0';
        return fail(cg, "mkdir %s/%s: %s", parent, name, strerror(e));
    }
    /* "max" (v2) and "-1" (v1) are both "no limit": a write the kernel refuses
     * here means the controller is not enabled for this cgroup */
    if (write_text(cg->dir, limit_file(cg), v2 ? "max" : "-1") != 0) {
        int e = errno;
        rmdir(cg->dir);
        int rc = fail(cg, "%s: cannot write %s/%s: %s%s", v2 ? "cgroup v2" : "cgroup v1", cg->dir,
                      limit_file(cg), strerror(e),
                      v2 && e == ENOENT ? " (the memory controller is not enabled for children of "
                                          "this cgroup)"
                                        : "");
        cg->dir[0] = '\0';
        return rc;
    }
    cg->made = 1;
    return 0;
}

int ndml_create(ndml_cgroup *cg, const char *tag)
{
    memset(cg, 0, sizeof(*cg));
    hierarchy h[2];
    find_hierarchies(&h[0], &h[1]);
    char name[128];
    snprintf(name, sizeof(name), "%s-%d", tag, (int)getpid());
    char why[2][700] = {"", ""};
    int tried = 0;
    /* v1's memory controller first: where it is mounted, the v2 hierarchy has none */
    for (int v = 0; v < 2; v++) {
        if (h[v].mount[0] == '\0')
            continue;
        char parents[2][sizeof(h[v].mount) + sizeof(h[v].own)];
        int n = 0;
        if (h[v].own[0] != '\0' && strcmp(h[v].own, "/") != 0)
            n += join(parents[n], sizeof(parents[0]), h[v].mount, "", h[v].own) == 0;
        n += join(parents[n], sizeof(parents[0]), h[v].mount, "", "") == 0;
        for (int p = 0; p < n; p++) {
            tried = 1;
            if (try_make(cg, parents[p], name, v) == 0)
                return 0;
            snprintf(why[v], sizeof(why[v]), "%s", cg->error);
        }
    }
    if (!tried)
        return fail(cg, "no memory cgroup hierarchy is mounted (neither cgroup v1's memory "
                        "controller nor cgroup v2 in /proc/self/mounts)");
    return fail(cg, "cannot make a memory cgroup: %s%s%s", why[0],
                why[0][0] && why[1][0] ? "; " : "", why[1]);
}

int ndml_attach(ndml_cgroup *cg, const char *dir)
{
    memset(cg, 0, sizeof(*cg));
    if (dir == NULL || dir[0] == '\0')
        return fail(cg, "no cgroup given (ND_MEMLIMIT_CGROUP is unset: run under nd_memlimit run)");
    snprintf(cg->dir, sizeof(cg->dir), "%s", dir);
    char probe[700];
    snprintf(probe, sizeof(probe), "%s/memory.limit_in_bytes", dir);
    if (access(probe, F_OK) == 0)
        return 0;
    snprintf(probe, sizeof(probe), "%s/memory.max", dir);
    if (access(probe, F_OK) == 0) {
        cg->v2 = 1;
        return 0;
    }
    int rc = fail(cg, "%s is not a memory cgroup (no memory.limit_in_bytes or memory.max)", dir);
    cg->dir[0] = '\0';
    return rc;
}

int ndml_set_limit(ndml_cgroup *cg, int64_t bytes)
{
    if (cg->dir[0] == '\0')
        return fail(cg, "no cgroup");
    char text[32];
    if (bytes < 0)
        snprintf(text, sizeof(text), "%s", cg->v2 ? "max" : "-1");
    else
        snprintf(text, sizeof(text), "%lld", (long long)bytes);
    if (write_text(cg->dir, limit_file(cg), text) != 0)
        return fail(cg, "set %s/%s to %s: %s%s", cg->dir, limit_file(cg), text, strerror(errno),
                    errno == EBUSY ? " (more than that is charged and cannot be reclaimed)" : "");
    /* v1: the peak counts from here (v2's memory.peak cannot be reset for all readers) */
    if (!cg->v2)
        write_text(cg->dir, "memory.max_usage_in_bytes", "0");
    return 0;
}

int ndml_join(ndml_cgroup *cg, pid_t pid)
{
    if (cg->dir[0] == '\0')
        return fail(cg, "no cgroup");
    char text[32];
    snprintf(text, sizeof(text), "%d", (int)(pid != 0 ? pid : getpid()));
    if (write_text(cg->dir, "cgroup.procs", text) != 0)
        return fail(cg, "move process %s into %s: %s", text, cg->dir, strerror(errno));
    return 0;
}

int ndml_read_stat(ndml_cgroup *cg, ndml_stat *st)
{
    if (cg->dir[0] == '\0')
        return fail(cg, "no cgroup");
    st->limit = read_number(cg->dir, limit_file(cg));
    if (cg->v2) {
        st->usage = read_number(cg->dir, "memory.current");
        st->peak = read_number(cg->dir, "memory.peak");
        st->file = read_key(cg->dir, "memory.stat", "file");
        st->shmem = read_key(cg->dir, "memory.stat", "shmem");
        st->anon = read_key(cg->dir, "memory.stat", "anon");
        st->limit_hits = read_key(cg->dir, "memory.events", "max");
        st->oom_kills = read_key(cg->dir, "memory.events", "oom_kill");
    } else {
        st->usage = read_number(cg->dir, "memory.usage_in_bytes");
        st->peak = read_number(cg->dir, "memory.max_usage_in_bytes");
        st->file = read_key(cg->dir, "memory.stat", "total_cache");
        st->shmem = read_key(cg->dir, "memory.stat", "total_shmem");
        st->anon = read_key(cg->dir, "memory.stat", "total_rss");
        st->limit_hits = read_number(cg->dir, "memory.failcnt");
        st->oom_kills = read_key(cg->dir, "memory.oom_control", "oom_kill");
    }
    if (st->usage < 0)
        return fail(cg, "read the usage of %s: %s", cg->dir, strerror(errno));
    if (st->file >= 0 && st->shmem > 0)
        st->file = st->file > st->shmem ? st->file - st->shmem : 0;
    return 0;
}

/* SIGKILLs every process listed in the cgroup; the number sent. */
static int kill_members(ndml_cgroup *cg)
{
    char buf[8192];
    if (read_text(cg->dir, "cgroup.procs", buf, sizeof(buf)) < 0)
        return 0;
    int n = 0;
    for (char *p = buf; *p != '\0';) {
        char *end;
        long pid = strtol(p, &end, 10);
        if (end == p)
            break;
        if (pid > 0 && pid != (long)getpid() && kill((pid_t)pid, SIGKILL) == 0)
            n++;
        p = end;
        while (*p == '\n')
            p++;
    }
    return n;
}

int ndml_remove(ndml_cgroup *cg)
{
    if (cg->dir[0] == '\0' || !cg->made)
        return 0;
    int left = kill_members(cg);
    int e = 0;
    /* a killed process leaves the cgroup once it has exited: up to 5 s */
    for (int i = 0; i < 250; i++) {
        if (rmdir(cg->dir) == 0 || errno == ENOENT) {
            cg->dir[0] = '\0';
            cg->made = 0;
            return 0;
        }
        e = errno;
        if (e != EBUSY)
            break;
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
    }
    return fail(cg, "remove %s: %s%s", cg->dir, strerror(e),
                left > 0 ? " (processes left in it were sent SIGKILL)" : "");
}

/* ---- eviction ---- */

static int evict_file(int dirfd, const char *name, int drop, int64_t *bytes, int64_t *cached,
                      char *why, size_t why_len)
{
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, why_len, "open %s: %s", name, strerror(errno));
        return -1;
    }
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) != 0) {
        snprintf(why, why_len, "fstat %s: %s", name, strerror(errno));
        rc = -1;
    } else if (S_ISREG(st.st_mode) && st.st_size > 0) {
        /* dirty pages cannot be dropped: write them back first */
        if (drop && fsync(fd) != 0 && errno != EINVAL && errno != EROFS) {
            snprintf(why, why_len, "fsync %s: %s", name, strerror(errno));
            rc = -1;
        } else {
            if (drop)
                posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
            *bytes += st.st_size;
            /* a fresh mapping faults nothing in; mincore only looks */
            void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
            long page = sysconf(_SC_PAGESIZE);
            size_t pages = ((size_t)st.st_size + (size_t)page - 1) / (size_t)page;
            unsigned char *vec = m != MAP_FAILED ? malloc(pages) : NULL;
            if (vec != NULL && mincore(m, (size_t)st.st_size, vec) == 0) {
                for (size_t i = 0; i < pages; i++)
                    *cached += (vec[i] & 1) ? page : 0;
            }
            free(vec);
            if (m != MAP_FAILED)
                munmap(m, (size_t)st.st_size);
        }
    }
    close(fd);
    return rc;
}

int ndml_evict(const char *path, int64_t *bytes, int64_t *cached_after, char *why, size_t why_len)
{
    return ndml_residency(path, 1, bytes, cached_after, why, why_len);
}

int ndml_residency(const char *path, int drop, int64_t *bytes, int64_t *cached_after, char *why,
                   size_t why_len)
{
    int64_t total = 0, cached = 0;
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(why, why_len, "%s: %s", path, strerror(errno));
        return -1;
    }
    int rc = 0;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (d == NULL) {
            snprintf(why, why_len, "opendir %s: %s", path, strerror(errno));
            return -1;
        }
        struct dirent *e;
        while (rc == 0 && (e = readdir(d)) != NULL) {
            if (e->d_type != DT_REG && e->d_type != DT_UNKNOWN)
                continue;
            rc = evict_file(dirfd(d), e->d_name, drop, &total, &cached, why, why_len);
        }
        closedir(d);
    } else {
        rc = evict_file(AT_FDCWD, path, drop, &total, &cached, why, why_len);
    }
    if (bytes != NULL)
        *bytes = total;
    if (cached_after != NULL)
        *cached_after = cached;
    return rc;
}
