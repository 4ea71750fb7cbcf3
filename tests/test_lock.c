/*
 * test_lock.c - nd_lock is exclusive and non-blocking between two handles of
 * one process exactly as between two processes; nd_close (or the holder's
 * death) releases it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

#ifndef _WIN32
#  include <unistd.h>
#endif

static void second_handle_in_process_is_refused(void **state)
{
    tst_env *env = *state;
    nd_handle a, b = 5, other_dir, c;
    assert_status(ND_OK, nd_lock(env->dir, "write.lock", &a));
    /* the same directory handle, a second directory handle: both refused, without blocking */
    assert_status(ND_E_LOCKED, nd_lock(env->dir, "write.lock", &b));
    assert_int_equal(b, 0);
    assert_message_contains("write.lock");
    assert_status(ND_OK, nd_open_dir(env->dir_path, 0, &other_dir));
    assert_status(ND_E_LOCKED, nd_lock(other_dir, "write.lock", &b));
    /* another name is another lock */
    assert_status(ND_OK, nd_lock(other_dir, "other.lock", &c));
    assert_status(ND_OK, nd_close(a));
    /* released by close: anyone may take it now, and again after each release */
    for (int i = 0; i < 50; i++) {
        assert_status(ND_OK, nd_lock(i % 2 ? env->dir : other_dir, "write.lock", &a));
        assert_status(ND_E_LOCKED, nd_lock(i % 2 ? other_dir : env->dir, "write.lock", &b));
        assert_status(ND_OK, nd_close(a));
    }
    assert_status(ND_OK, nd_close(c));
    assert_status(ND_OK, nd_close(other_dir));
}

static void lock_file_is_created_and_left(void **state)
{
    tst_env *env = *state;
    nd_handle l;
    assert_status(0, nd_file_exists(env->dir, "write.lock"));
    assert_status(ND_OK, nd_lock(env->dir, "write.lock", &l));
    assert_status(1, nd_file_exists(env->dir, "write.lock"));
    assert_status(ND_OK, nd_close(l));
    assert_status(1, nd_file_exists(env->dir, "write.lock"));
    /* an existing file with content is locked as it is, not truncated */
    char path[TST_PATH_MAX];
    assert_int_equal(tst_write_file(tst_join(path, sizeof(path), env->dir_path, "data"), "keep", 4),
                     0);
    assert_status(ND_OK, nd_lock(env->dir, "data", &l));
    assert_int_equal(tst_file_size(path), 4);
    assert_status(ND_OK, nd_close(l));
    /* a lock handle is a lock, not an input */
    assert_status(ND_OK, nd_lock(env->dir, "write.lock", &l));
    assert_status(ND_E_BAD_HANDLE, nd_read_byte_buffered(l));
    assert_status(ND_E_BAD_HANDLE, nd_write_byte(l, 1));
    assert_status(ND_OK, nd_close(l));
    assert_status(ND_E_BAD_HANDLE, nd_close(l));
}

static void only_regular_files_are_locks(void **state)
{
    tst_env *env = *state;
    char path[TST_PATH_MAX];
    nd_handle l = 5;
    assert_int_equal(tst_mkdir(tst_join(path, sizeof(path), env->dir_path, "dirlock")), 0);
    assert_status(ND_E_ACCESS, nd_lock(env->dir, "dirlock", &l));
    assert_int_equal(l, 0);
    assert_true(tst_path_exists(path));
}

#ifndef _WIN32
/* POSIX only: FIFOs do not exist on Windows. A FIFO is no lock file: locking
 * it would "succeed" on something no other process opens the same way. */
static int fifo_lock_child(void *ctx)
{
    tst_env *env = ctx;
    alarm(5);
    nd_handle l;
    int32_t rc = nd_lock(env->dir, "fifo.lock", &l);
    if (rc == ND_OK)
        return 1;
    return rc == ND_E_ACCESS ? 0 : 2;
}

static void fifos_are_not_locks(void **state)
{
    tst_env *env = *state;
    char path[TST_PATH_MAX];
    assert_int_equal(tst_mkfifo(tst_join(path, sizeof(path), env->dir_path, "fifo.lock")), 0);
    int rc = tst_run_child(fifo_lock_child, env);
    if (rc == 1)
        fail_msg("nd_lock took a lock on a FIFO instead of refusing a non-regular file");
    assert_int_equal(rc, 0);
}

/* Another process, POSIX only (fork): the Windows build checks the same rule with
 * LockFileEx and would need CreateProcess to run a second process. */

