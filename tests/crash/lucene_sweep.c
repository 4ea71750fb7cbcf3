/*
 * lucene_sweep.c - Lucene's commits at every cut point of a run that a
 * recorder (lucene/Program.cs for Lucene.NET, lucene-java/CrashLucene.java for
 * Lucene in Java: "record") made on the crash-model file system.
 *
 *   lucene_sweep materialize LOG OUT KIND...
 *       replays LOG under the strict model (model.h: CM_STRICT); at every cut
 *       point inside a directory kind's run, the state a power cut would leave
 *       of that kind's index directory, and each torn variant of it, is a cut
 *       state. Cut states that leave the same files with the same bytes and
 *       the same last acknowledged commit are one state to check: each
 *       distinct one is written to OUT/KIND/s<id>/ (a plain directory), listed
 *       in OUT/KIND/states.tsv (id, last acknowledged generation, its live
 *       documents, the cut states it stands for: plain, torn), and every
 *       recorded commit in OUT/KIND/commits.tsv (generation, live documents).
 *       The checker ("check") writes OUT/KIND/verdicts.tsv.
 *   lucene_sweep report OUT [--control dir|file] KIND...
 *       counts the verdicts per kind (ok; empty or partial: no commit, or a
 *       first commit cut short, before any was acknowledged, which breaks no
 *       promise; lost, noopen, checkindex: failures) (weighted by the cut states each state
 *       stands for), prints the power-cut table's rows (counts.h) and the
 *       reliability count: without --control it passes only when
 *       NativeFSDirectory lost nothing (the other kinds are reported); with
 *       it, a negative control recorded with that fsync a no-op
 *       (noop_sync.c), it passes only when the cuts found a loss.
 *
 * The recorder's marks: "lucene begin KIND SUBDIR" before the kind's run,
 * "lucene commit KIND GEN DOCS" once a commit returned, "lucene end KIND".
 */
#ifndef _GNU_SOURCE
#  define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "counts.h"
#include "model.h"
#include "rel_util.h"

#define MAX_KINDS 8
#define MAX_TORN 64

typedef struct {
    uint64_t acked_gen;
    long acked_docs, cuts, torn;
} state;

typedef struct {
    const char *name;
    char sub[256], out[4096];
    uint64_t acked_gen;
    long acked_docs;
    long cuts, torn; /* cut states tried */
    state *st;
    size_t nst, stcap;
    uint64_t *hkey; /* open addressing: 0 = empty */
    size_t *hval, hcap;
    uint64_t *cgen;
    long *cdocs;
    size_t nc, ccap;
} kind;

/* The engines whose commit loops are recorded: the power-cut table each one's rows go to, the
 * prefix of its reliability counts, its control rows' order; each records one kind of its own
 * that is nativedir's (named "native" or ending in "-native"), which must lose nothing. */
typedef struct {
    const char *name, *table, *id;
    int control_order; /* of the directory control; the file control's is the next */
} engine;
static const engine engines[] = {
    {"Lucene.NET", "lucene", "crash_lucene", 2},
    {"Lucene (Java)", "lucene_java", "crash_lucene_java", 4},
};

/* the table's order and labels of the directory kinds the recorders know */
static const struct {
    const char *name, *label;
    const engine *engine;
} known[] = {
    {"native", "NativeFSDirectory (nativedir)", &engines[0]},
    {"mmap", "MMapDirectory (Lucene.NET)", &engines[0]},
    {"niofs", "NIOFSDirectory (Lucene.NET)", &engines[0]},
    {"simplefs", "SimpleFSDirectory (Lucene.NET)", &engines[0]},
    {"java-native", "NativeFSDirectory (nativedir)", &engines[1]},
    {"java-mmap", "MMapDirectory (Lucene)", &engines[1]},
    {"java-niofs", "NIOFSDirectory (Lucene)", &engines[1]},
};
#define N_KNOWN (sizeof(known) / sizeof(known[0]))

static kind kinds[MAX_KINDS];
static size_t n_kinds;

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (p == NULL)
        abort();
    return p;
}

static void die(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "lucene_sweep: ");
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    exit(2);
}

