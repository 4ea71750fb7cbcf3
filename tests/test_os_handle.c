/*
 * test_os_handle.c - nd_os_read, nd_os_write, nd_os_length, nd_os_set_direct,
 * nd_os_advise and nd_os_madvise on files and memory the test opens and maps
 * with the OS's own calls (open/CreateFileW, mmap): positional transfers that
 * leave the file pointer where it was (on Windows too, where ReadFile moves
 * it), offsets past 4 GiB, the end of the file, access the file was not
 * opened with, pipes and directories, every bad argument, many threads on one
 * file; on Linux, that direct I/O really is on (an unaligned read is refused,
 * an aligned one works), that DONTNEED advice drops a file's cached pages, and
 * that madvise's and posix_madvise's DONTNEED differ as the OS says.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#  ifndef WIN32_LEAN_AND_MEAN
#    define WIN32_LEAN_AND_MEAN
#  endif
#  include <windows.h>
#else
#  include <errno.h>
#  include <fcntl.h>
#  include <pthread.h>
#  include <sys/mman.h>
#  include <sys/stat.h>
#  include <unistd.h>
#endif

#include "support.h"

/* ---- the OS's own calls, for files the test owns ---- */

enum { RD = 1, WR = 2 };

#ifdef _WIN32
static int64_t os_open(const char *path, int access)
{
    wchar_t w[TST_PATH_MAX];
    if (MultiByteToWideChar(CP_UTF8, 0, path, -1, w, TST_PATH_MAX) == 0)
        return -1;
    DWORD want = (access & RD ? GENERIC_READ : 0) | (access & WR ? GENERIC_WRITE : 0);
    HANDLE h = CreateFileW(w, want, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                           OPEN_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
    return h == INVALID_HANDLE_VALUE ? -1 : (int64_t)(intptr_t)h;
}

static int64_t os_open_dir(const char *path)
{
    wchar_t w[TST_PATH_MAX];
    if (MultiByteToWideChar(CP_UTF8, 0, path, -1, w, TST_PATH_MAX) == 0)
        return -1;
    HANDLE h = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL, OPEN_EXISTING,
                           FILE_FLAG_BACKUP_SEMANTICS, NULL);
    return h == INVALID_HANDLE_VALUE ? -1 : (int64_t)(intptr_t)h;
}

static void os_close(int64_t f)
{
    CloseHandle((HANDLE)(intptr_t)f);
}

/* The file pointer, or -1. */
static int64_t os_pointer(int64_t f)
{
    LARGE_INTEGER zero, at;
    zero.QuadPart = 0;
    return SetFilePointerEx((HANDLE)(intptr_t)f, zero, &at, FILE_CURRENT) ? at.QuadPart : -1;
}

static int os_set_pointer(int64_t f, int64_t to)
{
    LARGE_INTEGER at;
    at.QuadPart = to;
    return SetFilePointerEx((HANDLE)(intptr_t)f, at, NULL, FILE_BEGIN) ? 0 : -1;
}

/* Both ends of an anonymous pipe. */
static int os_pipe(int64_t ends[2])
{
    HANDLE r, w;
    if (!CreatePipe(&r, &w, NULL, 0))
        return -1;
    ends[0] = (int64_t)(intptr_t)r;
    ends[1] = (int64_t)(intptr_t)w;
    return 0;
}

/* A value that is no open handle: one that was closed. */
static int64_t os_closed_file(const char *path)
{
    int64_t f = os_open(path, RD);
    os_close(f);
    return f;
}
#else
static int64_t os_open(const char *path, int access)
{
    int how = access == (RD | WR) ? O_RDWR : access == WR ? O_WRONLY : O_RDONLY;
    int fd = open(path, how | O_CREAT | O_CLOEXEC, 0644);
    return fd;
}

