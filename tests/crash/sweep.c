/*
 * sweep.c - nativedir's durability contract at every cut point of a run that
 * crash_protocol recorded on the crash-model file system.
 *
 *   crash_sweep LOG                  every cut must keep the contract
 *   crash_sweep LOG --control WHAT   a negative control: the run was recorded
 *                                    with a sync made a no-op (noop_sync.c);
 *                                    the cuts must find lost data
 *
 * The log is replayed once per model (model.h: CM_STRICT, CM_JOURNALED); after
 * every operation of a scenario the state a power cut would leave, and each
 * torn variant of it, is checked against what the calls that had returned
 * promised, as the header (native/include/nativedir.h) words it:
 *   - nd_output_sync: "every byte written so far is durable on return", and
 *     nd_fsync: "the file's bytes are durable": a file holding version V
 *     holds at least V's first POS bytes exactly, POS being the last position
 *     synced; past them only V's own bytes or zeros (an unsynced tail, a
 *     direct tail's padding), never more than was written, rounded to a
 *     block; once everything written was synced, exactly POS bytes.
 *   - nd_sync_dir: "creates, renames and deletes in the directory are
 *     durable": each name holds what it held when the last nd_sync_dir
 *     returned, or what it held at some moment since (nd_rename and a
 *     replacing create are atomic: never a mix, and a name that was never
 *     missing is never missing); and the directory itself is there.
 * Names the directory never had are a violation too. Only what a call that
 * had returned promised is required: a call in flight at the cut may have
 * taken effect or not.
 */
#ifndef _GNU_SOURCE
#  define _GNU_SOURCE
#endif
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "content.h"
#include "counts.h"
#include "rel_util.h"
#include "model.h"

/* the most a direct output pads its tail to (posix/file.c: ND_GUESSED_ALIGN_MAX) */
#define PAD_MAX ((uint64_t)64 << 10)
#define MAX_SCENARIOS 32
#define MAX_TORN 64
#define SHOW 6 /* violations printed per scenario and model */

typedef struct {
    uint64_t vid, ino;
    uint64_t synced, begun;
    uint8_t *expect; /* content_fill of [0, have) */
    uint64_t have;
} version;

typedef struct {
    char *name;
    uint64_t *inos; /* what the name held since the last nd_sync_dir; 0 = absent */
    size_t n, cap;
} window;

typedef struct {
    char name[64], path[256];
    uint64_t dir;     /* 0 until nd_open_dir returned */
    int dir_promised; /* an nd_sync_dir returned: the directory must be there */
    window *w;
    size_t nw;
    version *v;
    size_t nv;
    long cuts, torn, promises, shown;
    long lost[3]; /* violations by kind */
} scenario;

/* what a violation broke: the directory, a name's binding, a file's bytes */
enum { V_DIR, V_NAME, V_BYTES };
static const char *const kind_names[] = {"directory", "name", "bytes"};

static scenario scen[MAX_SCENARIOS];
static size_t n_scen;
static scenario *cur;
static char last_mark[512];
static size_t op_index;
static const char *model_name;

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (p == NULL)
        abort();
    return p;
}

static void violation(const cm_view *v, int kind, const char *fmt, ...)
{
    cur->lost[kind]++;
    if (cur->shown++ >= SHOW)
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    char torn[64] = "";
    if (v->torn_ino != 0)
        snprintf(torn, sizeof(torn), ", inode %" PRIu64 " torn at %" PRIu64, v->torn_ino,
                 v->torn_end);
    fprintf(stderr, "VIOLATION (%s) [%s, %s model, after log record %zu%s; last mark: %.*s]: %s\n",
            kind_names[kind], cur->name, model_name, op_index, torn, (int)strcspn(last_mark, "\n"),
            last_mark, msg);
}

static void window_add(window *w, uint64_t ino);

static window *find_window(scenario *s, const char *name)
{
    for (size_t i = 0; i < s->nw; i++)
        if (strcmp(s->w[i].name, name) == 0)
            return &s->w[i];
    return NULL;
}

