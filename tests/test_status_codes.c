/*
 * test_status_codes.c - every status code comes out of a real situation, not
 * only out of the name table: each case below provokes one and checks the
 * message and OS error that go with it. The last case fails if any code was
 * never produced (and says which could not be provoked on this machine).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

#ifndef _WIN32
#  include <signal.h>
#  include <sys/resource.h>
#  include <unistd.h>
#endif

#define N_CODES 15
static int seen[N_CODES];                /* index: -status */
static const char *unavailable[N_CODES]; /* why a code could not be provoked here */

static void saw(int32_t status)
{
    if (status <= 0 && status > -N_CODES)
        seen[-status] = 1;
}

static void expect(int32_t want, int64_t got, const char *expr)
{
    tst_assert_status(want, got, expr, __FILE__, __LINE__);
    saw(want);
}
#define EXPECT(want, call) expect((want), (call), #call)

static void ok_invalid_argument_bad_handle_eof(void **state)
{
    tst_env *env = *state;
    char path[TST_PATH_MAX];
    assert_int_equal(
        tst_write_file(tst_join(path, sizeof(path), env->dir_path, "f"), "0123456789", 10), 0);
    nd_handle in;
    EXPECT(ND_OK, nd_open_input(env->dir, "f", 0, &in));
    uint8_t buf[16];
    EXPECT(ND_E_INVALID_ARGUMENT, nd_read_bytes(in, -1, buf, 1));
    assert_message_contains("negative");
    assert_int_equal(nd_last_os_error(), 0);
    EXPECT(ND_E_EOF, nd_read_bytes(in, 5, buf, 6));
    assert_message_contains("'f'");
    EXPECT(ND_OK, nd_close(in));
    EXPECT(ND_E_BAD_HANDLE, nd_read_bytes(in, 0, buf, 1));
    assert_message_contains("nd_read_bytes");
}

static void not_found_exists_invalid_name_locked(void **state)
{
    tst_env *env = *state;
    nd_handle h, l;
    EXPECT(ND_E_NOT_FOUND, nd_open_input(env->dir, "nothing", 0, &h));
#ifndef _WIN32
    assert_int_equal(nd_last_os_error(), ENOENT);
#endif
    EXPECT(ND_OK, nd_create_output(env->dir, "made", 0, &h));
    EXPECT(ND_OK, nd_close(h));
    EXPECT(ND_E_EXISTS, nd_create_output(env->dir, "made", 0, &h));
#ifndef _WIN32
    assert_int_equal(nd_last_os_error(), EEXIST);
#endif
    EXPECT(ND_E_INVALID_NAME, nd_create_output(env->dir, "..", 0, &h));
    EXPECT(ND_OK, nd_lock(env->dir, "write.lock", &l));
    EXPECT(ND_E_LOCKED, nd_lock(env->dir, "write.lock", &h));
    assert_message_contains("write.lock");
    EXPECT(ND_OK, nd_close(l));
}

static void access_denied(void **state)
{
    tst_env *env = *state;
    char path[TST_PATH_MAX];
    nd_handle h;
    /* a directory where a file is expected: portable, and not bypassed by root */
    assert_int_equal(tst_mkdir(tst_join(path, sizeof(path), env->dir_path, "subdir")), 0);
    EXPECT(ND_E_ACCESS, nd_open_input(env->dir, "subdir", 0, &h));
#ifndef _WIN32
    /* a symbolic link (O_NOFOLLOW -> ELOOP); POSIX only: Windows symlinks need a privilege */
    assert_int_equal(tst_symlink("subdir", tst_join(path, sizeof(path), env->dir_path, "link")), 0);
    EXPECT(ND_E_ACCESS, nd_open_input(env->dir, "link", 0, &h));
    assert_int_equal(nd_last_os_error(), ELOOP);
    /* permission bits: root bypasses them, so this part runs only for other users */
    assert_int_equal(tst_write_file(tst_join(path, sizeof(path), env->dir_path, "secret"), "s", 1),
                     0);
    assert_int_equal(tst_chmod(path, 0), 0);
    if (geteuid() != 0) {
        EXPECT(ND_E_ACCESS, nd_open_input(env->dir, "secret", 0, &h));
        assert_int_equal(nd_last_os_error(), EACCES);
    } else {
        fprintf(stderr, "note: running as root, so chmod 000 does not refuse a read; ND_E_ACCESS "
                        "is covered here by a directory and a symbolic link instead\n");
    }
#endif
}

