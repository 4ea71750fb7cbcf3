/*
 * test_model.c - the crash model's own rules, on logs built by hand: each
 * sequence has a persisted result known from POSIX, checked at the cut after
 * each step. Among them the ones a data-only fault injector (LazyFS) cannot
 * tell apart: the same run with and without the directory's fsync.
 */
#ifndef _GNU_SOURCE
#  define _GNU_SOURCE /* asprintf */
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "model.h"

#ifndef RENAME_EXCHANGE
#  define RENAME_EXCHANGE (1 << 1)
#endif

/* a model fed op by op, so each test can look at the cut after any step */
typedef struct {
    cm_log *log;
    cm_model *m;
    size_t applied;
} run;

static run start(int mode)
{
    run r = {cm_log_new(), cm_model_new(mode), 0};
    return r;
}

static void finish(run *r)
{
    cm_model_free(r->m);
    cm_log_free(r->log);
}

static void op(run *r, uint32_t type, uint32_t flags, uint64_t a, uint64_t b, const char *n1,
               const char *n2, const void *data, size_t len)
{
    cm_log_add(r->log, type, flags, a, b, n1, n2, data, len);
    int rc = cm_apply(r->m, cm_log_op(r->log, r->applied++));
    if (rc != 0)
        fail_msg("apply: %s", cm_model_error(r->m));
}

#define CREATE(r, parent, ino, name)                                                               \
  op(r, CL_CREATE, CL_KIND_FILE, parent, ino, name, NULL, NULL, 0)
#define MKDIR(r, parent, ino, name) op(r, CL_CREATE, CL_KIND_DIR, parent, ino, name, NULL, NULL, 0)
#define WRITE(r, ino, off, s) op(r, CL_WRITE, 0, ino, off, NULL, NULL, s, strlen(s))
#define FSYNC(r, ino) op(r, CL_FSYNC, 0, ino, 0, NULL, NULL, NULL, 0)
#define FDATASYNC(r, ino) op(r, CL_FSYNC, 1, ino, 0, NULL, NULL, NULL, 0)
#define FSYNCDIR(r, ino) op(r, CL_FSYNCDIR, 0, ino, 0, NULL, NULL, NULL, 0)
#define RENAME(r, from, to) op(r, CL_RENAME, 0, CL_ROOT, CL_ROOT, from, to, NULL, 0)
#define UNLINK(r, name) op(r, CL_UNLINK, 0, CL_ROOT, 0, name, NULL, NULL, 0)
#define TRUNCATE(r, ino, size) op(r, CL_TRUNCATE, 0, ino, size, NULL, NULL, NULL, 0)

/* the durable content of path at a cut now: NULL if absent */
static char *persisted(run *r, const char *path)
{
    cm_view v = {r->m, 0, 0};
    uint64_t ino = cm_view_resolve(&v, path);
    if (ino == 0)
        return NULL;
    size_t len;
    const uint8_t *d = cm_view_data(&v, ino, &len);
    char *s = malloc(len + 1);
    memcpy(s, d, len);
    s[len] = '\0';
    return s;
}

static void expect(run *r, const char *path, const char *content)
{
    char *got = persisted(r, path);
    if (content == NULL) {
        if (got != NULL)
            fail_msg("'%s' persisted as \"%s\", expected absent", path, got);
        return;
    }
    if (got == NULL)
        fail_msg("'%s' absent, expected \"%s\"", path, content);
    if (strcmp(got, content) != 0)
        fail_msg("'%s' persisted as \"%s\", expected \"%s\"", path, got, content);
    free(got);
}

/* create, write, fsync the file; the directory is never fsynced: the file is gone */
static void test_fsynced_file_without_dir_fsync_vanishes(void **state)
{
    (void)state;
    run r = start(CM_STRICT);
    CREATE(&r, CL_ROOT, 10, "f");
    WRITE(&r, 10, 0, "data");
    FSYNC(&r, 10);
    expect(&r, "f", NULL);
    finish(&r);
}