static int is_native(const char *name)
{
    size_t n = strlen(name);
    return strcmp(name, "native") == 0 || (n > 7 && strcmp(name + n - 7, "-native") == 0);
}

static int known_index(const char *name)
{
    for (size_t i = 0; i < N_KNOWN; i++)
        if (strcmp(known[i].name, name) == 0)
            return (int)i;
    return -1;
}

static kind *find_kind(const char *name)
{
    for (size_t i = 0; i < n_kinds; i++)
        if (strcmp(kinds[i].name, name) == 0)
            return &kinds[i];
    return NULL;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

typedef struct {
    const char *name;
    uint64_t ino;
} entry;

static int by_name(const void *a, const void *b)
{
    return strcmp(((const entry *)a)->name, ((const entry *)b)->name);
}

/* what a cut leaves under dir: names in order, kinds, bytes */
static uint64_t hash_tree(const cm_view *v, uint64_t dir, uint64_t h)
{
    entry *e = NULL;
    size_t n = 0;
    uint64_t ino;
    const char *name;
    for (size_t i = 0; (name = cm_view_entry(v, dir, i, &ino)) != NULL; i++) {
        e = xrealloc(e, (n + 1) * sizeof(*e));
        e[n].name = name;
        e[n++].ino = ino;
    }
    if (n > 1)
        qsort(e, n, sizeof(*e), by_name);
    for (size_t i = 0; i < n; i++) {
        h = fnv(h, e[i].name, strlen(e[i].name) + 1);
        int k = cm_kind(v->m, e[i].ino);
        h = fnv(h, &k, sizeof(k));
        if (k == CL_KIND_FILE) {
            size_t len;
            const uint8_t *d = cm_view_data(v, e[i].ino, &len);
            uint64_t l = len;
            h = fnv(h, &l, sizeof(l));
            h = fnv(h, d, len);
        } else if (k == CL_KIND_DIR) {
            h = hash_tree(v, e[i].ino, h);
        }
    }
    free(e);
    return h;
}

static size_t *slot(kind *k, uint64_t key, int *found)
{
    if (k->hcap == 0 || 2 * (k->nst + 1) > k->hcap) {
        size_t cap = k->hcap ? 2 * k->hcap : 1024;
        uint64_t *keys = calloc(cap, sizeof(*keys));
        size_t *vals = calloc(cap, sizeof(*vals));
        if (keys == NULL || vals == NULL)
            abort();
        for (size_t i = 0; i < k->hcap; i++) {
            if (k->hkey[i] == 0)
                continue;
            size_t j = k->hkey[i] & (cap - 1);
            while (keys[j] != 0)
                j = (j + 1) & (cap - 1);
            keys[j] = k->hkey[i];
            vals[j] = k->hval[i];
        }
        free(k->hkey);
        free(k->hval);
        k->hkey = keys;
        k->hval = vals;
        k->hcap = cap;
    }
    size_t j = key & (k->hcap - 1);
    while (k->hkey[j] != 0 && k->hkey[j] != key)
        j = (j + 1) & (k->hcap - 1);
    *found = k->hkey[j] == key;
    k->hkey[j] = key;
    return &k->hval[j];
}

/* one cut state of kind k: counted, and written out if no earlier one left the same */
static void cut_state(kind *k, const cm_view *v, int torn)
{
    uint64_t d = cm_view_resolve(v, k->sub);
    uint64_t h = 0xcbf29ce484222325ull;
    h = fnv(h, &k->acked_gen, sizeof(k->acked_gen));
    h = d == 0 ? fnv(h, "absent", 6) : hash_tree(v, d, h);
    if (h == 0)
        h = 1;
    int found;
    size_t *id = slot(k, h, &found);
    if (!found) {
        if (k->nst == k->stcap) {
            k->stcap = k->stcap ? 2 * k->stcap : 256;
            k->st = xrealloc(k->st, k->stcap * sizeof(*k->st));
        }
        *id = k->nst;
        state *s = &k->st[k->nst++];
        memset(s, 0, sizeof(*s));
        s->acked_gen = k->acked_gen;
        s->acked_docs = k->acked_docs;
        char path[4200];
        snprintf(path, sizeof(path), "%s/s%zu", k->out, *id);
        if ((d == 0 ? mkdir(path, 0755) : cm_view_write_tree(v, d, path)) != 0)
            die("cannot write %s: %s", path, strerror(errno));
    }
    state *s = &k->st[*id];
    if (torn) {
        s->torn++;
        k->torn++;
    } else {
        s->cuts++;
        k->cuts++;
    }
}

static kind *on_mark(const cm_op *op, kind *cur)
{
    char text[512], a[64], b[256];
    size_t n = op->len < sizeof(text) - 1 ? (size_t)op->len : sizeof(text) - 1;
    memcpy(text, op->data, n);
    text[n] = '\0';
    uint64_t gen;
    long docs;
    if (sscanf(text, "lucene begin %63s %255s", a, b) == 2) {
        kind *k = find_kind(a);
        if (k == NULL)
            die("the log has a run of kind '%s'%s, not asked for", a, "");
        snprintf(k->sub, sizeof(k->sub), "%s", b);
        return k;
    }
    if (sscanf(text, "lucene commit %63s %" SCNu64 " %ld", a, &gen, &docs) == 3) {
        if (cur == NULL || strcmp(cur->name, a) != 0)
            die("a commit mark of '%s' outside its run%s", a, "");
        cur->acked_gen = gen;
        cur->acked_docs = docs;
        if (cur->nc == cur->ccap) {
            cur->ccap = cur->ccap ? 2 * cur->ccap : 32;
            cur->cgen = xrealloc(cur->cgen, cur->ccap * sizeof(*cur->cgen));
            cur->cdocs = xrealloc(cur->cdocs, cur->ccap * sizeof(*cur->cdocs));
        }
        cur->cgen[cur->nc] = gen;
        cur->cdocs[cur->nc++] = docs;
        return cur;
    }
    if (sscanf(text, "lucene end %63s", a) == 1)
        return NULL;
    return cur;
}

static FILE *open_out(const kind *k, const char *file, const char *mode)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s", k->out, file);
    FILE *f = fopen(path, mode);
    if (f == NULL)
        die("cannot open %s: %s", path, strerror(errno));
    return f;
}