/* Child: open the directory itself and try the lock; report what it got. */
static int try_lock_child(void *ctx, int from_parent, int to_parent)
{
    const char *dir_path = ctx;
    nd_handle dir, lock;
    if (nd_open_dir(dir_path, 0, &dir) != ND_OK)
        return 90;
    for (;;) {
        int cmd = tst_pipe_recv(from_parent);
        if (cmd < 0 || cmd == 'q')
            break;
        if (cmd == 't') { /* try, report, release */
            int32_t rc = nd_lock(dir, "write.lock", &lock);
            if (rc == ND_OK)
                nd_close(lock);
            tst_pipe_send(to_parent, rc == ND_OK ? 'o' : rc == ND_E_LOCKED ? 'L' : 'e');
        } else if (cmd == 'h') { /* take and hold */
            int32_t rc = nd_lock(dir, "write.lock", &lock);
            tst_pipe_send(to_parent, rc == ND_OK ? 'o' : rc == ND_E_LOCKED ? 'L' : 'e');
        } else if (cmd == 'r') { /* release the held lock */
            tst_pipe_send(to_parent, nd_close(lock) == ND_OK ? 'o' : 'e');
        }
    }
    nd_close(dir);
    return 0;
}

static int ask(tst_child *c, char cmd)
{
    assert_int_equal(tst_child_send(c, cmd), 0);
    return tst_child_recv(c);
}

static void another_process_is_refused(void **state)
{
    tst_env *env = *state;
    tst_child child;
    assert_int_equal(tst_child_start(&child, try_lock_child, env->dir_path), 0);
    nd_handle mine, again;
    /* free: the child gets it (and releases it) */
    assert_int_equal(ask(&child, 't'), 'o');
    /* held here: refused there */
    assert_status(ND_OK, nd_lock(env->dir, "write.lock", &mine));
    assert_int_equal(ask(&child, 't'), 'L');
    assert_int_equal(ask(&child, 'h'), 'L');
    /* released by nd_close: the child takes and holds it; now we are refused */
    assert_status(ND_OK, nd_close(mine));
    assert_int_equal(ask(&child, 'h'), 'o');
    assert_status(ND_E_LOCKED, nd_lock(env->dir, "write.lock", &again));
    assert_int_equal(ask(&child, 'r'), 'o');
    assert_status(ND_OK, nd_lock(env->dir, "write.lock", &again));
    assert_int_equal(ask(&child, 't'), 'L');
    assert_status(ND_OK, nd_close(again));
    assert_int_equal(ask(&child, 't'), 'o');
    assert_int_equal(tst_child_send(&child, 'q'), 0);
    assert_int_equal(tst_child_wait(&child), 0);
}

static void holder_death_releases(void **state)
{
    tst_env *env = *state;
    tst_child child;
    assert_int_equal(tst_child_start(&child, try_lock_child, env->dir_path), 0);
    assert_int_equal(ask(&child, 'h'), 'o');
    nd_handle l;
    assert_status(ND_E_LOCKED, nd_lock(env->dir, "write.lock", &l));
    /* a crashed indexer must not leave the index locked forever */
    tst_child_kill(&child);
    assert_status(ND_OK, nd_lock(env->dir, "write.lock", &l));
    assert_status(ND_OK, nd_close(l));
}

static int fork_inherits_child(void *ctx)
{
    /* a forked child inherits the parent's lock descriptor; inheriting must not
     * hand it the lock: opening and locking anew is refused */
    const char *dir_path = ctx;
    nd_handle dir, lock;
    if (nd_open_dir(dir_path, 0, &dir) != ND_OK)
        return 90;
    int32_t rc = nd_lock(dir, "write.lock", &lock);
    return rc == ND_E_LOCKED ? 0 : rc == ND_OK ? 1 : 2;
}

static void forked_child_does_not_share_the_lock(void **state)
{
    tst_env *env = *state;
    nd_handle l;
    assert_status(ND_OK, nd_lock(env->dir, "write.lock", &l));
    assert_int_equal(tst_run_child(fork_inherits_child, env->dir_path), 0);
    /* the child's exit closed its inherited copy; our lock still holds */
    nd_handle again;
    assert_status(ND_E_LOCKED, nd_lock(env->dir, "write.lock", &again));
    assert_status(ND_OK, nd_close(l));
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(second_handle_in_process_is_refused, tst_setup,
                                        tst_teardown),
        cmocka_unit_test_setup_teardown(lock_file_is_created_and_left, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(only_regular_files_are_locks, tst_setup, tst_teardown),
#ifndef _WIN32
        cmocka_unit_test_setup_teardown(fifos_are_not_locks, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(another_process_is_refused, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(holder_death_releases, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(forked_child_does_not_share_the_lock, tst_setup,
                                        tst_teardown),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