static int64_t os_open_dir(const char *path)
{
    return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static void os_close(int64_t f)
{
    close((int)f);
}

static int64_t os_pointer(int64_t f)
{
    return (int64_t)lseek((int)f, 0, SEEK_CUR);
}

static int os_set_pointer(int64_t f, int64_t to)
{
    return lseek((int)f, (off_t)to, SEEK_SET) == (off_t)to ? 0 : -1;
}

static int os_pipe(int64_t ends[2])
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    ends[0] = fds[0];
    ends[1] = fds[1];
    return 0;
}

static int64_t os_closed_file(const char *path)
{
    int64_t f = os_open(path, RD);
    os_close(f);
    return f;
}
#endif

/* ---- fixture: "data" of N random bytes in a fresh directory ---- */

#define N 100000

typedef struct {
    tst_env *env;
    char path[TST_PATH_MAX];
    uint8_t *data;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    if (f == NULL || tst_setup((void **)&f->env) != 0)
        return -1;
    f->data = tst_put_random(f->env, "data", N, 47);
    tst_join(f->path, sizeof f->path, f->env->dir_path, "data");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    free(f->data);
    tst_teardown((void **)&f->env);
    free(f);
    return 0;
}

static int64_t open_or_fail(const char *path, int access)
{
    int64_t h = os_open(path, access);
    if (h < 0)
        fail_msg("cannot open %s", path);
    return h;
}

/* Reads at offsets across the file and at its end; the pointer stays put. */
static void reads_at_offsets_leave_the_pointer(void **state)
{
    fx *f = *state;
    int64_t h = open_or_fail(f->path, RD);
    assert_int_equal(0, os_set_pointer(h, 3));
    uint8_t buf[4096];
    const int64_t offsets[] = {0, 1, 4095, 4096, 65537, N - 4096};
    for (size_t i = 0; i < sizeof offsets / sizeof offsets[0]; i++) {
        memset(buf, 0, sizeof buf);
        assert_status(sizeof buf, nd_os_read(h, offsets[i], buf, sizeof buf));
        assert_memory_equal(f->data + offsets[i], buf, sizeof buf);
        assert_int_equal(3, os_pointer(h));
    }
    /* the end: what is left, then nothing */
    assert_status(100, nd_os_read(h, N - 100, buf, sizeof buf));
    assert_memory_equal(f->data + N - 100, buf, 100);
    assert_status(0, nd_os_read(h, N, buf, sizeof buf));
    assert_status(0, nd_os_read(h, (int64_t)1 << 40, buf, sizeof buf));
    assert_status(0, nd_os_read(h, 5, buf, 0));
    assert_status(0, nd_os_read(h, 5, NULL, 0));
    assert_int_equal(3, os_pointer(h));
#ifdef _WIN32
    /* the control: ReadFile at an offset given in an OVERLAPPED does move a synchronous
     * handle's pointer, so the checks above can fail; nd_os_read puts it back */
    OVERLAPPED ov;
    ZeroMemory(&ov, sizeof ov);
    ov.Offset = 4096;
    DWORD got = 0;
    assert_true(ReadFile((HANDLE)(intptr_t)h, buf, 100, &got, &ov));
    assert_int_equal(4196, os_pointer(h));
    assert_int_equal(0, os_set_pointer(h, 3));
#endif
    int64_t len = -1;
    assert_status(ND_OK, nd_os_length(h, &len));
    assert_int_equal(N, len);
    os_close(h);
}

/* Writes in place and past the end (zeros between), the pointer stays put;
 * the length follows. */
