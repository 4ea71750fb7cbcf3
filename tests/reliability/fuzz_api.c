/*
 * fuzz_api.c - libFuzzer target: random sequences of API calls, with hostile
 * names, offsets, lengths and handles (forged, stale, wrong kind), checked
 * call by call against an in-memory model of what the library must answer:
 * every file's bytes, which handles are alive, cursors, locks, rings.
 *
 * Each input runs in a scratch directory of its own process (under /dev/shm
 * when it exists, so fsync costs nothing), emptied between inputs. After the
 * calls, everything is closed and the directory is compared with the model
 * byte for byte, and the sandbox around it must hold nothing new.
 *
 * Where several errors apply at once (a stale handle AND a negative length),
 * any of them is accepted; where none applies, the call must succeed with
 * exactly the model's value. Built with -fsanitize=fuzzer,address,undefined.
 */
#ifndef _GNU_SOURCE
#  define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "nativedir.h"
#include "rel_util.h"

/* ---- the input as a stream of choices ------------------------------------- */

typedef struct {
    const uint8_t *p;
    size_t n;
} src;

static uint8_t u8(src *s)
{
    if (s->n == 0)
        return 0;
    s->n--;
    return *s->p++;
}

static uint32_t u16(src *s)
{
    return u8(s) | (uint32_t)u8(s) << 8;
}

static uint64_t u64(src *s)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)u8(s) << (8 * i);
    return v;
}

/* An offset or length: mostly plausible, near `edge` (a length), or hostile. */
static int64_t amount(src *s, int64_t edge)
{
    switch (u8(s) % 9) {
    case 0: return -1 - (int64_t)u8(s);
    case 1: return INT64_MAX - (int64_t)u8(s);
    case 2: return INT64_MIN + (int64_t)u8(s);
    case 3: return edge + (int8_t)u8(s);
    case 4: return edge;
    case 5: return 0;
    default: return (int64_t)(u16(s) % (uint32_t)(edge + 65));
    }
}

/* A range [off, off+len) of something `size` long: boundaries are where bugs
 * live, so most ranges end within two bytes of the end, start near it, or are
 * hostile (negative, huge, overflowing). `from` is where a cursor stands. */
static void range(src *s, int64_t size, int64_t from, int64_t *off, int64_t *len)
{
    int d = (int)(u8(s) % 5) - 2;
    switch (u8(s) % 8) {
    case 0: /* ends at the end, give or take */
        *off = from + (int64_t)(u16(s) % (uint32_t)(size - from + 1 > 0 ? size - from + 1 : 1));
        *len = size - *off + d;
        break;
    case 1: /* starts at the end, give or take */
        *off = size + d;
        *len = u8(s) % 3;
        break;
    case 2: /* everything, give or take */
        *off = from;
        *len = size - from + d;
        break;
    case 3: /* off + len overflows */
        *off = size / 2 + 1;
        *len = INT64_MAX - u8(s);
        break;
    default: *off = amount(s, size); *len = amount(s, size);
    }
}

/* ---- statistics (written at exit for the report) --------------------------- */

static long long n_calls, n_hostile, n_bad_handles, n_bad_names, n_bad_ranges, n_inputs;
static long long n_checked_reads, n_slice_reads;

static void write_stats(void)
{
    const char *path = getenv("ND_FUZZ_STATS");
    if (path == NULL)
        return;
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return;
    fprintf(f,
            "inputs %lld\ncalls %lld\nhostile %lld\nbad_handles %lld\nbad_names %lld\n"
            "bad_ranges %lld\nchecked_reads %lld\nslice_reads %lld\n",
            n_inputs, n_calls, n_hostile, n_bad_handles, n_bad_names, n_bad_ranges, n_checked_reads,
            n_slice_reads);
    fclose(f);
}

/* ---- expectations ----------------------------------------------------------- */

#define E(code) (1u << (unsigned)(-(code)))
#define ANY_VALUE INT64_MIN

static void mismatch(const char *call, int64_t got, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void mismatch(const char *call, int64_t got, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "\nMODEL MISMATCH in %s: got %lld (%s): ", call, (long long)got,
            got < 0 && got >= INT32_MIN ? nd_status_name((int32_t)got) : "value");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nlast error message: %s\n", nd_last_error_message());
    abort(); /* libFuzzer saves the input as a crash */
}

/*
 * errs: the errors that apply (any may come back); if none apply the call must
 * succeed with `value` (ANY_VALUE: any non-negative result).
 */
static int tracing = -1;

static void expect(const char *call, int64_t got, uint32_t errs, int64_t value)
{
    n_calls++;
    if (tracing < 0)
        tracing = getenv("ND_FUZZ_TRACE") != NULL;
    if (tracing) /* ND_FUZZ_TRACE=1 fuzz_api crash-file: the calls leading to a finding */
        fprintf(stderr, "  %s -> %lld (errors allowed 0x%x, value %lld)\n", call, (long long)got,
                errs, (long long)value);
    if (errs != 0) {
        n_hostile++;
        if (got >= 0 || got < -31 || !(errs & E(got)))
            mismatch(call, got, "expected one of the errors 0x%x", errs);
        const char *m = nd_last_error_message();
        if (m == NULL || strcmp(m, "no error") == 0 || strstr(m, call) == NULL)
            mismatch(call, got, "the failure's message \"%s\" does not name the call",
                     m ? m : "(null)");
        return;
    }
    if (got < 0)
        mismatch(call, got, "expected success (%lld)", (long long)value);
    if (value != ANY_VALUE && got != value)
        mismatch(call, got, "expected %lld", (long long)value);
}

/* ---- names ------------------------------------------------------------------ */

/* The name rule, written again from the header's words: one component, 1..255
 * bytes, not "." or "..", no '/' or '\\', strict UTF-8 (no overlongs, no
 * surrogates, nothing above U+10FFFF). */
static int model_name_ok(const char *n, size_t len)
{
    if (len == 0 || len > 255 || strcmp(n, ".") == 0 || strcmp(n, "..") == 0)
        return 0;
    if (memchr(n, '/', len) || memchr(n, '\\', len))
        return 0;
    const uint8_t *s = (const uint8_t *)n;
    for (size_t i = 0; i < len;) {
        uint32_t c = s[i];
        size_t extra;
        uint32_t lo;
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF)
            extra = 1, lo = 0x80, c &= 0x1F;
        else if (c >= 0xE0 && c <= 0xEF)
            extra = 2, lo = 0x800, c &= 0x0F;
        else if (c >= 0xF0 && c <= 0xF4)
            extra = 3, lo = 0x10000, c &= 0x07;
        else
            return 0;
        if (i + extra >= len) /* truncated sequence */
            return 0;
        for (size_t k = 1; k <= extra; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return 0;
            c = c << 6 | (s[i + k] & 0x3F);
        }
        if (c < lo || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
            return 0;
        i += extra + 1;
    }
    return 1;
}