static window *get_window(scenario *s, const char *name)
{
    window *w = find_window(s, name);
    if (w != NULL)
        return w;
    s->w = xrealloc(s->w, (s->nw + 1) * sizeof(*s->w));
    w = &s->w[s->nw++];
    memset(w, 0, sizeof(*w));
    w->name = strdup(name);
    /* a name first seen now was absent when the window opened: the last
     * nd_sync_dir (narrow) or nd_open_dir saw every name there was */
    window_add(w, 0);
    return w;
}

static int window_has(const window *w, uint64_t ino)
{
    for (size_t i = 0; i < w->n; i++)
        if (w->inos[i] == ino)
            return 1;
    return 0;
}

static void window_add(window *w, uint64_t ino)
{
    if (window_has(w, ino))
        return;
    if (w->n == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 4;
        w->inos = xrealloc(w->inos, w->cap * sizeof(*w->inos));
    }
    w->inos[w->n++] = ino;
}

/* every name's binding now joins what it may show after a cut */
static void widen(scenario *s, const cm_model *m)
{
    uint64_t ino;
    const char *name;
    for (size_t i = 0; (name = cm_live_entry(m, s->dir, i, &ino)) != NULL; i++)
        window_add(get_window(s, name), ino);
    for (size_t i = 0; i < s->nw; i++)
        if (cm_live_lookup(m, s->dir, s->w[i].name) == 0)
            window_add(&s->w[i], 0);
}

/* nd_sync_dir returned: each name may show only what it holds now */
static void narrow(scenario *s, const cm_model *m)
{
    for (size_t i = 0; i < s->nw; i++)
        s->w[i].n = 0;
    widen(s, m);
}

static version *version_of_ino(scenario *s, uint64_t ino)
{
    for (size_t i = s->nv; i-- > 0;)
        if (s->v[i].ino == ino)
            return &s->v[i];
    return NULL;
}

static version *version_of_vid(scenario *s, uint64_t vid)
{
    for (size_t i = 0; i < s->nv; i++)
        if (s->v[i].vid == vid)
            return &s->v[i];
    return NULL;
}

static const uint8_t *expected(version *v, uint64_t len)
{
    if (len > v->have) {
        v->expect = xrealloc(v->expect, len);
        content_fill(v->expect + v->have, len - v->have, v->vid, v->have);
        v->have = len;
    }
    return v->expect;
}

static void check_version(const cm_view *view, const char *name, version *v, const uint8_t *d,
                          uint64_t len)
{
    if (len < v->synced) {
        violation(view, V_BYTES,
                  "'%s' (version %" PRIu64 ") has %" PRIu64 " bytes, but %" PRIu64
                  " were promised durable",
                  name, v->vid, len, v->synced);
        return;
    }
    const uint8_t *e = expected(v, v->begun > len ? v->begun : len);
    if (memcmp(d, e, v->synced) != 0) {
        uint64_t at = 0;
        while (d[at] == e[at])
            at++;
        violation(view, V_BYTES,
                  "'%s' (version %" PRIu64 ") differs at byte %" PRIu64 " of the %" PRIu64
                  " promised durable",
                  name, v->vid, at, v->synced);
        return;
    }
    if (v->begun == v->synced && len != v->synced) {
        violation(view, V_BYTES,
                  "'%s' (version %" PRIu64 ") has %" PRIu64 " bytes: all %" PRIu64
                  " written were synced, and no more",
                  name, v->vid, len, v->synced);
        return;
    }
    uint64_t limit = (v->begun + PAD_MAX - 1) / PAD_MAX * PAD_MAX;
    if (len > limit) {
        violation(view, V_BYTES,
                  "'%s' (version %" PRIu64 ") has %" PRIu64 " bytes, more than the %" PRIu64
                  " written (padded)",
                  name, v->vid, len, v->begun);
        return;
    }
    for (uint64_t i = v->synced; i < len; i++)
        if (d[i] != 0 && (i >= v->begun || d[i] != e[i])) {
            violation(view, V_BYTES,
                      "'%s' (version %" PRIu64 ") byte %" PRIu64
                      " past the synced ones is neither its own nor zero",
                      name, v->vid, i);
            return;
        }
}

