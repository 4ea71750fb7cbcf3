/*
 * support.c - the suite's only OS-specific helpers (see support.h).
 */
#ifndef _WIN32
#  ifndef _GNU_SOURCE
#    define _GNU_SOURCE /* unshare, mkdtemp, nftw */
#  endif
#endif
#include "support.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifdef _WIN32
#  include <direct.h>
#  include <dirent.h>
#  include <io.h>
#  include <windows.h>
#else
#  include <dirent.h>
#  include <fcntl.h>
#  include <ftw.h>
#  include <sched.h>
#  include <signal.h>
#  include <sys/mman.h>
#  include <sys/mount.h>
#  include <sys/time.h>
#  include <sys/uio.h>
#  include <sys/wait.h>
#  include <unistd.h>
#endif

/* ---- running one case ---- */

/* ND_TEST_FILTER=<pattern> runs only the cases of a test program whose names match it (cmocka's
 * wildcards: * and ?), e.g. ND_TEST_FILTER='*mapping*' build/test/tests/test_input. Every
 * program links this file, so the filter is set before its main runs the group. */
__attribute__((constructor)) static void tst_filter_from_env(void)
{
    const char *pattern = getenv("ND_TEST_FILTER");
    if (pattern != NULL && *pattern != '\0')
        cmocka_set_test_filter(pattern);
}

/* ---- paths and directories ---- */

#ifdef _WIN32
/* The C runtime's narrow calls read paths in the ANSI code page, but the
 * library's names are UTF-8: the tests use the wide calls on converted paths. */
static wchar_t *wide(const char *s, wchar_t *buf, size_t cap)
{
    if (MultiByteToWideChar(CP_UTF8, 0, s, -1, buf, (int)cap) == 0)
        buf[0] = L'\0';
    return buf;
}
#  define WPATH(p) wide((p), (wchar_t[TST_PATH_MAX]){0}, TST_PATH_MAX)

static FILE *open_path(const char *path, const char *mode)
{
    wchar_t wmode[8];
    return _wfopen(WPATH(path), wide(mode, wmode, 8));
}
#else
static FILE *open_path(const char *path, const char *mode)
{
    return fopen(path, mode);
}
#endif

char *tst_join(char *out, size_t cap, const char *dir, const char *name)
{
    int n = snprintf(out, cap, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= cap) {
        fprintf(stderr, "support: path too long: %s/%s\n", dir, name);
        abort();
    }
    return out;
}

int tst_mkdir(const char *path)
{
#ifdef _WIN32
    return _wmkdir(WPATH(path));
#else
    return mkdir(path, 0777);
#endif
}

int tst_rmdir(const char *path)
{
#ifdef _WIN32
    return _wrmdir(WPATH(path)) == 0 ? 0 : -1;
#else
    return rmdir(path) == 0 ? 0 : -1;
#endif
}

int tst_address_mapped(const void *addr)
{
#ifdef _WIN32
    MEMORY_BASIC_INFORMATION mi;
    if (VirtualQuery(addr, &mi, sizeof(mi)) != sizeof(mi))
        return -1;
    return mi.State != MEM_FREE;
#else
    /* msync answers ENOMEM for addresses no mapping holds, without touching them */
    long page = sysconf(_SC_PAGESIZE);
    void *at = (void *)((uintptr_t)addr - (uintptr_t)addr % (uintptr_t)page);
    if (msync(at, (size_t)page, MS_ASYNC) == 0)
        return 1;
    return errno == ENOMEM ? 0 : -1;
#endif
}

static const char *temp_base(void)
{
    const char *base = getenv("ND_TEST_TMPDIR");
    if (base == NULL || base[0] == '\0')
        base = getenv("TMPDIR");
#ifdef _WIN32
    if (base == NULL || base[0] == '\0')
        base = getenv("TEMP");
#endif
    if (base == NULL || base[0] == '\0')
        base = "/tmp";
    return base;
}