static int materialize(const char *log_path, const char *out)
{
    char err[512];
    cm_log *log = cm_log_load(log_path, err, sizeof(err));
    if (log == NULL)
        die("%s%s", err, "");
    for (size_t i = 0; i < n_kinds; i++) {
        snprintf(kinds[i].out, sizeof(kinds[i].out), "%s/%s", out, kinds[i].name);
        if (mkdir(kinds[i].out, 0755) != 0)
            die("cannot make %s: %s", kinds[i].out, strerror(errno));
    }
    cm_model *m = cm_model_new(CM_STRICT);
    kind *cur = NULL;
    for (size_t i = 0; i < cm_log_count(log); i++) {
        const cm_op *op = cm_log_op(log, i);
        if (cm_apply(m, op) != 0)
            die("log record: %s%s", cm_model_error(m), "");
        if (op->type == CL_MARK) {
            cur = on_mark(op, cur);
            continue;
        }
        if (cur == NULL || !cm_op_is_cut_point(op))
            continue;
        cm_view base = {m, 0, 0};
        cut_state(cur, &base, 0);
        uint64_t inos[MAX_TORN], ends[MAX_TORN];
        size_t nt = cm_torn_points(m, inos, ends, MAX_TORN);
        for (size_t t = 0; t < nt && t < MAX_TORN; t++) {
            cm_view torn = {m, inos[t], ends[t]};
            cut_state(cur, &torn, 1);
        }
    }
    cm_model_free(m);
    cm_log_free(log);
    for (size_t i = 0; i < n_kinds; i++) {
        kind *k = &kinds[i];
        if (k->cuts == 0)
            die("no cut points of '%s' in the log (did the recorder run it?)%s", k->name, "");
        FILE *f = open_out(k, "states.tsv", "w");
        for (size_t j = 0; j < k->nst; j++)
            fprintf(f, "%zu\t%" PRIu64 "\t%ld\t%ld\t%ld\n", j, k->st[j].acked_gen,
                    k->st[j].acked_docs, k->st[j].cuts, k->st[j].torn);
        fclose(f);
        f = open_out(k, "commits.tsv", "w");
        for (size_t j = 0; j < k->nc; j++)
            fprintf(f, "%" PRIu64 "\t%ld\n", k->cgen[j], k->cdocs[j]);
        fclose(f);
        printf("lucene_sweep: %s: %ld cuts + %ld torn-write states, %zu distinct, %zu commits\n",
               k->name, k->cuts, k->torn, k->nst, k->nc);
    }
    return 0;
}

