/*
 * attack_test.c - symlink and swap attacks on an open directory. Whatever is
 * planted inside it, swapped under it or done to its path, nothing outside it
 * may be read, written, created or deleted. "Outside" is a sibling tree whose
 * every file is snapshotted before and compared after each attack; anything
 * the library hands back is compared with the secret it must never return.
 */
#ifndef _GNU_SOURCE
#  define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "nativedir.h"
#include "rel_util.h"

static const char SECRET[] = "SECRET: never to be read through the library";
static const char GENUINE[] = "genuine contents of the victim file";

static long hostile_ops, swap_attempts, swap_refused, swap_genuine, swapped_between, moved_ops;

typedef struct {
    char *root, *inside, *outside;
    nd_handle dir;
    char *snapshot;
} arena;

static char *path2(const char *a, const char *b)
{
    return rel_join(a, b);
}

/* Every file under `outside` with its bytes, in one comparable string. */
static void snap_into(const char *dir, char **acc, size_t *len)
{
    const char *names[] = {"secret.txt", "sub/file.txt", "sub", "victim-target", "planted"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char *p = path2(dir, names[i]);
        struct stat st;
        char head[600];
        if (lstat(p, &st) != 0) {
            snprintf(head, sizeof(head), "%s: absent\n", names[i]);
        } else if (S_ISDIR(st.st_mode)) {
            snprintf(head, sizeof(head), "%s: dir\n", names[i]);
        } else {
            size_t n = 0;
            uint8_t *b = rel_slurp(p, &n);
            snprintf(head, sizeof(head), "%s: %zu bytes mode %o: %.*s\n", names[i], n,
                     (unsigned)st.st_mode, (int)(n < 200 ? n : 200), b ? (char *)b : "");
            free(b);
        }
        free(p);
        *acc = realloc(*acc, *len + strlen(head) + 1);
        memcpy(*acc + *len, head, strlen(head) + 1);
        *len += strlen(head);
    }
}

static char *snapshot(const char *outside)
{
    char *acc = NULL;
    size_t len = 0;
    snap_into(outside, &acc, &len);
    return acc;
}

static void expect_outside_untouched(arena *a)
{
    char *now = snapshot(a->outside);
    if (strcmp(now, a->snapshot) != 0)
        fail_msg("something outside the directory changed:\nbefore:\n%s\nafter:\n%s", a->snapshot,
                 now);
    free(now);
}

static int setup(void **state)
{
    arena *a = calloc(1, sizeof(*a));
    a->root = rel_mkdtemp("attack");
    a->inside = path2(a->root, "inside");
    a->outside = path2(a->root, "outside");
    mkdir(a->inside, 0700);
    mkdir(a->outside, 0700);
    char *p = path2(a->outside, "secret.txt");
    rel_write_file(p, SECRET, sizeof(SECRET) - 1);
    free(p);
    p = path2(a->outside, "sub");
    mkdir(p, 0700);
    free(p);
    p = path2(a->outside, "sub/file.txt");
    rel_write_file(p, SECRET, sizeof(SECRET) - 1);
    free(p);
    if (nd_open_dir(a->inside, 0, &a->dir) != ND_OK)
        return -1;
    a->snapshot = snapshot(a->outside);
    *state = a;
    return 0;
}

static int teardown(void **state)
{
    arena *a = *state;
    nd_close(a->dir);
    rel_rmtree(a->root);
    free(a->root);
    free(a->inside);
    free(a->outside);
    free(a->snapshot);
    free(a);
    return 0;
}

static char planted_target[64];

static void plant_link(arena *a, const char *name, const char *target_in_outside)
{
    char *t = path2(a->outside, target_in_outside);
    char *l = path2(a->inside, name);
    assert_int_equal(symlink(t, l), 0);
    snprintf(planted_target, sizeof(planted_target), "%s", target_in_outside);
    free(t);
    free(l);
}

