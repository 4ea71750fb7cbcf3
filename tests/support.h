/*
 * support.h - what every C test shares: temporary directories, files written
 * and read with plain OS calls (never through nativedir, so a library bug
 * cannot hide itself), random data, and child processes.
 *
 * Everything OS-specific in the suite lives in support.c, so the suite can be
 * cross-compiled for Windows: the declarations under `#ifndef _WIN32` have no
 * Windows counterpart and the tests that use them are guarded the same way.
 */
#ifndef ND_TEST_SUPPORT_H
#define ND_TEST_SUPPORT_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "nativedir.h"

#define TST_PATH_MAX 1024

/* The fixture most tests run in: a fresh temporary root holding "d" (opened
 * as `dir`) and room for files "outside" the directory. */
typedef struct {
    char root[TST_PATH_MAX];
    char dir_path[TST_PATH_MAX];
    nd_handle dir;
} tst_env;

/* cmocka group/test setup and teardown that create and remove a tst_env. */
int tst_setup(void **state);
int tst_teardown(void **state);

/* A new empty directory under $ND_TEST_TMPDIR (else $TMPDIR, else /tmp);
 * the path goes into out. Returns 0 or -1. */
int tst_make_temp_dir(char *out, size_t cap);
/* Removes a tree without following symbolic links. */
void tst_remove_tree(const char *path);
/* Joins a directory and a name into out (returns out). */
char *tst_join(char *out, size_t cap, const char *dir, const char *name);
int tst_mkdir(const char *path);
/* Removes an empty directory; 0 or -1 (Windows refuses while anything in it
 * is open or mapped). */
int tst_rmdir(const char *path);
/* 1 if a mapping (or on Windows any reservation) of the process holds addr,
 * 0 if none does, -1 if the OS cannot tell. */
int tst_address_mapped(const void *addr);

/* Whole-file helpers with plain OS calls; 0 or -1. */
int tst_write_file(const char *path, const void *data, size_t len);
/* malloc'd contents (NULL if unreadable); *len = its length. */
uint8_t *tst_read_file(const char *path, size_t *len);
int tst_path_exists(const char *path); /* lstat-style: a dangling link exists */
/* Deletes one file (unlink; _wremove on Windows, which refuses, or leaves the
 * name taken, while the file is still open); 0 or -1. */
int tst_remove_file(const char *path);
int64_t tst_file_size(const char *path); /* -1 if missing */
/* Writes len bytes at offset of an existing file (offsets past 4 GiB too). */
int tst_write_at(const char *path, int64_t offset, const void *data, size_t len);
/* Changes the process's working directory (for relative-path cases). */
int tst_chdir(const char *path);
/* Sets a file's length without writing (sparse where the OS allows). */
int tst_truncate(const char *path, int64_t len);
/* Asks the OS to drop file dir/name from its page cache (a hint: the OS may
 * keep pages, and Windows ignores it). */
void tst_drop_cache(const char *dir, const char *name);
/* Whether this OS (and kernel, or emulator) reads dir/name's cached first
 * byte with a read that refuses to wait (Linux preadv2 RWF_NOWAIT). */
int tst_cache_only_reads(const char *dir, const char *name);

/* Deterministic pseudo-random bytes (xorshift): the same seed, the same data. */
void tst_fill_random(uint8_t *buf, size_t len, uint64_t seed);
uint8_t *tst_random_buffer(size_t len, uint64_t seed); /* malloc'd */
/* Writes len random bytes (from seed) to env's directory as `name` and returns
 * them (malloc'd) for the test to compare reads with; fails the test on error. */
uint8_t *tst_put_random(tst_env *env, const char *name, size_t len, uint64_t seed);

/* Asserts that an ND_* call returned `expected`; on failure prints both status
 * names and the library's last error message. */