static const char *const plain_names[] = {
    "a", "b", "_0.cfs", "segments_1", "write.lock", "\xc3\xa9t\xc3\xa9.bin", "x.tmp"};
static const char *const hostile_names[] = {
    "",
    ".",
    "..",
    "a/b",
    "../escape",
    "/etc/passwd",
    "a\\b",
    "\xff",
    "\xc0\xaf",
    "\xed\xa0\x80",
    "\xf4\x90\x80\x80",
    "\xe2\x82",
    "..\\..\\x",
    "./a",
    "a/",
    "/",
};

typedef struct inode inode;
struct inode {
    uint8_t *data;
    size_t len;
    int writers;  /* outputs open on it */
    int unknown;  /* two writers overlapped: contents no longer predictable */
    unsigned gen; /* bumped when the bytes change under open inputs */
    int locked;
    int mapped; /* mapped inputs alive on it */
};

#define MAX_NAMES 12
typedef struct {
    char name[300];
    inode *ino; /* NULL: absent */
} entry;

#define MAX_INODES 128 /* more than the calls one input can make */
#define MAX_HANDLES 24
typedef struct {
    nd_handle h;
    inode *ino;
    unsigned gen;
    int determinate;
    int mapped;
    int64_t start, len, pos;
} input_m;

typedef struct {
    nd_handle h;
    inode *ino;
    uint8_t *data;
    size_t len, cap;
    uLong crc;
} output_m;

typedef struct {
    nd_handle h;
    inode *ino;
} lock_m;

#define RING_SLOTS 8
typedef struct {
    uint8_t *buf;
    uint8_t *want; /* NULL: not predictable */
    int64_t len;
    int busy;
} ring_slot;

typedef struct {
    nd_handle h;
    uint32_t depth;
    int in_flight;
    ring_slot slot[RING_SLOTS];
} ring_m;

typedef struct {
    char *path;
    nd_handle dir, dead_dir;
    entry names[MAX_NAMES];
    int n_names;
    inode inodes[MAX_INODES];
    int n_inodes;
    input_m in[MAX_HANDLES];
    int n_in;
    output_m out[MAX_HANDLES / 2];
    int n_out;
    lock_m locks[8];
    int n_locks;
    ring_m rings[3];
    int n_rings;
    nd_handle dead[32];
    int n_dead;
} model;

static char *sandbox, *root;

static inode *new_inode(model *m)
{
    if (m->n_inodes == MAX_INODES)
        return NULL;
    inode *i = &m->inodes[m->n_inodes++];
    memset(i, 0, sizeof(*i));
    return i;
}

static void set_bytes(inode *i, const uint8_t *data, size_t len)
{
    free(i->data);
    i->data = malloc(len + 1);
    if (len > 0)
        memcpy(i->data, data, len);
    i->len = len;
    i->gen++;
}

/* Picks a name: a known one, a hostile one, NULL, or raw bytes from the input.
 * *e is the model's entry for a valid name (NULL when invalid or no room). */
static const char *pick_name(model *m, src *s, char *raw, entry **e, int *valid)
{
    const char *n;
    uint8_t k = u8(s);
    if (k < 150) {
        n = plain_names[k % (sizeof(plain_names) / sizeof(plain_names[0]))];
    } else if (k < 200) {
        n = hostile_names[k % (sizeof(hostile_names) / sizeof(hostile_names[0]))];
    } else if (k < 205) {
        *e = NULL;
        *valid = -1; /* NULL */
        return NULL;
    } else if (k < 215) {
        size_t len = 250 + u8(s) % 12;
        memset(raw, 'n', len);
        raw[len] = '\0';
        n = raw;
    } else {
        size_t len = u8(s) % 24;
        for (size_t i = 0; i < len; i++) {
            raw[i] = (char)u8(s);
            if (raw[i] == '\0')
                raw[i] = '.';
        }
        raw[len] = '\0';
        n = raw;
    }
    *valid = model_name_ok(n, strlen(n));
    *e = NULL;
    if (*valid) {
        for (int i = 0; i < m->n_names; i++)
            if (strcmp(m->names[i].name, n) == 0)
                *e = &m->names[i];
        if (*e == NULL && m->n_names < MAX_NAMES) {
            *e = &m->names[m->n_names++];
            snprintf((*e)->name, sizeof((*e)->name), "%s", n);
            (*e)->ino = NULL;
        }
        if (*e == NULL)
            *valid = -2; /* valid but the model is full: the caller skips the call */
    } else {
        n_bad_names++;
    }
    return n;
}

/* errors a name brings: NULL -> INVALID_ARGUMENT, invalid -> INVALID_NAME */
static uint32_t name_errs(int valid)
{
    return valid == -1 ? E(ND_E_INVALID_ARGUMENT) : valid == 0 ? E(ND_E_INVALID_NAME) : 0;
}

/* ---- handles ------------------------------------------------------------------ */

enum { K_NONE, K_DIR, K_INPUT, K_OUTPUT, K_LOCK, K_RING };

static int live_kind(model *m, nd_handle h, int *index)
{
    if (h == 0)
        return K_NONE;
    if (h == m->dir)
        return K_DIR;
    for (int i = 0; i < m->n_in; i++)
        if (m->in[i].h == h)
            return *index = i, K_INPUT;
    for (int i = 0; i < m->n_out; i++)
        if (m->out[i].h == h)
            return *index = i, K_OUTPUT;
    for (int i = 0; i < m->n_locks; i++)
        if (m->locks[i].h == h)
            return *index = i, K_LOCK;
    for (int i = 0; i < m->n_rings; i++)
        if (m->rings[i].h == h)
            return *index = i, K_RING;
    return K_NONE;
}

