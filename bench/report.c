/*
 * report.c - result rows: measuring, statistics, ratios to the limit, the
 * plain-text table and the JSON every language's benchmark shares.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "bench.h"

static row rows[BENCH_MAX_ROWS];
static int nrows;

row *bench_row(const char *group, const char *name, const char *baseline)
{
    if (nrows == BENCH_MAX_ROWS)
        die("too many result rows");
    row *r = &rows[nrows++];
    memset(r, 0, sizeof(*r));
    r->group = group;
    snprintf(r->name, sizeof(r->name), "%s", name);
    snprintf(r->baseline, sizeof(r->baseline), "%s", baseline != NULL ? baseline : "");
    r->cached_pct = NOT_SET;
    r->ratio = NOT_SET;
    r->speedup = r->speedup_cpus = NOT_SET;
    r->paired = NOT_SET;
    r->cpu_median = r->cpu_ratio = NOT_SET;
    r->cpu_us_per_op = NOT_SET;
    r->also_ratio = r->also_paired = NOT_SET;
    r->limit_pct = NOT_SET;
    r->met = r->also_met = -1;
    return r;
}

row *bench_find(const char *group, const char *name)
{
    for (int i = 0; i < nrows; i++)
        if (strcmp(rows[i].group, group) == 0 && strcmp(rows[i].name, name) == 0)
            return &rows[i];
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double bench_median(const double *v, int n)
{
    double s[BENCH_MAX_RUNS];
    memcpy(s, v, (size_t)n * sizeof(double));
    qsort(s, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

typedef struct {
    row *r;
    run_fn fn;
    void *ctx;
    void (*done)(void *ctx);
} job;

static job queue[BENCH_MAX_ROWS];
static int queued;

void bench_queue(row *r, run_fn fn, const void *ctx, size_t ctx_size, void (*done)(void *ctx))
{
    if (queued == BENCH_MAX_ROWS)
        die("too many queued rows");
    void *copy = malloc(ctx_size);
    if (copy == NULL)
        die("out of memory");
    memcpy(copy, ctx, ctx_size);
    queue[queued++] = (job){r, fn, copy, done};
}

static void statistics(row *r)
{
    double k = r->scale > 0 ? r->scale : 1;
    int have_cached = 0;
    if (r->per_op_ns) {
        for (int i = 0; i < r->n; i++) {
            if (r->ops[i] <= 0)
                die("%s / %s: run %d measured no operations", r->group, r->name, i);
            r->ms[i] = r->ms[i] * 1e6 / r->ops[i];
            r->cpu[i] = r->cpu[i] * 1e6 / r->ops[i];
        }
        k = 1;
    } else if (r->unit != NULL) {
        /* a rate: the same order statistics, but of ops per second, and the CPU
         * cost per operation (rows doing different counts stay comparable) */
        double per_op[BENCH_MAX_RUNS];
        for (int i = 0; i < r->n; i++) {
            if (r->ms[i] <= 0 || r->ops[i] <= 0)
                die("%s / %s: run %d measured no operations", r->group, r->name, i);
            per_op[i] = r->cpu[i] > 0 ? r->cpu[i] * 1e3 / r->ops[i] : 0;
            r->ms[i] = r->ops[i] * 1e3 / r->ms[i];
        }
        double cpu = bench_median(per_op, r->n);
        r->cpu_us_per_op = cpu > 0 ? cpu : NOT_SET;
        for (int i = 0; i < r->n; i++)
            have_cached |= r->cached[i] >= 0;
        if (have_cached)
            r->cached_pct = bench_median(r->cached, r->n);
        r->cpu_median = NOT_SET; /* CPU per run means nothing across different counts */
        r->median = bench_median(r->ms, r->n);
        r->min = r->max = r->ms[0];
        for (int i = 1; i < r->n; i++) {
            r->min = r->ms[i] < r->min ? r->ms[i] : r->min;
            r->max = r->ms[i] > r->max ? r->ms[i] : r->max;
        }
        return;
    }
    for (int i = 0; i < r->n; i++) {
        r->ms[i] *= k;
        r->cpu[i] *= k;
        have_cached |= r->cached[i] >= 0;
    }
    r->cpu_median = bench_median(r->cpu, r->n);
    r->median = bench_median(r->ms, r->n);
    r->min = r->max = r->ms[0];
    for (int i = 1; i < r->n; i++) {
        r->min = r->ms[i] < r->min ? r->ms[i] : r->min;
        r->max = r->ms[i] > r->max ? r->ms[i] : r->max;
    }
    if (have_cached)
        r->cached_pct = bench_median(r->cached, r->n);
}

