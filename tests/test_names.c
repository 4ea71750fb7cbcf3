/*
 * test_names.c - a name is exactly one path component of the open directory:
 * every call that takes a name refuses the rest, symbolic links are never
 * followed, and nothing outside the directory is ever read, written, created
 * or deleted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

/* Names every call must refuse with ND_E_INVALID_NAME. The absolute path is
 * only ever given to calls that cannot modify it: if the library failed to
 * refuse it, a write-type call must hit our own victim file instead. */
static const char *const bad_names[] = {
    "",
    ".",
    "..",
    "a/b",
    "../x",
    "a\\b",
    "\\",
    "/",
    "x/",
    "./x",
    "\xC0\xAF",     /* overlong '/' */
    "\xE0\x80\xAF", /* overlong '/', three bytes */
    "a\x80"
    "b",                    /* lone continuation byte */
    "\xED\xA0\x80",         /* UTF-16 surrogate U+D800 */
    "\xED\xBF\xBF",         /* surrogate U+DFFF */
    "\xE2\x82",             /* truncated three-byte sequence */
    "ab\xF0\x9F\x98",       /* truncated four-byte sequence at the end */
    "\xF4\x90\x80\x80",     /* above U+10FFFF */
    "\xF8\x88\x80\x80\x80", /* five-byte form */
    "\xFF",
};

static void long_name(char *buf, size_t len)
{
    memset(buf, 'n', len);
    buf[len] = '\0';
}

/* Checks that every name-taking call refuses `name` with `want`, and creates nothing. */
static void refused_everywhere(tst_env *env, const char *name, int32_t want, int destructive)
{
    nd_handle h = 77;
    int64_t len = -5;
    assert_status(want, nd_open_input(env->dir, name, 0, &h));
    assert_int_equal(h, 0);
    assert_status(want, nd_open_input(env->dir, name, ND_IO_MMAP, &h));
    assert_status(want, nd_open_input(env->dir, name, ND_IO_MERGE, &h));
    assert_status(want, nd_file_exists(env->dir, name));
    assert_status(want, nd_file_length(env->dir, name, &len));
    assert_int_equal(len, -5);
    assert_status(want, nd_fsync(env->dir, name));
    if (destructive) {
        h = 77;
        assert_status(want, nd_create_output(env->dir, name, 0, &h));
        assert_int_equal(h, 0);
        assert_status(want, nd_create_output(env->dir, name, ND_IO_OVERWRITE, &h));
        assert_status(want, nd_create_output(env->dir, name, ND_IO_OVERWRITE | ND_IO_MERGE, &h));
        assert_status(want, nd_delete_file(env->dir, name));
        assert_status(want, nd_rename(env->dir, name, "fine"));
        assert_status(want, nd_rename(env->dir, "fine", name));
        h = 77;
        assert_status(want, nd_lock(env->dir, name, &h));
        assert_int_equal(h, 0);
    }
}

static void bad_names_are_refused(void **state)
{
    tst_env *env = *state;
    /* a real file for rename(name -> "fine") and rename("fine" -> name) to find */
    char path[TST_PATH_MAX];
    assert_int_equal(tst_write_file(tst_join(path, sizeof(path), env->dir_path, "fine"), "ok", 2),
                     0);
    for (size_t i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++) {
        refused_everywhere(env, bad_names[i], ND_E_INVALID_NAME, 1);
        assert_message_contains("invalid name");
    }
    char name[300];
    long_name(name, 256);
    refused_everywhere(env, name, ND_E_INVALID_NAME, 1);
    assert_message_contains("255");
    long_name(name, 299);
    refused_everywhere(env, name, ND_E_INVALID_NAME, 1);
    /* nothing was created, and "fine" is still there untouched */
    assert_int_equal(nd_list(env->dir, NULL, 0), (int64_t)sizeof("fine"));
    assert_int_equal(tst_file_size(path), 2);
}

#ifdef _WIN32
#  define TST_NAME_TOO_LONG 206 /* ERROR_FILENAME_EXCED_RANGE */
#else
#  include <errno.h>
#  define TST_NAME_TOO_LONG ENAMETOOLONG
#endif