static void writes_at_offsets_extend_and_leave_the_pointer(void **state)
{
    fx *f = *state;
    int64_t h = open_or_fail(f->path, RD | WR);
    assert_int_equal(0, os_set_pointer(h, 11));
    const uint8_t patch[] = {1, 2, 3, 4, 5};
    assert_status(sizeof patch, nd_os_write(h, 1000, patch, sizeof patch));
    assert_int_equal(11, os_pointer(h));
    assert_status(sizeof patch, nd_os_write(h, N + 10, patch, sizeof patch));
    assert_int_equal(11, os_pointer(h));
    int64_t len = -1;
    assert_status(ND_OK, nd_os_length(h, &len));
    assert_int_equal(N + 10 + (int64_t)sizeof patch, len);
    uint8_t back[20];
    assert_status(sizeof patch, nd_os_read(h, 1000, back, sizeof patch));
    assert_memory_equal(patch, back, sizeof patch);
    assert_status(15, nd_os_read(h, N, back, sizeof back));
    for (int i = 0; i < 10; i++)
        assert_int_equal(0, back[i]);
    assert_memory_equal(patch, back + 10, sizeof patch);
    assert_status(0, nd_os_write(h, 0, patch, 0));
    os_close(h);
    /* the bytes are in the file, as the OS reads it */
    size_t n;
    uint8_t *all = tst_read_file(f->path, &n);
    assert_non_null(all);
    assert_int_equal(N + 15, n);
    assert_memory_equal(patch, all + 1000, sizeof patch);
    assert_memory_equal(f->data, all, 1000);
    free(all);
}

/* Offsets past 4 GiB reach the file there (the high half of the offset is
 * passed, not dropped): a sparse file of 5 GiB and a bit. */
static void offsets_past_4_gib(void **state)
{
    fx *f = *state;
    int64_t h = open_or_fail(f->path, RD | WR);
    const int64_t beyond = ((int64_t)5 << 30) + 12345;
    const uint8_t mark[] = "past four gibibytes";
    assert_status(sizeof mark, nd_os_write(h, beyond, mark, sizeof mark));
    int64_t len = -1;
    assert_status(ND_OK, nd_os_length(h, &len));
    assert_int_equal(beyond + (int64_t)sizeof mark, len);
    uint8_t back[sizeof mark] = {0};
    assert_status(sizeof mark, nd_os_read(h, beyond, back, sizeof back));
    assert_memory_equal(mark, back, sizeof mark);
    /* at the offset's low 32 bits the file is a hole: zeros, not the mark */
    const uint8_t zeros[sizeof mark] = {0};
    assert_status(sizeof back, nd_os_read(h, beyond & 0xffffffff, back, sizeof back));
    assert_memory_equal(zeros, back, sizeof back);
    os_close(h);
    tst_truncate(f->path, N); /* give the space back before teardown */
}

/* A file opened without read (write) access, a closed handle, a pipe and a
 * directory: each refused with the documented status, nothing transferred. */
static void access_and_kind_are_refused(void **state)
{
    fx *f = *state;
    uint8_t buf[16] = {0};
    int64_t w = open_or_fail(f->path, WR);
    assert_status(ND_E_ACCESS, nd_os_read(w, 0, buf, sizeof buf));
    assert_message_contains("nd_os_read: ");
    os_close(w);
    int64_t r = open_or_fail(f->path, RD);
    assert_status(ND_E_ACCESS, nd_os_write(r, 0, buf, sizeof buf));
    os_close(r);
    size_t n;
    uint8_t *all = tst_read_file(f->path, &n);
    assert_non_null(all);
    assert_memory_equal(f->data, all, 16); /* the refused write wrote nothing */
    free(all);

    int64_t gone = os_closed_file(f->path);
    assert_status(ND_E_INVALID_ARGUMENT, nd_os_read(gone, 0, buf, sizeof buf));
    int64_t len;
    assert_status(ND_E_INVALID_ARGUMENT, nd_os_length(gone, &len));

    int64_t ends[2] = {-1, -1};
    assert_int_equal(0, os_pipe(ends));
    assert_status(ND_E_NOT_SUPPORTED, nd_os_write(ends[1], 0, buf, sizeof buf));
    assert_status(ND_E_NOT_SUPPORTED, nd_os_read(ends[0], 0, buf, sizeof buf));
    assert_status(ND_E_NOT_SUPPORTED, nd_os_length(ends[0], &len));
    os_close(ends[0]);
    os_close(ends[1]);

    int64_t d = os_open_dir(f->env->dir_path);
    assert_true(d >= 0);
    assert_status(ND_E_ACCESS, nd_os_length(d, &len));
    os_close(d);
}

