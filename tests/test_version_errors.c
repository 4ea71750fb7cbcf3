/*
 * test_version_errors.c - versions, status names, and the thread's last
 * error (message and OS error), which must never leak between threads.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

static void abi_version_matches_header(void **state)
{
    (void)state;
    assert_int_equal(nd_abi_version(), ND_ABI_VERSION);
}

static void version_is_major_minor_patch(void **state)
{
    (void)state;
    const char *v = nd_version();
    assert_non_null(v);
    unsigned major, minor, patch;
    char tail;
    /* exactly three numbers, nothing after them */
    assert_int_equal(sscanf(v, "%u.%u.%u%c", &major, &minor, &patch, &tail), 3);
    assert_true(strlen(v) < 32);
}

static void every_status_has_its_name(void **state)
{
    (void)state;
    static const struct {
        int32_t code;
        const char *name;
    } codes[] = {
        {ND_OK, "ND_OK"},
        {ND_E_INVALID_ARGUMENT, "ND_E_INVALID_ARGUMENT"},
        {ND_E_BAD_HANDLE, "ND_E_BAD_HANDLE"},
        {ND_E_NOT_FOUND, "ND_E_NOT_FOUND"},
        {ND_E_EXISTS, "ND_E_EXISTS"},
        {ND_E_ACCESS, "ND_E_ACCESS"},
        {ND_E_INVALID_NAME, "ND_E_INVALID_NAME"},
        {ND_E_EOF, "ND_E_EOF"},
        {ND_E_NO_SPACE, "ND_E_NO_SPACE"},
        {ND_E_IO, "ND_E_IO"},
        {ND_E_NOT_SUPPORTED, "ND_E_NOT_SUPPORTED"},
        {ND_E_LOCKED, "ND_E_LOCKED"},
        {ND_E_NO_MEMORY, "ND_E_NO_MEMORY"},
        {ND_E_TOO_MANY_OPEN, "ND_E_TOO_MANY_OPEN"},
        {ND_E_BUSY, "ND_E_BUSY"},
    };
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
        assert_string_equal(nd_status_name(codes[i].code), codes[i].name);
    /* the frozen values themselves */
    assert_int_equal(ND_E_TOO_MANY_OPEN, -13);
    assert_int_equal(ND_E_LOCKED, -11);
    assert_int_equal(ND_E_BUSY, -14);
}

static void unknown_status_is_named_not_null(void **state)
{
    (void)state;
    const int32_t unknown[] = {1, 7, -15, -100, INT32_MIN, INT32_MAX};
    for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
        const char *n = nd_status_name(unknown[i]);
        assert_non_null(n);
        assert_string_equal(n, "ND_E_UNKNOWN");
    }
}

static void message_names_call_and_file(void **state)
{
    tst_env *env = *state;
    nd_handle in;
    assert_status(ND_E_NOT_FOUND, nd_open_input(env->dir, "missing_0.cfs", 0, &in));
    assert_int_equal(in, 0); /* out-pointers are zeroed on failure */
    assert_message_contains("nd_open_input");
    assert_message_contains("missing_0.cfs");
    assert_message_contains(env->dir_path);
#ifndef _WIN32
    /* errno values are POSIX's; Windows reports ERROR_FILE_NOT_FOUND (2) here, which
     * happens to equal ENOENT, but the mapping is not something to assert across OSes */
    assert_int_equal(nd_last_os_error(), ENOENT);
#endif
}

static void starts_with(const char *call)
{
    const char *msg = nd_last_error_message();
    if (strncmp(msg, call, strlen(call)) != 0 || msg[strlen(call)] != ':')
        fail_msg("the message \"%s\" does not start with \"%s:\"", msg, call);
}