int tst_make_temp_dir(char *out, size_t cap)
{
    const char *base = temp_base();
    (void)tst_mkdir(base); /* the build's own temp base may not exist yet */
#ifdef _WIN32
    static unsigned counter;
    for (int attempt = 0; attempt < 100; attempt++) {
        snprintf(out, cap, "%s/nd-test-%lu-%u-%u", base, (unsigned long)GetCurrentProcessId(),
                 (unsigned)GetTickCount(), counter++);
        if (tst_mkdir(out) == 0)
            return 0;
    }
    return -1;
#else
    int n = snprintf(out, cap, "%s/nd-test-XXXXXX", base);
    if (n < 0 || (size_t)n >= cap)
        return -1;
    return mkdtemp(out) == NULL ? -1 : 0;
#endif
}

#ifdef _WIN32
static void remove_tree_w(const wchar_t *path)
{
    _WDIR *d = _wopendir(path);
    if (d == NULL) {
        _wchmod(path, _S_IREAD | _S_IWRITE);
        _wremove(path);
        return;
    }
    struct _wdirent *de;
    wchar_t child[TST_PATH_MAX];
    while ((de = _wreaddir(d)) != NULL) {
        if (wcscmp(de->d_name, L".") == 0 || wcscmp(de->d_name, L"..") == 0)
            continue;
        if (wcslen(path) + wcslen(de->d_name) + 2 > TST_PATH_MAX)
            continue;
        wcscpy(child, path);
        wcscat(child, L"/");
        wcscat(child, de->d_name);
        remove_tree_w(child);
    }
    _wclosedir(d);
    _wrmdir(path);
}

void tst_remove_tree(const char *path)
{
    remove_tree_w(WPATH(path));
}
#else
static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st, (void)type, (void)ftw;
    if (remove(path) != 0 && errno != ENOENT)
        fprintf(stderr, "support: cannot remove %s: %s\n", path, strerror(errno));
    return 0;
}

void tst_remove_tree(const char *path)
{
    /* a test may have left a directory unreadable: give it back first */
    (void)chmod(path, 0700);
    nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}
#endif

/* ---- the fixture ---- */

int tst_setup(void **state)
{
    tst_env *env = calloc(1, sizeof(*env));
    if (env == NULL || tst_make_temp_dir(env->root, sizeof(env->root)) != 0) {
        fprintf(stderr, "support: cannot make a temporary directory under %s: %s\n", temp_base(),
                strerror(errno));
        free(env);
        return -1;
    }
    tst_join(env->dir_path, sizeof(env->dir_path), env->root, "d");
    int32_t rc = nd_open_dir(env->dir_path, ND_DIR_CREATE, &env->dir);
    if (rc != ND_OK) {
        fprintf(stderr, "support: nd_open_dir(%s): %s: %s\n", env->dir_path, nd_status_name(rc),
                nd_last_error_message());
        tst_remove_tree(env->root);
        free(env);
        return -1;
    }
    *state = env;
    return 0;
}

int tst_teardown(void **state)
{
    tst_env *env = *state;
    if (env == NULL)
        return 0;
    nd_close(env->dir); /* may already be closed by the test: that is fine */
    tst_remove_tree(env->root);
    free(env);
    *state = NULL;
    return 0;
}

/* ---- whole files ---- */

int tst_write_file(const char *path, const void *data, size_t len)
{
    FILE *f = open_path(path, "wb");
    if (f == NULL)
        return -1;
    size_t done = len == 0 ? 0 : fwrite(data, 1, len, f);
    int rc = fclose(f);
    return done == len && rc == 0 ? 0 : -1;
}

