/*
 * crash_test.c - SIGKILL the crash writer (crash_writer.c) at random points,
 * many times, and after every kill check what it had acknowledged:
 *   - every byte of the log acknowledged as synced is there, byte for byte
 *     (and a buffered log holds nothing but the right bytes beyond that);
 *   - `state` is wholly one version, never torn: at least the last version
 *     acknowledged as renamed, at most the last one acknowledged as prepared.
 * SIGKILL ends the process, not the machine: the page cache survives, so
 * this checks the protocol and the atomicity of each step, not power loss.
 *
 * usage: rel_crash WRITER [KILLS] [SECONDS]   (env ND_REL_SEED fixes the schedule)
 * The time budget bounds the run on a slow machine; the count of kills is reported.
 */
#ifndef _GNU_SOURCE
#  define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "crash_format.h"
#include "rel_util.h"

static const char *writer;
static long max_kills = 300;
static double max_seconds = 40;
static long kills, synced_bytes_checked, renames_checked, states_checked, kill_steps;

typedef struct {
    long log_bytes; /* last S for this generation */
    long prepared;  /* last P, ever */
    long renamed;   /* last R, ever */
} acks;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Reads what the writer said into text (at most cap - 1 bytes), until it has
 * said `lines` lines or closed the pipe or the deadline passed. Returns the
 * bytes held. */