/* A name over 255 bytes is what the OS reports as ENAMETOOLONG: the library's own check
 * refuses it first, and must leave that same OS error, so a binding reports it as the
 * OS call it replaces would (Python's OSError(ENAMETOOLONG)); other invalid names are the
 * library's own rule and carry none. */
static void too_long_names_carry_the_os_error(void **state)
{
    tst_env *env = *state;
    char name[300];
    nd_handle h = 0;
    int64_t len = 0;
    for (size_t n = 256; n <= 299; n += 43) {
        long_name(name, n);
        int32_t got[] = {
            nd_open_input(env->dir, name, 0, &h),
            nd_file_exists(env->dir, name),
            nd_file_length(env->dir, name, &len),
            nd_delete_file(env->dir, name),
            nd_create_output(env->dir, name, ND_IO_OVERWRITE, &h),
            nd_rename(env->dir, name, "fine"),
            nd_rename(env->dir, "fine", name),
            nd_fsync(env->dir, name),
            nd_lock(env->dir, name, &h),
        };
        for (size_t i = 0; i < sizeof(got) / sizeof(got[0]); i++)
            assert_int_equal(got[i], ND_E_INVALID_NAME);
        /* each call in turn: the OS error is the one of that call */
        assert_status(ND_E_INVALID_NAME, nd_file_length(env->dir, name, &len));
        assert_int_equal(nd_last_os_error(), TST_NAME_TOO_LONG);
        assert_message_contains("255");
        assert_status(ND_E_INVALID_NAME, nd_rename(env->dir, "fine", name));
        assert_int_equal(nd_last_os_error(), TST_NAME_TOO_LONG);
    }
    assert_status(ND_E_INVALID_NAME, nd_file_length(env->dir, "a/b", &len));
    assert_int_equal(nd_last_os_error(), 0);
}

static void absolute_paths_are_refused(void **state)
{
    tst_env *env = *state;
    /* read-type calls may see the real /etc/passwd; refusing it is the point */
    refused_everywhere(env, "/etc/passwd", ND_E_INVALID_NAME, 0);
    /* write-type calls get an absolute path to a victim of our own */
    char victim[TST_PATH_MAX];
    tst_join(victim, sizeof(victim), env->root, "victim");
    assert_int_equal(tst_write_file(victim, "precious", 8), 0);
    char fine[TST_PATH_MAX];
    assert_int_equal(tst_write_file(tst_join(fine, sizeof(fine), env->dir_path, "fine"), "ok", 2),
                     0);
    refused_everywhere(env, victim, ND_E_INVALID_NAME, 1);
    size_t len = 0;
    uint8_t *data = tst_read_file(victim, &len);
    assert_non_null(data);
    assert_int_equal(len, 8);
    assert_memory_equal(data, "precious", 8);
    free(data);
    /* "../x" must not have made root/x either */
    char x[TST_PATH_MAX];
    assert_false(tst_path_exists(tst_join(x, sizeof(x), env->root, "x")));
}

static void null_names_are_invalid_arguments(void **state)
{
    tst_env *env = *state;
    char fine[TST_PATH_MAX];
    assert_int_equal(tst_write_file(tst_join(fine, sizeof(fine), env->dir_path, "fine"), "ok", 2),
                     0);
    refused_everywhere(env, NULL, ND_E_INVALID_ARGUMENT, 1);
}