uint8_t *tst_read_file(const char *path, size_t *len)
{
    FILE *f = open_path(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 4096, used = 0;
    uint8_t *buf = malloc(cap);
    while (buf != NULL) {
        if (used == cap) {
            uint8_t *grown = realloc(buf, cap * 2);
            if (grown == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown;
            cap *= 2;
        }
        size_t n = fread(buf + used, 1, cap - used, f);
        used += n;
        if (n == 0)
            break;
    }
    fclose(f);
    *len = used;
    return buf;
}

int tst_remove_file(const char *path)
{
#ifdef _WIN32
    return _wremove(WPATH(path)) == 0 ? 0 : -1;
#else
    return unlink(path) == 0 ? 0 : -1;
#endif
}

int tst_path_exists(const char *path)
{
#ifdef _WIN32
    struct _stat64 st;
    return _wstat64(WPATH(path), &st) == 0;
#else
    struct stat st;
    return lstat(path, &st) == 0;
#endif
}

int64_t tst_file_size(const char *path)
{
#ifdef _WIN32
    struct _stat64 st;
    if (_wstat64(WPATH(path), &st) != 0)
        return -1;
#else
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
#endif
    return (int64_t)st.st_size;
}

int tst_write_at(const char *path, int64_t offset, const void *data, size_t len)
{
    FILE *f = open_path(path, "r+b");
    if (f == NULL)
        return -1;
#ifdef _WIN32
    int sought = _fseeki64(f, offset, SEEK_SET);
#else
    int sought = fseeko(f, (off_t)offset, SEEK_SET);
#endif
    size_t done = sought == 0 ? fwrite(data, 1, len, f) : 0;
    int rc = fclose(f);
    return sought == 0 && done == len && rc == 0 ? 0 : -1;
}

int tst_chdir(const char *path)
{
#ifdef _WIN32
    return _wchdir(WPATH(path));
#else
    return chdir(path);
#endif
}

int tst_cache_only_reads(const char *dir, const char *name)
{
#if defined(__linux__) && defined(RWF_NOWAIT)
    char path[TST_PATH_MAX];
    int fd = open(tst_join(path, sizeof path, dir, name), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char b;
    struct iovec iov = {&b, 1};
    ssize_t n = preadv2(fd, &iov, 1, 0, RWF_NOWAIT);
    close(fd);
    return n == 1;
#else
    (void)dir, (void)name;
    return 0;
#endif
}

void tst_drop_cache(const char *dir, const char *name)
{
#ifdef _WIN32
    (void)dir, (void)name; /* Windows has no per-file cache drop; callers accept either state */
#else
    char path[TST_PATH_MAX];
    int fd = open(tst_join(path, sizeof path, dir, name), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    (void)fdatasync(fd); /* dirty pages are never dropped */
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
#endif
}

int tst_truncate(const char *path, int64_t len)
{
#ifdef _WIN32
    FILE *f = open_path(path, "r+b");
    if (f == NULL)
        f = open_path(path, "wb");
    if (f == NULL)
        return -1;
    int rc = _chsize_s(_fileno(f), len);
    fclose(f);
    return rc == 0 ? 0 : -1;
#else
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0)
        return -1;
    int rc = ftruncate(fd, (off_t)len);
    close(fd);
    return rc;
#endif
}

/* ---- data ---- */

void tst_fill_random(uint8_t *buf, size_t len, uint64_t seed)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        buf[i] = (uint8_t)(x >> 24);
    }
}

uint8_t *tst_random_buffer(size_t len, uint64_t seed)
{
    uint8_t *buf = malloc(len == 0 ? 1 : len);
    if (buf != NULL)
        tst_fill_random(buf, len, seed);
    return buf;
}

/* ---- assertions ---- */

void tst_assert_status(int64_t expected, int64_t actual, const char *expr, const char *file,
                       int line)
{
    if (expected == actual)
        return;
    const char *en =
        expected >= INT32_MIN && expected <= 0 ? nd_status_name((int32_t)expected) : "(a value)";
    const char *an =
        actual >= INT32_MIN && actual <= 0 ? nd_status_name((int32_t)actual) : "(a value)";
    print_error("%s:%d: %s returned %lld %s, expected %lld %s; last error: %s (os error %d)\n",
                file, line, expr, (long long)actual, an, (long long)expected, en,
                nd_last_error_message(), (int)nd_last_os_error());
    _fail(file, line);
}

void tst_assert_message_contains(const char *needle, const char *file, int line)
{
    const char *msg = nd_last_error_message();
    if (msg != NULL && strstr(msg, needle) != NULL)
        return;
    print_error("%s:%d: last error message \"%s\" does not contain \"%s\"\n", file, line,
                msg == NULL ? "(NULL)" : msg, needle);
    _fail(file, line);
}

void tst_loud_skip(const char *what, const char *why)
{
    fprintf(stderr,
            "\n*** NOT COVERED HERE: %s\n*** because: %s\n*** (the case runs where it can; see "
            "tests/README or the report)\n\n",
            what, why);
    fflush(stderr);
}

/* ---- reading back through nativedir ---- */

static int mismatch(const char *how, uint32_t flags, size_t at, int got, int want)
{
    fprintf(stderr, "verify: %s (flags 0x%x): byte %zu is %d, expected %d; last error: %s\n", how,
            flags, at, got, want, nd_last_error_message());
    return -1;
}

int tst_verify_input(nd_handle dir, const char *name, uint32_t flags, const uint8_t *expected,
                     size_t len)
{
    nd_handle in;
    int32_t rc = nd_open_input(dir, name, flags, &in);
    if (rc != ND_OK) {
        fprintf(stderr, "verify: nd_open_input(%s, 0x%x): %s: %s\n", name, flags,
                nd_status_name(rc), nd_last_error_message());
        return -1;
    }
    int result = 0;
    int64_t length = -1;
    if (nd_input_length(in, &length) != ND_OK || length != (int64_t)len) {
        fprintf(stderr, "verify: %s length %lld, expected %zu\n", name, (long long)length, len);
        result = -1;
    }
    /* positional: the whole file at once, then odd pieces */
    uint8_t *copy = malloc(len + 1);
    if (result == 0 && nd_read_bytes(in, 0, copy, (int64_t)len) != (int64_t)len)
        result = mismatch("nd_read_bytes(all) failed", flags, 0, -1, -1);
    if (result == 0 && len > 0 && memcmp(copy, expected, len) != 0)
        for (size_t i = 0; i < len && result == 0; i++)
            if (copy[i] != expected[i])
                result = mismatch("nd_read_bytes(all)", flags, i, copy[i], expected[i]);
    for (size_t at = 0; result == 0 && at < len; at += 7919) {
        size_t n = len - at < 1237 ? len - at : 1237;
        if (nd_read_bytes(in, (int64_t)at, copy, (int64_t)n) != (int64_t)n ||
            memcmp(copy, expected + at, n) != 0)
            result = mismatch("nd_read_bytes(piece)", flags, at, copy[0], expected[at]);
    }
    /* the cursor: odd-sized buffered reads, with single bytes between them */
    size_t at = 0;
    size_t step = 1;
    while (result == 0 && at < len) {
        int b = nd_read_byte_buffered(in);
        if (b != expected[at]) {
            result = mismatch("nd_read_byte_buffered", flags, at, b, expected[at]);
            break;
        }
        at++;
        step = step * 3 + 1;
        if (step > 70000)
            step = 5;
        size_t n = len - at < step ? len - at : step;
        if (nd_read_buffered(in, copy, (int64_t)n) != (int64_t)n ||
            (n > 0 && memcmp(copy, expected + at, n) != 0)) {
            result = mismatch("nd_read_buffered", flags, at, copy[0], at < len ? expected[at] : -1);
            break;
        }
        at += n;
    }
    if (result == 0 && nd_read_byte_buffered(in) != ND_E_EOF)
        result = mismatch("nd_read_byte_buffered at the end", flags, len, -1, ND_E_EOF);
    /* windows: the byte loop bindings use */
    at = 0;
    while (result == 0 && at < len) {
        const uint8_t *p = NULL;
        int64_t n = nd_input_window(in, (int64_t)at, &p);
        if (n < 1 || (size_t)n > len - at || p == NULL) {
            result = mismatch("nd_input_window returned a bad count", flags, at, (int)n, 1);
            break;
        }
        for (int64_t i = 0; i < n; i++)
            if (p[i] != expected[at + (size_t)i]) {
                result = mismatch("nd_input_window", flags, at + (size_t)i, p[i],
                                  expected[at + (size_t)i]);
                break;
            }
        at += (size_t)n;
    }
    free(copy);
    nd_input_unpin(in); /* done with the windows: a close alone would leave the last one */
    nd_close(in);
    return result;
}

/* ---- POSIX only ---- */

#ifndef _WIN32
int64_t tst_mtime_ns(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return -1;
    return (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
}

int tst_set_mtime(const char *path, int64_t seconds)
{
    struct timeval tv[2];
    tv[0].tv_sec = tv[1].tv_sec = (time_t)seconds;
    tv[0].tv_usec = tv[1].tv_usec = 0;
    return utimes(path, tv);
}

int tst_symlink(const char *target, const char *link_path)
{
    return symlink(target, link_path);
}

int tst_mkfifo(const char *path)
{
    return mkfifo(path, 0666);
}

static int by_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int tst_open_fds(int *fds, int max)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        d = opendir("/dev/fd");
    if (d == NULL)
        return -1;
    int self = dirfd(d);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        char *end;
        long fd = strtol(de->d_name, &end, 10);
        if (*end != '\0' || end == de->d_name || fd == self)
            continue;
        if (n < max)
            fds[n++] = (int)fd;
    }
    closedir(d);
    qsort(fds, (size_t)n, sizeof(int), by_int);
    return n;
}