/* A handle argument: usually a live one of the wanted kind, sometimes anything. */
static nd_handle pick_handle(model *m, src *s, int want)
{
    uint8_t k = u8(s);
    if (k < 200) {
        switch (want) {
        case K_DIR: return m->dir;
        case K_INPUT: return m->n_in ? m->in[k % m->n_in].h : 0;
        case K_OUTPUT: return m->n_out ? m->out[k % m->n_out].h : 0;
        case K_LOCK: return m->n_locks ? m->locks[k % m->n_locks].h : 0;
        case K_RING: return m->n_rings ? m->rings[k % m->n_rings].h : 0;
        }
    }
    n_bad_handles++;
    switch (k % 6) {
    case 0: return m->n_dead ? m->dead[u8(s) % m->n_dead] : 0; /* closed: stale */
    case 1: return (nd_handle)u64(s);                          /* forged */
    case 2: return m->dead_dir;
    case 3: /* a live handle with a bit flipped */
        return (m->n_in ? m->in[0].h : m->dir) ^ ((nd_handle)1 << (u8(s) % 63));
    case 4: return -(nd_handle)u8(s);
    default: /* a live handle of another kind */
        return m->n_out && want != K_OUTPUT ? m->out[0].h
               : m->n_in && want != K_INPUT ? m->in[0].h
                                            : m->dir;
    }
}

static void bury(model *m, nd_handle h)
{
    static unsigned next;
    if (m->n_dead < 32)
        m->dead[m->n_dead++] = h;
    else
        m->dead[next++ % 32] = h;
}

/* ---- helpers over the model ----------------------------------------------------- */

static int input_predictable(input_m *in)
{
    return in->determinate && !in->ino->unknown && in->ino->writers == 0 && in->ino->gen == in->gen;
}

static uint32_t range_errs(int64_t off, int64_t len, int64_t size)
{
    if (off < 0 || len < 0)
        return n_bad_ranges++, E(ND_E_INVALID_ARGUMENT);
    if (off > size || len > size - off)
        return n_bad_ranges++, E(ND_E_EOF);
    return 0;
}

static void add_input(model *m, nd_handle h, inode *ino, int64_t start, int64_t len, int det,
                      int mapped, unsigned gen)
{
    input_m *in = &m->in[m->n_in++];
    *in = (input_m){h, ino, gen, det, mapped, start, len, 0};
    if (mapped)
        ino->mapped++;
}

static void remove_input(model *m, int i)
{
    if (m->in[i].mapped)
        m->in[i].ino->mapped--;
    m->in[i] = m->in[--m->n_in];
}

static void close_output_model(model *m, int i)
{
    output_m *o = &m->out[i];
    inode *ino = o->ino;
    if (!ino->unknown)
        set_bytes(ino, o->data, o->len);
    ino->writers--;
    free(o->data);
    m->out[i] = m->out[--m->n_out];
}

/* ---- the calls ------------------------------------------------------------------ */

static uint8_t scratch[(1 << 20) + 4096];

static void op_create_output(model *m, src *s)
{
    char raw[300];
    entry *e;
    int valid;
    const char *name = pick_name(m, s, raw, &e, &valid);
    static const uint32_t flags_set[] = {0,
                                         ND_IO_OVERWRITE,
                                         ND_IO_MERGE,
                                         ND_IO_MERGE | ND_IO_OVERWRITE,
                                         ND_IO_SEQUENTIAL,
                                         ND_IO_MMAP,
                                         0x80000000u,
                                         ND_IO_REQUIRE_DIRECT};
    uint32_t flags = flags_set[u8(s) % 8];
    nd_handle dir = pick_handle(m, s, K_DIR);
    if (valid == -2 || m->n_out == MAX_HANDLES / 2)
        return;
    uint32_t errs = name_errs(valid);
    if (flags &
        ~(ND_IO_RANDOM | ND_IO_SEQUENTIAL | ND_IO_MERGE | ND_IO_REQUIRE_DIRECT | ND_IO_OVERWRITE))
        errs |= E(ND_E_INVALID_ARGUMENT);
    int dir_ok = dir == m->dir && dir != 0;
    if (!dir_ok)
        errs |= E(ND_E_BAD_HANDLE);
    if (errs == 0 && e->ino != NULL && !(flags & ND_IO_OVERWRITE))
        errs |= E(ND_E_EXISTS);
    nd_handle h = -5;
    int32_t rc = nd_create_output(dir, name, flags, &h);
    if (rc == ND_E_NOT_SUPPORTED && (flags & ND_IO_REQUIRE_DIRECT) && errs == 0) {
        n_calls++;
        return;
    }
    expect("nd_create_output", rc, errs, ND_OK);
    if (rc != ND_OK) {
        if (h != 0)
            mismatch("nd_create_output", rc, "failed but left *out_output = %lld", (long long)h);
        return;
    }
    /* OVERWRITE replaces the file by a new one renamed over it: readers of the old
     * file (mapped or not) keep reading the old bytes, which the model keeps checking */
    inode *ino = new_inode(m);
    if (ino == NULL)
        abort();
    e->ino = ino;
    ino->writers++;
    output_m *o = &m->out[m->n_out++];
    *o = (output_m){h, ino, NULL, 0, 0, crc32(0L, Z_NULL, 0)};
}

static void op_write(model *m, src *s, int one_byte)
{
    nd_handle h = pick_handle(m, s, K_OUTPUT);
    int idx = -1;
    int ok = live_kind(m, h, &idx) == K_OUTPUT;
    int64_t len;
    uint8_t mode = u8(s);
    if (one_byte)
        len = 1;
    else if (mode < 16)
        len = -1 - (int64_t)u8(s);
    else if (mode < 24)
        len = (int64_t)(65536 + u16(s) * 8); /* crosses the buffer */
    else if (mode < 26)
        len = (int64_t)((1 << 20) + u16(s) % 4096); /* crosses a direct-I/O buffer */
    else
        len = u8(s) % 200;
    const uint8_t *data = scratch;
    if (len > 0) {
        /* the input's own bytes when it has enough, else a pattern */
        if ((size_t)len <= s->n && len < 256) {
            data = s->p;
            s->p += len;
            s->n -= (size_t)len;
        } else {
            rel_fill(scratch, (size_t)len, u8(s), 0);
        }
    }
    uint32_t errs = ok ? 0 : E(ND_E_BAD_HANDLE);
    if (len < 0)
        errs |= (n_bad_ranges++, E(ND_E_INVALID_ARGUMENT));
    int64_t got = one_byte ? nd_write_byte(h, data[0]) : nd_write_bytes(h, data, len);
    expect(one_byte ? "nd_write_byte" : "nd_write_bytes", got, errs, one_byte ? ND_OK : len);
    if (errs == 0) {
        output_m *o = &m->out[idx];
        if (o->len + (size_t)len > o->cap) {
            o->cap = (o->len + (size_t)len) * 2;
            o->data = realloc(o->data, o->cap);
        }
        if (len > 0)
            memcpy(o->data + o->len, data, (size_t)len);
        o->len += (size_t)len;
        o->crc = crc32_z(o->crc, data, (size_t)len);
    }
}