static void every_message_starts_with_its_call(void **state)
{
    tst_env *env = *state;
    char path[TST_PATH_MAX];
    assert_int_equal(tst_write_file(tst_join(path, sizeof(path), env->dir_path, "f"), "0123", 4),
                     0);
    nd_handle h, in, out, lock, ring;
    int64_t len;
    uint8_t buf[8];
    const uint8_t *p;
    char missing_dir[TST_PATH_MAX];
    tst_join(missing_dir, sizeof(missing_dir), env->root, "nope");
    assert_status(ND_E_NOT_FOUND, nd_open_dir(missing_dir, 0, &h));
    starts_with("nd_open_dir");
    assert_status(ND_E_BAD_HANDLE, nd_list(0, NULL, 0));
    starts_with("nd_list");
    assert_status(ND_E_INVALID_NAME, nd_file_exists(env->dir, ".."));
    starts_with("nd_file_exists");
    assert_status(ND_E_NOT_FOUND, nd_file_length(env->dir, "gone", &len));
    starts_with("nd_file_length");
    assert_status(ND_E_NOT_FOUND, nd_delete_file(env->dir, "gone"));
    starts_with("nd_delete_file");
    assert_status(ND_E_NOT_FOUND, nd_rename(env->dir, "gone", "there"));
    starts_with("nd_rename");
    assert_status(ND_E_NOT_FOUND, nd_fsync(env->dir, "gone"));
    starts_with("nd_fsync");
    assert_status(ND_E_BAD_HANDLE, nd_sync_dir(0));
    starts_with("nd_sync_dir");
    assert_status(ND_OK, nd_lock(env->dir, "l", &lock));
    assert_status(ND_E_LOCKED, nd_lock(env->dir, "l", &h));
    starts_with("nd_lock");
    assert_status(ND_E_NOT_FOUND, nd_open_input(env->dir, "gone", 0, &h));
    starts_with("nd_open_input");
    assert_status(ND_OK, nd_open_input(env->dir, "f", 0, &in));
    assert_status(ND_E_BAD_HANDLE, nd_input_length(0, &len));
    starts_with("nd_input_length");
    assert_status(ND_E_EOF, nd_read_bytes(in, 2, buf, 3));
    starts_with("nd_read_bytes");
    assert_status(ND_E_EOF, nd_input_seek(in, 5));
    starts_with("nd_input_seek");
    assert_status(ND_E_BAD_HANDLE, nd_input_position(0));
    starts_with("nd_input_position");
    assert_status(ND_E_EOF, nd_read_buffered(in, buf, 5));
    starts_with("nd_read_buffered");
    assert_status(ND_OK, nd_input_seek(in, 4));
    assert_status(ND_E_EOF, nd_read_byte_buffered(in));
    starts_with("nd_read_byte_buffered");
    assert_status(ND_E_EOF, nd_input_window(in, 4, &p));
    starts_with("nd_input_window");
    assert_status(ND_E_BAD_HANDLE, nd_input_clone(0, &h));
    starts_with("nd_input_clone");
    assert_status(ND_E_EOF, nd_input_slice(in, 3, 2, &h));
    starts_with("nd_input_slice");
    assert_status(ND_E_BAD_HANDLE, nd_input_strategy(0));
    starts_with("nd_input_strategy");
    assert_status(ND_E_EXISTS, nd_create_output(env->dir, "f", 0, &h));
    starts_with("nd_create_output");
    assert_status(ND_OK, nd_create_output(env->dir, "o", 0, &out));
    assert_status(ND_E_INVALID_ARGUMENT, nd_write_bytes(out, buf, -1));
    starts_with("nd_write_bytes");
    assert_status(ND_E_BAD_HANDLE, nd_write_byte(0, 1));
    starts_with("nd_write_byte");
    assert_status(ND_E_BAD_HANDLE, nd_output_position(0));
    starts_with("nd_output_position");
    assert_status(ND_E_BAD_HANDLE, nd_output_crc32(0));
    starts_with("nd_output_crc32");
    assert_status(ND_E_BAD_HANDLE, nd_output_sync(0));
    starts_with("nd_output_sync");
    assert_status(ND_E_BAD_HANDLE, nd_output_strategy(0));
    starts_with("nd_output_strategy");
    assert_status(ND_E_INVALID_ARGUMENT, nd_ring_open(0, 0, &ring));
    starts_with("nd_ring_open");
    assert_status(ND_E_BAD_HANDLE, nd_ring_backend(0));
    starts_with("nd_ring_backend");
    assert_status(ND_E_BAD_HANDLE, nd_ring_submit_read(0, in, 0, buf, 1, 1));
    starts_with("nd_ring_submit_read");
    uint64_t tag;
    assert_status(ND_E_BAD_HANDLE, nd_ring_reap(0, &tag, &len, 1, 0));
    starts_with("nd_ring_reap");
    assert_status(ND_E_BAD_HANDLE, nd_ring_in_flight(0));
    starts_with("nd_ring_in_flight");
    assert_status(ND_E_BAD_HANDLE, nd_close(0));
    starts_with("nd_close");
    assert_status(ND_OK, nd_close(out));
    assert_status(ND_OK, nd_close(in));
    assert_status(ND_OK, nd_close(lock));
}