static void busy_ring(void **state)
{
    tst_env *env = *state;
    char path[TST_PATH_MAX];
    assert_int_equal(
        tst_write_file(tst_join(path, sizeof(path), env->dir_path, "f"), "0123456789", 10), 0);
    nd_handle in, ring;
    int32_t rc = nd_ring_open(1, 0, &ring);
    if (rc == ND_E_NOT_SUPPORTED) {
        unavailable[-ND_E_BUSY] = "this platform has no asynchronous reads yet";
        tst_loud_skip("ND_E_BUSY (a full ring)", unavailable[-ND_E_BUSY]);
        skip();
    }
    EXPECT(ND_OK, rc);
    EXPECT(ND_OK, nd_open_input(env->dir, "f", 0, &in));
    uint8_t a[4], b[4];
    EXPECT(ND_OK, nd_ring_submit_read(ring, in, 0, a, 4, 1));
    /* a read stays in flight until it is reaped, done or not: the one slot is taken */
    EXPECT(ND_E_BUSY, nd_ring_submit_read(ring, in, 4, b, 4, 2));
    assert_message_contains("nd_ring_submit_read");
    uint64_t tag = 0;
    int64_t result = 0;
    assert_status(1, nd_ring_reap(ring, &tag, &result, 1, -1));
    assert_int_equal(tag, 1);
    assert_int_equal(result, 4);
    assert_memory_equal(a, "0123", 4);
    EXPECT(ND_OK, nd_ring_submit_read(ring, in, 4, b, 4, 2));
    assert_status(1, nd_ring_reap(ring, &tag, &result, 1, -1));
    assert_memory_equal(b, "4567", 4);
    EXPECT(ND_OK, nd_close(ring));
    EXPECT(ND_OK, nd_close(in));
}

#ifndef _WIN32
/* POSIX only: a file truncated by someone else after open (Windows' share modes
 * let the library refuse such truncation instead). */
static void io_error_when_file_shrinks(void **state)
{
    tst_env *env = *state;
    char path[TST_PATH_MAX];
    uint8_t *data = tst_random_buffer(100000, 5);
    tst_join(path, sizeof(path), env->dir_path, "shrinks");
    assert_int_equal(tst_write_file(path, data, 100000), 0);
    const uint32_t flags[] = {0, ND_IO_MERGE};
    for (size_t f = 0; f < 2; f++) {
        assert_int_equal(tst_write_file(path, data, 100000), 0);
        nd_handle in;
        EXPECT(ND_OK, nd_open_input(env->dir, "shrinks", flags[f], &in));
        assert_int_equal(tst_truncate(path, 1000), 0);
        uint8_t buf[5000];
        EXPECT(ND_E_IO, nd_read_bytes(in, 50000, buf, 5000));
        assert_message_contains("shrinks");
        /* the cursor gets the 1000 bytes left, then nothing: all or nothing, so ND_E_IO */
        EXPECT(ND_E_IO, nd_read_buffered(in, buf, 5000));
        assert_status(0, nd_input_position(in));
        EXPECT(ND_OK, nd_close(in));
    }
    free(data);
}

/* ---- limits set in a child process, so the test runner is never starved ---- */

static int too_many_open_child(void *ctx)
{
    tst_env *env = ctx;
    struct rlimit rl = {64, 64};
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 90;
    static nd_handle h[200];
    int32_t rc = ND_OK;
    int n = 0;
    while (n < 200 && (rc = nd_open_input(env->dir, "f", 0, &h[n])) == ND_OK)
        n++;
    if (rc != ND_E_TOO_MANY_OPEN) {
        fprintf(stderr, "after %d inputs: %s (%s)\n", n, nd_status_name(rc),
                nd_last_error_message());
        return 1;
    }
    if (nd_last_os_error() != EMFILE)
        return 2;
    /* closing one makes room for one */
    if (nd_close(h[0]) != ND_OK || nd_open_input(env->dir, "f", 0, &h[0]) != ND_OK)
        return 3;
    return 0;
}

static void too_many_open(void **state)
{
    tst_env *env = *state;
    char path[TST_PATH_MAX];
    assert_int_equal(tst_write_file(tst_join(path, sizeof(path), env->dir_path, "f"), "x", 1), 0);
    assert_int_equal(tst_run_child(too_many_open_child, env), 0);
    saw(ND_E_TOO_MANY_OPEN);
}