static void longest_name_is_accepted(void **state)
{
    tst_env *env = *state;
    char name[256], other[256];
    long_name(name, 255);
    long_name(other, 255);
    other[0] = 'o';
    nd_handle out, in, lock;
    assert_status(ND_OK, nd_create_output(env->dir, name, 0, &out));
    assert_status(1, nd_write_bytes(out, "z", 1));
    assert_status(ND_OK, nd_close(out));
    assert_status(1, nd_file_exists(env->dir, name));
    int64_t len = 0;
    assert_status(ND_OK, nd_file_length(env->dir, name, &len));
    assert_int_equal(len, 1);
    assert_status(ND_OK, nd_fsync(env->dir, name));
    assert_status(ND_OK, nd_open_input(env->dir, name, 0, &in));
    assert_status('z', nd_read_byte_buffered(in));
    assert_status(ND_OK, nd_close(in));
    assert_int_equal(nd_list(env->dir, NULL, 0), 256);
    /* replacing a file with the longest name (whatever temporary name that takes inside) */
    assert_status(ND_OK, nd_create_output(env->dir, name, ND_IO_OVERWRITE, &out));
    assert_status(1, nd_write_bytes(out, "z", 1));
    assert_status(ND_OK, nd_close(out));
    assert_status(ND_OK, nd_create_output(env->dir, name, ND_IO_OVERWRITE | ND_IO_MERGE, &out));
    assert_status(1, nd_write_bytes(out, "z", 1));
    assert_status(ND_OK, nd_close(out));
    assert_int_equal(nd_list(env->dir, NULL, 0), 256);
    assert_status(ND_OK, nd_rename(env->dir, name, other));
    assert_status(0, nd_file_exists(env->dir, name));
    assert_status(ND_OK, nd_lock(env->dir, name, &lock));
    assert_status(ND_OK, nd_close(lock));
    assert_status(ND_OK, nd_delete_file(env->dir, name));
    assert_status(ND_OK, nd_delete_file(env->dir, other));
    assert_int_equal(nd_list(env->dir, NULL, 0), 0);
}

static void unicode_names_round_trip(void **state)
{
    tst_env *env = *state;
    static const char *const good[] = {
        "caf\xC3\xA9",              /* é, two bytes */
        "\xE6\x97\xA5\xE6\x9C\xAC", /* 日本, three bytes each */
        "\xF0\x9F\x98\x80.si",      /* U+1F600, four bytes */
        "\xF4\x8F\xBF\xBF",         /* U+10FFFF, the last code point */
        "\xEF\xBF\xBD",             /* U+FFFD */
        "_0.cfs",
        "segments_1",
        ".hidden",
#ifndef _WIN32
        "...", /* Windows strips trailing dots, so it refuses this name (see below) */
#endif
        "a b",
    };
    size_t total = 0;
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        nd_handle out;
        assert_status(ND_OK, nd_create_output(env->dir, good[i], 0, &out));
        assert_status(ND_OK, nd_close(out));
        assert_status(1, nd_file_exists(env->dir, good[i]));
        total += strlen(good[i]) + 1;
        /* the OS sees exactly these bytes: no normalisation, no escaping */
        char path[TST_PATH_MAX];
        assert_true(tst_path_exists(tst_join(path, sizeof(path), env->dir_path, good[i])));
    }
    assert_int_equal(nd_list(env->dir, NULL, 0), (int64_t)total);
}

#ifdef _WIN32
static void windows_only_names_are_refused(void **state)
{
    tst_env *env = *state;
    static const char *const win_bad[] = {"a:b",  "CON",      "con.txt",   "NUL",
                                          "LPT1", "COM9.log", "trailing.", "trailing ",
                                          "q?",   "star*",    "pipe|",     "..."};
    for (size_t i = 0; i < sizeof(win_bad) / sizeof(win_bad[0]); i++)
        refused_everywhere(env, win_bad[i], ND_E_INVALID_NAME, 1);
}
#else
static void colons_are_ordinary_on_posix(void **state)
{
    /* ':' names an NTFS stream on Windows and is refused there (see the _WIN32 case);
     * POSIX file systems store it as an ordinary byte */
    tst_env *env = *state;
    nd_handle out;
    assert_status(ND_OK, nd_create_output(env->dir, "a:b", 0, &out));
    assert_status(ND_OK, nd_close(out));
    assert_status(1, nd_file_exists(env->dir, "a:b"));
    assert_status(ND_OK, nd_create_output(env->dir, "CON", 0, &out));
    assert_status(ND_OK, nd_close(out));
}

/* ---- symbolic links: never followed, nothing outside touched ---- */