long tst_smaps_kib(const void *addr, const char *field)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (f == NULL)
        return -1;
    char line[512];
    size_t flen = strlen(field);
    int inside = 0;
    long kib = -1;
    while (fgets(line, sizeof(line), f) != NULL) {
        unsigned long lo, hi;
        char dash;
        /* a mapping's first line starts "lo-hi "; a field's, "Name:" */
        if (sscanf(line, "%lx%c%lx ", &lo, &dash, &hi) == 3 && dash == '-') {
            inside = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
            continue;
        }
        if (inside && strncmp(line, field, flen) == 0 && line[flen] == ':' &&
            sscanf(line + flen + 1, "%ld", &kib) == 1)
            break;
    }
    fclose(f);
    return kib;
}

int tst_maps_under(const char *dir)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (f == NULL)
        return -1;
    size_t dlen = strlen(dir);
    int count = 0;
    char line[TST_PATH_MAX + 256];
    while (fgets(line, sizeof line, f) != NULL) {
        const char *path = strchr(line, '/'); /* the path is the line's only field with one */
        if (path != NULL && strncmp(path, dir, dlen) == 0 && path[dlen] == '/')
            count++;
    }
    fclose(f);
    return count;
}

int tst_fds_under(const char *dir)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    size_t dlen = strlen(dir);
    int count = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        char link[300], target[TST_PATH_MAX];
        snprintf(link, sizeof link, "/proc/self/fd/%s", de->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        /* the files in dir, not dir itself (a test's directory handle) */
        if (strncmp(target, dir, dlen) == 0 && target[dlen] == '/')
            count++;
    }
    closedir(d);
    return count;
}