/* A whole file in one step (create, write in pieces, close), at sizes around
 * the buffers' edges, so that reads have something worth reading. */
static void op_make_file(model *m, src *s)
{
    static const int64_t sizes[] = {0,    1,    2,     63,    64,    511,   512,   4095,
                                    4096, 4097, 16383, 16384, 16385, 65535, 65536, 65537};
    char raw[300];
    entry *e;
    int valid;
    const char *name = pick_name(m, s, raw, &e, &valid);
    uint8_t k = u8(s);
    /* big files are slow to make: the direct buffer's edges (256 KiB reads, 1 MiB writes) rarely */
    int64_t size = k < 250   ? sizes[k % (sizeof(sizes) / sizeof(sizes[0]))] + (k & 1)
                   : k < 253 ? (int64_t)(256 << 10) + (k % 3) - 1
                             : (int64_t)(1 << 20) + (k % 3) - 1;
    uint32_t flags = ND_IO_OVERWRITE | (u8(s) & 1 ? ND_IO_MERGE : 0);
    if (valid != 1 || m->dir == 0 || m->n_out == MAX_HANDLES / 2)
        return;
    nd_handle h;
    expect("nd_create_output", nd_create_output(m->dir, name, flags, &h), 0, ND_OK);
    uint32_t seed = u8(s);
    rel_fill(scratch, (size_t)size, seed, 0);
    int64_t cut = size > 0 ? (int64_t)(u16(s) % (uint32_t)size) : 0;
    expect("nd_write_bytes", nd_write_bytes(h, scratch, cut), 0, cut);
    expect("nd_write_bytes", nd_write_bytes(h, scratch + cut, size - cut), 0, size - cut);
    expect("nd_output_position", nd_output_position(h), 0, size);
    expect("nd_output_crc32", nd_output_crc32(h), 0,
           (int64_t)crc32_z(crc32(0L, Z_NULL, 0), scratch, (size_t)size));
    expect("nd_close", nd_close(h), 0, ND_OK);
    bury(m, h);
    e->ino = new_inode(m); /* a replacement: readers of the old file keep its bytes */
    if (e->ino == NULL)
        abort();
    set_bytes(e->ino, scratch, (size_t)size);
}

static void op_output_query(model *m, src *s)
{
    nd_handle h = pick_handle(m, s, K_OUTPUT);
    int idx = -1;
    int ok = live_kind(m, h, &idx) == K_OUTPUT;
    uint32_t errs = ok ? 0 : E(ND_E_BAD_HANDLE);
    switch (u8(s) % 4) {
    case 0:
        expect("nd_output_position", nd_output_position(h), errs,
               ok ? (int64_t)m->out[idx].len : 0);
        break;
    case 1:
        expect("nd_output_crc32", nd_output_crc32(h), errs, ok ? (int64_t)m->out[idx].crc : 0);
        break;
    case 2: expect("nd_output_sync", nd_output_sync(h), errs, ND_OK); break;
    default: {
        int32_t st = nd_output_strategy(h);
        expect("nd_output_strategy", st, errs, ANY_VALUE);
        if (ok && (st < ND_STRATEGY_BUFFERED || st > ND_STRATEGY_DROP_BEHIND))
            mismatch("nd_output_strategy", st, "not a strategy");
    }
    }
}

static void op_close(model *m, src *s)
{
    static const int kinds[] = {K_INPUT, K_OUTPUT, K_LOCK, K_RING, K_INPUT, K_DIR};
    int want = kinds[u8(s) % 6];
    nd_handle h = pick_handle(m, s, want);
    if (want == K_DIR && u8(s) % 4 != 0)
        return; /* the directory is closed rarely: most calls need it */
    int idx = -1;
    int kind = live_kind(m, h, &idx);
    int32_t rc = nd_close(h);
    expect("nd_close", rc, kind == K_NONE ? E(ND_E_BAD_HANDLE) : 0, ND_OK);
    switch (kind) {
    case K_INPUT: remove_input(m, idx); break;
    case K_OUTPUT: close_output_model(m, idx); break;
    case K_LOCK:
        m->locks[idx].ino->locked = 0;
        m->locks[idx] = m->locks[--m->n_locks];
        break;
    case K_RING: {
        ring_m *r = &m->rings[idx];
        for (int i = 0; i < RING_SLOTS; i++) {
            free(r->slot[i].buf);
            free(r->slot[i].want);
        }
        m->rings[idx] = m->rings[--m->n_rings];
        break;
    }
    case K_DIR:
        m->dead_dir = m->dir;
        m->dir = 0;
        break;
    default: return;
    }
    bury(m, h);
}

static void op_reopen_dir(model *m, src *s)
{
    uint8_t k = u8(s) % 4;
    nd_handle h = 0;
    if (k == 0) {
        expect("nd_open_dir", nd_open_dir(NULL, 0, &h), E(ND_E_INVALID_ARGUMENT), 0);
    } else if (k == 1) {
        expect("nd_open_dir", nd_open_dir("", 0, &h), E(ND_E_INVALID_ARGUMENT), 0);
    } else if (k == 2) {
        expect("nd_open_dir", nd_open_dir(root, 0x40, &h), E(ND_E_INVALID_ARGUMENT), 0);
    } else if (m->dir == 0) {
        expect("nd_open_dir", nd_open_dir(root, 0, &h), 0, ND_OK);
        m->dir = h;
    }
}