/* POSIX only: creating symlinks on Windows needs a privilege the test user lacks */
typedef struct {
    char outside[TST_PATH_MAX];
    char secret[TST_PATH_MAX];
    char newfile[TST_PATH_MAX];
    int64_t secret_mtime;
} outside_world;

static const char secret_bytes[] = "outside the directory: never read, never written";

static void make_outside(tst_env *env, outside_world *w)
{
    tst_join(w->outside, sizeof(w->outside), env->root, "outside");
    assert_int_equal(tst_mkdir(w->outside), 0);
    tst_join(w->secret, sizeof(w->secret), w->outside, "secret");
    tst_join(w->newfile, sizeof(w->newfile), w->outside, "newfile");
    assert_int_equal(tst_write_file(w->secret, secret_bytes, sizeof(secret_bytes)), 0);
    /* an old, exact mtime: any write, truncate or re-create would change it */
    assert_int_equal(tst_set_mtime(w->secret, 1000000000), 0);
    w->secret_mtime = tst_mtime_ns(w->secret);
    assert_true(w->secret_mtime == (int64_t)1000000000 * 1000000000);
    char link[TST_PATH_MAX];
    /* relative and absolute links to the file, a dangling one into outside/, one to the dir */
    assert_int_equal(
        tst_symlink("../outside/secret", tst_join(link, sizeof(link), env->dir_path, "rel")), 0);
    assert_int_equal(tst_symlink(w->secret, tst_join(link, sizeof(link), env->dir_path, "abs")), 0);
    assert_int_equal(
        tst_symlink(w->newfile, tst_join(link, sizeof(link), env->dir_path, "dangling")), 0);
    assert_int_equal(
        tst_symlink(w->outside, tst_join(link, sizeof(link), env->dir_path, "dirlink")), 0);
}

static void outside_untouched(outside_world *w)
{
    size_t len = 0;
    uint8_t *data = tst_read_file(w->secret, &len);
    assert_non_null(data);
    assert_int_equal(len, sizeof(secret_bytes));
    assert_memory_equal(data, secret_bytes, sizeof(secret_bytes));
    free(data);
    assert_true(tst_mtime_ns(w->secret) == w->secret_mtime);
    assert_false(tst_path_exists(w->newfile));
}

static void symlinks_are_never_followed(void **state)
{
    tst_env *env = *state;
    outside_world w;
    make_outside(env, &w);
    static const char *const links[] = {"rel", "abs", "dangling", "dirlink"};
    static const uint32_t read_flags[] = {0, ND_IO_MMAP, ND_IO_MERGE, ND_IO_RANDOM | ND_IO_PRELOAD,
                                          ND_IO_MMAP | ND_IO_PRELOAD};
    for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
        const char *name = links[i];
        nd_handle h = 9;
        int64_t len = -5;
        for (size_t f = 0; f < sizeof(read_flags) / sizeof(read_flags[0]); f++) {
            assert_status(ND_E_ACCESS, nd_open_input(env->dir, name, read_flags[f], &h));
            assert_int_equal(h, 0);
        }
        /* a link is not a regular file of the directory */
        assert_status(0, nd_file_exists(env->dir, name));
        assert_status(ND_E_ACCESS, nd_file_length(env->dir, name, &len));
        assert_int_equal(len, -5);
        assert_status(ND_E_ACCESS, nd_fsync(env->dir, name));
        /* without OVERWRITE the link's own name exists */
        assert_status(ND_E_EXISTS, nd_create_output(env->dir, name, 0, &h));
        assert_status(ND_E_EXISTS, nd_create_output(env->dir, name, ND_IO_MERGE, &h));
        assert_status(ND_E_ACCESS, nd_lock(env->dir, name, &h));
        assert_int_equal(h, 0);
        outside_untouched(&w);
    }
    /* the listing shows no links */
    assert_int_equal(nd_list(env->dir, NULL, 0), 0);
    /* OVERWRITE may refuse a link (O_NOFOLLOW) or replace the link itself with a new
     * regular file; it may never write through it */
    for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
        for (int merge = 0; merge < 2; merge++) {
            nd_handle h;
            uint32_t flags = ND_IO_OVERWRITE | (merge ? ND_IO_MERGE : 0);
            int32_t rc = nd_create_output(env->dir, links[i], flags, &h);
            if (rc == ND_OK) {
                assert_status(3, nd_write_bytes(h, "new", 3));
                assert_status(ND_OK, nd_close(h));
                int64_t len = 0;
                assert_status(ND_OK, nd_file_length(env->dir, links[i], &len));
                assert_int_equal(len, 3);
            } else {
                assert_status(ND_E_ACCESS, rc);
            }
            outside_untouched(&w);
        }
    }
    outside_untouched(&w);
}