static int file_size_limit_child(void *ctx)
{
    tst_env *env = ctx;
    /* beyond RLIMIT_FSIZE the kernel says EFBIG (after SIGXFSZ, ignored here) */
    signal(SIGXFSZ, SIG_IGN);
    /* block-aligned: a direct write cut at an unaligned limit gets EINVAL from the
     * kernel itself (checked on ext4, Linux 6.18), which says nothing about space */
    struct rlimit rl = {131072, 131072};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
        return 90;
    uint8_t *data = tst_random_buffer(300000, 6);
    const uint32_t flags[] = {0, ND_IO_MERGE};
    for (int f = 0; f < 2; f++) {
        nd_handle out;
        char name[16];
        snprintf(name, sizeof(name), "big%d", f);
        if (nd_create_output(env->dir, name, flags[f], &out) != ND_OK)
            return 10 + f;
        int64_t rc = nd_write_bytes(out, data, 300000);
        if (rc == ND_E_NO_SPACE) {
            /* a failure sticks: later writes, the position and the CRC all report it */
            if (nd_write_bytes(out, data, 10) != ND_E_NO_SPACE ||
                nd_write_byte(out, 1) != ND_E_NO_SPACE)
                return 40 + f;
            if (nd_output_position(out) != ND_E_NO_SPACE || nd_output_crc32(out) != ND_E_NO_SPACE)
                return 50 + f;
            if (nd_output_sync(out) != ND_E_NO_SPACE)
                return 60 + f;
        }
        int32_t closed = nd_close(out);
        /* the write or, at the latest, the close reports it */
        if (rc != ND_E_NO_SPACE && closed != ND_E_NO_SPACE) {
            fprintf(stderr, "flags %d: write %lld, close %s\n", (int)flags[f], (long long)rc,
                    nd_status_name(closed));
            return 20 + f;
        }
        if (rc == ND_E_NO_SPACE && closed == ND_OK) {
            fprintf(stderr, "flags %d: a failed write, then a close reporting success\n",
                    (int)flags[f]);
            return 30 + f;
        }
    }
    free(data);
    return 0;
}

static void no_space_from_file_size_limit(void **state)
{
    tst_env *env = *state;
    assert_int_equal(tst_run_child(file_size_limit_child, env), 0);
    saw(ND_E_NO_SPACE);
}

static int full_tmpfs(const char *mnt, void *ctx)
{
    (void)ctx;
    nd_handle dir;
    if (nd_open_dir(mnt, 0, &dir) != ND_OK)
        return 2;
    uint8_t *data = tst_random_buffer(1u << 20, 7);
    const uint32_t flags[] = {0, ND_IO_MERGE};
    for (int f = 0; f < 2; f++) {
        nd_handle out;
        char name[16];
        snprintf(name, sizeof(name), "fill%d", f);
        if (nd_create_output(dir, name, flags[f], &out) != ND_OK)
            return 10 + f;
        int64_t rc = ND_OK;
        for (int i = 0; i < 4 && rc >= 0; i++)
            rc = nd_write_bytes(out, data, 1 << 20);
        int32_t synced = nd_output_sync(out);
        int32_t closed = nd_close(out);
        if (rc != ND_E_NO_SPACE && synced != ND_E_NO_SPACE) {
            fprintf(stderr, "tmpfs flags %d: write %lld sync %s close %s\n", (int)flags[f],
                    (long long)rc, nd_status_name(synced), nd_status_name(closed));
            return 20 + f;
        }
        if (synced == ND_OK || closed == ND_OK) /* failures stick */
            return 30 + f;
        nd_delete_file(dir, name);
    }
    free(data);
    nd_close(dir);
    return 0;
}

static void no_space_on_full_tmpfs(void **state)
{
    (void)state;
    int rc = tst_with_private_mount("tmpfs", "size=256k", full_tmpfs, NULL);
    if (rc == TST_NO_MOUNT) {
        tst_loud_skip("ND_E_NO_SPACE from a full file system (ENOSPC)",
                      "no private tmpfs mount here; the RLIMIT_FSIZE case still covers the code");
        skip();
    }
    assert_int_equal(rc, 0);
    saw(ND_E_NO_SPACE);
}