/* the same run with the directory's fsync: the file and its bytes persist */
static void test_dir_fsync_is_what_keeps_the_name(void **state)
{
    (void)state;
    /* one run, two cuts: before and after the directory's fsync (a
     * data-only fault injector would see the two cuts alike) */
    run r = start(CM_STRICT);
    CREATE(&r, CL_ROOT, 10, "f");
    WRITE(&r, 10, 0, "data");
    FSYNC(&r, 10);
    expect(&r, "f", NULL);
    FSYNCDIR(&r, CL_ROOT);
    expect(&r, "f", "data");
    finish(&r);

    /* and the fsync of the directory alone keeps the name, not the bytes */
    run s = start(CM_STRICT);
    CREATE(&s, CL_ROOT, 10, "f");
    WRITE(&s, 10, 0, "data");
    FSYNCDIR(&s, CL_ROOT);
    expect(&s, "f", "");
    FSYNC(&s, 10);
    expect(&s, "f", "data");
    finish(&s);
}

/* unsynced bytes after synced ones are lost; the synced ones stay */
static void test_unsynced_writes_and_sizes_are_volatile(void **state)
{
    (void)state;
    run r = start(CM_STRICT);
    CREATE(&r, CL_ROOT, 10, "f");
    WRITE(&r, 10, 0, "0123456789");
    FSYNC(&r, 10);
    FSYNCDIR(&r, CL_ROOT);
    WRITE(&r, 10, 10, "abc");
    WRITE(&r, 10, 0, "X");
    expect(&r, "f", "0123456789");
    TRUNCATE(&r, 10, 4);
    expect(&r, "f", "0123456789");
    FDATASYNC(&r, 10);
    expect(&r, "f", "X123");
    TRUNCATE(&r, 10, 6); /* an extension is volatile too */
    expect(&r, "f", "X123");
    FSYNC(&r, 10);
    char *got = persisted(&r, "f");
    assert_non_null(got);
    assert_memory_equal(got, "X123\0\0", 6);
    free(got);
    finish(&r);
}

/* rename over an old file, no directory fsync: the old name keeps the old bytes */
static void test_rename_over_without_dir_fsync_keeps_old(void **state)
{
    (void)state;
    run r = start(CM_STRICT);
    CREATE(&r, CL_ROOT, 10, "a");
    WRITE(&r, 10, 0, "old");
    FSYNC(&r, 10);
    FSYNCDIR(&r, CL_ROOT);
    CREATE(&r, CL_ROOT, 11, "a.tmp");
    WRITE(&r, 11, 0, "new");
    FSYNC(&r, 11);
    RENAME(&r, "a.tmp", "a");
    expect(&r, "a", "old");
    expect(&r, "a.tmp", NULL); /* its create was never made durable either */
    FSYNCDIR(&r, CL_ROOT);
    expect(&r, "a", "new");
    expect(&r, "a.tmp", NULL);
    finish(&r);
}

/* rename of an unsynced file made durable by the directory's fsync: the name
 * persists with no bytes (the classic zero-length file after a crash) */
static void test_rename_of_unsynced_file_persists_empty(void **state)
{
    (void)state;
    run r = start(CM_STRICT);
    CREATE(&r, CL_ROOT, 10, "a");
    WRITE(&r, 10, 0, "old");
    FSYNC(&r, 10);
    FSYNCDIR(&r, CL_ROOT);
    CREATE(&r, CL_ROOT, 11, "a.tmp");
    WRITE(&r, 11, 0, "new");
    RENAME(&r, "a.tmp", "a");
    FSYNCDIR(&r, CL_ROOT);
    expect(&r, "a", "");
    finish(&r);
}