static void op_open_input(model *m, src *s)
{
    char raw[300];
    entry *e;
    int valid;
    const char *name;
    uint8_t k = u8(s);
    if (k < 128 && m->n_names > 0 && m->names[k % m->n_names].ino != NULL) {
        e = &m->names[k % m->n_names]; /* mostly a file that exists */
        name = e->name;
        valid = 1;
    } else {
        name = pick_name(m, s, raw, &e, &valid);
    }
    static const uint32_t flags_set[] = {0,
                                         ND_IO_MMAP,
                                         ND_IO_MERGE,
                                         ND_IO_RANDOM | ND_IO_WARM,
                                         ND_IO_SEQUENTIAL | ND_IO_PRELOAD,
                                         ND_IO_MMAP | ND_IO_PRELOAD,
                                         ND_IO_MERGE | ND_IO_REQUIRE_DIRECT,
                                         ND_IO_OVERWRITE,
                                         ND_IO_MMAP | ND_IO_REQUIRE_DIRECT,
                                         0x200u};
    uint32_t flags = flags_set[u8(s) % 10];
    nd_handle dir = pick_handle(m, s, K_DIR);
    if (valid == -2 || m->n_in == MAX_HANDLES)
        return;
    uint32_t errs = name_errs(valid);
    if ((flags & (ND_IO_OVERWRITE | 0x200u)) ||
        (flags & (ND_IO_REQUIRE_DIRECT | ND_IO_MMAP)) == (ND_IO_REQUIRE_DIRECT | ND_IO_MMAP))
        errs |= E(ND_E_INVALID_ARGUMENT);
    if (dir != m->dir || dir == 0)
        errs |= E(ND_E_BAD_HANDLE);
    if (errs == 0 && e->ino == NULL)
        errs |= E(ND_E_NOT_FOUND);
    /* a file being written moves its length under a mapping (an index never maps one): skip */
    if (errs == 0 && (flags & ND_IO_MMAP) && e->ino->writers > 0)
        return;
    nd_handle h = -5;
    int32_t rc = nd_open_input(dir, name, flags, &h);
    if (rc == ND_E_NOT_SUPPORTED && (flags & ND_IO_REQUIRE_DIRECT) && errs == 0) {
        n_calls++;
        return;
    }
    expect("nd_open_input", rc, errs, ND_OK);
    if (rc != ND_OK) {
        if (h != 0)
            mismatch("nd_open_input", rc, "failed but left *out_input = %lld", (long long)h);
        return;
    }
    inode *ino = e->ino;
    int64_t len = -1;
    expect("nd_input_length", nd_input_length(h, &len), 0, ND_OK);
    int det = !ino->unknown && ino->writers == 0;
    if (det && len != (int64_t)ino->len)
        mismatch("nd_input_length", len, "the model has %zu bytes", ino->len);
    add_input(m, h, ino, 0, len, det, (flags & ND_IO_MMAP) != 0, ino->gen);
}

/* Bytes the model expects at [off, off+len) of an input, or NULL if unpredictable. */
static const uint8_t *model_bytes(input_m *in, int64_t off)
{
    if (!input_predictable(in))
        return NULL;
    n_checked_reads++;
    n_slice_reads += in->start > 0;
    return in->ino->data + in->start + off;
}

static void op_read(model *m, src *s)
{
    nd_handle h = pick_handle(m, s, K_INPUT);
    int idx = -1;
    int ok = live_kind(m, h, &idx) == K_INPUT;
    input_m *in = ok ? &m->in[idx] : NULL;
    int64_t size = ok ? in->len : 0;
    uint8_t which = u8(s) % 6;
    int64_t off, len;
    range(s, size, which == 4 && ok ? in->pos : 0, &off, &len);
    uint32_t herr = ok ? 0 : E(ND_E_BAD_HANDLE);
    const uint8_t *want;
    switch (which) {
    case 0: { /* positional */
        int64_t room = len > 0 && len <= size ? len : 0;
        uint8_t *dst = malloc((size_t)room + 1);
        int use_null = u8(s) % 16 == 0;
        uint32_t errs = herr | range_errs(off, len, size);
        if (use_null && len > 0)
            errs |= E(ND_E_INVALID_ARGUMENT);
        int64_t got = nd_read_bytes(h, off, use_null ? NULL : dst, len);
        /* an input whose file changed under it may come up short: that is ND_E_IO */
        if (ok && !input_predictable(in) && got == ND_E_IO && errs == 0) {
            n_calls++;
        } else {
            expect("nd_read_bytes", got, errs, len);
            if (got == len && len > 0 && (want = model_bytes(in, off)) != NULL &&
                memcmp(dst, want, (size_t)len) != 0)
                mismatch("nd_read_bytes", got, "bytes differ from the model at %lld",
                         (long long)off);
        }
        free(dst);
        break;
    }
    case 1: { /* seek */
        uint32_t errs = herr;
        if (off < 0)
            errs |= E(ND_E_INVALID_ARGUMENT);
        else if (off > size)
            errs |= E(ND_E_EOF);
        expect("nd_input_seek", nd_input_seek(h, off), errs, ND_OK);
        if (errs == 0)
            in->pos = off;
        break;
    }
    case 2: /* position */
        expect("nd_input_position", nd_input_position(h), herr, ok ? in->pos : 0);
        break;
    case 3: { /* one byte at the cursor */
        int32_t b = nd_read_byte_buffered(h);
        uint32_t errs = herr | (ok && in->pos >= size ? E(ND_E_EOF) : 0);
        if (ok && !input_predictable(in) && b == ND_E_IO && errs == 0) {
            n_calls++;
            break;
        }
        want = ok && errs == 0 ? model_bytes(in, in->pos) : NULL;
        expect("nd_read_byte_buffered", b, errs, want ? *want : ANY_VALUE);
        if (errs == 0)
            in->pos++;
        break;
    }
    case 4: { /* bytes at the cursor */
        int64_t room = len > 0 && len <= size ? len : 0;
        uint8_t *dst = malloc((size_t)room + 1);
        uint32_t errs = herr | (ok ? range_errs(in->pos, len, size) : 0);
        int64_t got = nd_read_buffered(h, dst, len);
        if (ok && !input_predictable(in) && got == ND_E_IO && errs == 0) {
            n_calls++;
        } else {
            expect("nd_read_buffered", got, errs, len);
            if (got == len && len > 0 && (want = model_bytes(in, in->pos)) != NULL &&
                memcmp(dst, want, (size_t)len) != 0)
                mismatch("nd_read_buffered", got, "bytes differ at cursor %lld",
                         (long long)in->pos);
            if (errs == 0)
                in->pos += len;
        }
        free(dst);
        break;
    }
    default: { /* zero-copy window */
        const uint8_t *ptr = NULL;
        uint32_t errs = herr;
        if (off < 0)
            errs |= E(ND_E_INVALID_ARGUMENT);
        else if (off >= size)
            errs |= E(ND_E_EOF);
        int use_null = u8(s) % 16 == 0;
        if (use_null)
            errs |= E(ND_E_INVALID_ARGUMENT);
        int64_t got = nd_input_window(h, off, use_null ? NULL : &ptr);
        if (ok && !input_predictable(in) && got == ND_E_IO && errs == 0) {
            n_calls++;
            break;
        }
        expect("nd_input_window", got, errs, ANY_VALUE);
        if (errs == 0) {
            if (got < 1 || got > size - off)
                mismatch("nd_input_window", got, "window of %lld bytes at %lld of %lld",
                         (long long)got, (long long)off, (long long)size);
            if ((want = model_bytes(in, off)) != NULL && memcmp(ptr, want, (size_t)got) != 0)
                mismatch("nd_input_window", got, "window bytes differ at %lld", (long long)off);
        }
    }
    }
}