static size_t read_lines(int fd, char *text, size_t used, size_t cap, long lines, double deadline)
{
    for (;;) {
        long seen = 0;
        for (size_t i = 0; i < used; i++)
            seen += text[i] == '\n';
        if (seen >= lines || used + 1 >= cap)
            return used;
        double left = deadline - now();
        if (left <= 0)
            return used;
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return used;
        ssize_t n = read(fd, text + used, cap - 1 - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return used;
        used += (size_t)n;
    }
}

static void parse_acks(char *text, size_t used, long gen, acks *a)
{
    text[used] = '\0';
    for (char *line = text; *line != '\0';) {
        char *end = strchr(line, '\n');
        if (end == NULL)
            fail_msg("writer left a torn line: '%s'", line);
        *end = '\0';
        long x, y;
        if (sscanf(line, "S %ld %ld", &x, &y) == 2 && x == gen)
            a->log_bytes = y;
        else if (sscanf(line, "P %ld", &x) == 1)
            a->prepared = x;
        else if (sscanf(line, "R %ld", &x) == 1)
            a->renamed = x;
        else
            fail_msg("writer said something odd: '%s'", line);
        line = end + 1;
    }
}

static void check_log(const char *root, long gen, long acked)
{
    char name[64];
    snprintf(name, sizeof(name), "log-%ld.bin", gen);
    char *p = rel_join(root, name);
    size_t len = 0;
    uint8_t *got = rel_slurp(p, &len);
    if (acked > 0) {
        if (got == NULL)
            fail_msg("kill %ld: %s is gone after %ld bytes were acknowledged", kills, name, acked);
        if ((long)len < acked)
            fail_msg("kill %ld: %s has %zu bytes, %ld were acknowledged as synced", kills, name,
                     len, acked);
        /* a buffered log holds only the right bytes; a direct one may end in block padding */
        size_t check = (gen & 1) ? (size_t)acked : len;
        uint8_t *want = malloc(check + 1);
        rel_fill(want, check, (uint32_t)gen, 0);
        for (size_t i = 0; i < check; i++)
            if (got[i] != want[i])
                fail_msg("kill %ld: %s differs at byte %zu of %zu (acknowledged %ld)", kills, name,
                         i, len, acked);
        free(want);
        synced_bytes_checked += acked;
    }
    free(got);
    unlink(p); /* keep the scratch directory small */
    free(p);
}

static void check_state(const char *root, const acks *a)
{
    char *p = rel_join(root, "state");
    size_t len = 0;
    uint8_t *got = rel_slurp(p, &len);
    free(p);
    if (got == NULL) {
        if (a->renamed > 0)
            fail_msg("kill %ld: state is gone after version %ld was acknowledged", kills,
                     a->renamed);
        return;
    }
    long v = state_version(got, len);
    free(got);
    if (v < 0)
        fail_msg("kill %ld: state (%zu bytes) is not wholly any version: torn", kills, len);
    if (v < a->renamed)
        fail_msg("kill %ld: state holds version %ld, but %ld was acknowledged", kills, v,
                 a->renamed);
    if (v > a->prepared)
        fail_msg("kill %ld: state holds version %ld, never acknowledged as prepared (%ld)", kills,
                 v, a->prepared);
    states_checked++;
}

static void crash_loop(void **state)
{
    (void)state;
    char *root = rel_mkdtemp("crash");
    const char *env_seed = getenv("ND_REL_SEED");
    unsigned seed = env_seed != NULL ? (unsigned)strtoul(env_seed, NULL, 10)
                                     : (unsigned)time(NULL) ^ (unsigned)getpid();
    printf("crash: seed %u (ND_REL_SEED=%u reproduces the schedule)\n", seed, seed);
    srand(seed);
    acks a = {0, 0, 0};
    long last_renamed = 0;
    double start = now();
    for (long gen = 0; gen < max_kills && now() - start < max_seconds; gen++) {
        int p[2];
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        char g[32], v[32], s[32];
        snprintf(g, sizeof(g), "%ld", gen);
        snprintf(v, sizeof(v), "%ld", a.prepared + 1);
        snprintf(s, sizeof(s), "%d", rand());
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            dup2(p[1], 1);
            execl(writer, writer, root, g, v, s, (char *)NULL);
            _exit(127);
        }
        close(p[1]);
        /* The kill lands after a random number of acknowledged steps (0-11: from before
         * main() to the fourth round) plus 0-6 ms, so it falls inside every step of the
         * protocol however fast or loaded the machine is. */
        static char text[1 << 16];
        long steps = rand() % 12;
        useconds_t extra = (useconds_t)(rand() % 6000);
        size_t used = read_lines(p[0], text, 0, sizeof(text), steps, now() + 10);
        usleep(extra);
        kill(pid, SIGKILL);
        used = read_lines(p[0], text, used, sizeof(text), LONG_MAX, now() + 10);
        close(p[0]);
        a.log_bytes = 0;
        parse_acks(text, used, gen, &a);
        kill_steps += steps;
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
            fail_msg("the writer ended on its own before the kill (status 0x%x): it failed",
                     status);
        kills++;
        check_log(root, gen, a.log_bytes);
        check_state(root, &a);
        if (a.renamed > last_renamed)
            renames_checked += a.renamed - last_renamed;
        last_renamed = a.renamed;
    }
    printf("crash: %ld kills in %.1f s; %ld synced bytes, %ld acknowledged renames, %ld states "
           "checked\n",
           kills, now() - start, synced_bytes_checked, renames_checked, states_checked);
    assert_true(kills >= 50); /* a run too short to mean anything is a failure */
    assert_true(renames_checked > 0);
    rel_rmtree(root);
    free(root);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: rel_crash WRITER [KILLS] [SECONDS]\n");
        return 2;
    }
    writer = argv[1];
    if (argc > 2)
        max_kills = atol(argv[2]);
    if (argc > 3)
        max_seconds = atof(argv[3]);
    const struct CMUnitTest tests[] = {cmocka_unit_test(crash_loop)};
    int failed = cmocka_run_group_tests_name("crash durability", tests, NULL, NULL);
    const char *result = failed ? "fail" : "pass";
    rel_count("crash_kills", kills, "kills", result,
              "writer SIGKILLed after a random number of acknowledged steps (0-11) + 0-6 ms, "
              "inside write/sync/rename/dir-sync rounds");
    rel_count("crash_synced_bytes", synced_bytes_checked, "bytes", result,
              "bytes acknowledged by nd_output_sync (buffered and direct logs), all found intact");
    char what[200];
    snprintf(what, sizeof(what),
             "acknowledged rename+dir-sync steps; `state` wholly one version at all %ld checks",
             states_checked);
    rel_count("crash_renames", renames_checked, "renames", result, what);
    return failed ? 1 : 0;
}
