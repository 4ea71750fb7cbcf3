/*
 * test_dir.c - directory calls: open, list (sorted, the capacity protocol,
 * regular files only), exists, length, delete, rename (atomic replace), fsync,
 * sync_dir, and a closed directory leaving its inputs/outputs/locks working.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

#ifndef _WIN32
#  include <signal.h>
#  include <unistd.h>
#endif

static void put(tst_env *env, const char *name, const void *data, size_t len)
{
    char path[TST_PATH_MAX];
    assert_int_equal(tst_write_file(tst_join(path, sizeof(path), env->dir_path, name), data, len),
                     0);
}

static void open_dir_arguments(void **state)
{
    tst_env *env = *state;
    nd_handle d = 5;
    assert_status(ND_E_INVALID_ARGUMENT, nd_open_dir(NULL, 0, &d));
    assert_status(ND_E_INVALID_ARGUMENT, nd_open_dir(env->dir_path, 0, NULL));
    assert_status(ND_E_INVALID_ARGUMENT, nd_open_dir("", 0, &d));
    assert_int_equal(d, 0);
    assert_status(ND_E_INVALID_ARGUMENT, nd_open_dir(env->dir_path, 0x80, &d));
    assert_status(ND_E_INVALID_ARGUMENT, nd_open_dir(env->dir_path, ND_DIR_CREATE | 2u, &d));
    /* a path longer than any OS takes: a clean status, a bounded message, nothing made */
    char *huge = malloc(20001);
    assert_non_null(huge);
    memset(huge, 'a', 20000);
    huge[20000] = '\0';
    memcpy(huge, env->root, strlen(env->root));
    huge[strlen(env->root)] = '/';
    for (size_t i = strlen(env->root) + 200; i < 20000; i += 200)
        huge[i] = '/';
    assert_int_not_equal(nd_open_dir(huge, 0, &d), ND_OK);
    assert_int_equal(d, 0);
    assert_true(strlen(nd_last_error_message()) < 2048);
    assert_int_not_equal(nd_open_dir(huge, ND_DIR_CREATE, &d), ND_OK);
    assert_true(strlen(nd_last_error_message()) < 2048);
    free(huge);
}

static void open_dir_with_and_without_create(void **state)
{
    tst_env *env = *state;
    char deep[TST_PATH_MAX], file[TST_PATH_MAX], under_file[TST_PATH_MAX];
    tst_join(deep, sizeof(deep), env->root, "a/b/c");
    nd_handle d = 5;
    assert_status(ND_E_NOT_FOUND, nd_open_dir(deep, 0, &d));
    assert_int_equal(d, 0);
    assert_message_contains(deep);
    assert_false(tst_path_exists(deep));
    assert_status(ND_OK, nd_open_dir(deep, ND_DIR_CREATE, &d));
    assert_int_not_equal(d, 0);
    assert_true(tst_path_exists(deep));
    assert_status(ND_OK, nd_close(d));
    /* an existing directory opens with or without CREATE; a trailing '/' is fine */
    char slash[TST_PATH_MAX];
    tst_join(slash, sizeof(slash), deep, "");
    assert_status(ND_OK, nd_open_dir(slash, ND_DIR_CREATE, &d));
    assert_status(ND_OK, nd_close(d));
    /* a regular file is not a directory, with or without CREATE */
    tst_join(file, sizeof(file), env->root, "plain");
    assert_int_equal(tst_write_file(file, "x", 1), 0);
    assert_int_not_equal(nd_open_dir(file, 0, &d), ND_OK);
    assert_int_not_equal(nd_open_dir(file, ND_DIR_CREATE, &d), ND_OK);
    tst_join(under_file, sizeof(under_file), file, "sub");
    assert_int_not_equal(nd_open_dir(under_file, ND_DIR_CREATE, &d), ND_OK);
    assert_int_equal(tst_file_size(file), 1);
    /* two handles on one directory are independent */
    nd_handle d1, d2;
    assert_status(ND_OK, nd_open_dir(env->dir_path, 0, &d1));
    assert_status(ND_OK, nd_open_dir(env->dir_path, 0, &d2));
    assert_true(d1 != d2);
    assert_status(ND_OK, nd_close(d1));
    assert_int_equal(nd_list(d2, NULL, 0), 0);
    assert_status(ND_OK, nd_close(d2));
}

