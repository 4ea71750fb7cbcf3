/*
 * nd_memlimit.c - runs a benchmark inside a memory cgroup (memlimit.h), for the
 * suites that are not C: the .NET, Lucene.NET, Python and Java memory-limited
 * rows all go through this program, and nd_bench through the same code.
 *
 *   nd_memlimit check
 *       exit 0 when a memory cgroup can be made here, else 77 with the reason
 *   nd_memlimit run [--limit BYTES] [--stat FILE] -- COMMAND [ARG...]
 *       makes a cgroup (limited to BYTES, default none), runs COMMAND in it with
 *       ND_MEMLIMIT_CGROUP set to the cgroup's directory, then writes the
 *       cgroup's figures (JSON) to FILE or stderr, removes the cgroup and exits
 *       with COMMAND's status (77 without running it where no cgroup can be made)
 *   nd_memlimit limit [--cgroup DIR] [--cache] BYTES|max
 *       sets the limit of the cgroup (default $ND_MEMLIMIT_CGROUP); with --cache,
 *       BYTES of page cache on top of everything else the cgroup holds now
 *       (its usage less its page cache), so that a process's own memory does not
 *       eat the budget; prints the figures afterwards (JSON)
 *   nd_memlimit stat [--cgroup DIR]
 *       prints the cgroup's figures (JSON)
 *   nd_memlimit evict PATH...
 *       drops the page-cache pages of files (a directory: its files), as before
 *       every cold measurement; prints the bytes still cached (JSON)
 *   nd_memlimit cached PATH...
 *       prints how many bytes of the files are in the page cache (JSON)
 *
 * BYTES takes a suffix K, M or G (powers of 1024).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memlimit.h"

#define SKIP 77

static void usage(void)
{
    fputs("usage: nd_memlimit check\n"
          "       nd_memlimit run [--limit BYTES] [--stat FILE] -- COMMAND [ARG...]\n"
          "       nd_memlimit limit [--cgroup DIR] [--cache] BYTES|max\n"
          "       nd_memlimit stat [--cgroup DIR]\n"
          "       nd_memlimit evict PATH...\n"
          "       nd_memlimit cached PATH...\n",
          stderr);
    exit(2);
}

static int parse_bytes(const char *s, int64_t *out)
{
    if (strcmp(s, "max") == 0) {
        *out = -1;
        return 0;
    }
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || v < 0)
        return -1;
    int shift = 0;
    switch (*end) {
    case 'K':
    case 'k':
        shift = 10;
        end++;
        break;
    case 'M':
    case 'm':
        shift = 20;
        end++;
        break;
    case 'G':
    case 'g':
        shift = 30;
        end++;
        break;
    default: break;
    }
    if (*end != '\0' || v > (INT64_MAX >> shift))
        return -1;
    *out = (int64_t)v << shift;
    return 0;
}

static void print_stat(FILE *f, const ndml_cgroup *cg, const ndml_stat *st)
{
    fprintf(f,
            "{\"cgroup\": \"%s\", \"version\": %d, \"limit\": %lld, \"usage\": %lld, "
            "\"peak\": %lld, \"file\": %lld, \"shmem\": %lld, \"anon\": %lld, "
            "\"limit_hits\": %lld, \"oom_kills\": %lld}\n",
            cg->dir, cg->v2 ? 2 : 1, (long long)st->limit, (long long)st->usage,
            (long long)st->peak, (long long)st->file, (long long)st->shmem, (long long)st->anon,
            (long long)st->limit_hits, (long long)st->oom_kills);
}

static int cmd_check(void)
{
    ndml_cgroup cg;
    if (ndml_create(&cg, "nd-memlimit-check") != 0) {
        fprintf(stderr, "nd_memlimit: SKIPPED: %s\n", cg.error);
        return SKIP;
    }
    int rc = 0;
    if (ndml_set_limit(&cg, 64 << 20) != 0) {
        fprintf(stderr, "nd_memlimit: SKIPPED: %s\n", cg.error);
        rc = SKIP;
    }
    if (ndml_remove(&cg) != 0) {
        fprintf(stderr, "nd_memlimit: %s\n", cg.error);
        return 1;
    }
    if (rc == 0)
        printf("nd_memlimit: memory cgroups can be made here (cgroup v%d)\n", cg.v2 ? 2 : 1);
    return rc;
}

static ndml_cgroup run_cg;
static volatile sig_atomic_t child_pid;

static void forward(int sig)
{
    if (child_pid > 0)
        kill((pid_t)child_pid, sig);
}

static int cmd_run(int argc, char **argv)
{
    int64_t limit = -1;
    const char *stat_file = NULL;
    int i = 0;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "--limit") == 0 && i + 1 < argc) {
            if (parse_bytes(argv[++i], &limit) != 0)
                usage();
        } else if (strcmp(argv[i], "--stat") == 0 && i + 1 < argc) {
            stat_file = argv[++i];
        } else {
            usage();
        }
    }
    if (i + 1 >= argc)
        usage();
    char **command = argv + i + 1;
    if (ndml_create(&run_cg, "nd-memlimit") != 0) {
        fprintf(stderr, "nd_memlimit: SKIPPED, %s NOT RUN: %s\n", command[0], run_cg.error);
        return SKIP;
    }
    if (limit >= 0 && ndml_set_limit(&run_cg, limit) != 0) {
        fprintf(stderr, "nd_memlimit: %s\n", run_cg.error);
        ndml_remove(&run_cg);
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = forward;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "nd_memlimit: fork: %s\n", strerror(errno));
        ndml_remove(&run_cg);
        return 1;
    }
    if (pid == 0) {
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        if (ndml_join(&run_cg, 0) != 0) {
            fprintf(stderr, "nd_memlimit: %s\n", run_cg.error);
            _exit(126);
        }
        setenv("ND_MEMLIMIT_CGROUP", run_cg.dir, 1);
        execvp(command[0], command);
        fprintf(stderr, "nd_memlimit: %s: %s\n", command[0], strerror(errno));
        _exit(127);
    }
    child_pid = pid;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    child_pid = 0;
    ndml_stat st;
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (ndml_read_stat(&run_cg, &st) == 0) {
        FILE *f = stat_file != NULL ? fopen(stat_file, "w") : stderr;
        if (f == NULL) {
            fprintf(stderr, "nd_memlimit: %s: %s\n", stat_file, strerror(errno));
            rc = rc != 0 ? rc : 1;
        } else {
            if (f == stderr)
                fputs("nd_memlimit: ", stderr);
            print_stat(f, &run_cg, &st);
            if (f != stderr)
                fclose(f);
        }
        if (st.oom_kills > 0)
            fprintf(stderr,
                    "nd_memlimit: the OOM killer ended %lld process(es) in %s: its limit "
                    "left too little for the processes' own memory\n",
                    (long long)st.oom_kills, run_cg.dir);
    }
    if (ndml_remove(&run_cg) != 0) {
        fprintf(stderr, "nd_memlimit: WARNING: %s\n", run_cg.error);
        rc = rc != 0 ? rc : 1;
    }
    return rc;
}

static const char *cgroup_arg(int *argc, char ***argv)
{
    const char *dir = getenv("ND_MEMLIMIT_CGROUP");
    if (*argc >= 2 && strcmp((*argv)[0], "--cgroup") == 0) {
        dir = (*argv)[1];
        *argc -= 2;
        *argv += 2;
    }
    return dir;
}

static int cmd_limit(int argc, char **argv)
{
    const char *dir = cgroup_arg(&argc, &argv);
    int cache = 0;
    if (argc >= 1 && strcmp(argv[0], "--cache") == 0) {
        cache = 1;
        argc--, argv++;
    }
    int64_t bytes;
    if (argc != 1 || parse_bytes(argv[0], &bytes) != 0 || (cache && bytes < 0))
        usage();
    ndml_cgroup cg;
    ndml_stat st;
    if (ndml_attach(&cg, dir) != 0) {
        fprintf(stderr, "nd_memlimit: %s\n", cg.error);
        return 1;
    }
    if (cache) {
        if (ndml_read_stat(&cg, &st) != 0) {
            fprintf(stderr, "nd_memlimit: %s\n", cg.error);
            return 1;
        }
        int64_t own = st.usage - (st.file > 0 ? st.file : 0);
        bytes += own > 0 ? own : 0;
    }
    if (ndml_set_limit(&cg, bytes) != 0 || ndml_read_stat(&cg, &st) != 0) {
        fprintf(stderr, "nd_memlimit: %s\n", cg.error);
        return 1;
    }
    print_stat(stdout, &cg, &st);
    return 0;
}

static int cmd_stat(int argc, char **argv)
{
    const char *dir = cgroup_arg(&argc, &argv);
    if (argc != 0)
        usage();
    ndml_cgroup cg;
    ndml_stat st;
    if (ndml_attach(&cg, dir) != 0 || ndml_read_stat(&cg, &st) != 0) {
        fprintf(stderr, "nd_memlimit: %s\n", cg.error);
        return 1;
    }
    print_stat(stdout, &cg, &st);
    return 0;
}

static int cmd_evict(int argc, char **argv, int drop)
{
    if (argc < 1)
        usage();
    int64_t total = 0, cached = 0;
    for (int i = 0; i < argc; i++) {
        int64_t b = 0, c = 0;
        char why[700];
        if (ndml_residency(argv[i], drop, &b, &c, why, sizeof(why)) != 0) {
            fprintf(stderr, "nd_memlimit: %s: %s\n", drop ? "evict" : "cached", why);
            return 1;
        }
        total += b;
        cached += c;
    }
    printf("{\"bytes\": %lld, \"%s\": %lld}\n", (long long)total, drop ? "cached_after" : "cached",
           (long long)cached);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        usage();
    const char *cmd = argv[1];
    argc -= 2;
    argv += 2;
    if (strcmp(cmd, "check") == 0 && argc == 0)
        return cmd_check();
    if (strcmp(cmd, "run") == 0)
        return cmd_run(argc, argv);
    if (strcmp(cmd, "limit") == 0)
        return cmd_limit(argc, argv);
    if (strcmp(cmd, "stat") == 0)
        return cmd_stat(argc, argv);
    if (strcmp(cmd, "evict") == 0)
        return cmd_evict(argc, argv, 1);
    if (strcmp(cmd, "cached") == 0)
        return cmd_evict(argc, argv, 0);
    usage();
    return 2;
}