static void op_derive(model *m, src *s)
{
    nd_handle h = pick_handle(m, s, K_INPUT);
    int idx = -1;
    int ok = live_kind(m, h, &idx) == K_INPUT;
    uint32_t herr = ok ? 0 : E(ND_E_BAD_HANDLE);
    if (m->n_in == MAX_HANDLES)
        return;
    input_m parent = ok ? m->in[idx] : (input_m){0};
    nd_handle child = -5;
    uint8_t which = u8(s) % 4;
    if (which == 0) {
        expect("nd_input_clone", nd_input_clone(h, &child), herr, ND_OK);
        if (herr == 0)
            add_input(m, child, parent.ino, parent.start, parent.len, parent.determinate,
                      parent.mapped, parent.gen);
    } else if (which == 1) {
        int64_t len = -1;
        int use_null = u8(s) % 16 == 0;
        int32_t rc = nd_input_length(h, use_null ? NULL : &len);
        expect("nd_input_length", rc, herr | (use_null ? E(ND_E_INVALID_ARGUMENT) : 0), ND_OK);
        if (rc == ND_OK && len != parent.len)
            mismatch("nd_input_length", len, "the model has %lld", (long long)parent.len);
    } else {
        int64_t off, len;
        range(s, parent.len, 0, &off, &len);
        uint32_t errs = herr | range_errs(off, len, parent.len);
        expect("nd_input_slice", nd_input_slice(h, off, len, &child), errs, ND_OK);
        if (errs == 0)
            add_input(m, child, parent.ino, parent.start + off, len, parent.determinate,
                      parent.mapped, parent.gen);
        else if (child != 0)
            mismatch("nd_input_slice", child, "failed but left *out_slice set");
    }
}

static void op_dir_call(model *m, src *s)
{
    char raw[300], raw2[300];
    entry *e, *e2;
    int valid, valid2;
    uint8_t which = u8(s) % 7;
    const char *name = pick_name(m, s, raw, &e, &valid);
    nd_handle dir = pick_handle(m, s, K_DIR);
    if (valid == -2)
        return;
    uint32_t errs = name_errs(valid) | (dir != m->dir || dir == 0 ? E(ND_E_BAD_HANDLE) : 0);
    int present = valid == 1 && e->ino != NULL;
    switch (which) {
    case 0: {
        int32_t rc = nd_file_exists(dir, name);
        expect("nd_file_exists", rc, errs, present);
        break;
    }
    case 1: {
        int64_t len = -7;
        int32_t rc = nd_file_length(dir, name, &len);
        uint32_t x = errs | (errs == 0 && !present ? E(ND_E_NOT_FOUND) : 0);
        expect("nd_file_length", rc, x, ND_OK);
        if (rc == ND_OK && !e->ino->unknown && e->ino->writers == 0 && len != (int64_t)e->ino->len)
            mismatch("nd_file_length", len, "the model has %zu", e->ino->len);
        break;
    }
    case 2: {
        int32_t rc = nd_delete_file(dir, name);
        expect("nd_delete_file", rc, errs | (errs == 0 && !present ? E(ND_E_NOT_FOUND) : 0), ND_OK);
        if (rc == ND_OK)
            e->ino = NULL;
        break;
    }
    case 3: {
        const char *to = pick_name(m, s, raw2, &e2, &valid2);
        if (valid2 == -2)
            return;
        uint32_t x = errs | name_errs(valid2);
        if (x == 0 && !present)
            x |= E(ND_E_NOT_FOUND);
        int32_t rc = nd_rename(dir, name, to);
        expect("nd_rename", rc, x, ND_OK);
        if (rc == ND_OK && e != e2) {
            e2->ino = e->ino;
            e->ino = NULL;
        }
        break;
    }
    case 4:
        expect("nd_fsync", nd_fsync(dir, name),
               errs | (errs == 0 && !present ? E(ND_E_NOT_FOUND) : 0), ND_OK);
        break;
    case 5: expect("nd_sync_dir", nd_sync_dir(dir), errs & E(ND_E_BAD_HANDLE), ND_OK); break;
    default: { /* lock */
        if (m->n_locks == 8)
            return;
        nd_handle lk = -5;
        int32_t rc = nd_lock(dir, name, &lk);
        uint32_t x = errs | (errs == 0 && present && e->ino->locked ? E(ND_E_LOCKED) : 0);
        expect("nd_lock", rc, x, ND_OK);
        if (rc == ND_OK) {
            if (!present) {
                e->ino = new_inode(m);
                if (e->ino == NULL)
                    abort();
                set_bytes(e->ino, NULL, 0); /* the lock made an empty file, readable as one */
            }
            e->ino->locked = 1;
            m->locks[m->n_locks++] = (lock_m){lk, e->ino};
        }
    }
    }
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The model's listing: sorted names, NUL-terminated, back to back. */
static size_t model_list(model *m, char *out)
{
    const char *names[MAX_NAMES];
    int n = 0;
    for (int i = 0; i < m->n_names; i++)
        if (m->names[i].ino != NULL)
            names[n++] = m->names[i].name;
    qsort(names, (size_t)n, sizeof(char *), by_name);
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        size_t l = strlen(names[i]) + 1;
        if (out != NULL)
            memcpy(out + used, names[i], l);
        used += l;
    }
    return used;
}

static void op_list(model *m, src *s)
{
    static char want[MAX_NAMES * 260], buf[MAX_NAMES * 260 + 64];
    size_t need = model_list(m, want);
    nd_handle dir = pick_handle(m, s, K_DIR);
    int64_t cap = amount(s, (int64_t)need);
    int null_buf = u8(s) % 8 == 0;
    uint32_t errs = dir != m->dir || dir == 0 ? E(ND_E_BAD_HANDLE) : 0;
    if (cap < 0 || (null_buf && cap > 0))
        errs |= E(ND_E_INVALID_ARGUMENT);
    if (cap > (int64_t)sizeof(buf))
        cap = (int64_t)sizeof(buf); /* never promise more room than there is */
    memset(buf, 0x5A, sizeof(buf));
    int64_t got = nd_list(dir, null_buf ? NULL : buf, cap);
    expect("nd_list", got, errs, (int64_t)need);
    if (errs == 0) {
        if (cap >= (int64_t)need && memcmp(buf, want, need) != 0)
            mismatch("nd_list", got, "names differ from the model");
        size_t untouched = cap >= (int64_t)need ? need : 0;
        for (size_t i = untouched; i < sizeof(buf); i++)
            if ((uint8_t)buf[i] != 0x5A)
                mismatch("nd_list", got, "wrote byte %zu (cap %lld, need %zu)", i, (long long)cap,
                         need);
    }
}