static void check_cut(const cm_view *view)
{
    scenario *s = cur;
    if (s->dir == 0)
        return; /* nd_open_dir has not returned: nothing was promised */
    uint64_t d = cm_view_resolve(view, s->path);
    if (d == 0) {
        if (s->dir_promised)
            violation(view, V_DIR, "directory '%s' is gone, though nd_sync_dir returned on it",
                      s->path);
        return;
    }
    if (d != s->dir) {
        violation(view, V_DIR, "'%s' is another directory than the one opened", s->path);
        return;
    }
    uint64_t ino;
    const char *name;
    for (size_t i = 0; (name = cm_view_entry(view, d, i, &ino)) != NULL; i++)
        if (find_window(s, name) == NULL)
            violation(view, V_NAME, "'%s' persisted, a name the directory never had", name);
    for (size_t i = 0; i < s->nw; i++) {
        window *w = &s->w[i];
        uint64_t p = cm_view_lookup(view, d, w->name);
        version *v = p ? version_of_ino(s, p) : NULL;
        if (!window_has(w, p)) {
            version *was = NULL;
            for (size_t j = 0; j < w->n && was == NULL; j++)
                was = w->inos[j] ? version_of_ino(s, w->inos[j]) : NULL;
            if (p == 0)
                violation(view, V_NAME,
                          "'%s' is missing; since the last nd_sync_dir it held version %" PRIu64
                          " and was never missing",
                          w->name, was ? was->vid : 0);
            else
                violation(view, V_NAME,
                          "'%s' holds %s%" PRIu64 ", which it did not hold since the last "
                          "nd_sync_dir returned",
                          w->name, v ? "version " : "inode ", v ? v->vid : p);
            continue;
        }
        if (v == NULL)
            continue; /* absent, or not a file the recorder wrote */
        size_t len;
        const uint8_t *data = cm_view_data(view, p, &len);
        check_version(view, w->name, v, data, len);
    }
}

static int starts(const char *s, size_t n, const char *prefix)
{
    size_t k = strlen(prefix);
    return n >= k && memcmp(s, prefix, k) == 0;
}

static void on_mark(const cm_op *op, const cm_model *m)
{
    char text[512];
    size_t n = op->len < sizeof(text) - 1 ? (size_t)op->len : sizeof(text) - 1;
    memcpy(text, op->data, n);
    text[n] = '\0';
    memcpy(last_mark, text, n + 1);
    char a[256], b[256];
    uint64_t x, y;
    if (starts(text, n, "scenario ")) {
        if (n_scen == MAX_SCENARIOS || sscanf(text, "scenario %63s %255s", a, b) != 2) {
            fprintf(stderr, "crash_sweep: bad mark: %s", text);
            exit(2);
        }
        cur = &scen[n_scen++];
        snprintf(cur->name, sizeof(cur->name), "%.63s", a);
        snprintf(cur->path, sizeof(cur->path), "%s", b);
        return;
    }
    if (cur == NULL)
        return;
    scenario *s = cur;
    if (starts(text, n, "end ")) {
        cur = NULL;
    } else if (starts(text, n, "E open_dir")) {
        s->dir = cm_live_resolve(m, s->path);
        if (s->dir == 0) {
            fprintf(stderr, "crash_sweep: '%s' is not in the log after nd_open_dir\n", s->path);
            exit(2);
        }
        widen(s, m);
    } else if (sscanf(text, "E create %255s %" SCNu64, a, &x) == 2) {
        s->v = xrealloc(s->v, (s->nv + 1) * sizeof(*s->v));
        version *v = &s->v[s->nv++];
        memset(v, 0, sizeof(*v));
        v->vid = x;
        v->ino = cm_live_lookup(m, s->dir, a);
        if (v->ino == 0) {
            fprintf(stderr, "crash_sweep: '%s' is not in the log after nd_create_output\n", a);
            exit(2);
        }
    } else if (sscanf(text, "B write %" SCNu64 " %" SCNu64, &x, &y) == 2) {
        version *v = version_of_vid(s, x);
        if (v != NULL)
            v->begun += y;
    } else if (sscanf(text, "E sync %" SCNu64 " %" SCNu64, &x, &y) == 2) {
        version *v = version_of_vid(s, x);
        if (v != NULL)
            v->synced = y;
        s->promises++;
    } else if (starts(text, n, "E sync_dir")) {
        narrow(s, m);
        s->dir_promised = 1;
        s->promises++;
    }
}