int tst_fd_cloexec(int fd)
{
    int flags = fcntl(fd, F_GETFD);
    if (flags < 0)
        return -1;
    return (flags & FD_CLOEXEC) != 0;
}

int tst_chmod(const char *path, unsigned mode)
{
    return chmod(path, (mode_t)mode);
}

/* cmocka catches crash signals and unwinds into its runner: in a child that
 * would run the rest of the suite a second time. A child dies of its signal. */
static void default_crash_signals(void)
{
    const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        signal(sigs[i], SIG_DFL);
}

int tst_run_child(int (*fn)(void *ctx), void *ctx)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        default_crash_signals();
        int rc = fn(ctx);
        fflush(stdout);
        fflush(stderr);
        _exit(rc & 0xff); /* no atexit handlers: they belong to the parent */
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

int tst_pipe_send(int fd, char byte)
{
    ssize_t n;
    do
        n = write(fd, &byte, 1);
    while (n < 0 && errno == EINTR);
    return n == 1 ? 0 : -1;
}

int tst_pipe_recv(int fd)
{
    unsigned char byte;
    ssize_t n;
    do
        n = read(fd, &byte, 1);
    while (n < 0 && errno == EINTR);
    return n == 1 ? byte : -1;
}

int tst_child_start(tst_child *c, int (*fn)(void *ctx, int from_parent, int to_parent), void *ctx)
{
    int down[2], up[2];
    if (pipe(down) != 0)
        return -1;
    if (pipe(up) != 0) {
        close(down[0]);
        close(down[1]);
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        default_crash_signals();
        close(down[1]);
        close(up[0]);
        int rc = fn(ctx, down[0], up[1]);
        fflush(stderr);
        _exit(rc & 0xff);
    }
    close(down[0]);
    close(up[1]);
    c->pid = pid;
    c->to_child = down[1];
    c->from_child = up[0];
    return 0;
}