void bench_run_queued(bench *b)
{
    run_out out;
    /* warm-up: page cache, branch predictors, lazy allocations */
    for (int j = 0; j < queued; j++)
        queue[j].fn(b, queue[j].ctx, &out);
    for (int i = 0; i < b->runs; i++) {
        for (int k = 0; k < queued; k++) {
            job *q = &queue[(i + k) % queued];
            out = (run_out){0, NOT_SET, 0};
            q->r->ms[i] = q->fn(b, q->ctx, &out);
            q->r->cpu[i] = out.cpu;
            q->r->cached[i] = out.cached;
            q->r->ops[i] = out.ops;
        }
    }
    for (int j = 0; j < queued; j++) {
        row *r = queue[j].r;
        r->n = b->runs;
        statistics(r);
        fprintf(stderr, "  %-20s %-52s %10.3f %s\n", r->group, r->name, r->median,
                r->unit != NULL ? r->unit : "ms");
        if (queue[j].done != NULL)
            queue[j].done(queue[j].ctx);
        free(queue[j].ctx);
    }
    queued = 0;
}

/* Rounds are interleaved, so run i of both rows saw about the same load. */
static double paired_ratio(const row *r, const row *base)
{
    double q[BENCH_MAX_RUNS];
    for (int i = 0; i < r->n; i++)
        q[i] = base->ms[i] > 0 ? r->ms[i] / base->ms[i] : 0;
    return bench_median(q, r->n);
}

void bench_finish_ratios(void)
{
    for (int i = 0; i < nrows; i++) {
        row *r = &rows[i];
        if (r->also[0] != '\0') {
            /* the second comparison may be missing (a tool not installed): no ratio then */
            row *also = bench_find(r->group, r->also);
            if (also != NULL && also->median > 0)
                r->also_ratio = r->median / also->median;
            if (also != NULL && also->n == r->n && r->n > 0)
                r->also_paired = paired_ratio(r, also);
        }
        if (r->baseline[0] == '\0')
            continue;
        row *base = bench_find(r->group, r->baseline);
        if (base == NULL)
            die("row '%s' names a missing baseline '%s'", r->name, r->baseline);
        if (base->median > 0) {
            r->ratio = r->median / base->median;
            r->speedup = base->median / r->median;
        }
        if (base->cpu_median > 0)
            r->cpu_ratio = r->cpu_median / base->cpu_median;
        if (base->n == r->n && r->n > 0)
            r->paired = paired_ratio(r, base);
    }
}

/* A row and its baseline run back-to-back in every round, so the per-round
 * ratio cancels load that drifts between rounds; the ratio of the two medians
 * takes each median from whichever round it fell in (one run missed a
 * target at 1.35 on medians whose rounds said 1.25). */
double bench_judged_ratio(const row *r)
{
    return r->paired >= 0 ? r->paired : r->ratio;
}

void bench_target_ratio(row *r, double limit)
{
    snprintf(r->target, sizeof(r->target), "<= %.2f", limit);
    double v = bench_judged_ratio(r);
    r->met = v >= 0 && v <= limit;
}