/* Every argument the library can check itself. */
static void bad_arguments(void **state)
{
    fx *f = *state;
    int64_t h = open_or_fail(f->path, RD | WR);
    uint8_t buf[8];
    assert_status(ND_E_INVALID_ARGUMENT, nd_os_read(h, -1, buf, sizeof buf));
    assert_status(ND_E_INVALID_ARGUMENT, nd_os_read(h, 0, buf, -1));
    assert_status(ND_E_INVALID_ARGUMENT, nd_os_read(h, 0, NULL, 8));
    assert_status(ND_E_INVALID_ARGUMENT, nd_os_read(h, INT64_MAX, buf, 2));
    assert_status(ND_E_INVALID_ARGUMENT, nd_os_write(h, -5, buf, sizeof buf));
    assert_status(ND_E_INVALID_ARGUMENT, nd_os_write(h, 0, NULL, 1));
    assert_status(ND_E_INVALID_ARGUMENT, nd_os_length(h, NULL));
    assert_status(ND_E_INVALID_ARGUMENT, nd_os_read(-1, 0, buf, sizeof buf));
    assert_status(ND_E_INVALID_ARGUMENT, nd_os_set_direct(h, 2));
    assert_status(ND_E_INVALID_ARGUMENT, nd_os_advise(h, 0, 0, 6));
    assert_status(ND_E_INVALID_ARGUMENT, nd_os_advise(h, 0, 0, -1));
    assert_status(ND_E_INVALID_ARGUMENT, nd_os_advise(h, -1, 0, ND_OS_ADVICE_NORMAL));
    assert_status(ND_E_INVALID_ARGUMENT, nd_os_advise(h, 0, -1, ND_OS_ADVICE_NORMAL));
    assert_status(ND_E_INVALID_ARGUMENT, nd_os_madvise(NULL, 4096, ND_OS_ADVICE_NORMAL, 0));
    assert_status(ND_E_INVALID_ARGUMENT, nd_os_madvise(buf, 8, ND_OS_ADVICE_NOREUSE, 0));
    assert_status(ND_E_INVALID_ARGUMENT, nd_os_madvise(buf, 8, 9, 0));
    assert_status(ND_E_INVALID_ARGUMENT, nd_os_madvise(buf, 8, ND_OS_ADVICE_NORMAL, 2));
    assert_status(ND_E_INVALID_ARGUMENT, nd_os_madvise(buf, -8, ND_OS_ADVICE_NORMAL, 0));
    /* nothing was read into or written from the file */
    int64_t len;
    assert_status(ND_OK, nd_os_length(h, &len));
    assert_int_equal(N, len);
    assert_int_equal(0, os_pointer(h));
    os_close(h);
}

/* ---- threads reading one file at once ---- */

#define THREADS 4
#define READS 2000

typedef struct {
    fx *f;
    int64_t h;
    uint64_t seed;
    int bad;
} reader;

static void read_randomly(reader *r)
{
    uint8_t buf[512];
    uint64_t x = r->seed;
    for (int i = 0; i < READS && !r->bad; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        int64_t off = (int64_t)(x % N);
        int64_t want = (int64_t)(x >> 40) % (int64_t)sizeof buf + 1;
        int64_t expect = off + want > N ? N - off : want;
        if (nd_os_read(r->h, off, buf, want) != expect ||
            memcmp(buf, r->f->data + off, (size_t)expect) != 0)
            r->bad = 1;
    }
}

#ifdef _WIN32
static DWORD WINAPI reader_main(LPVOID p)
{
    read_randomly(p);
    return 0;
}
#else
static void *reader_main(void *p)
{
    read_randomly(p);
    return NULL;
}
#endif

