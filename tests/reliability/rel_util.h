/*
 * rel_util.h - what the reliability tests share: scratch directories, plain
 * POSIX file checks (independent of the library under test) and the count
 * lines that tests/reliability/report.py turns into docs/reliability.md.
 */
#ifndef ND_REL_UTIL_H
#define ND_REL_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* A fresh directory under $TMPDIR (or /tmp), named after `tag`; aborts on failure. */
char *rel_mkdtemp(const char *tag);
/* rm -rf of a scratch directory (never follows symlinks). */
void rel_rmtree(const char *path);
/* dir/name joined into a static-free buffer the caller frees. */
char *rel_join(const char *dir, const char *name);
/* Whole contents of path into a malloc'd buffer; NULL (errno set) if unreadable. */
uint8_t *rel_slurp(const char *path, size_t *len);
/* Creates path with exactly these bytes (and fsyncs it); 0 or -1. */
int rel_write_file(const char *path, const void *data, size_t len);
/* 1 if path holds exactly these bytes. */
int rel_file_is(const char *path, const void *data, size_t len);
/* Deterministic bytes: pattern `seed` at file offset `off`. */
void rel_fill(uint8_t *dst, size_t len, uint32_t seed, uint64_t off);

/*
 * One result row: printed as a machine-readable line
 *   ND-REL-COUNT<TAB>case<TAB>count<TAB>unit<TAB>result<TAB>what
 * and written to $ND_REL_COUNTS/<case>.tsv when that variable is set.
 * result is "pass", "fail" or "skipped".
 */
void rel_count(const char *case_id, long long count, const char *unit, const char *result,
               const char *what);

#endif /* ND_REL_UTIL_H */