void bench_print_table(const bench *b)
{
    const char *group = "";
    double load[1] = {0};
    getloadavg(load, 1);
    printf(
        "\nnativedir C benchmark: %lld MiB file on %s (%s), %d runs + 1 warm-up, times in ms,\n"
        "load average %.2f. ratio = median / baseline median; paired = median of per-round\n"
        "ratios, what a target on a ratio is judged on; cpu = CPU ms of the timed part, cpu-rat\n"
        "its ratio (immune to waiting for a CPU)\n",
        (long long)(b->size >> 20), b->work, b->fs_type, b->runs, load[0]);
    printf("CPU speeds at a spin loop, relative to the fastest (start / end of the run):");
    for (int c = 0; c < b->ncpus; c++)
        printf(" %d: %.2f / %.2f", c, b->cpu_speed[0][c], b->cpu_speed[1][c]);
    printf("\n");
    int width = 50; /* the name column: the group's longest name, so its columns line up */
    for (int i = 0; i < nrows; i++) {
        const row *r = &rows[i];
        if (strcmp(group, r->group) != 0) {
            group = r->group;
            width = 50;
            for (int k = i; k < nrows && strcmp(rows[k].group, group) == 0; k++)
                if ((int)strlen(rows[k].name) > width)
                    width = (int)strlen(rows[k].name);
            if (r->per_op_ns)
                printf("\n%s (in %s: lower is better; cpu = CPU ns per call)", group, r->unit);
            else if (r->unit != NULL)
                printf("\n%s (in %s: higher is better; cpu = CPU us per op)", group, r->unit);
            else
                printf("\n%s", group);
            printf("\n  %-*s %9s %9s %9s %7s %7s %9s %7s %-21s %s\n", width, "name", "median",
                   "min", "max", "ratio", "paired", "cpu", "cpu-rat", "target", "met");
        }
        char ratio[16] = "limit", paired[16] = "", cratio[16] = "", extra[96] = "";
        if (r->cpu_ratio >= 0)
            snprintf(cratio, sizeof(cratio), "%.3f", r->cpu_ratio);
        if (r->ratio >= 0)
            snprintf(ratio, sizeof(ratio), "%.3f", r->ratio);
        if (r->paired >= 0)
            snprintf(paired, sizeof(paired), "%.3f", r->paired);
        if (r->cached_pct >= 0)
            snprintf(extra, sizeof(extra), "  cached %.1f%%", r->cached_pct);
        if (r->speedup >= 0 && strcmp(r->group, "ConcurrentCloneReads") == 0)
            snprintf(extra, sizeof(extra), "  speed-up %.2fx", r->speedup);
        size_t len = strlen(extra);
        if (r->speedup_cpus > 0) {
            snprintf(extra + len, sizeof(extra) - len, ", per CPU %.2fx", r->speedup_cpus);
            len = strlen(extra);
        }
        if (r->also[0] != '\0' && r->also_ratio >= 0)
            snprintf(extra + len, sizeof(extra) - len, "  %.3f (paired %.3f) of %.24s",
                     r->also_ratio, r->also_paired, r->also);
        else if (r->also[0] != '\0')
            snprintf(extra + len, sizeof(extra) - len, "  no ratio to %.24s (not measured)",
                     r->also);
        double cpu = r->unit != NULL && !r->per_op_ns ? r->cpu_us_per_op : r->cpu_median;
        printf("  %-*s %9.2f %9.2f %9.2f %7s %7s %9.2f %7s %-21s %s%s\n", width, r->name, r->median,
               r->min, r->max, ratio, paired, cpu, cratio, r->target,
               r->met < 0 ? ""
               : r->met   ? "yes"
                          : "NO",
               extra);
    }
    fflush(stdout);
}

static void print_rounds(const char *label, const row *r)
{
    printf("      %-26.26s", label);
    for (int k = 0; k < r->n; k++)
        printf(" %.4g", r->ms[k]);
    printf("\n");
}