/* fsync of a file persists its bytes, not its (new) name */
static void test_file_fsync_does_not_persist_a_rename(void **state)
{
    (void)state;
    run r = start(CM_STRICT);
    CREATE(&r, CL_ROOT, 10, "a");
    WRITE(&r, 10, 0, "v1");
    FSYNC(&r, 10);
    FSYNCDIR(&r, CL_ROOT);
    RENAME(&r, "a", "b");
    WRITE(&r, 10, 0, "v2");
    FSYNC(&r, 10);
    expect(&r, "a", "v2"); /* the bytes are the inode's, whatever it is called */
    expect(&r, "b", NULL);
    FSYNCDIR(&r, CL_ROOT);
    expect(&r, "a", NULL);
    expect(&r, "b", "v2");
    finish(&r);
}

/* an unlink is volatile until the directory's fsync */
static void test_unlink_needs_dir_fsync(void **state)
{
    (void)state;
    run r = start(CM_STRICT);
    CREATE(&r, CL_ROOT, 10, "a");
    WRITE(&r, 10, 0, "x");
    FSYNC(&r, 10);
    FSYNCDIR(&r, CL_ROOT);
    UNLINK(&r, "a");
    expect(&r, "a", "x");
    FSYNCDIR(&r, CL_ROOT);
    expect(&r, "a", NULL);
    finish(&r);
}

/* hard links name one inode: bytes synced through it show under every name */
static void test_hard_links_share_an_inode(void **state)
{
    (void)state;
    run r = start(CM_STRICT);
    CREATE(&r, CL_ROOT, 10, "a");
    op(&r, CL_LINK, 0, 10, CL_ROOT, "b", NULL, NULL, 0);
    FSYNCDIR(&r, CL_ROOT);
    UNLINK(&r, "a");
    WRITE(&r, 10, 0, "shared");
    FSYNC(&r, 10);
    expect(&r, "a", "shared"); /* the unlink is not durable: both names remain */
    expect(&r, "b", "shared");
    FSYNCDIR(&r, CL_ROOT);
    expect(&r, "a", NULL);
    expect(&r, "b", "shared");
    finish(&r);
}

/* a file replaced by a rename but still open: writing and syncing it changes
 * the old inode only, which the durable old name may still name */
static void test_replaced_inode_written_through_an_open_handle(void **state)
{
    (void)state;
    run r = start(CM_STRICT);
    CREATE(&r, CL_ROOT, 10, "a");
    WRITE(&r, 10, 0, "old");
    FSYNC(&r, 10);
    FSYNCDIR(&r, CL_ROOT);
    CREATE(&r, CL_ROOT, 11, "t");
    WRITE(&r, 11, 0, "new");
    FSYNC(&r, 11);
    RENAME(&r, "t", "a");
    WRITE(&r, 10, 0, "OLD"); /* through a descriptor opened before the rename */
    FSYNC(&r, 10);
    expect(&r, "a", "OLD");
    FSYNCDIR(&r, CL_ROOT);
    expect(&r, "a", "new");
    finish(&r);
}

/* RENAME_EXCHANGE swaps which inode each name holds, durable with the directory */
static void test_rename_exchange(void **state)
{
    (void)state;
    run r = start(CM_STRICT);
    CREATE(&r, CL_ROOT, 10, "a");
    WRITE(&r, 10, 0, "A");
    FSYNC(&r, 10);
    CREATE(&r, CL_ROOT, 11, "b");
    WRITE(&r, 11, 0, "B");
    FSYNC(&r, 11);
    FSYNCDIR(&r, CL_ROOT);
    op(&r, CL_RENAME, RENAME_EXCHANGE, CL_ROOT, CL_ROOT, "a", "b", NULL, 0);
    expect(&r, "a", "A");
    expect(&r, "b", "B");
    FSYNCDIR(&r, CL_ROOT);
    expect(&r, "a", "B");
    expect(&r, "b", "A");
    finish(&r);
}