/* the verdicts of the checker, counted in cut states (and distinct states) */
enum { R_OK, R_EMPTY, R_PARTIAL, R_LOST, R_NOOPEN, R_CHECK, R_N };
static const char *const verdicts[R_N] = {"ok", "empty", "partial", "lost", "noopen", "checkindex"};

typedef struct {
    long cuts, torn, states, commits;
    long bad[R_N];    /* cut states */
    long bad_st[R_N]; /* distinct states */
} tally;

static void count_kind(kind *k, tally *t)
{
    memset(t, 0, sizeof(*t));
    FILE *f = open_out(k, "states.tsv", "r");
    size_t id;
    uint64_t gen;
    long docs, cuts, torn;
    while (fscanf(f, "%zu %" SCNu64 " %ld %ld %ld", &id, &gen, &docs, &cuts, &torn) == 5) {
        if (id != k->nst)
            die("%s: states.tsv out of order%s", k->name, "");
        if (k->nst == k->stcap) {
            k->stcap = k->stcap ? 2 * k->stcap : 256;
            k->st = xrealloc(k->st, k->stcap * sizeof(*k->st));
        }
        state *s = &k->st[k->nst++];
        s->acked_gen = gen;
        s->acked_docs = docs;
        s->cuts = cuts;
        s->torn = torn;
        t->cuts += cuts;
        t->torn += torn;
    }
    fclose(f);
    t->states = (long)k->nst;
    f = open_out(k, "commits.tsv", "r");
    while (fscanf(f, "%" SCNu64 " %ld", &gen, &docs) == 2)
        t->commits++;
    fclose(f);
    f = open_out(k, "verdicts.tsv", "r");
    char v[32];
    long seen = 0;
    while (fscanf(f, "%zu %31s %" SCNu64 " %ld", &id, v, &gen, &docs) == 4) {
        int r = -1;
        for (int j = 0; j < R_N; j++)
            if (strcmp(v, verdicts[j]) == 0)
                r = j;
        if (r < 0 || id >= k->nst)
            die("%s: bad verdict line (%s)", k->name, v);
        t->bad[r] += k->st[id].cuts + k->st[id].torn;
        t->bad_st[r]++;
        seen++;
    }
    fclose(f);
    if (seen != t->states)
        die("%s: the checker judged fewer states than were written%s", k->name, "");
}

static long failures(const tally *t)
{
    return t->bad[R_LOST] + t->bad[R_NOOPEN] + t->bad[R_CHECK];
}