static void op_ring(model *m, src *s)
{
    uint8_t which = u8(s) % 4;
    if (which == 0) {                /* open */
        uint32_t depth = u8(s) % 10; /* 0 and 9: outside 1..8 would also be valid up to 4096 */
        uint32_t flags = u8(s) % 5 == 0 ? 0x10u : (u8(s) & 1);
        if (m->n_rings == 3)
            return;
        nd_handle r = -5;
        uint32_t errs =
            depth == 0 || (flags & ~ND_RING_FORCE_THREADS) ? E(ND_E_INVALID_ARGUMENT) : 0;
        int32_t rc = nd_ring_open(depth, flags, &r);
        if (rc == ND_E_NOT_SUPPORTED && errs == 0) {
            n_calls++;
            return;
        }
        expect("nd_ring_open", rc, errs, ND_OK);
        if (rc == ND_OK) {
            ring_m *rm = &m->rings[m->n_rings++];
            memset(rm, 0, sizeof(*rm));
            rm->h = r;
            rm->depth = depth < RING_SLOTS ? depth : RING_SLOTS;
        }
        return;
    }
    nd_handle r = pick_handle(m, s, K_RING);
    int ridx = -1;
    int rok = live_kind(m, r, &ridx) == K_RING;
    ring_m *rm = rok ? &m->rings[ridx] : NULL;
    if (which == 1) { /* submit */
        nd_handle h = pick_handle(m, s, K_INPUT);
        int idx = -1;
        int iok = live_kind(m, h, &idx) == K_INPUT;
        input_m *in = iok ? &m->in[idx] : NULL;
        int64_t size = iok ? in->len : 0;
        int64_t off, len;
        range(s, size, 0, &off, &len);
        if (len > 65536 && len <= size)
            return;
        int slot = -1;
        if (rok)
            for (int i = 0; i < RING_SLOTS && slot < 0; i++)
                if (!rm->slot[i].busy)
                    slot = i;
        uint32_t errs = (rok ? 0 : E(ND_E_BAD_HANDLE)) | (iok ? 0 : E(ND_E_BAD_HANDLE));
        errs |= range_errs(off, len, size);
        int full = rok && (rm->in_flight >= (int)rm->depth || slot < 0);
        if (full) {
            if (slot < 0 && errs == 0) /* the model ran out of slots before the ring did */
                return;
            errs |= E(ND_E_BUSY); /* with a bad range too, either error may come first */
        }
        uint8_t *dst = malloc(len > 0 && len <= size ? (size_t)len + 1 : 1);
        uint64_t tag = ((uint64_t)u8(s) << 8) | (uint64_t)(slot < 0 ? 0xFF : slot);
        int32_t rc = nd_ring_submit_read(r, h, off, dst, len, tag);
        if (rok && rm->in_flight < (int)rm->depth && rc == ND_E_BUSY && errs == 0) {
            n_calls++; /* io_uring's own queue may be smaller than asked */
            free(dst);
            return;
        }
        expect("nd_ring_submit_read", rc, errs, ND_OK);
        if (rc == ND_OK) {
            ring_slot *sl = &rm->slot[slot];
            sl->buf = dst;
            sl->len = len;
            sl->busy = 1;
            const uint8_t *want = model_bytes(in, off);
            sl->want = NULL;
            if (want != NULL && len > 0) {
                sl->want = malloc((size_t)len);
                memcpy(sl->want, want, (size_t)len);
            }
            rm->in_flight++;
        } else {
            free(dst);
        }
        return;
    }
    if (which == 2) { /* reap */
        uint64_t tags[RING_SLOTS];
        int64_t results[RING_SLOTS];
        int32_t max = (int32_t)(u8(s) % (RING_SLOTS + 1));
        int32_t timeout = rok && rm->in_flight > 0 ? 2000 : 0;
        uint32_t errs = rok ? 0 : E(ND_E_BAD_HANDLE);
        if (max == 0) { /* room for nothing: nothing stored, or refused */
            int32_t n = nd_ring_reap(r, tags, results, 0, 0);
            if (n > 0 || (n < 0 && n != ND_E_INVALID_ARGUMENT && n != ND_E_BAD_HANDLE))
                mismatch("nd_ring_reap", n, "max 0");
            n_calls++;
            return;
        }
        int32_t n = nd_ring_reap(r, tags, results, max, timeout);
        expect("nd_ring_reap", n, errs, ANY_VALUE);
        if (errs != 0 || n == 0) {
            if (errs == 0 && rm->in_flight > 0)
                mismatch("nd_ring_reap", n, "nothing in 2 s with %d reads in flight",
                         rm->in_flight);
            return;
        }
        if (n > max || n > rm->in_flight)
            mismatch("nd_ring_reap", n, "more completions than reads in flight (%d)",
                     rm->in_flight);
        for (int i = 0; i < n; i++) {
            int slot = (int)(tags[i] & 0xFF);
            if (slot >= RING_SLOTS || !rm->slot[slot].busy)
                mismatch("nd_ring_reap", (int64_t)tags[i], "a tag nobody submitted");
            ring_slot *sl = &rm->slot[slot];
            if (results[i] != sl->len && !(sl->want == NULL && results[i] == ND_E_IO))
                mismatch("nd_ring_reap", results[i], "the read asked for %lld bytes",
                         (long long)sl->len);
            if (sl->want != NULL && results[i] == sl->len &&
                memcmp(sl->buf, sl->want, (size_t)sl->len) != 0)
                mismatch("nd_ring_reap", results[i], "completed bytes differ from the model");
            free(sl->buf);
            free(sl->want);
            memset(sl, 0, sizeof(*sl));
            rm->in_flight--;
        }
        return;
    }
    int32_t n = nd_ring_in_flight(r);
    expect("nd_ring_in_flight", n, rok ? 0 : E(ND_E_BAD_HANDLE), rok ? rm->in_flight : 0);
}