#define assert_status(expected, actual)                                                            \
  tst_assert_status((int64_t)(expected), (int64_t)(actual), #actual, __FILE__, __LINE__)
void tst_assert_status(int64_t expected, int64_t actual, const char *expr, const char *file,
                       int line);
/* Asserts that the thread's last error message contains `needle`. */
#define assert_message_contains(needle) tst_assert_message_contains((needle), __FILE__, __LINE__)
void tst_assert_message_contains(const char *needle, const char *file, int line);

/* Prints a loud, greppable notice that a case could not run here. */
void tst_loud_skip(const char *what, const char *why);

/* Opens the file `name` of `dir` through nativedir with `flags` and checks
 * every byte against `expected` through positional reads, the cursor and
 * windows. Returns 0 if all match; prints the first mismatch otherwise. */
int tst_verify_input(nd_handle dir, const char *name, uint32_t flags, const uint8_t *expected,
                     size_t len);

#ifndef _WIN32
#  include <sys/types.h>

/* Modification time in nanoseconds, -1 if missing (lstat: a link's own). */
int64_t tst_mtime_ns(const char *path);
/* Sets a file's access and modification times to `seconds` since the epoch. */
int tst_set_mtime(const char *path, int64_t seconds);
/* symlink(target, link_path). Windows symlinks need privileges: POSIX only. */
int tst_symlink(const char *target, const char *link_path);
int tst_mkfifo(const char *path);
int tst_chmod(const char *path, unsigned mode);
/* The process's open descriptors (from /proc/self/fd or /dev/fd), ascending;
 * returns how many (at most max), or -1. */
int tst_open_fds(int *fds, int max);
/* How many of the process's descriptors are open on a file under dir (by
 * /proc/self/fd's links, so Linux only: -1 where there is no /proc). */
int tst_fds_under(const char *dir);
/* How many of the process's mappings are of a file under dir (/proc/self/maps;
 * a deleted file's too), -1 where there is no /proc. */
int tst_maps_under(const char *dir);
/* 1 if descriptor fd has FD_CLOEXEC, 0 if not, -1 if it is not open. */
int tst_fd_cloexec(int fd);
/* A field of /proc/self/smaps ("Rss", "FilePmdMapped", ...) for the mapping
 * that holds addr, in KiB; -1 if no mapping holds it or there is no /proc. */
long tst_smaps_kib(const void *addr, const char *field);

/* Runs fn(ctx) in a forked child and returns its exit code (0..255), or
 * 128 + signal if it died. The child must not use cmocka's asserts (they
 * would unwind into the parent's copy of the test runner): return a code. */
int tst_run_child(int (*fn)(void *ctx), void *ctx);

/* A child that runs fn(ctx, from_parent, to_parent) while the parent talks
 * to it one byte at a time; for tests that need two live processes. */
typedef struct {
    pid_t pid;
    int to_child, from_child;
} tst_child;
int tst_child_start(tst_child *c, int (*fn)(void *ctx, int from_parent, int to_parent), void *ctx);
int tst_child_send(tst_child *c, char byte); /* 0 or -1 */
int tst_child_recv(tst_child *c);            /* the byte, or -1 at EOF/error */
int tst_child_wait(tst_child *c);            /* exit code, or 128 + signal */
void tst_child_kill(tst_child *c);           /* SIGKILL, then wait */
/* For fn: one byte each way. */
int tst_pipe_send(int fd, char byte);
int tst_pipe_recv(int fd);

/* Returned by tst_with_private_mount when no mount could be made here. */
#  define TST_NO_MOUNT 77
/* Runs fn(mountpoint, ctx) in a child with `fstype` (options `opts`)
 * mounted in a private mount namespace (as root, or as an unprivileged user
 * through a user namespace), so nothing outlives the child. Returns fn's
 * result (0..255), 128 + signal, or TST_NO_MOUNT with the reason printed. */
int tst_with_private_mount(const char *fstype, const char *opts,
                           int (*fn)(const char *mnt, void *ctx), void *ctx);
#endif

#endif /* ND_TEST_SUPPORT_H */