static void relative_paths_bind_at_open(void **state)
{
    /* a relative path is resolved once, at open: a later chdir changes nothing */
    tst_env *env = *state;
    char cwd_file[TST_PATH_MAX];
    assert_int_equal(tst_chdir(env->root), 0);
    nd_handle d;
    int32_t rc = nd_open_dir("rel/sub", ND_DIR_CREATE, &d);
    assert_int_equal(tst_chdir(env->dir_path), 0); /* somewhere else entirely */
    assert_status(ND_OK, rc);
    nd_handle out;
    assert_status(ND_OK, nd_create_output(d, "here", 0, &out));
    assert_status(ND_OK, nd_close(out));
    assert_status(ND_OK, nd_close(d));
    assert_true(tst_path_exists(tst_join(cwd_file, sizeof(cwd_file), env->root, "rel/sub/here")));
    assert_false(tst_path_exists(tst_join(cwd_file, sizeof(cwd_file), env->dir_path, "rel")));
    /* leave the temporary tree before teardown removes it */
    assert_int_equal(tst_chdir(env->root), 0);
    assert_int_equal(tst_chdir(".."), 0);
}

/* ---- listing ---- */

static void list_is_sorted_by_bytes(void **state)
{
    tst_env *env = *state;
    /* created out of order; byte order puts '.'<'0'<'C'<'_'<'a'<'b'<0xC3 (no two names
     * differ only in case: they would be one file on Windows and macOS) */
    static const char *const created[] = {
        "b", "segments_2", "a", "\xC3\xA9t\xC3\xA9", "C", "_0.cfs", "0", ".z", "ab", "aa"};
    static const char expected[] = ".z\0"
                                   "0\0"
                                   "C\0"
                                   "_0.cfs\0"
                                   "a\0"
                                   "aa\0"
                                   "ab\0"
                                   "b\0"
                                   "segments_2\0"
                                   "\xC3\xA9t\xC3\xA9";
    for (size_t i = 0; i < sizeof(created) / sizeof(created[0]); i++)
        put(env, created[i], "x", 1);
    int64_t need = nd_list(env->dir, NULL, 0);
    assert_int_equal(need, (int64_t)sizeof(expected));
    char buf[256];
    memset(buf, 0x5A, sizeof(buf));
    assert_int_equal(nd_list(env->dir, buf, (int64_t)sizeof(buf)), need);
    assert_memory_equal(buf, expected, sizeof(expected));
    /* bytes past what it needed are left alone */
    for (size_t i = (size_t)need; i < sizeof(buf); i++)
        assert_int_equal((unsigned char)buf[i], 0x5A);
}

static void list_cap_protocol(void **state)
{
    tst_env *env = *state;
    assert_int_equal(nd_list(env->dir, NULL, 0), 0); /* empty: needs nothing */
    char buf[64];
    memset(buf, 0x5A, sizeof(buf));
    assert_int_equal(nd_list(env->dir, buf, sizeof(buf)), 0);
    assert_int_equal((unsigned char)buf[0], 0x5A);
    put(env, "one", "1", 1);
    put(env, "two", "22", 2);
    const int64_t need = 8; /* "one\0two\0" */
    for (int64_t cap = 0; cap < need; cap++) {
        memset(buf, 0x5A, sizeof(buf));
        /* short: says what it needs and writes nothing at all */
        assert_int_equal(nd_list(env->dir, buf, cap), need);
        for (size_t i = 0; i < sizeof(buf); i++)
            assert_int_equal((unsigned char)buf[i], 0x5A);
    }
    memset(buf, 0x5A, sizeof(buf));
    assert_int_equal(nd_list(env->dir, buf, need), need);
    assert_memory_equal(buf, "one\0two", 8);
    assert_int_equal((unsigned char)buf[8], 0x5A);
    assert_status(ND_E_INVALID_ARGUMENT, nd_list(env->dir, buf, -1));
    assert_status(ND_E_INVALID_ARGUMENT, nd_list(env->dir, NULL, 10));
    assert_status(ND_E_BAD_HANDLE, nd_list(0, buf, sizeof(buf)));
}

