/*
 * sys.c - the OS facts the benchmark needs beside nativedir: clocks, direct
 * I/O alignment, the file system type, and how much of a file is cached.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#if defined(__x86_64__) || defined(__i386__)
#  include <cpuid.h>
#endif

void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("nd_bench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

void nd_check(int64_t rc, const char *what)
{
    if (rc < 0)
        die("%s: %s (%s)", what, nd_status_name((int32_t)rc), nd_last_error_message());
}

double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void *aligned_or_die(size_t align, size_t size)
{
    void *p = NULL;
    if (posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, size) != 0)
        die("out of memory (%zu bytes)", size);
    return p;
}

uint64_t pattern_word(int64_t off)
{
    uint64_t z = (uint64_t)off + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void write_pattern_file(int fd, const char *path, int64_t size)
{
    const size_t chunk = (size_t)1 << 20;
    uint8_t *buf = aligned_or_die(4096, chunk); /* a multiple of any direct-I/O alignment here */
    for (int64_t off = 0; off < size; off += (int64_t)chunk) {
        size_t n = size - off < (int64_t)chunk ? (size_t)(size - off) : chunk;
        for (size_t i = 0; i < n; i += 8) {
            uint64_t v = pattern_word(off + (int64_t)i);
            memcpy(buf + i, &v, 8);
        }
        if (pwrite(fd, buf, n, off) != (ssize_t)n)
            die("write %s: %s", path, strerror(errno));
    }
    if (fsync(fd) != 0)
        die("fsync %s: %s", path, strerror(errno));
    free(buf);
    close(fd);
}

uint64_t __attribute__((noinline)) byte_sum(uint64_t sum, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sum = sum * 31 + p[i];
    return sum;
}

uint32_t dio_alignment(int fd)
{
    uint32_t a = 0;
#ifdef STATX_DIOALIGN
    struct statx sx;
    if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 && (sx.stx_mask & STATX_DIOALIGN))
        a = sx.stx_dio_offset_align > sx.stx_dio_mem_align ? sx.stx_dio_offset_align
                                                           : sx.stx_dio_mem_align;
#endif
    if (a == 0) {
        struct stat st;
        a = fstat(fd, &st) == 0 && st.st_blksize >= 512 ? (uint32_t)st.st_blksize : 4096;
    }
    return a;
}

const char *fs_type_name(int fd)
{
    struct statfs s;
    if (fstatfs(fd, &s) != 0)
        return "unknown";
    switch ((unsigned long)s.f_type) {
    case 0xEF53: return "ext4";
    case 0x01021994: return "tmpfs";
    case 0x58465342: return "xfs";
    case 0x9123683E: return "btrfs";
    case 0x794C7630: return "overlayfs";
    case 0x2FC12FC1: return "zfs";
    case 0x6969: return "nfs";
    default: return "other";
    }
}

double cached_percent(int dirfd, const char *name)
{
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        die("open %s: %s", name, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0)
        die("fstat %s: %s", name, strerror(errno));
    double pct = 0;
    if (st.st_size > 0) {
        /* mapping does not fault anything in; mincore only looks */
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED)
            die("mmap %s: %s", name, strerror(errno));
        long page = sysconf(_SC_PAGESIZE);
        size_t pages = ((size_t)st.st_size + (size_t)page - 1) / (size_t)page;
        unsigned char *vec = malloc(pages);
        if (vec == NULL || mincore(m, (size_t)st.st_size, vec) != 0)
            die("mincore %s: %s", name, strerror(errno));
        size_t in = 0;
        for (size_t i = 0; i < pages; i++)
            in += vec[i] & 1;
        pct = 100.0 * (double)in / (double)pages;
        free(vec);
        munmap(m, (size_t)st.st_size);
    }
    close(fd);
    return pct;
}

void evict(int dirfd, const char *name)
{
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return; /* nothing to evict */
    /* dirty pages cannot be dropped: write them back first */
    if (fsync(fd) != 0)
        die("fsync %s: %s", name, strerror(errno));
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
}