void bench_print_misses(void)
{
    int header = 0;
    for (int i = 0; i < nrows; i++) {
        const row *r = &rows[i];
        if (r->met != 0)
            continue;
        if (!header)
            printf("\nMissed targets, round by round (so that a miss says why):\n");
        header = 1;
        printf("  %s / %s: target %s\n", r->group, r->name, r->target);
        print_rounds("this row", r);
        const row *base = r->baseline[0] ? bench_find(r->group, r->baseline) : NULL;
        const row *also = r->also[0] ? bench_find(r->group, r->also) : NULL;
        for (int w = 0; w < 2; w++) {
            const row *o = w == 0 ? base : also;
            if (o == NULL)
                continue;
            print_rounds(o->name, o);
            if (o->n != r->n)
                continue;
            printf("      %-26.26s", w == 0 ? "ratio to the baseline" : "ratio to the second");
            for (int k = 0; k < r->n; k++)
                printf(" %.3f", o->ms[k] > 0 ? r->ms[k] / o->ms[k] : 0);
            printf("\n");
        }
        if (r->n > 0 && r->cpu[0] > 0) {
            printf("      %-26.26s", "CPU time, this row");
            for (int k = 0; k < r->n; k++)
                printf(" %.4g", r->cpu[k]);
            printf("\n");
        }
    }
    fflush(stdout);
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

/* An empty field (no baseline, target or note) is JSON null. */
static void json_str_or_null(FILE *f, const char *s)
{
    if (s[0])
        json_str(f, s);
    else
        fputs("null", f);
}

static void json_num(FILE *f, double v)
{
    if (v < 0 || !isfinite(v))
        fputs("null", f);
    else
        fprintf(f, "%.6g", v);
}

int bench_write_json(const bench *b, const char *path)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    struct utsname u;
    char host[400] = "unknown";
    if (uname(&u) == 0)
        snprintf(host, sizeof(host), "%s %s %s", u.sysname, u.release, u.machine);
    char date[32];
    time_t t = time(NULL);
    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    double load[1] = {-1};
    if (getloadavg(load, 1) != 1)
        load[0] = -1;
    fprintf(f, "{\"suite\": \"c\", \"file_mib\": %lld, \"host\": ", (long long)(b->size >> 20));
    json_str(f, host);
    fprintf(f, ", \"date\": \"%s\", \"runs\": %d, \"fs\": ", date, b->runs);
    json_str(f, b->fs_type);
    fprintf(f, ", \"command\": ");
    json_str(f, b->command);
    fprintf(f, ", \"dio_align\": %u, \"loadavg\": ", b->dio_align);
    json_num(f, load[0]);
    for (int k = 0; k < 2; k++) {
        fputs(k == 0 ? ", \"cpu_speed_start\": [" : "], \"cpu_speed_end\": [", f);
        for (int c = 0; c < b->ncpus; c++) {
            fputs(c > 0 ? ", " : "", f);
            json_num(f, b->cpu_speed[k][c]);
        }
    }
    fputs("]", f);
    fputs(",\n \"results\": [\n", f);
    for (int i = 0; i < nrows; i++) {
        const row *r = &rows[i];
        fputs("  {\"group\": ", f);
        json_str(f, r->group);
        fputs(", \"name\": ", f);
        json_str(f, r->name);
        fputs(", \"unit\": ", f);
        json_str(f, r->unit != NULL ? r->unit : "ms");
        fputs(", \"median\": ", f);
        json_num(f, r->median);
        fputs(", \"min\": ", f);
        json_num(f, r->min);
        fputs(", \"max\": ", f);
        json_num(f, r->max);
        fprintf(f, ", \"runs\": %d, \"baseline\": ", r->n);
        json_str_or_null(f, r->baseline);
        fputs(", \"ratio\": ", f);
        json_num(f, r->baseline[0] ? r->ratio : NOT_SET);
        fputs(", \"ratio_paired\": ", f);
        json_num(f, r->baseline[0] ? r->paired : NOT_SET);
        fputs(", \"cpu_median\": ", f);
        json_num(f, r->cpu_median);
        fputs(", \"cpu_ratio\": ", f);
        json_num(f, r->baseline[0] ? r->cpu_ratio : NOT_SET);
        /* each round's figure (a rate, a time or ns per call, as the median), so
         * that a missed target can show how its rounds went (runner.py) */
        fputs(", \"rounds\": [", f);
        for (int k = 0; k < r->n; k++) {
            fputs(k > 0 ? ", " : "", f);
            json_num(f, r->ms[k]);
        }
        fputs("], \"target\": ", f);
        json_str_or_null(f, r->target);
        fprintf(f, ", \"met\": %s, \"alloc_bytes\": null, \"cached_pct\": ",
                r->met < 0 ? "null"
                : r->met   ? "true"
                           : "false");
        json_num(f, r->cached_pct);
        fputs(", \"speedup\": ", f);
        json_num(f, strcmp(r->group, "ConcurrentCloneReads") == 0 ? r->speedup : NOT_SET);
        if (r->speedup_cpus > 0) {
            fputs(", \"speedup_cpus\": ", f);
            json_num(f, r->speedup_cpus);
        }
        if (r->limit_pct > 0) {
            fputs(", \"limit_pct\": ", f);
            json_num(f, r->limit_pct);
        }
        if (r->unit != NULL && !r->per_op_ns) {
            fputs(", \"cpu_us_per_op\": ", f);
            json_num(f, r->cpu_us_per_op);
        }
        if (r->also[0] != '\0') {
            fputs(", \"also\": [{\"baseline\": ", f);
            json_str(f, r->also);
            fputs(", \"ratio\": ", f);
            json_num(f, r->also_ratio);
            fputs(", \"ratio_paired\": ", f);
            json_num(f, r->also_paired);
            fputs(", \"target\": ", f);
            json_str_or_null(f, r->also_target);
            fprintf(f, ", \"met\": %s}]",
                    r->also_met < 0 ? "null"
                    : r->also_met   ? "true"
                                    : "false");
        }
        fputs(", \"note\": ", f);
        json_str_or_null(f, r->note);
        fprintf(f, "}%s\n", i + 1 < nrows ? "," : "");
    }
    fputs(" ]}\n", f);
    return fclose(f) == 0 ? 0 : -1;
}