static void list_skips_directories_and_specials(void **state)
{
    tst_env *env = *state;
    put(env, "file", "x", 1);
    char path[TST_PATH_MAX];
    assert_int_equal(tst_mkdir(tst_join(path, sizeof(path), env->dir_path, "subdir")), 0);
    put(env, "subdir/inner", "y", 1); /* inside a subdirectory: not listed either */
#ifndef _WIN32
    /* POSIX only: symlinks need a privilege on Windows, FIFOs do not exist there */
    assert_int_equal(tst_symlink("file", tst_join(path, sizeof(path), env->dir_path, "link")), 0);
    assert_int_equal(tst_symlink("nowhere", tst_join(path, sizeof(path), env->dir_path, "dangle")),
                     0);
    assert_int_equal(tst_mkfifo(tst_join(path, sizeof(path), env->dir_path, "fifo")), 0);
    /* names no call could open (invalid UTF-8, a backslash) are not listed */
    put(env, "bad\xFF", "z", 1);
    put(env, "back\\slash", "z", 1);
#endif
    char buf[128];
    assert_int_equal(nd_list(env->dir, buf, sizeof(buf)), 5);
    assert_memory_equal(buf, "file", 5);
}

/* ---- single files ---- */

static void exists_and_length(void **state)
{
    tst_env *env = *state;
    put(env, "empty", "", 0);
    put(env, "five", "12345", 5);
    char path[TST_PATH_MAX];
    assert_int_equal(tst_mkdir(tst_join(path, sizeof(path), env->dir_path, "subdir")), 0);
    assert_status(1, nd_file_exists(env->dir, "empty"));
    assert_status(1, nd_file_exists(env->dir, "five"));
    assert_status(0, nd_file_exists(env->dir, "missing"));
    assert_status(0, nd_file_exists(env->dir, "subdir"));
    int64_t len = -1;
    assert_status(ND_OK, nd_file_length(env->dir, "empty", &len));
    assert_int_equal(len, 0);
    assert_status(ND_OK, nd_file_length(env->dir, "five", &len));
    assert_int_equal(len, 5);
    len = -1;
    assert_status(ND_E_NOT_FOUND, nd_file_length(env->dir, "missing", &len));
    assert_int_equal(len, -1);
    assert_status(ND_E_ACCESS, nd_file_length(env->dir, "subdir", &len));
    /* with the OS error an open of it gives (EISDIR on POSIX), as every other call
     * refusing a directory reports, so bindings raise one exception for it
     * (Python: IsADirectoryError, not PermissionError) */
    assert_status(ND_E_ACCESS, nd_open_input(env->dir, "subdir", 0, &(nd_handle){0}));
    int32_t open_error = nd_last_os_error();
    assert_int_not_equal(open_error, 0);
    assert_status(ND_E_ACCESS, nd_file_length(env->dir, "subdir", &len));
    assert_int_equal(nd_last_os_error(), open_error);
    assert_status(ND_E_INVALID_ARGUMENT, nd_file_length(env->dir, "five", NULL));
    /* lengths past 4 GiB: a sparse file costs no disk */
    assert_int_equal(
        tst_truncate(tst_join(path, sizeof(path), env->dir_path, "big"), ((int64_t)5 << 30) + 7),
        0);
    assert_status(ND_OK, nd_file_length(env->dir, "big", &len));
    assert_true(len == ((int64_t)5 << 30) + 7);
}

static void delete_files(void **state)
{
    tst_env *env = *state;
    put(env, "victim", "x", 1);
    assert_status(ND_OK, nd_delete_file(env->dir, "victim"));
    assert_status(0, nd_file_exists(env->dir, "victim"));
    assert_status(ND_E_NOT_FOUND, nd_delete_file(env->dir, "victim"));
    assert_message_contains("victim");
    /* a subdirectory is not a file to delete */
    char path[TST_PATH_MAX];
    assert_int_equal(tst_mkdir(tst_join(path, sizeof(path), env->dir_path, "subdir")), 0);
    assert_status(ND_E_ACCESS, nd_delete_file(env->dir, "subdir"));
    assert_true(tst_path_exists(path));
    /* deleting a file that is open for reading works on POSIX; the reader keeps its bytes.
     * (Windows: the library must open with FILE_SHARE_DELETE for the same result.) */
    put(env, "open", "abc", 3);
    nd_handle in;
    assert_status(ND_OK, nd_open_input(env->dir, "open", 0, &in));
    assert_status(ND_OK, nd_delete_file(env->dir, "open"));
    char buf[3];
    assert_status(3, nd_read_bytes(in, 0, buf, 3));
    assert_memory_equal(buf, "abc", 3);
    assert_status(ND_OK, nd_close(in));
}

