/*
 * writer.c - overlapped writes for direct (merge) outputs: one WriteFile in
 * flight while output.c fills the next buffer, so the copy and the CRC
 * overlap the device's work. Files are opened for overlapped I/O already
 * (file.c); the writer only keeps the OVERLAPPED and its event alive
 * between start and wait.
 */
#include "win.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct nd_os_writer {
    nd_os_file f;
    HANDLE ev;
    OVERLAPPED ov;
    const uint8_t *buf;
    size_t len, now; /* asked for; handed to WriteFile */
    int64_t off;
    int busy;
    int32_t deferred; /* an injected failure, reported by wait */
    char what[];
};

int32_t nd__os_writer_new(nd_os_file f, const char *what, nd_os_writer **out)
{
    size_t n = strlen(what);
    nd_os_writer *w = calloc(1, sizeof(*w) + n + 1);
    if (w == NULL)
        return ND_E_NOT_SUPPORTED; /* output.c then writes synchronously */
    w->ev = CreateEventW(NULL, TRUE, FALSE, NULL);
    if (w->ev == NULL) {
        free(w);
        return ND_E_NOT_SUPPORTED;
    }
    w->f = f;
    memcpy(w->what, what, n + 1);
    *out = w;
    return ND_OK;
}

int32_t nd__os_writer_start(nd_os_writer *w, const void *buf, size_t len, int64_t off)
{
    int32_t rc = nd__win_check_direct(w->f, "WriteFile", w->what, buf, len, off);
    if (rc != ND_OK)
        return rc;
    w->buf = buf;
    w->len = len;
    w->off = off;
    w->deferred = ND_OK;
    if (len > ((size_t)1 << 30)) /* beyond one WriteFile: the synchronous loop splits it */
        return nd__os_pwrite(w->f, w->what, buf, len, off);
    int fault;
    while ((fault = ND_FAULT_CHECK(ND_FAULT_WRITE)) == 1 && errno == EINTR)
        ;             /* an interrupted write is retried, as nd__os_pwrite does */
    if (fault == 1) { /* reported by wait, as a real failure would be */
        w->deferred = nd__fail_os((int)nd__win_error_from_errno(errno), "WriteFile '%s' at %lld",
                                  w->what, (long long)off);
        w->busy = 1;
        return ND_OK;
    }
    w->now = len;
    if (fault == 2 && len > 1 && !(w->f & ND_WIN_TAG_DIRECT))
        w->now = len / 2; /* the rest goes through the short-write path in wait */
    w->ov = nd__win_at_offset(off);
    w->ov.hEvent = w->ev; /* WriteFile resets it when it starts */
    if (!WriteFile(nd__win_handle(w->f), buf, (DWORD)w->now, NULL, &w->ov)) {
        DWORD e = GetLastError();
        if (e != ERROR_IO_PENDING)
            return nd__fail_os((int)e, "WriteFile '%s' at %lld", w->what, (long long)off);
    }
    w->busy = 1;
    return ND_OK;
}

int32_t nd__os_writer_wait(nd_os_writer *w, int keep)
{
    if (!w->busy || keep >= 1) /* one write in flight at most (ND_OS_WRITER_DEPTH) */
        return ND_OK;
    w->busy = 0;
    if (w->deferred != ND_OK)
        return w->deferred;
    DWORD n = 0;
    if (!GetOverlappedResult(nd__win_handle(w->f), &w->ov, &n, TRUE))
        return nd__fail_os((int)GetLastError(), "WriteFile '%s' at %lld", w->what,
                           (long long)w->off);
    if ((size_t)n < w->len) /* short: finish synchronously (retries inside) */
        return nd__os_pwrite(w->f, w->what, w->buf + n, w->len - (size_t)n, w->off + (int64_t)n);
    return ND_OK;
}

void nd__os_writer_free(nd_os_writer *w)
{
    if (w == NULL)
        return;
    (void)nd__os_writer_wait(w, 0); /* the buffer and the OVERLAPPED must outlive the write */
    CloseHandle(w->ev);
    free(w);
}