static int report(const char *out, const char *control)
{
    tally t[MAX_KINDS];
    char what[2048] = "";
    size_t wl = 0;
    long native_bad = -1, native_states = 0;
    const engine *e = known[known_index(kinds[0].name)].engine;
    for (size_t i = 0; i < n_kinds; i++) {
        kind *k = &kinds[i];
        snprintf(k->out, sizeof(k->out), "%s/%s", out, k->name);
        count_kind(k, &t[i]);
        int ki = known_index(k->name);
        printf(
            "%-10s %5ld cuts %5ld torn (%ld distinct states), %ld commits: lost %ld, not "
            "opening %ld, CheckIndex failures %ld; before the first acknowledged commit: no commit "
            "%ld, a first commit cut short %ld; ok %ld\n",
            k->name, t[i].cuts, t[i].torn, t[i].states, t[i].commits, t[i].bad[R_LOST],
            t[i].bad[R_NOOPEN], t[i].bad[R_CHECK], t[i].bad[R_EMPTY], t[i].bad[R_PARTIAL],
            t[i].bad[R_OK]);
        char fields[512];
        snprintf(fields, sizeof(fields),
                 "cuts=%ld\ttorn=%ld\tstates=%ld\tcommits=%ld\tlost=%ld\tnoopen=%ld\tcheckindex=%ld"
                 "\tpartial=%ld",
                 t[i].cuts, t[i].torn, t[i].states, t[i].commits, t[i].bad[R_LOST],
                 t[i].bad[R_NOOPEN], t[i].bad[R_CHECK], t[i].bad[R_PARTIAL]);
        if (control == NULL) {
            crash_row(e->table, ki, known[ki].label, fields);
        } else {
            char label[256];
            snprintf(label, sizeof(label), "%s on %s, every %s fsync a no-op", e->name,
                     known[ki].label, strcmp(control, "dir") == 0 ? "directory" : "file");
            crash_row("control", e->control_order + (strcmp(control, "dir") == 0 ? 0 : 1), label,
                      fields);
        }
        if (is_native(k->name)) {
            native_bad = failures(&t[i]);
            native_states = t[i].cuts + t[i].torn;
        }
        wl += (size_t)snprintf(what + wl, sizeof(what) - wl,
                               "%s%s: %ld cut states, %ld lost, %ld not opening, %ld CheckIndex "
                               "failures",
                               i ? "; " : "", known[ki].label, t[i].cuts + t[i].torn,
                               t[i].bad[R_LOST], t[i].bad[R_NOOPEN], t[i].bad[R_CHECK]);
        if (wl >= sizeof(what))
            wl = sizeof(what) - 1;
    }
    if (native_bad < 0)
        die("the native kind was not swept%s%s", "", "");
    char text[2600];
    if (control == NULL) {
        snprintf(text, sizeof(text),
                 "%s committing on the crash-model file system, every cut point under "
                 "the strict model, each state opened and CheckIndex'ed: %s",
                 e->name, what);
        char id[64];
        snprintf(id, sizeof(id), "%s_native", e->id);
        rel_count(id, native_states, "cut states", native_bad == 0 ? "pass" : "fail", text);
        if (native_bad != 0)
            fprintf(stderr,
                    "lucene_sweep: NativeFSDirectory lost an acknowledged commit or left "
                    "a broken index at %ld cut states\n",
                    native_bad);
        return native_bad == 0 ? 0 : 1;
    }
    snprintf(text, sizeof(text),
             "negative control: the same run with every %s fsync a no-op must lose commits or "
             "break the index: %s",
             strcmp(control, "dir") == 0 ? "directory" : "file", what);
    char id[64];
    snprintf(id, sizeof(id), "%s_control_%s", e->id, control);
    rel_count(id, native_bad, "bad cut states", native_bad > 0 ? "pass" : "fail", text);
    if (native_bad == 0)
        fprintf(stderr,
                "lucene_sweep: the control '%s' found nothing lost: the check cannot "
                "fail\n",
                control);
    return native_bad > 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    int mat = argc >= 4 && strcmp(argv[1], "materialize") == 0;
    int rep = argc >= 3 && strcmp(argv[1], "report") == 0;
    const char *control = NULL;
    int first = mat ? 4 : 3;
    if (rep && argc >= 5 && strcmp(argv[3], "--control") == 0) {
        control = argv[4];
        first = 5;
        if (strcmp(control, "dir") != 0 && strcmp(control, "file") != 0)
            rep = 0;
    }
    if ((!mat && !rep) || argc <= first || argc - first > MAX_KINDS) {
        fprintf(stderr, "usage: lucene_sweep materialize LOG OUT KIND...\n"
                        "       lucene_sweep report OUT [--control dir|file] KIND...\n");
        return 2;
    }
    for (int i = first; i < argc; i++) {
        if (known_index(argv[i]) < 0 || find_kind(argv[i]) != NULL)
            die("unknown or repeated directory kind '%s'%s", argv[i], "");
        if (known[known_index(argv[i])].engine != known[known_index(argv[first])].engine)
            die("'%s' and '%s' are kinds of two engines: sweep each engine's run apart", argv[i],
                argv[first]);
        kinds[n_kinds++].name = argv[i];
    }
    return mat ? materialize(argv[2], argv[3]) : report(argv[2], control);
}