static void read_all(nd_handle in, char *buf, int64_t len)
{
    int64_t got_len = -1;
    assert_status(ND_OK, nd_input_length(in, &got_len));
    assert_int_equal(got_len, len);
    assert_status(len, nd_read_bytes(in, 0, buf, len));
}

static void rename_replaces_atomically(void **state)
{
    tst_env *env = *state;
    static const char old_bytes[] = "old contents, read by those who opened it before";
    static const char new_bytes[] = "NEW";
    put(env, "segments", old_bytes, sizeof(old_bytes));
    nd_handle buffered, mapped, merged;
    assert_status(ND_OK, nd_open_input(env->dir, "segments", 0, &buffered));
    assert_status(ND_OK, nd_open_input(env->dir, "segments", ND_IO_MMAP, &mapped));
    assert_status(ND_OK, nd_open_input(env->dir, "segments", ND_IO_MERGE, &merged));
    nd_handle out;
    assert_status(ND_OK, nd_create_output(env->dir, "pending_segments", 0, &out));
    assert_status(sizeof(new_bytes), nd_write_bytes(out, new_bytes, sizeof(new_bytes)));
    assert_status(ND_OK, nd_output_sync(out));
    assert_status(ND_OK, nd_close(out));
    assert_status(ND_OK, nd_rename(env->dir, "pending_segments", "segments"));
    assert_status(ND_OK, nd_sync_dir(env->dir));
    /* the source name is gone, the target has the new bytes */
    assert_status(0, nd_file_exists(env->dir, "pending_segments"));
    int64_t len = 0;
    assert_status(ND_OK, nd_file_length(env->dir, "segments", &len));
    assert_int_equal(len, sizeof(new_bytes));
    nd_handle fresh;
    char buf[sizeof(old_bytes)];
    assert_status(ND_OK, nd_open_input(env->dir, "segments", 0, &fresh));
    read_all(fresh, buf, sizeof(new_bytes));
    assert_memory_equal(buf, new_bytes, sizeof(new_bytes));
    assert_status(ND_OK, nd_close(fresh));
    /* readers of the old file still read all of the old bytes, whatever their strategy */
    nd_handle olds[3] = {buffered, mapped, merged};
    for (int i = 0; i < 3; i++) {
        memset(buf, 0, sizeof(buf));
        read_all(olds[i], buf, sizeof(old_bytes));
        assert_memory_equal(buf, old_bytes, sizeof(old_bytes));
        assert_status(ND_OK, nd_close(olds[i]));
    }
    /* exactly one file is left */
    assert_int_equal(nd_list(env->dir, NULL, 0), (int64_t)sizeof("segments"));
}

static void rename_errors(void **state)
{
    tst_env *env = *state;
    assert_status(ND_E_NOT_FOUND, nd_rename(env->dir, "missing", "target"));
    assert_status(0, nd_file_exists(env->dir, "target"));
    put(env, "same", "s", 1);
    assert_status(ND_OK, nd_rename(env->dir, "same", "same"));
    assert_status(1, nd_file_exists(env->dir, "same"));
    /* a directory in the way is not replaced */
    char path[TST_PATH_MAX];
    assert_int_equal(tst_mkdir(tst_join(path, sizeof(path), env->dir_path, "subdir")), 0);
    assert_int_not_equal(nd_rename(env->dir, "same", "subdir"), ND_OK);
    assert_status(1, nd_file_exists(env->dir, "same"));
    assert_true(tst_path_exists(path));
}

static void fsync_and_sync_dir(void **state)
{
    tst_env *env = *state;
    put(env, "data", "durable", 7);
    assert_status(ND_OK, nd_fsync(env->dir, "data"));
    assert_status(ND_E_NOT_FOUND, nd_fsync(env->dir, "missing"));
    char path[TST_PATH_MAX];
    assert_int_equal(tst_mkdir(tst_join(path, sizeof(path), env->dir_path, "subdir")), 0);
    assert_status(ND_E_ACCESS, nd_fsync(env->dir, "subdir"));
    assert_status(ND_OK, nd_sync_dir(env->dir));
    /* fsync changes nothing about the bytes */
    int64_t len = 0;
    assert_status(ND_OK, nd_file_length(env->dir, "data", &len));
    assert_int_equal(len, 7);
}