static void library_failures_have_no_os_error(void **state)
{
    tst_env *env = *state;
    nd_handle in;
    assert_status(ND_E_INVALID_NAME, nd_open_input(env->dir, "..", 0, &in));
    assert_int_equal(nd_last_os_error(), 0);
    assert_message_contains("nd_open_input");
    assert_status(ND_E_BAD_HANDLE, nd_close(0));
    assert_int_equal(nd_last_os_error(), 0);
    assert_message_contains("nd_close");
}

static void message_survives_successful_calls(void **state)
{
    tst_env *env = *state;
    nd_handle in;
    assert_status(ND_E_NOT_FOUND, nd_open_input(env->dir, "gone", 0, &in));
    char before[1024];
    snprintf(before, sizeof(before), "%s", nd_last_error_message());
    /* a success does not clear the last failure: it describes the last *failure* */
    assert_int_equal(nd_abi_version(), ND_ABI_VERSION);
    int64_t need = nd_list(env->dir, NULL, 0);
    assert_true(need >= 0);
    assert_string_equal(nd_last_error_message(), before);
}

/* A call that recovers from a failure of its own leaves the thread's last
 * failure as it was: the caller never saw that one. An input opened with
 * ND_IO_WARM measures its directory (a listing, then a stat of each file),
 * and a file another thread deletes between the two fails its stat, which the
 * open shrugs off. Each open is on a fresh directory handle (each keeps its
 * measure for a second), while a thread creates and deletes files there. */
typedef struct {
    const char *path;
    atomic_int stop;
    long churned;
} churn_ctx;

static void *churn(void *arg)
{
    churn_ctx *c = arg;
    nd_handle d;
    if (nd_open_dir(c->path, 0, &d) != ND_OK)
        return NULL;
    char name[32];
    for (unsigned i = 0; !atomic_load(&c->stop); i++) {
        nd_handle out;
        snprintf(name, sizeof(name), "churn-%u", i % 64);
        if (nd_create_output(d, name, 0, &out) == ND_OK) {
            nd_close(out);
            c->churned++;
        }
        nd_delete_file(d, name);
    }
    nd_close(d);
    return NULL;
}

static void message_survives_a_recovered_failure(void **state)
{
    tst_env *env = *state;
    nd_handle out, in, dir;
    static const char data[4096] = {1};
    assert_status(ND_OK, nd_create_output(env->dir, "data", 0, &out));
    assert_int_equal(nd_write_bytes(out, data, sizeof(data)), (int64_t)sizeof(data));
    assert_status(ND_OK, nd_close(out));
    churn_ctx c = {.path = env->dir_path, .churned = 0};
    atomic_init(&c.stop, 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, churn, &c), 0);
    char before[1024], after[1024] = "";
    int changed = -1;
    for (int i = 0; i < 400 && changed < 0; i++) {
        assert_status(ND_E_NOT_FOUND, nd_open_input(env->dir, "gone", 0, &in));
        snprintf(before, sizeof(before), "%s", nd_last_error_message());
        assert_status(ND_OK, nd_open_dir(env->dir_path, 0, &dir));
        assert_status(ND_OK, nd_open_input(dir, "data", ND_IO_MMAP | ND_IO_WARM, &in));
        assert_status(ND_OK, nd_close(in));
        assert_status(ND_OK, nd_close(dir));
        if (strcmp(nd_last_error_message(), before) != 0) {
            snprintf(after, sizeof(after), "%s", nd_last_error_message());
            changed = i;
        }
    }
    atomic_store(&c.stop, 1);
    pthread_join(th, NULL);
    if (changed >= 0)
        fail_msg("successful opens (the %d-th) changed the last failure from \"%s\" to \"%s\"",
                 changed, before, after);
    assert_true(c.churned > 0);
}