/* a subdirectory and its entries persist only with both directories' fsyncs */
static void test_subdirectory_needs_its_parent_fsynced(void **state)
{
    (void)state;
    run r = start(CM_STRICT);
    MKDIR(&r, CL_ROOT, 10, "d");
    op(&r, CL_CREATE, CL_KIND_FILE, 10, 11, "f", NULL, NULL, 0);
    WRITE(&r, 11, 0, "in d");
    FSYNC(&r, 11);
    FSYNCDIR(&r, 10);
    expect(&r, "d/f", NULL); /* d itself is not durable in the root */
    FSYNCDIR(&r, CL_ROOT);
    expect(&r, "d/f", "in d");
    /* a rename between directories: each side durable with its own fsync */
    op(&r, CL_RENAME, 0, 10, CL_ROOT, "f", "g", NULL, 0);
    FSYNCDIR(&r, CL_ROOT);
    expect(&r, "d/f", "in d"); /* the source side is not durable yet */
    expect(&r, "g", "in d");
    FSYNCDIR(&r, 10);
    expect(&r, "d/f", NULL);
    expect(&r, "g", "in d");
    finish(&r);
}

/* the journaled model: any fsync commits every directory change so far */
static void test_journaled_model_commits_names_with_any_fsync(void **state)
{
    (void)state;
    run r = start(CM_JOURNALED);
    CREATE(&r, CL_ROOT, 10, "f");
    WRITE(&r, 10, 0, "data");
    expect(&r, "f", NULL);
    FSYNC(&r, 10);
    expect(&r, "f", "data"); /* absent under CM_STRICT (first test) */
    CREATE(&r, CL_ROOT, 11, "g");
    WRITE(&r, 11, 0, "gg");
    FSYNC(&r, 10); /* another file's fsync commits g's name, not g's bytes */
    expect(&r, "g", "");
    finish(&r);
}

/* torn writes: a prefix of the last unsynced write, ending on a 512-byte
 * boundary of the file, on top of the durable bytes */
static void test_torn_last_write(void **state)
{
    (void)state;
    run r = start(CM_STRICT);
    CREATE(&r, CL_ROOT, 10, "f");
    FSYNCDIR(&r, CL_ROOT);
    char big[2001];
    for (int i = 0; i < 2000; i++)
        big[i] = (char)('a' + i % 26);
    big[2000] = '\0';
    WRITE(&r, 10, 0, big);
    uint64_t inos[8], ends[8];
    size_t n = cm_torn_points(r.m, inos, ends, 8);
    assert_int_equal(n, 2);
    assert_int_equal(inos[0], 10);
    assert_int_equal(ends[0], 512);
    assert_int_equal(ends[1], 1536);
    for (size_t i = 0; i < n; i++) {
        cm_view v = {r.m, inos[i], ends[i]};
        size_t len;
        const uint8_t *d = cm_view_data(&v, cm_view_resolve(&v, "f"), &len);
        assert_int_equal(len, ends[i]);
        assert_memory_equal(d, big, ends[i]);
    }
    expect(&r, "f", ""); /* untorn: the write is lost whole */
    /* a write inside one sector cannot tear */
    FSYNC(&r, 10);
    WRITE(&r, 10, 100, "short write inside the first sector");
    assert_int_equal(cm_torn_points(r.m, inos, ends, 8), 0);
    /* off 100, 1000 bytes: boundaries 512 and 1024 */
    WRITE(&r, 10, 100, big + 1000);
    n = cm_torn_points(r.m, inos, ends, 8);
    assert_int_equal(n, 2);
    assert_int_equal(ends[0], 512);
    assert_int_equal(ends[1], 1024);
    cm_view v = {r.m, 10, 512};
    size_t len;
    const uint8_t *d = cm_view_data(&v, 10, &len);
    assert_int_equal(len, 2000);                   /* the durable length stays */
    assert_memory_equal(d, big, 100);              /* durable bytes before the write */
    assert_memory_equal(d + 100, big + 1000, 412); /* the torn prefix */
    assert_memory_equal(d + 512, big + 512, 1488); /* durable bytes after it */
    /* fsync leaves nothing to tear */
    FSYNC(&r, 10);
    assert_int_equal(cm_torn_points(r.m, inos, ends, 8), 0);
    finish(&r);
}

