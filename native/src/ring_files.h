/*
 * ring_files.h - the rings whose backend holds files (ring_files.c).
 *
 * io_uring rings register the descriptors they read (posix/ring_uring.c) and
 * hold the open file behind each (file.h), so a file whose inputs are all
 * closed could stay open inside a ring. The thread dropping a file's last
 * reference that is not a ring's asks every such ring to let go, here.
 */
#ifndef ND_RING_FILES_H
#define ND_RING_FILES_H

#include "ring.h"

/* Adds a ring whose backend holds files (vt->files_unused) to the list;
 * others need not join. ND_E_NO_MEMORY if the list's lock cannot be made. */
int32_t nd__ring_files_join(nd_ring *r);
/* Takes a ring off the list, before its backend is freed (nothing if it
 * never joined). */
void nd__ring_files_leave(nd_ring *r);
/* Makes every ring on the list let go of the files only rings hold now, on
 * the calling thread, before it returns. */
void nd__ring_files_unused(void);

#endif /* ND_RING_FILES_H */
