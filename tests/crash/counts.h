/*
 * counts.h - the crash sweeps' power-cut table lines (their rows of the
 * reliability table are rel_util.h's rel_count):
 *   ND-CRASH-ROW<TAB>table<TAB>order<TAB>label<TAB>key=value...
 * (a row of the power-cut table), printed and, when $ND_REL_COUNTS is set,
 * written there (crash-<table>-<order>.crash).
 */
#ifndef ND_CRASH_COUNTS_H
#define ND_CRASH_COUNTS_H

/* fields: "key=value" pairs separated by tabs */
void crash_row(const char *table, int order, const char *label, const char *fields);

#endif /* ND_CRASH_COUNTS_H */