static void op_misc(model *m, src *s)
{
    int32_t code = (int32_t)(u8(s) % 40) - 30;
    const char *name = nd_status_name(code);
    if (name == NULL || name[0] == '\0')
        mismatch("nd_status_name", code, "NULL or empty");
    if (nd_last_error_message() == NULL)
        mismatch("nd_last_error_message", 0, "NULL");
    if (nd_abi_version() != ND_ABI_VERSION)
        mismatch("nd_abi_version", nd_abi_version(), "not the header's");
    nd_handle h = pick_handle(m, s, K_INPUT);
    int idx = -1;
    int ok = live_kind(m, h, &idx) == K_INPUT;
    int32_t st = nd_input_strategy(h);
    expect("nd_input_strategy", st, ok ? 0 : E(ND_E_BAD_HANDLE), ANY_VALUE);
    n_calls += 3;

    /* NULL where the library must write a result: refused before anything happens
     * (a create must not leave a file the caller has no handle for) */
    const uint32_t inval = E(ND_E_INVALID_ARGUMENT);
    const uint32_t either = inval | E(ND_E_BAD_HANDLE);
    int64_t len;
    switch (u8(s) % 10) {
    case 0: expect("nd_open_dir", nd_open_dir(root, 0, NULL), inval, 0); break;
    case 1: expect("nd_create_output", nd_create_output(m->dir, "nul", 0, NULL), either, 0); break;
    case 2: expect("nd_open_input", nd_open_input(m->dir, "a", 0, NULL), either, 0); break;
    case 3: expect("nd_input_clone", nd_input_clone(h, NULL), either, 0); break;
    case 4: expect("nd_input_slice", nd_input_slice(h, 0, 0, NULL), either, 0); break;
    case 5: expect("nd_lock", nd_lock(m->dir, "nul", NULL), either, 0); break;
    case 6: expect("nd_ring_open", nd_ring_open(1, 0, NULL), inval, 0); break;
    case 7: expect("nd_file_length", nd_file_length(m->dir, "a", NULL), either, 0); break;
    case 8: expect("nd_input_length", nd_input_length(h, NULL), either, 0); break;
    default:
        len = nd_list(m->dir, NULL, 0); /* the size question: always allowed */
        expect("nd_list", len, m->dir == 0 ? E(ND_E_BAD_HANDLE) : 0,
               m->dir == 0 ? 0 : (int64_t)model_list(m, NULL));
    }
}

/* ---- one input ------------------------------------------------------------------- */

static void empty_dir(const char *path)
{
    DIR *d = opendir(path);
    if (d == NULL)
        abort();
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (unlinkat(dirfd(d), de->d_name, 0) != 0) {
            fprintf(stderr, "fuzz: cannot clean '%s' in %s: %s\n", de->d_name, path,
                    strerror(errno));
            abort();
        }
    }
    closedir(d);
}

/* Closes everything, then holds the real directory against the model. */
static void finish(model *m)
{
    for (int i = m->n_rings - 1; i >= 0; i--) {
        expect("nd_close", nd_close(m->rings[i].h), 0, ND_OK);
        for (int k = 0; k < RING_SLOTS; k++) {
            free(m->rings[i].slot[k].buf);
            free(m->rings[i].slot[k].want);
        }
    }
    while (m->n_out > 0) {
        expect("nd_close", nd_close(m->out[0].h), 0, ND_OK);
        close_output_model(m, 0);
    }
    for (int i = 0; i < m->n_in; i++)
        expect("nd_close", nd_close(m->in[i].h), 0, ND_OK);
    for (int i = 0; i < m->n_locks; i++)
        expect("nd_close", nd_close(m->locks[i].h), 0, ND_OK);
    if (m->dir != 0)
        expect("nd_close", nd_close(m->dir), 0, ND_OK);

    /* every name the model knows, with its bytes; nothing else in the directory */
    int expected = 0;
    for (int i = 0; i < m->n_names; i++) {
        entry *e = &m->names[i];
        if (e->ino == NULL)
            continue;
        expected++;
        char *p = rel_join(root, e->name);
        size_t len = 0;
        uint8_t *got = rel_slurp(p, &len);
        if (got == NULL)
            mismatch("final check", 0, "'%s' is missing from the directory", e->name);
        if (!e->ino->unknown &&
            (len != e->ino->len || (len > 0 && memcmp(got, e->ino->data, len) != 0)))
            mismatch("final check", (int64_t)len, "'%s' holds other bytes than the model's %zu",
                     e->name, e->ino->len);
        free(got);
        free(p);
    }
    DIR *d = opendir(root);
    int seen = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            seen++;
    closedir(d);
    if (seen != expected)
        mismatch("final check", seen, "the directory has %d entries, the model %d", seen, expected);
    /* nothing escaped into the sandbox around it */
    d = opendir(sandbox);
    seen = 0;
    while ((de = readdir(d)) != NULL)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            seen++;
    closedir(d);
    if (seen != 1)
        mismatch("final check", seen, "%d entries beside the directory: a name escaped", seen);
    for (int i = 0; i < m->n_inodes; i++)
        free(m->inodes[i].data);
}

static void cleanup(void)
{
    write_stats();
    if (root != NULL) {
        empty_dir(root);
        rmdir(root);
        rmdir(sandbox);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : NULL;
    if (base != NULL)
        setenv("TMPDIR", base, 0);
    sandbox = rel_mkdtemp("fuzz");
    root = rel_join(sandbox, "d");
    if (mkdir(root, 0700) != 0)
        abort();
    atexit(cleanup);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static model m;
    memset(&m, 0, sizeof(m));
    n_inputs++;
    empty_dir(root);
    if (nd_open_dir(root, 0, &m.dir) != ND_OK)
        abort();
    src s = {data, size};
    for (int ops = 0; s.n > 0 && ops < 96; ops++) {
        switch (u8(&s) % 16) {
        case 0: op_create_output(&m, &s); break;
        case 1: op_make_file(&m, &s); break;
        case 2:
        case 3: op_write(&m, &s, 0); break;
        case 4: op_write(&m, &s, 1); break;
        case 5: op_output_query(&m, &s); break;
        case 6: op_close(&m, &s); break;
        case 7:
        case 8: op_open_input(&m, &s); break;
        case 9:
        case 10: op_read(&m, &s); break;
        case 11: op_derive(&m, &s); break;
        case 12: op_dir_call(&m, &s); break;
        case 13: op_list(&m, &s); break;
        case 14: op_ring(&m, &s); break;
        default:
            if (u8(&s) & 1)
                op_reopen_dir(&m, &s);
            else
                op_misc(&m, &s);
        }
    }
    finish(&m);
    return 0;
}
