/*
 * counts.c - see counts.h.
 */
#include "counts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void emit(const char *file, const char *line)
{
    fputs(line, stdout);
    fflush(stdout);
    const char *dir = getenv("ND_REL_COUNTS");
    if (dir == NULL || dir[0] == '\0')
        return;
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "crash counts: cannot write %s: %s\n", path, strerror(errno));
        return;
    }
    fputs(line, f);
    fclose(f);
}

void crash_row(const char *table, int order, const char *label, const char *fields)
{
    char line[2048], file[256];
    snprintf(line, sizeof(line), "ND-CRASH-ROW\t%s\t%d\t%s\t%s\n", table, order, label, fields);
    snprintf(file, sizeof(file), "crash-%s-%03d.crash", table, order);
    emit(file, line);
}