/* ---- thread-locality ---- */

typedef struct {
    tst_env *env;
    pthread_barrier_t *barrier;
    int which;
    char message[1024];
    int os_error;
    int32_t status;
    int fresh_ok;
} err_thread;

static void *fail_differently(void *arg)
{
    err_thread *t = arg;
    /* a thread that has not failed yet sees no error, whatever others did */
    t->fresh_ok = strcmp(nd_last_error_message(), "no error") == 0 && nd_last_os_error() == 0;
    pthread_barrier_wait(t->barrier);
    nd_handle h;
    if (t->which == 0)
        t->status = nd_open_input(t->env->dir, "absent-in-thread-0", 0, &h);
    else
        t->status = nd_open_input(t->env->dir, "invalid-in-thread/1", 0, &h);
    /* both threads have failed before either reads its message */
    pthread_barrier_wait(t->barrier);
    snprintf(t->message, sizeof(t->message), "%s", nd_last_error_message());
    t->os_error = nd_last_os_error();
    return NULL;
}

static void last_error_is_per_thread(void **state)
{
    tst_env *env = *state;
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, 2);
    err_thread t[2] = {{env, &barrier, 0, "", 0, 0, 0}, {env, &barrier, 1, "", 0, 0, 0}};
    /* this thread's own failure must not show in the others */
    assert_status(ND_E_BAD_HANDLE, nd_close(12345));
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, fail_differently, &t[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&barrier);
    assert_true(t[0].fresh_ok);
    assert_true(t[1].fresh_ok);
    assert_int_equal(t[0].status, ND_E_NOT_FOUND);
    assert_int_equal(t[1].status, ND_E_INVALID_NAME);
    /* names no directory path can hold by chance (the messages name the directory too: a
     * scratch directory under "/tmp/ci-xxxa/build" holds "a/b") */
    assert_non_null(strstr(t[0].message, "absent-in-thread-0"));
    assert_null(strstr(t[0].message, "invalid-in-thread/1"));
    assert_non_null(strstr(t[1].message, "invalid-in-thread/1"));
    assert_null(strstr(t[1].message, "absent-in-thread-0"));
    assert_int_not_equal(t[0].os_error, 0);
    assert_int_equal(t[1].os_error, 0);
    /* and ours is still ours */
    assert_message_contains("nd_close");
    assert_non_null(strstr(nd_last_error_message(), "12345"));
}

static void long_names_do_not_overflow_the_message(void **state)
{
    tst_env *env = *state;
    char name[300];
    memset(name, 'x', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    nd_handle in;
    assert_status(ND_E_INVALID_NAME, nd_open_input(env->dir, name, 0, &in));
    const char *msg = nd_last_error_message();
    assert_true(strlen(msg) < 1024);
    assert_message_contains("255");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(abi_version_matches_header),
        cmocka_unit_test(version_is_major_minor_patch),
        cmocka_unit_test(every_status_has_its_name),
        cmocka_unit_test(unknown_status_is_named_not_null),
        cmocka_unit_test_setup_teardown(message_names_call_and_file, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(every_message_starts_with_its_call, tst_setup,
                                        tst_teardown),
        cmocka_unit_test_setup_teardown(library_failures_have_no_os_error, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(message_survives_successful_calls, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(message_survives_a_recovered_failure, tst_setup,
                                        tst_teardown),
        cmocka_unit_test_setup_teardown(last_error_is_per_thread, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(long_names_do_not_overflow_the_message, tst_setup,
                                        tst_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