static void symlinks_are_renamed_and_deleted_themselves(void **state)
{
    tst_env *env = *state;
    outside_world w;
    make_outside(env, &w);
    char path[TST_PATH_MAX];
    /* rename moves the link, not its target */
    assert_status(ND_OK, nd_rename(env->dir, "abs", "moved"));
    assert_true(tst_path_exists(tst_join(path, sizeof(path), env->dir_path, "moved")));
    outside_untouched(&w);
    /* renaming a regular file over a link replaces the link, never writes through it */
    assert_int_equal(tst_write_file(tst_join(path, sizeof(path), env->dir_path, "plain"), "new", 3),
                     0);
    assert_status(ND_OK, nd_rename(env->dir, "plain", "rel"));
    int64_t len = 0;
    assert_status(ND_OK, nd_file_length(env->dir, "rel", &len));
    assert_int_equal(len, 3);
    outside_untouched(&w);
    /* delete removes the link itself */
    assert_status(ND_OK, nd_delete_file(env->dir, "moved"));
    assert_status(ND_OK, nd_delete_file(env->dir, "dangling"));
    assert_false(tst_path_exists(tst_join(path, sizeof(path), env->dir_path, "moved")));
    assert_false(tst_path_exists(tst_join(path, sizeof(path), env->dir_path, "dangling")));
    outside_untouched(&w);
    /* a link to a directory is not a directory of ours to delete into */
    assert_int_not_equal(nd_delete_file(env->dir, "dirlink/secret"), ND_OK);
    outside_untouched(&w);
}

static void opening_dir_through_symlinked_parent_stays_bound(void **state)
{
    /* nd_open_dir itself takes a path (it may contain links: that is the user's
     * choice); once open, calls are relative to the opened directory even if the
     * path is later swapped for a link to somewhere else */
    tst_env *env = *state;
    outside_world w;
    make_outside(env, &w);
    char moved[TST_PATH_MAX];
    tst_join(moved, sizeof(moved), env->root, "d-moved");
    assert_int_equal(rename(env->dir_path, moved), 0);
    assert_int_equal(tst_symlink(w.outside, env->dir_path), 0);
    nd_handle out;
    assert_status(ND_OK, nd_create_output(env->dir, "secret", ND_IO_OVERWRITE, &out));
    assert_status(3, nd_write_bytes(out, "new", 3));
    assert_status(ND_OK, nd_close(out));
    outside_untouched(&w);
    char path[TST_PATH_MAX];
    assert_int_equal(tst_file_size(tst_join(path, sizeof(path), moved, "secret")), 3);
    /* teardown removes root, which holds both */
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(bad_names_are_refused, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(too_long_names_carry_the_os_error, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(absolute_paths_are_refused, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(null_names_are_invalid_arguments, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(longest_name_is_accepted, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(unicode_names_round_trip, tst_setup, tst_teardown),
#ifdef _WIN32
        cmocka_unit_test_setup_teardown(windows_only_names_are_refused, tst_setup, tst_teardown),
#else
        cmocka_unit_test_setup_teardown(colons_are_ordinary_on_posix, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(symlinks_are_never_followed, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(symlinks_are_renamed_and_deleted_themselves, tst_setup,
                                        tst_teardown),
        cmocka_unit_test_setup_teardown(opening_dir_through_symlinked_parent_stays_bound, tst_setup,
                                        tst_teardown),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