static int require_direct_child(const char *mnt, void *ctx)
{
    (void)ctx;
    char path[TST_PATH_MAX];
    if (tst_write_file(tst_join(path, sizeof(path), mnt, "f"), "data", 4) != 0)
        return 1;
    nd_handle dir, in;
    if (nd_open_dir(mnt, 0, &dir) != ND_OK)
        return 2;
    int32_t rc = nd_open_input(dir, "f", ND_IO_REQUIRE_DIRECT, &in);
    if (rc != ND_E_NOT_SUPPORTED)
        return 3;
    if (strstr(nd_last_error_message(), "direct") == NULL)
        return 4;
    nd_close(dir);
    return 0;
}

static void not_supported(void **state)
{
    (void)state;
    int rc = tst_with_private_mount("ramfs", NULL, require_direct_child, NULL);
    if (rc == TST_NO_MOUNT) {
        unavailable[-ND_E_NOT_SUPPORTED] = "no file system refusing O_DIRECT can be mounted here";
        tst_loud_skip("ND_E_NOT_SUPPORTED (ND_IO_REQUIRE_DIRECT on ramfs)",
                      unavailable[-ND_E_NOT_SUPPORTED]);
        skip();
    }
    assert_int_equal(rc, 0);
    saw(ND_E_NOT_SUPPORTED);
}

static int64_t vm_size_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long long kb = -1;
    while (f != NULL && fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "VmSize: %lld kB", &kb) == 1)
            break;
    if (f != NULL)
        fclose(f);
    return kb < 0 ? -1 : kb * 1024;
}

static int no_memory_child(void *ctx)
{
    tst_env *env = ctx;
    /* room for ordinary allocations, none for a 16 GiB mapping */
    int64_t vm = vm_size_bytes();
    if (vm < 0)
        return 90;
    struct rlimit rl;
    rl.rlim_cur = rl.rlim_max = (rlim_t)(vm + (256 << 20));
    if (setrlimit(RLIMIT_AS, &rl) != 0)
        return 91;
    nd_handle in;
    int32_t rc = nd_open_input(env->dir, "huge", ND_IO_MMAP, &in);
    if (rc == ND_OK)
        return 5; /* the limit was not applied to the mapping */
    if (rc != ND_E_NO_MEMORY) {
        fprintf(stderr, "mapping 16 GiB under RLIMIT_AS: %s (%s)\n", nd_status_name(rc),
                nd_last_error_message());
        return 1;
    }
    if (nd_last_os_error() != ENOMEM)
        return 2;
    /* the same file still opens without a mapping */
    if (nd_open_input(env->dir, "huge", 0, &in) != ND_OK)
        return 3;
    nd_close(in);
    return 0;
}

static void no_memory(void **state)
{
    /* A mapping larger than the address space left under RLIMIT_AS fails with
     * ENOMEM. Failing allocations inside the library are provoked by the
     * fault build (tests/reliability), a failing thread by the case below. */
    tst_env *env = *state;
    char path[TST_PATH_MAX];
    if (tst_truncate(tst_join(path, sizeof(path), env->dir_path, "huge"), (int64_t)16 << 30) != 0) {
        unavailable[-ND_E_NO_MEMORY] = "cannot make a sparse 16 GiB file here";
        tst_loud_skip("ND_E_NO_MEMORY", unavailable[-ND_E_NO_MEMORY]);
        skip();
    }
    int rc = tst_run_child(no_memory_child, env);
    const char *emulator = getenv("ND_TEST_EMULATOR");
    if (rc == 5 && emulator != NULL && emulator[0] != '\0') {
        /* qemu-user does not apply RLIMIT_AS to the guest's mappings */
        unavailable[-ND_E_NO_MEMORY] = "the emulator ignores RLIMIT_AS for the guest's mappings";
        fprintf(stderr, "*** under %s: ", emulator);
        tst_loud_skip("ND_E_NO_MEMORY from a mapping under RLIMIT_AS",
                      unavailable[-ND_E_NO_MEMORY]);
        skip();
    }
    assert_int_equal(rc, 0);
    saw(ND_E_NO_MEMORY);
}

/* A thread the library cannot start (pthread_create: EAGAIN under
 * RLIMIT_NPROC) is a resource running out, ND_E_NO_MEMORY: never ND_E_LOCKED,
 * which only a held lock may say, though both come from EAGAIN. */
