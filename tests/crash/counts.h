/*
 * counts.h - the crash sweeps' result lines, for tests/reliability/report.py:
 *   ND-REL-COUNT<TAB>case<TAB>count<TAB>unit<TAB>result<TAB>what
 * (a row of the reliability table) and
 *   ND-CRASH-ROW<TAB>table<TAB>order<TAB>label<TAB>key=value...
 * (a row of the power-cut table), printed and, when $ND_REL_COUNTS is set,
 * written there (<case>.tsv and crash-<table>-<order>.crash).
 */
#ifndef ND_CRASH_COUNTS_H
#define ND_CRASH_COUNTS_H

void crash_count(const char *case_id, long long count, const char *unit, const char *result,
                 const char *what);
/* fields: "key=value" pairs separated by tabs */
void crash_row(const char *table, int order, const char *label, const char *fields);

#endif /* ND_CRASH_COUNTS_H */