static void reset(void)
{
    for (size_t i = 0; i < n_scen; i++) {
        scenario *s = &scen[i];
        for (size_t j = 0; j < s->nw; j++) {
            free(s->w[j].name);
            free(s->w[j].inos);
        }
        free(s->w);
        for (size_t j = 0; j < s->nv; j++)
            free(s->v[j].expect);
        free(s->v);
    }
    memset(scen, 0, sizeof(scen));
    n_scen = 0;
    cur = NULL;
}

typedef struct {
    char name[64];
    long cuts, torn, promises, violations;
    long lost[3];
} result;

/* one replay of the whole log under one model; fills res[] per scenario */
static size_t sweep(const cm_log *log, int mode, result *res)
{
    reset();
    model_name = mode == CM_STRICT ? "strict" : "journaled";
    cm_model *m = cm_model_new(mode);
    for (op_index = 0; op_index < cm_log_count(log); op_index++) {
        const cm_op *op = cm_log_op(log, op_index);
        if (cm_apply(m, op) != 0) {
            fprintf(stderr, "crash_sweep: log record %zu: %s\n", op_index, cm_model_error(m));
            exit(2);
        }
        if (op->type == CL_MARK) {
            on_mark(op, m);
            continue;
        }
        if (cur == NULL || !cm_op_is_cut_point(op))
            continue;
        if (cur->dir != 0)
            widen(cur, m);
        cm_view base = {m, 0, 0};
        check_cut(&base);
        cur->cuts++;
        uint64_t inos[MAX_TORN], ends[MAX_TORN];
        size_t nt = cm_torn_points(m, inos, ends, MAX_TORN);
        for (size_t t = 0; t < nt && t < MAX_TORN; t++) {
            cm_view torn = {m, inos[t], ends[t]};
            check_cut(&torn);
            cur->torn++;
        }
    }
    cm_model_free(m);
    for (size_t i = 0; i < n_scen; i++) {
        memcpy(res[i].name, scen[i].name, sizeof(res[i].name));
        res[i].cuts = scen[i].cuts;
        res[i].torn = scen[i].torn;
        res[i].promises = scen[i].promises;
        res[i].violations = 0;
        for (int k = 0; k < 3; k++) {
            res[i].lost[k] = scen[i].lost[k];
            res[i].violations += scen[i].lost[k];
        }
    }
    size_t n = n_scen;
    reset();
    return n;
}