static void relink(arena *a, const char *name)
{
    plant_link(a, name, planted_target);
}

/* The call must fail, and nothing it returned may be the secret. */
static void refused(int64_t rc, const char *what)
{
    hostile_ops++;
    if (rc >= 0)
        fail_msg("%s succeeded (%lld) on a planted symlink", what, (long long)rc);
}

static int link_still_there(arena *a, const char *name)
{
    char *l = path2(a->inside, name);
    struct stat st;
    int rc = lstat(l, &st) == 0 && S_ISLNK(st.st_mode);
    free(l);
    return rc;
}

/* Every call that takes a name, aimed at a link. */
static void attack_name(arena *a, const char *name)
{
    nd_handle h = 0;
    int64_t len = -1;
    const uint32_t in_flags[] = {0,
                                 ND_IO_MMAP,
                                 ND_IO_MERGE,
                                 ND_IO_MERGE | ND_IO_REQUIRE_DIRECT,
                                 ND_IO_MMAP | ND_IO_PRELOAD,
                                 ND_IO_SEQUENTIAL};
    for (size_t i = 0; i < sizeof(in_flags) / sizeof(in_flags[0]); i++) {
        int32_t rc = nd_open_input(a->dir, name, in_flags[i], &h);
        refused(rc, "nd_open_input");
        assert_int_equal(h, 0);
    }
    hostile_ops++;
    assert_int_equal(nd_file_exists(a->dir, name), 0); /* a symlink is not a file here */
    refused(nd_file_length(a->dir, name, &len), "nd_file_length");
    refused(nd_create_output(a->dir, name, 0, &h), "nd_create_output");
    refused(nd_create_output(a->dir, name, ND_IO_MERGE, &h), "nd_create_output MERGE");
    refused(nd_fsync(a->dir, name), "nd_fsync");
    refused(nd_lock(a->dir, name, &h), "nd_lock");
    assert_true(link_still_there(a, name));
    expect_outside_untouched(a);

    /* listing leaves links out */
    char buf[4096];
    int64_t need = nd_list(a->dir, buf, sizeof(buf));
    assert_true(need >= 0);
    for (int64_t off = 0; off < need; off += (int64_t)strlen(buf + off) + 1)
        assert_string_not_equal(buf + off, name);
    hostile_ops++;

    /* OVERWRITE may refuse the link, or replace the link itself with a new regular
     * file (a create-and-rename implementation does); it may never write through it */
    const uint32_t overwrite[] = {ND_IO_OVERWRITE, ND_IO_OVERWRITE | ND_IO_MERGE};
    for (int k = 0; k < 2; k++) {
        hostile_ops++;
        int32_t rc = nd_create_output(a->dir, name, overwrite[k], &h);
        if (rc == ND_OK) {
            assert_int_equal(nd_write_bytes(h, "mine", 4), 4);
            assert_int_equal(nd_close(h), ND_OK);
            char *p = path2(a->inside, name);
            assert_true(rel_file_is(p, "mine", 4)); /* a regular file of our own now */
            assert_int_equal(unlink(p), 0);
            free(p);
        } else if (rc != ND_E_ACCESS) {
            fail_msg("nd_create_output OVERWRITE on a symlink: %s (%s)", nd_status_name(rc),
                     nd_last_error_message());
        }
        expect_outside_untouched(a);
        if (!link_still_there(a, name))
            relink(a, name);
    }

    /* renaming moves the link itself; deleting removes the link, never its target */
    hostile_ops += 2;
    assert_int_equal(nd_rename(a->dir, name, "renamed-link"), ND_OK);
    assert_true(link_still_there(a, "renamed-link"));
    assert_int_equal(nd_delete_file(a->dir, "renamed-link"), ND_OK);
    assert_false(link_still_there(a, "renamed-link"));
    expect_outside_untouched(a);
}

static void link_to_file_outside(void **state)
{
    arena *a = *state;
    plant_link(a, "link", "secret.txt");
    attack_name(a, "link");
}