/* a file the durable namespace does not name has nothing to tear */
static void test_torn_only_where_a_name_persists(void **state)
{
    (void)state;
    run r = start(CM_STRICT);
    CREATE(&r, CL_ROOT, 10, "f");
    char big[1500];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    WRITE(&r, 10, 0, big);
    uint64_t inos[4], ends[4];
    assert_int_equal(cm_torn_points(r.m, inos, ends, 4), 0);
    FSYNCDIR(&r, CL_ROOT);
    assert_int_equal(cm_torn_points(r.m, inos, ends, 4), 2);
    TRUNCATE(&r, 10, 10); /* the last change is no longer a write */
    assert_int_equal(cm_torn_points(r.m, inos, ends, 4), 0);
    finish(&r);
}

/* inconsistent logs are refused, never modelled */
static void test_inconsistent_logs_are_refused(void **state)
{
    (void)state;
    cm_log *log = cm_log_new();
    cm_model *m = cm_model_new(CM_STRICT);
    cm_log_add(log, CL_WRITE, 0, 99, 0, NULL, NULL, "x", 1);
    assert_int_equal(cm_apply(m, cm_log_op(log, 0)), -1);
    assert_non_null(strstr(cm_model_error(m), "99"));
    cm_log_add(log, CL_UNLINK, 0, CL_ROOT, 0, "nope", NULL, NULL, 0);
    assert_int_equal(cm_apply(m, cm_log_op(log, 1)), -1);
    cm_log_add(log, CL_CREATE, CL_KIND_FILE, CL_ROOT, 5, "a", NULL, NULL, 0);
    assert_int_equal(cm_apply(m, cm_log_op(log, 2)), 0);
    cm_log_add(log, CL_CREATE, CL_KIND_FILE, CL_ROOT, 5, "b", NULL, NULL, 0);
    assert_int_equal(cm_apply(m, cm_log_op(log, 3)), -1); /* inode reused */
    cm_model_free(m);
    cm_log_free(log);
}

static char *scratch_dir(void)
{
    const char *base = getenv("TMPDIR");
    char *path = NULL;
    if (asprintf(&path, "%s/nd-crash-model-XXXXXX", base && *base ? base : "/tmp") < 0 ||
        mkdtemp(path) == NULL)
        fail_msg("mkdtemp");
    return path;
}