static void threads_read_one_file(void **state)
{
    fx *f = *state;
    int64_t h = open_or_fail(f->path, RD);
    assert_int_equal(0, os_set_pointer(h, 77));
    reader rs[THREADS];
    for (int t = 0; t < THREADS; t++)
        rs[t] = (reader){f, h, 0x9e3779b97f4a7c15ull * (uint64_t)(t + 1), 0};
#ifdef _WIN32
    HANDLE ts[THREADS];
    for (int t = 0; t < THREADS; t++)
        assert_non_null(ts[t] = CreateThread(NULL, 0, reader_main, &rs[t], 0, NULL));
    WaitForMultipleObjects(THREADS, ts, TRUE, INFINITE);
    for (int t = 0; t < THREADS; t++)
        CloseHandle(ts[t]);
#else
    pthread_t ts[THREADS];
    for (int t = 0; t < THREADS; t++)
        assert_int_equal(0, pthread_create(&ts[t], NULL, reader_main, &rs[t]));
    for (int t = 0; t < THREADS; t++)
        pthread_join(ts[t], NULL);
#endif
    for (int t = 0; t < THREADS; t++)
        if (rs[t].bad)
            fail_msg("thread %d read wrong bytes or a wrong count", t);
    /* every call put the pointer back, none took another's as its own */
    assert_int_equal(77, os_pointer(h));
    os_close(h);
}

#ifdef _WIN32
/* Windows has no direct I/O or advice for an open handle, and no madvise:
 * each says so instead of pretending. */
static void windows_refuses_direct_and_advice(void **state)
{
    fx *f = *state;
    int64_t h = open_or_fail(f->path, RD);
    assert_status(ND_E_NOT_SUPPORTED, nd_os_set_direct(h, 1));
    assert_status(ND_E_NOT_SUPPORTED, nd_os_advise(h, 0, 0, ND_OS_ADVICE_RANDOM));
    uint8_t page[64];
    assert_status(ND_E_NOT_SUPPORTED, nd_os_madvise(page, sizeof page, ND_OS_ADVICE_NORMAL, 0));
    os_close(h);
}
#else
static const char *emulator(void)
{
    const char *emu = getenv("ND_TEST_EMULATOR");
    return emu != NULL && *emu != '\0' ? emu : NULL;
}

#  if defined(__linux__)
/* Direct I/O switched on really is on: the kernel now refuses a read into a
 * buffer that is not block-aligned (a wrong O_DIRECT value, e.g. arm64's
 * taken for x86's, would be O_DIRECTORY there and refuse nothing), reads an
 * aligned one, and reads unaligned ones again once it is off. */
static void direct_io_goes_on_and_off(void **state)
{
    fx *f = *state;
    int64_t h = open_or_fail(f->path, RD);
    int32_t rc = nd_os_set_direct(h, 1);
    if (rc == ND_E_NOT_SUPPORTED) {
        tst_loud_skip("direct I/O on an open descriptor", nd_last_error_message());
        os_close(h);
        skip();
    }
    assert_status(ND_OK, rc);
    assert_true((fcntl((int)h, F_GETFL) & O_DIRECT) != 0);
    uint8_t *block = NULL;
    assert_int_equal(0, posix_memalign((void **)&block, 4096, 8192));
    assert_status(ND_E_INVALID_ARGUMENT, nd_os_read(h, 0, block + 1, 4096));
    assert_status(4096, nd_os_read(h, 4096, block, 4096));
    assert_memory_equal(f->data + 4096, block, 4096);
    /* the end of a direct read: what is left of the file, then nothing */
    assert_status(N % 4096, nd_os_read(h, N - N % 4096, block, 8192));
    assert_memory_equal(f->data + N - N % 4096, block, N % 4096);
    assert_status(ND_OK, nd_os_set_direct(h, 0));
    assert_true((fcntl((int)h, F_GETFL) & O_DIRECT) == 0);
    assert_status(100, nd_os_read(h, 3, block + 1, 100));
    assert_memory_equal(f->data + 3, block + 1, 100);
    free(block);
    os_close(h);
}

/* 1 if the file's first page is in the page cache: mincore on a mapping
 * made for the look and gone after it (a mapped page is one DONTNEED keeps). */