int tst_child_send(tst_child *c, char byte)
{
    return tst_pipe_send(c->to_child, byte);
}

int tst_child_recv(tst_child *c)
{
    return tst_pipe_recv(c->from_child);
}

int tst_child_wait(tst_child *c)
{
    close(c->to_child);
    close(c->from_child);
    int status;
    while (waitpid(c->pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

void tst_child_kill(tst_child *c)
{
    kill(c->pid, SIGKILL);
    (void)tst_child_wait(c);
}

static int write_text(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

struct mount_job {
    const char *fstype, *opts, *mnt;
    int (*fn)(const char *mnt, void *ctx);
    void *ctx;
};

static int no_mount(const char *step, const char *fstype)
{
    fprintf(stderr, "support: cannot mount a private %s here (%s: %s)\n", fstype, step,
            strerror(errno));
    return TST_NO_MOUNT;
}

static int mount_child(void *arg)
{
    struct mount_job *job = arg;
    if (geteuid() == 0) {
        if (unshare(CLONE_NEWNS) != 0)
            return no_mount("unshare(CLONE_NEWNS)", job->fstype);
    } else {
        /* an unprivileged user may still mount tmpfs/ramfs in its own user namespace */
        uid_t uid = geteuid();
        gid_t gid = getegid();
        char map[64];
        if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
            return no_mount("unshare(CLONE_NEWUSER | CLONE_NEWNS)", job->fstype);
        (void)write_text("/proc/self/setgroups", "deny");
        snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
        if (write_text("/proc/self/uid_map", map) != 0)
            return no_mount("uid_map", job->fstype);
        snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
        if (write_text("/proc/self/gid_map", map) != 0)
            return no_mount("gid_map", job->fstype);
    }
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        return no_mount("make / private", job->fstype);
    if (mount(job->fstype, job->mnt, job->fstype, 0, job->opts) != 0)
        return no_mount("mount", job->fstype);
    return job->fn(job->mnt, job->ctx);
}

int tst_with_private_mount(const char *fstype, const char *opts,
                           int (*fn)(const char *mnt, void *ctx), void *ctx)
{
    char mnt[TST_PATH_MAX];
    if (tst_make_temp_dir(mnt, sizeof(mnt)) != 0)
        return -1;
    struct mount_job job = {fstype, opts, mnt, fn, ctx};
    int rc = tst_run_child(mount_child, &job);
    /* the mount died with the child's namespace; only the empty mount point is left */
    tst_remove_tree(mnt);
    return rc;
}
#endif

uint8_t *tst_put_random(tst_env *env, const char *name, size_t len, uint64_t seed)
{
    uint8_t *data = tst_random_buffer(len, seed);
    char path[TST_PATH_MAX];
    assert_non_null(data);
    assert_int_equal(tst_write_file(tst_join(path, sizeof(path), env->dir_path, name), data, len),
                     0);
    return data;
}