/* a log file in crashfs's format reads back op for op; a damaged one is refused */
static void test_log_file_round_trip(void **state)
{
    (void)state;
    char *dir = scratch_dir();
    char path[4096];
    snprintf(path, sizeof(path), "%s/log", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fwrite(CL_MAGIC, 1, 8, f);
    cl_rec rec;
    memset(&rec, 0, sizeof(rec));
    rec.type = CL_CREATE;
    rec.flags = CL_KIND_FILE;
    rec.a = CL_ROOT;
    rec.b = 3;
    rec.name1_len = 4;
    fwrite(&rec, sizeof(rec), 1, f);
    fwrite("name", 1, 4, f);
    memset(&rec, 0, sizeof(rec));
    rec.type = CL_WRITE;
    rec.a = 3;
    rec.b = 2;
    rec.len = 5;
    fwrite(&rec, sizeof(rec), 1, f);
    fwrite("bytes", 1, 5, f);
    fclose(f);
    char err[256];
    cm_log *log = cm_log_load(path, err, sizeof(err));
    if (log == NULL)
        fail_msg("%s", err);
    assert_int_equal(cm_log_count(log), 2);
    assert_string_equal(cm_log_op(log, 0)->name1, "name");
    assert_int_equal(cm_log_op(log, 1)->b, 2);
    assert_memory_equal(cm_log_op(log, 1)->data, "bytes", 5);
    cm_model *m = cm_model_new(CM_STRICT);
    for (size_t i = 0; i < cm_log_count(log); i++)
        assert_int_equal(cm_apply(m, cm_log_op(log, i)), 0);
    size_t len;
    const uint8_t *live = cm_live_data(m, cm_live_resolve(m, "name"), &len);
    assert_int_equal(len, 7);
    assert_memory_equal(live + 2, "bytes", 5);
    cm_model_free(m);
    cm_log_free(log);
    /* cut short inside the last record */
    assert_int_equal(truncate(path, 8 + 2 * (off_t)sizeof(rec) + 4 + 2), 0);
    assert_null(cm_log_load(path, err, sizeof(err)));
    assert_non_null(strstr(err, "truncated"));
    unlink(path);
    rmdir(dir);
    free(dir);
}

/* a cut state written out as a directory tree holds exactly the durable bytes */
static void test_write_tree(void **state)
{
    (void)state;
    run r = start(CM_STRICT);
    CREATE(&r, CL_ROOT, 10, "kept");
    WRITE(&r, 10, 0, "durable");
    FSYNC(&r, 10);
    CREATE(&r, CL_ROOT, 11, "empty");
    MKDIR(&r, CL_ROOT, 12, "sub");
    op(&r, CL_CREATE, CL_KIND_FILE, 12, 13, "inner", NULL, NULL, 0);
    WRITE(&r, 13, 0, "in sub");
    FSYNC(&r, 13);
    FSYNCDIR(&r, 12);
    FSYNCDIR(&r, CL_ROOT);
    CREATE(&r, CL_ROOT, 14, "lost");
    WRITE(&r, 10, 7, " and more, unsynced");
    char *dir = scratch_dir();
    char out[4096];
    snprintf(out, sizeof(out), "%s/state", dir);
    cm_view v = {r.m, 0, 0};
    assert_int_equal(cm_view_write_tree(&v, CL_ROOT, out), 0);
    char p[4200], buf[64];
    snprintf(p, sizeof(p), "%s/kept", out);
    FILE *f = fopen(p, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    assert_int_equal(n, 7);
    assert_memory_equal(buf, "durable", 7);
    struct stat st;
    snprintf(p, sizeof(p), "%s/empty", out);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_size, 0);
    snprintf(p, sizeof(p), "%s/sub/inner", out);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_size, 6);
    snprintf(p, sizeof(p), "%s/lost", out);
    assert_int_not_equal(stat(p, &st), 0);
    char cmd[4200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(dir);
    finish(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fsynced_file_without_dir_fsync_vanishes),
        cmocka_unit_test(test_dir_fsync_is_what_keeps_the_name),
        cmocka_unit_test(test_unsynced_writes_and_sizes_are_volatile),
        cmocka_unit_test(test_rename_over_without_dir_fsync_keeps_old),
        cmocka_unit_test(test_rename_of_unsynced_file_persists_empty),
        cmocka_unit_test(test_file_fsync_does_not_persist_a_rename),
        cmocka_unit_test(test_unlink_needs_dir_fsync),
        cmocka_unit_test(test_hard_links_share_an_inode),
        cmocka_unit_test(test_replaced_inode_written_through_an_open_handle),
        cmocka_unit_test(test_rename_exchange),
        cmocka_unit_test(test_subdirectory_needs_its_parent_fsynced),
        cmocka_unit_test(test_journaled_model_commits_names_with_any_fsync),
        cmocka_unit_test(test_torn_last_write),
        cmocka_unit_test(test_torn_only_where_a_name_persists),
        cmocka_unit_test(test_inconsistent_logs_are_refused),
        cmocka_unit_test(test_log_file_round_trip),
        cmocka_unit_test(test_write_tree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
