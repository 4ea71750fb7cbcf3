/*
 * crash_fs_test.c - the crash-model file system in a real mount: plain system
 * calls in it (buffered and O_DIRECT writes, fsync of files and directories,
 * rename with and without RENAME_NOREPLACE / RENAME_EXCHANGE, hard links,
 * truncation, mmap, subdirectories), each step followed by a mark; then the
 * log it recorded is replayed and the cut at each mark must hold what POSIX
 * says persists. This shows the kernel let every write and fsync through when
 * it was made (a cached write or a swallowed fsync would show up as a wrong
 * state at a mark) and that the log names what happened.
 *
 *   crash_fs_test MOUNTPOINT LOG
 */
#ifndef _GNU_SOURCE
#  define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "model.h"

static const char *mnt, *log_path;
static int markfd = -1, rootfd = -1;

static void mark(const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    assert_int_equal(write(markfd, buf, (size_t)n), n);
}

/* mnt/name; four buffers in turn, so a call can take two paths */
static char *at(const char *name)
{
    static char paths[4][4096];
    static int next;
    char *path = paths[next++ % 4];
    snprintf(path, sizeof(paths[0]), "%s/%s", mnt, name);
    return path;
}

static int create(const char *name, const char *content)
{
    int fd = open(at(name), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    if (content != NULL)
        assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
    return fd;
}

/* Replays the log so far; at the mark `name` checks that path persisted as
 * `content` (NULL: absent) under `mode`, and that the live state has
 * `live` there (NULL: not checked). */
static void expect_at(const char *name, int mode, const char *path, const char *content,
                      const char *live)
{
    char err[512];
    cm_log *log = cm_log_load(log_path, err, sizeof(err));
    if (log == NULL)
        fail_msg("%s", err);
    cm_model *m = cm_model_new(mode);
    int found = 0;
    for (size_t i = 0; i < cm_log_count(log) && !found; i++) {
        const cm_op *op = cm_log_op(log, i);
        if (cm_apply(m, op) != 0)
            fail_msg("log record %zu: %s", i, cm_model_error(m));
        if (op->type != CL_MARK || op->len != strlen(name) || memcmp(op->data, name, op->len))
            continue;
        found = 1;
        cm_view v = {m, 0, 0};
        uint64_t ino = cm_view_resolve(&v, path);
        if (content == NULL && ino != 0)
            fail_msg("at %s: '%s' persisted, expected absent", name, path);
        if (content != NULL) {
            if (ino == 0)
                fail_msg("at %s: '%s' absent, expected %zu bytes", name, path, strlen(content));
            size_t len;
            const uint8_t *d = cm_view_data(&v, ino, &len);
            if (len != strlen(content) || memcmp(d, content, len) != 0)
                fail_msg("at %s: '%s' persisted %zu bytes, not the %zu expected", name, path, len,
                         strlen(content));
        }
        if (live != NULL) {
            size_t len;
            const uint8_t *d = cm_live_data(m, cm_live_resolve(m, path), &len);
            if (len != strlen(live) || memcmp(d, live, len) != 0)
                fail_msg("at %s: live '%s' has %zu bytes, not the %zu written", name, path, len,
                         strlen(live));
        }
    }
    if (!found)
        fail_msg("mark %s is not in the log", name);
    cm_model_free(m);
    cm_log_free(log);
}

/* A file fsynced in a directory that was not: gone after the cut; the
 * directory's fsync is what keeps it. Each write reached the daemon when it
 * was made (live state at the mark), nothing waited in a cache. */
static void test_file_and_directory_fsync(void **state)
{
    (void)state;
    int fd = create("f1", "abc");
    mark("f1-written");
    assert_int_equal(fsync(fd), 0);
    mark("f1-fsynced");
    assert_int_equal(fsync(rootfd), 0);
    mark("root-fsynced");
    assert_int_equal(write(fd, "def", 3), 3);
    mark("f1-appended");
    close(fd);
    expect_at("f1-written", CM_STRICT, "f1", NULL, "abc");
    expect_at("f1-fsynced", CM_STRICT, "f1", NULL, "abc");
    expect_at("f1-fsynced", CM_JOURNALED, "f1", "abc", NULL);
    expect_at("root-fsynced", CM_STRICT, "f1", "abc", NULL);
    expect_at("f1-appended", CM_STRICT, "f1", "abc", "abcdef");
}

/* O_DIRECT switched on with fcntl after the open, as nativedir's merge outputs
 * do: the aligned writes are logged as made and fsync persists them */
static void test_direct_io_through_fcntl(void **state)
{
    (void)state;
    int fd = open(at("direct"), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    int fl = fcntl(fd, F_GETFL);
    assert_int_equal(fcntl(fd, F_SETFL, fl | O_DIRECT), 0);
    assert_true(fcntl(fd, F_GETFL) & O_DIRECT);
    void *buf = mmap(NULL, 12288, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(buf != MAP_FAILED);
    memset(buf, 'D', 12288);
    assert_int_equal(pwrite(fd, buf, 8192, 0), 8192);
    assert_int_equal(pwrite(fd, (char *)buf + 8192, 4096, 8192), 4096);
    mark("direct-written");
    assert_int_equal(fdatasync(fd), 0);
    assert_int_equal(fsync(rootfd), 0);
    mark("direct-synced");
    close(fd);
    char *expect = malloc(12289);
    memset(expect, 'D', 12288);
    expect[12288] = '\0';
    expect_at("direct-written", CM_STRICT, "direct", NULL, expect);
    expect_at("direct-synced", CM_STRICT, "direct", expect, NULL);
    free(expect);
    munmap(buf, 12288);
}

/* rename over an old file: the old bytes under the old name until the
 * directory's fsync; RENAME_NOREPLACE refuses; RENAME_EXCHANGE swaps */
static void test_rename_variants(void **state)
{
    (void)state;
    int fd = create("r", "old");
    assert_int_equal(fsync(fd), 0);
    close(fd);
    assert_int_equal(fsync(rootfd), 0);
    fd = create("r.tmp", "new");
    assert_int_equal(fsync(fd), 0);
    close(fd);
    assert_int_equal(rename(at("r.tmp"), at("r")), 0);
    mark("r-renamed");
    assert_int_equal(fsync(rootfd), 0);
    mark("r-dir-synced");
    expect_at("r-renamed", CM_STRICT, "r", "old", "new");
    expect_at("r-renamed", CM_STRICT, "r.tmp", NULL, NULL);
    expect_at("r-dir-synced", CM_STRICT, "r", "new", NULL);

    fd = create("x", "X");
    assert_int_equal(fsync(fd), 0);
    close(fd);
    assert_int_equal(fsync(rootfd), 0);
    assert_int_equal(renameat2(AT_FDCWD, at("x"), AT_FDCWD, at("r"), RENAME_NOREPLACE), -1);
    assert_int_equal(errno, EEXIST);
    assert_int_equal(renameat2(AT_FDCWD, at("x"), AT_FDCWD, at("r"), RENAME_EXCHANGE), 0);
    mark("x-exchanged");
    assert_int_equal(fsync(rootfd), 0);
    mark("x-exchange-synced");
    expect_at("x-exchanged", CM_STRICT, "r", "new", "X");
    expect_at("x-exchange-synced", CM_STRICT, "r", "X", NULL);
    expect_at("x-exchange-synced", CM_STRICT, "x", "new", NULL);
}

/* a hard link keeps the inode when the first name goes */
static void test_hard_link_and_unlink(void **state)
{
    (void)state;
    int fd = create("h1", "linked");
    assert_int_equal(fsync(fd), 0);
    close(fd);
    assert_int_equal(link(at("h1"), at("h2")), 0);
    assert_int_equal(unlink(at("h1")), 0);
    mark("h-unlinked");
    assert_int_equal(fsync(rootfd), 0);
    mark("h-synced");
    expect_at("h-unlinked", CM_STRICT, "h2", NULL, "linked");
    expect_at("h-synced", CM_STRICT, "h1", NULL, NULL);
    expect_at("h-synced", CM_STRICT, "h2", "linked", NULL);
}

/* ftruncate is volatile until the file's fsync; O_TRUNC too */
static void test_truncation(void **state)
{
    (void)state;
    int fd = create("t", "0123456789");
    assert_int_equal(fsync(fd), 0);
    assert_int_equal(fsync(rootfd), 0);
    assert_int_equal(ftruncate(fd, 4), 0);
    mark("t-truncated");
    assert_int_equal(fdatasync(fd), 0);
    mark("t-synced");
    close(fd);
    fd = open(at("t"), O_WRONLY | O_TRUNC | O_CLOEXEC);
    assert_true(fd >= 0);
    mark("t-otrunc");
    close(fd);
    expect_at("t-truncated", CM_STRICT, "t", "0123456789", "0123");
    expect_at("t-synced", CM_STRICT, "t", "0123", NULL);
    expect_at("t-otrunc", CM_STRICT, "t", "0123", "");
}

/* mapped reads see what was written; the mark file is not listed */
static void test_mmap_and_listing(void **state)
{
    (void)state;
    int fd = create("m", "mapped bytes");
    close(fd);
    fd = open(at("m"), O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    char *p = mmap(NULL, 12, PROT_READ, MAP_SHARED, fd, 0);
    assert_true(p != MAP_FAILED);
    assert_memory_equal(p, "mapped bytes", 12);
    munmap(p, 12);
    close(fd);
    DIR *d = opendir(mnt);
    assert_non_null(d);
    struct dirent *de;
    int saw_m = 0;
    while ((de = readdir(d)) != NULL) {
        assert_string_not_equal(de->d_name, CL_MARK_NAME);
        saw_m |= strcmp(de->d_name, "m") == 0;
    }
    closedir(d);
    assert_true(saw_m);
}

/* a subdirectory: its file needs the subdirectory's fsync, the subdirectory its parent's */
static void test_subdirectory(void **state)
{
    (void)state;
    assert_int_equal(mkdir(at("sub"), 0755), 0);
    int fd = create("sub/f", "deep");
    assert_int_equal(fsync(fd), 0);
    close(fd);
    int sub = open(at("sub"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(sub >= 0);
    assert_int_equal(fsync(sub), 0);
    close(sub);
    mark("sub-synced");
    assert_int_equal(fsync(rootfd), 0);
    mark("sub-root-synced");
    expect_at("sub-synced", CM_STRICT, "sub/f", NULL, NULL);
    expect_at("sub-root-synced", CM_STRICT, "sub/f", "deep", NULL);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: crash_fs_test MOUNTPOINT LOG\n");
        return 2;
    }
    mnt = argv[1];
    log_path = argv[2];
    markfd = open(at(CL_MARK_NAME), O_WRONLY | O_CLOEXEC);
    rootfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (markfd < 0 || rootfd < 0) {
        perror(mnt);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_file_and_directory_fsync),
        cmocka_unit_test(test_direct_io_through_fcntl),
        cmocka_unit_test(test_rename_variants),
        cmocka_unit_test(test_hard_link_and_unlink),
        cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_mmap_and_listing),
        cmocka_unit_test(test_subdirectory),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    close(markfd);
    close(rootfd);
    return rc;
}