static int resident_page(int64_t h)
{
    void *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, (int)h, 0);
    if (m == MAP_FAILED)
        fail_msg("mmap: %s", strerror(errno));
    unsigned char v = 0;
    int rc = mincore(m, 4096, &v);
    int e = errno;
    munmap(m, 4096);
    if (rc != 0)
        fail_msg("mincore: %s", strerror(e));
    return v & 1;
}

/* Every advice value reaches posix_fadvise, and DONTNEED drops the file's
 * clean cached pages (checked with mincore on a mapping that reads nothing);
 * the pages were resident before it, so the check can fail. */
static void file_advice_reaches_the_kernel(void **state)
{
    fx *f = *state;
    int64_t h = open_or_fail(f->path, RD);
    for (int32_t a = ND_OS_ADVICE_NORMAL; a <= ND_OS_ADVICE_NOREUSE; a++)
        assert_status(ND_OK, nd_os_advise(h, 0, 0, a));
    assert_int_equal(0, fsync((int)h)); /* clean pages, which DONTNEED may drop */
    uint8_t buf[4096];
    assert_status(sizeof buf, nd_os_read(h, 0, buf, sizeof buf));
    assert_int_equal(1, resident_page(h));
    /* the whole file: a page-cache folio larger than a page goes only whole */
    assert_status(ND_OK, nd_os_advise(h, 0, 0, ND_OS_ADVICE_DONTNEED));
    assert_int_equal(0, resident_page(h));
    os_close(h);
}

/* madvise's DONTNEED empties private anonymous pages (they read as zeros
 * afterwards); posix_madvise's is a no-op on Linux. Each is the OS's call. */
static void memory_advice_is_the_os_call(void **state)
{
    (void)state;
    long ps = sysconf(_SC_PAGESIZE);
    uint8_t *m =
        mmap(NULL, (size_t)ps * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(m != MAP_FAILED);
    for (int32_t a = ND_OS_ADVICE_NORMAL; a <= ND_OS_ADVICE_WILLNEED; a++) {
        assert_status(ND_OK, nd_os_madvise(m, ps * 2, a, 0));
        assert_status(ND_OK, nd_os_madvise(m, ps * 2, a, ND_OS_MADVISE_POSIX));
    }
    assert_status(ND_E_INVALID_ARGUMENT, nd_os_madvise(m + 1, ps, ND_OS_ADVICE_NORMAL, 0));
    memset(m, 0xab, (size_t)ps * 2);
    assert_status(ND_OK, nd_os_madvise(m, ps, ND_OS_ADVICE_DONTNEED, ND_OS_MADVISE_POSIX));
    assert_int_equal(0xab, m[0]);
    if (emulator() != NULL) {
        char why[160];
        snprintf(why, sizeof why, "running under %s, which does not hand madvise to the kernel",
                 emulator());
        tst_loud_skip("madvise(DONTNEED) emptying anonymous pages", why);
    } else {
        assert_status(ND_OK, nd_os_madvise(m, ps, ND_OS_ADVICE_DONTNEED, 0));
        assert_int_equal(0, m[0]);
        assert_int_equal(0xab, m[ps]); /* only the range advised */
    }
    munmap(m, (size_t)ps * 2);
}
#  endif
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(reads_at_offsets_leave_the_pointer, setup, teardown),
        cmocka_unit_test_setup_teardown(writes_at_offsets_extend_and_leave_the_pointer, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(offsets_past_4_gib, setup, teardown),
        cmocka_unit_test_setup_teardown(access_and_kind_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(threads_read_one_file, setup, teardown),
#ifdef _WIN32
        cmocka_unit_test_setup_teardown(windows_refuses_direct_and_advice, setup, teardown),
#elif defined(__linux__)
        cmocka_unit_test_setup_teardown(direct_io_goes_on_and_off, setup, teardown),
        cmocka_unit_test_setup_teardown(file_advice_reaches_the_kernel, setup, teardown),
        cmocka_unit_test_setup_teardown(memory_advice_is_the_os_call, setup, teardown),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