static void link_to_dir_outside(void **state)
{
    arena *a = *state;
    plant_link(a, "sublink", "sub");
    attack_name(a, "sublink");
    /* and the path through it is not a name at all */
    nd_handle h = 0;
    hostile_ops++;
    assert_int_equal(nd_open_input(a->dir, "sublink/file.txt", 0, &h), ND_E_INVALID_NAME);
}

static void dangling_link_to_outside(void **state)
{
    arena *a = *state;
    /* creating through it would make a file outside: "planted" must stay absent */
    plant_link(a, "dangling", "planted");
    attack_name(a, "dangling");
}

/* A FIFO or a device planted in the directory must be refused, not block or be opened for I/O. */
static void special_files(void **state)
{
    arena *a = *state;
    char *p = path2(a->inside, "fifo");
    assert_int_equal(mkfifo(p, 0600), 0);
    free(p);
    /* in a child with a deadline: a blocking open would hang the suite */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(5);
        nd_handle h = 0;
        int bad = 0;
        bad |= nd_open_input(a->dir, "fifo", 0, &h) >= 0;
        bad |= nd_open_input(a->dir, "fifo", ND_IO_MMAP, &h) >= 0;
        bad |= nd_fsync(a->dir, "fifo") >= 0;
        bad |= nd_create_output(a->dir, "fifo", ND_IO_OVERWRITE, &h) >= 0;
        bad |= nd_file_exists(a->dir, "fifo") != 0;
        _exit(bad ? 1 : 0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    hostile_ops += 5;
    if (WIFSIGNALED(status))
        fail_msg("a FIFO planted in the directory blocked the library (killed by signal %d "
                 "after 5 s): nd_open_input/nd_fsync open it without O_NONBLOCK",
                 WTERMSIG(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---- swapping a file for a symlink between a check and an open ---- */

typedef struct {
    arena *a;
    _Atomic int stop;
    long swaps;
} swapper;

static void *swap_loop(void *arg)
{
    swapper *s = arg;
    char *victim = path2(s->a->inside, "victim");
    char *real = path2(s->a->inside, "victim.real");
    char *evil = path2(s->a->inside, "victim.evil");
    char *master = path2(s->a->inside, "victim.master");
    char *target = path2(s->a->outside, "secret.txt");
    while (!atomic_load(&s->stop)) {
        /* evil: a symlink to the secret renamed over the victim, then the real file back
         * (a hard link of a master copy: as fast as the symlink, so both sides race evenly) */
        unlink(evil);
        if (symlink(target, evil) == 0)
            rename(evil, victim);
        unlink(real);
        if (link(master, real) == 0)
            rename(real, victim);
        s->swaps++;
    }
    free(master);
    free(victim);
    free(real);
    free(evil);
    free(target);
    return NULL;
}

static void swap_file_for_symlink(void **state)
{
    arena *a = *state;
    char *victim = path2(a->inside, "victim");
    rel_write_file(victim, GENUINE, sizeof(GENUINE) - 1);

    /* the plain race: checked as a file, then swapped, then opened */
    assert_int_equal(nd_file_exists(a->dir, "victim"), 1);
    char *evil = path2(a->inside, "victim.evil");
    char *target = path2(a->outside, "secret.txt");
    assert_int_equal(symlink(target, evil), 0);
    assert_int_equal(rename(evil, victim), 0);
    nd_handle h = 0;
    refused(nd_open_input(a->dir, "victim", 0, &h), "nd_open_input after the swap");
    refused(nd_create_output(a->dir, "victim", ND_IO_OVERWRITE, &h), "overwrite after the swap");
    expect_outside_untouched(a);

    /* the same race, thousands of times, with a thread swapping as fast as it can
     * (the victim is our symlink now: remove it, or writing it would follow it) */
    assert_int_equal(unlink(victim), 0);
    rel_write_file(victim, GENUINE, sizeof(GENUINE) - 1);
    char *master = path2(a->inside, "victim.master");
    rel_write_file(master, GENUINE, sizeof(GENUINE) - 1);
    free(master);
    swapper s = {.a = a};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, swap_loop, &s), 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const uint32_t flags[] = {0, ND_IO_MMAP, ND_IO_MERGE};
    char buf[256];
    for (long i = 0;; i++) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (i >= 200000 || (t1.tv_sec - t0.tv_sec) >= 3)
            break;
        swap_attempts++;
        /* the check is the victim's view; the open follows whatever is there by then */
        int was_file = nd_file_exists(a->dir, "victim") == 1;
        if (i % 4 == 3) { /* writers too: an overwrite must never reach the secret */
            int32_t rc = nd_create_output(a->dir, "victim", ND_IO_OVERWRITE, &h);
            if (rc == ND_OK) {
                assert_int_equal(nd_write_bytes(h, GENUINE, sizeof(GENUINE) - 1),
                                 (int64_t)sizeof(GENUINE) - 1);
                assert_int_equal(nd_close(h), ND_OK);
                swap_genuine++;
            } else {
                swap_refused++;
                swapped_between += was_file;
            }
            continue;
        }
        int32_t rc = nd_open_input(a->dir, "victim", flags[i % 3], &h);
        if (rc != ND_OK) {
            swap_refused++;
            swapped_between += was_file;
            continue;
        }
        int64_t len = -1;
        assert_int_equal(nd_input_length(h, &len), ND_OK);
        if (len > 0 && len < (int64_t)sizeof(buf)) {
            assert_int_equal(nd_read_bytes(h, 0, buf, len), len);
            if (len == (int64_t)sizeof(SECRET) - 1 && memcmp(buf, SECRET, (size_t)len) == 0)
                fail_msg("read the secret outside the directory through a swapped symlink");
            if (len != (int64_t)sizeof(GENUINE) - 1 || memcmp(buf, GENUINE, (size_t)len) != 0)
                fail_msg("read %lld bytes that are not the genuine file", (long long)len);
        }
        swap_genuine++;
        assert_int_equal(nd_close(h), ND_OK);
    }
    atomic_store(&s.stop, 1);
    pthread_join(t, NULL);
    printf("swap race: %ld attempts (%ld opened the genuine file, %ld refused, %ld of them "
           "swapped between the check and the open), %ld swaps\n",
           swap_attempts, swap_genuine, swap_refused, swapped_between, s.swaps);
    assert_true(s.swaps > 100);
    assert_true(swap_genuine > 0 && swap_refused > 0); /* both sides of the race were hit */
    expect_outside_untouched(a);
    free(victim);
    free(evil);
    free(target);
}

/* ---- the directory's own path renamed or replaced after it was opened ---- */

static void dir_moved(void **state)
{
    arena *a = *state;
    nd_handle h;
    char *orig_a = path2(a->inside, "a.bin");
    rel_write_file(orig_a, "original", 8);
    free(orig_a);

    char *moved = path2(a->root, "moved");
    assert_int_equal(rename(a->inside, moved), 0);
    /* the attacker's replacement: a new directory at the old path, with its own a.bin */
    assert_int_equal(mkdir(a->inside, 0700), 0);
    char *decoy = path2(a->inside, "a.bin");
    rel_write_file(decoy, "decoy", 5);

    /* every call still works on the directory that was opened */
    moved_ops += 6;
    assert_int_equal(nd_file_exists(a->dir, "a.bin"), 1);
    assert_int_equal(nd_open_input(a->dir, "a.bin", 0, &h), ND_OK);
    char buf[16];
    assert_int_equal(nd_read_bytes(h, 0, buf, 8), 8);
    assert_memory_equal(buf, "original", 8);
    assert_int_equal(nd_close(h), ND_OK);
    assert_int_equal(nd_create_output(a->dir, "new.bin", 0, &h), ND_OK);
    assert_int_equal(nd_write_bytes(h, "n", 1), 1);
    assert_int_equal(nd_close(h), ND_OK);
    assert_int_equal(nd_rename(a->dir, "new.bin", "new2.bin"), ND_OK);
    assert_int_equal(nd_sync_dir(a->dir), ND_OK);
    assert_int_equal(nd_delete_file(a->dir, "a.bin"), ND_OK);
    char *p = path2(moved, "new2.bin");
    assert_true(rel_file_is(p, "n", 1));
    free(p);
    p = path2(moved, "a.bin");
    assert_int_equal(access(p, F_OK), -1);
    free(p);
    /* the replacement directory is untouched */
    assert_true(rel_file_is(decoy, "decoy", 5));
    p = path2(a->inside, "new2.bin");
    assert_int_equal(access(p, F_OK), -1);
    free(p);

    /* now the old path becomes a symlink to the outside tree: still nothing there */
    rel_rmtree(a->inside);
    assert_int_equal(symlink(a->outside, a->inside), 0);
    moved_ops += 3;
    assert_int_equal(nd_create_output(a->dir, "secret.txt", 0, &h), ND_OK); /* in `moved` */
    assert_int_equal(nd_close(h), ND_OK);
    assert_int_equal(nd_delete_file(a->dir, "secret.txt"), ND_OK);
    assert_int_equal(nd_file_exists(a->dir, "secret.txt"), 0);
    expect_outside_untouched(a);

    /* and once the opened directory is gone, calls fail instead of landing anywhere */
    rel_rmtree(moved);
    moved_ops += 2;
    assert_true(nd_create_output(a->dir, "late.bin", 0, &h) < 0);
    assert_true(nd_lock(a->dir, "late.lock", &h) < 0);
    expect_outside_untouched(a);
    unlink(a->inside);
    free(decoy);
    free(moved);
}

int main(void)
{
    const struct CMUnitTest symlink_tests[] = {
        cmocka_unit_test_setup_teardown(link_to_file_outside, setup, teardown),
        cmocka_unit_test_setup_teardown(link_to_dir_outside, setup, teardown),
        cmocka_unit_test_setup_teardown(dangling_link_to_outside, setup, teardown),
        cmocka_unit_test_setup_teardown(special_files, setup, teardown),
    };
    const struct CMUnitTest swap_tests[] = {
        cmocka_unit_test_setup_teardown(swap_file_for_symlink, setup, teardown)};
    const struct CMUnitTest moved_tests[] = {
        cmocka_unit_test_setup_teardown(dir_moved, setup, teardown)};
    int f1 = cmocka_run_group_tests_name("planted symlinks", symlink_tests, NULL, NULL);
    rel_count("attack_symlink", hostile_ops, "hostile calls", f1 ? "fail" : "pass",
              "every name-taking call on symlinks to a file, a directory and a missing file "
              "outside, and on a FIFO; outside tree compared byte for byte");
    int f2 = cmocka_run_group_tests_name("swap races", swap_tests, NULL, NULL);
    char what[300];
    snprintf(what, sizeof(what),
             "file swapped for a symlink to a secret outside while opened/overwritten "
             "(%ld opened the genuine file, %ld refused, %ld swapped between check and open, "
             "0 reached the secret)",
             swap_genuine, swap_refused, swapped_between);
    rel_count("attack_swap", swap_attempts, "racing opens", f2 ? "fail" : "pass", what);
    int f3 = cmocka_run_group_tests_name("directory moved", moved_tests, NULL, NULL);
    rel_count("attack_dir_moved", moved_ops, "calls", f3 ? "fail" : "pass",
              "directory renamed, replaced by a decoy, then by a symlink to outside, then "
              "deleted after nd_open_dir: calls act on the opened directory or fail");
    return f1 + f2 + f3 ? 1 : 0;
}