static void closed_dir_leaves_handles_working(void **state)
{
    tst_env *env = *state;
    put(env, "input", "readable after the dir closed", 29);
    nd_handle in, mapped, out, lock;
    assert_status(ND_OK, nd_open_input(env->dir, "input", 0, &in));
    assert_status(ND_OK, nd_open_input(env->dir, "input", ND_IO_MMAP, &mapped));
    assert_status(ND_OK, nd_create_output(env->dir, "output", 0, &out));
    assert_status(ND_OK, nd_lock(env->dir, "write.lock", &lock));
    assert_status(ND_OK, nd_close(env->dir));
    /* the directory itself is gone for every call */
    assert_status(ND_E_BAD_HANDLE, nd_list(env->dir, NULL, 0));
    assert_status(ND_E_BAD_HANDLE, nd_file_exists(env->dir, "input"));
    nd_handle h;
    assert_status(ND_E_BAD_HANDLE, nd_open_input(env->dir, "input", 0, &h));
    assert_status(ND_E_BAD_HANDLE, nd_sync_dir(env->dir));
    /* what it opened still works */
    char buf[29];
    assert_status(29, nd_read_bytes(in, 0, buf, 29));
    assert_memory_equal(buf, "readable after the dir closed", 29);
    nd_handle clone;
    assert_status(ND_OK, nd_input_clone(mapped, &clone));
    assert_status('r', nd_read_byte_buffered(clone));
    assert_status(10, nd_write_bytes(out, "0123456789", 10));
    assert_status(ND_OK, nd_output_sync(out));
    assert_status(ND_OK, nd_close(out));
    char path[TST_PATH_MAX];
    assert_int_equal(tst_file_size(tst_join(path, sizeof(path), env->dir_path, "output")), 10);
    /* the lock is still held against a new directory handle */
    nd_handle dir2, lock2;
    assert_status(ND_OK, nd_open_dir(env->dir_path, 0, &dir2));
    assert_status(ND_E_LOCKED, nd_lock(dir2, "write.lock", &lock2));
    assert_status(ND_OK, nd_close(lock));
    assert_status(ND_OK, nd_lock(dir2, "write.lock", &lock2));
    assert_status(ND_OK, nd_close(lock2));
    assert_status(ND_OK, nd_close(clone));
    assert_status(ND_OK, nd_close(mapped));
    assert_status(ND_OK, nd_close(in));
    env->dir = dir2; /* teardown closes it */
}

#ifndef _WIN32
/* POSIX only: FIFOs do not exist on Windows. Opening one for reading blocks
 * until a writer appears, so the library must refuse it without waiting. */
static int open_fifo_child(void *ctx)
{
    tst_env *env = ctx;
    alarm(5); /* a hang becomes SIGALRM: 128 + 14 */
    nd_handle h;
    int32_t rc = nd_open_input(env->dir, "fifo", 0, &h);
    if (rc != ND_E_ACCESS)
        return 10 + (rc < 0 ? -rc : 0);
    rc = nd_fsync(env->dir, "fifo");
    if (rc != ND_E_ACCESS)
        return 30 + (rc < 0 ? -rc : 0);
    if (nd_file_exists(env->dir, "fifo") != 0)
        return 50;
    int64_t len;
    if (nd_file_length(env->dir, "fifo", &len) != ND_E_ACCESS)
        return 51;
    return 0;
}

static void fifos_are_refused_without_blocking(void **state)
{
    tst_env *env = *state;
    char path[TST_PATH_MAX];
    assert_int_equal(tst_mkfifo(tst_join(path, sizeof(path), env->dir_path, "fifo")), 0);
    int rc = tst_run_child(open_fifo_child, env);
    if (rc == 128 + SIGALRM)
        fail_msg(
            "opening a FIFO through nativedir blocked (no O_NONBLOCK before the file type check)");
    assert_int_equal(rc, 0);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(open_dir_arguments, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(open_dir_with_and_without_create, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(relative_paths_bind_at_open, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(list_is_sorted_by_bytes, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(list_cap_protocol, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(list_skips_directories_and_specials, tst_setup,
                                        tst_teardown),
        cmocka_unit_test_setup_teardown(exists_and_length, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(delete_files, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(rename_replaces_atomically, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(rename_errors, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(fsync_and_sync_dir, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(closed_dir_leaves_handles_working, tst_setup, tst_teardown),
#ifndef _WIN32
        cmocka_unit_test_setup_teardown(fifos_are_refused_without_blocking, tst_setup,
                                        tst_teardown),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