int main(int argc, char **argv)
{
    /* a control must trip the check that guards what it broke: a no-op
     * directory fsync loses names, a no-op file fsync loses bytes */
    const char *control = NULL;
    int control_kind = -1;
    if (argc == 4 && strcmp(argv[2], "--control") == 0) {
        control = argv[3];
        control_kind = strcmp(control, "dir") == 0    ? V_NAME
                       : strcmp(control, "file") == 0 ? V_BYTES
                                                      : -1;
    }
    if ((control == NULL && argc != 2) || (control != NULL && control_kind < 0)) {
        fprintf(stderr, "usage: crash_sweep LOG [--control dir|file]\n");
        return 2;
    }
    char err[512];
    cm_log *log = cm_log_load(argv[1], err, sizeof(err));
    if (log == NULL) {
        fprintf(stderr, "crash_sweep: %s\n", err);
        return 2;
    }
    result strict[MAX_SCENARIOS], journaled[MAX_SCENARIOS];
    size_t ns = sweep(log, CM_STRICT, strict);
    size_t nj = sweep(log, CM_JOURNALED, journaled);
    cm_log_free(log);
    if (ns == 0 || ns != nj) {
        fprintf(stderr, "crash_sweep: no scenarios in the log (did the recorder run?)\n");
        return 2;
    }
    long cuts = 0, torn = 0, scuts = 0, storn = 0, promises = 0, lost_strict = 0,
         lost_journaled = 0;
    long kinds[3] = {0, 0, 0};
    for (size_t i = 0; i < ns; i++) {
        printf("%-14s strict: %4ld cuts %4ld torn %5ld violations | journaled: %4ld cuts %4ld "
               "torn %5ld violations | %ld promises\n",
               strict[i].name, strict[i].cuts, strict[i].torn, strict[i].violations,
               journaled[i].cuts, journaled[i].torn, journaled[i].violations, strict[i].promises);
        cuts += strict[i].cuts + journaled[i].cuts;
        torn += strict[i].torn + journaled[i].torn;
        scuts += strict[i].cuts;
        storn += strict[i].torn;
        promises += strict[i].promises;
        lost_strict += strict[i].violations;
        lost_journaled += journaled[i].violations;
        for (int k = 0; k < 3; k++)
            kinds[k] += strict[i].lost[k];
        if (control == NULL) {
            char fields[512];
            snprintf(fields, sizeof(fields),
                     "cuts=%ld\ttorn=%ld\tjcuts=%ld\tjtorn=%ld\tpromises=%ld\tlost=%ld\tjlost=%ld",
                     strict[i].cuts, strict[i].torn, journaled[i].cuts, journaled[i].torn,
                     strict[i].promises, strict[i].violations, journaled[i].violations);
            crash_row("c", (int)i, strict[i].name, fields);
        }
    }
    char what[1024];
    if (control == NULL) {
        int ok = lost_strict == 0 && lost_journaled == 0;
        snprintf(
            what, sizeof(what),
            "nativedir's C API, %zu scenarios recorded on the crash-model file system: every "
            "cut point checked against the header's contract (%ld cuts + %ld torn-write states "
            "under the strict model, as many under the journaled one; %ld promises made): "
            "%ld violations",
            ns, scuts, storn, promises, lost_strict + lost_journaled);
        rel_count("crash_c_protocol", cuts + torn, "cut states", ok ? "pass" : "fail", what);
        return ok ? 0 : 1;
    }
    /* a control passes when the cuts catch what it broke */
    int caught = kinds[control_kind] > 0;
    snprintf(what, sizeof(what),
             "negative control: the same run with every %s fsync a no-op must lose data: under "
             "the strict model %ld violations (%ld of names, %ld of bytes, %ld of directories), "
             "%ld under the journaled one, over %ld cut states",
             control_kind == V_NAME ? "directory" : "file", lost_strict, kinds[V_NAME],
             kinds[V_BYTES], kinds[V_DIR], lost_journaled, cuts + torn);
    char fields[512], label[128];
    snprintf(fields, sizeof(fields), "cuts=%ld\ttorn=%ld\tlost=%ld\tjlost=%ld", scuts, storn,
             lost_strict, lost_journaled);
    snprintf(label, sizeof(label), "C protocol, every %s fsync a no-op",
             control_kind == V_NAME ? "directory" : "file");
    crash_row("control", control_kind == V_NAME ? 0 : 1, label, fields);
    char id[128];
    snprintf(id, sizeof(id), "crash_c_control_%s", control);
    rel_count(id, kinds[control_kind], "violations found", caught ? "pass" : "fail", what);
    if (!caught)
        fprintf(stderr, "crash_sweep: the control '%s' found no lost %s: the check cannot fail\n",
                control, kind_names[control_kind]);
    return caught ? 0 : 1;
}