static int thread_limit_child(void *ctx)
{
    tst_env *env = ctx;
    nd_handle lock, again;
    /* the lock first: a held lock is still ND_E_LOCKED */
    if (nd_lock(env->dir, "write.lock", &lock) != ND_OK)
        return 90;
    if (nd_lock(env->dir, "write.lock", &again) != ND_E_LOCKED)
        return 1;
    /* root is exempt from RLIMIT_NPROC: become nobody first (the limit counts
     * a user's threads, and this process is already one) */
    if (geteuid() == 0 && setresuid(65534, 65534, 65534) != 0)
        return 77;
    struct rlimit rl = {1, 1};
    if (setrlimit(RLIMIT_NPROC, &rl) != 0)
        return 91;
    const uint32_t flags[] = {0, ND_RING_FORCE_THREADS};
    for (int i = 0; i < 2; i++) {
        nd_handle ring = 5;
        int32_t rc = nd_ring_open(4, flags[i], &ring);
        if (rc == ND_OK)
            return 92; /* the limit did not stop the thread */
        if (rc != ND_E_NO_MEMORY || ring != 0) {
            fprintf(stderr, "nd_ring_open(flags %u) under RLIMIT_NPROC: %s (%s)\n", flags[i],
                    nd_status_name(rc), nd_last_error_message());
            return 2;
        }
        if (nd_last_os_error() != EAGAIN ||
            strstr(nd_last_error_message(), "nd_ring_open") == NULL ||
            strstr(nd_last_error_message(), "thread") == NULL) {
            fprintf(stderr, "message: %s (os error %d)\n", nd_last_error_message(),
                    nd_last_os_error());
            return 3;
        }
    }
    return nd_close(lock) == ND_OK ? 0 : 4;
}

static void thread_limit_is_no_memory_not_locked(void **state)
{
    tst_env *env = *state;
    int rc = tst_run_child(thread_limit_child, env);
    if (rc == 77) {
        tst_loud_skip("ND_E_NO_MEMORY from pthread_create under RLIMIT_NPROC",
                      "running as root and cannot drop to uid 65534 (root ignores RLIMIT_NPROC)");
        skip();
    }
    if (rc == 92) {
        tst_loud_skip("ND_E_NO_MEMORY from pthread_create under RLIMIT_NPROC",
                      "RLIMIT_NPROC does not limit threads here (an emulator?)");
        skip();
    }
    assert_int_equal(rc, 0);
    saw(ND_E_NO_MEMORY);
    saw(ND_E_LOCKED);
}
#endif

static void every_code_was_produced(void **state)
{
    (void)state;
    saw(ND_OK);
    int missing = 0, excused = 0;
    for (int i = 0; i < N_CODES; i++) {
        if (seen[i])
            continue;
        if (unavailable[i] != NULL) {
            fprintf(stderr, "*** %s was not produced here: %s\n", nd_status_name(-i),
                    unavailable[i]);
            excused++;
        } else {
            fprintf(stderr, "*** %s was never produced by a real case\n", nd_status_name(-i));
            missing++;
        }
    }
#ifdef _WIN32
    /* the POSIX-only cases above (limits, mounts, truncation) have no Windows run yet */
    fprintf(stderr, "*** Windows: %d codes need their own cases\n", missing);
    missing = 0;
#endif
    assert_int_equal(missing, 0);
    if (excused > 0)
        skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(ok_invalid_argument_bad_handle_eof, tst_setup,
                                        tst_teardown),
        cmocka_unit_test_setup_teardown(not_found_exists_invalid_name_locked, tst_setup,
                                        tst_teardown),
        cmocka_unit_test_setup_teardown(access_denied, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(busy_ring, tst_setup, tst_teardown),
#ifndef _WIN32
        cmocka_unit_test_setup_teardown(io_error_when_file_shrinks, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(too_many_open, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(no_space_from_file_size_limit, tst_setup, tst_teardown),
        cmocka_unit_test(no_space_on_full_tmpfs),
        cmocka_unit_test(not_supported),
        cmocka_unit_test_setup_teardown(no_memory, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(thread_limit_is_no_memory_not_locked, tst_setup,
                                        tst_teardown),
#endif
        cmocka_unit_test(every_code_was_produced),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