#if defined(__x86_64__) || defined(__i386__)
/* CLFLUSHOPT (CPUID leaf 7, EBX bit 23) evicts the same lines as CLFLUSH, but its flushes
 * overlap: a 64 MiB range takes milliseconds instead of a third of a second, which, paid
 * before every timed run, was most of the C benchmark's time */
static int has_clflushopt(void)
{
    static int known = -1;
    if (known < 0) {
        unsigned a, b, c, d;
        known = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 23)) != 0;
    }
    return known;
}
#endif

static void flush_range(const uint8_t *p, size_t len)
{
#if defined(__x86_64__) || defined(__i386__)
    if (has_clflushopt())
        for (size_t i = 0; i < len; i += 64)
            __asm__ volatile("clflushopt (%0)" ::"r"(p + i) : "memory");
    else
        for (size_t i = 0; i < len; i += 64)
            __asm__ volatile("clflush (%0)" ::"r"(p + i) : "memory");
    /* both are ordered by a fence: every line is out before the timed run starts */
    __asm__ volatile("mfence" ::: "memory");
#elif defined(__aarch64__)
    for (size_t i = 0; i < len; i += 64)
        __asm__ volatile("dc civac, %0" ::"r"(p + i) : "memory");
    __asm__ volatile("dsb ish" ::: "memory");
#else
    (void)p, (void)len; /* no user-level flush here: runs may start cache-warm */
#endif
}

void cold_file(int dirfd, const char *name, int64_t size)
{
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        die("open %s: %s", name, strerror(errno));
    void *m = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED)
        die("mmap %s: %s", name, strerror(errno));
    flush_range(m, (size_t)size);
    munmap(m, (size_t)size);
    close(fd);
}

void cold_caches(const bench *b)
{
    flush_range(b->data, (size_t)b->size);
    if (b->file_map != NULL)
        flush_range(b->file_map, (size_t)b->size);
}

/* A VM's vCPUs need not be alike: the host may run other work on one (on the
 * development VM one ran a spin loop at 0.4-0.6 of the other's speed for
 * most of a night). Then a row that uses two threads, or whose baseline ran on the
 * other CPU, measures the machine; the report shows this beside the results. */
static double spin_ms(void)
{
    double t0 = now_ms();
    volatile uint64_t x = 0;
    for (uint64_t i = 0; i < 20000000u; i++)
        x += i;
    return now_ms() - t0;
}

int bench_pin_cpu(int cpu)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return sched_setaffinity(0, sizeof(one), &one);
}

double bench_run_on_cpu(int cpu, int must, run_fn fn, bench *b, void *ctx, run_out *out)
{
    cpu_set_t saved;
    int pinned = sched_getaffinity(0, sizeof(saved), &saved) == 0 && bench_pin_cpu(cpu) == 0;
    if (!pinned && must)
        die("cannot pin to CPU %d", cpu);
    double ms = fn(b, ctx, out);
    if (pinned)
        sched_setaffinity(0, sizeof(saved), &saved);
    return ms;
}

int bench_cpu_speeds(double *speed, int max)
{
    cpu_set_t all;
    if (sched_getaffinity(0, sizeof(all), &all) != 0)
        return 0;
    double best_ms[CPU_SETSIZE];
    double fastest = 0;
    int n = 0;
    for (int c = 0; c < max && c < CPU_SETSIZE; c++) {
        best_ms[c] = 0;
        if (!CPU_ISSET(c, &all) || bench_pin_cpu(c) != 0)
            continue;
        for (int k = 0; k < 3; k++) { /* the best of three: a tick or an interrupt is not the CPU */
            double ms = spin_ms();
            best_ms[c] = k == 0 || ms < best_ms[c] ? ms : best_ms[c];
        }
        fastest = fastest == 0 || best_ms[c] < fastest ? best_ms[c] : fastest;
        n = c + 1;
    }
    sched_setaffinity(0, sizeof(all), &all);
    for (int c = 0; c < n; c++)
        speed[c] = best_ms[c] > 0 ? fastest / best_ms[c] : 0;
    return n;
}
