/*
 * ring_iocp.c - rings on Windows: worker threads fed and drained through
 * I/O completion ports.
 *
 * Reads could complete straight to a port only if each input's handle were
 * bound to that port, and a handle is bound to one port for good while any
 * number of rings may read one input. So the reads run as positional reads
 * (nd__os_pread) on a few worker threads, and two completion ports are the
 * queues: one carries slot indexes to the workers, the other carries
 * finished ones to the reaper. A port queues without allocating, wakes
 * exactly one waiter per packet and has timed waits built in. The reads
 * themselves are blocking reads on threads, so the backend reports
 * ND_RING_THREADS; ND_RING_IOCP stays reserved in the header, never returned.
 */
#include <errno.h>
#include <stdlib.h>

#include "../ring.h"
#include "win.h"

#define WORKERS 2
#define REAP_BATCH 64

/* completion keys: what a packet means; an op's packet carries index + 1
 * where an OVERLAPPED pointer would be */
#define KEY_OP 1
#define KEY_WAKE 2
#define KEY_STOP 3

typedef struct {
    HANDLE work, done;
    HANDLE threads[WORKERS];
    int started;
} pool;

static LPOVERLAPPED packet(uint32_t index)
{
    return (LPOVERLAPPED)(uintptr_t)(index + 1);
}

static uint32_t packet_index(LPOVERLAPPED ov)
{
    return (uint32_t)((uintptr_t)ov - 1);
}

static DWORD WINAPI worker(LPVOID arg)
{
    nd_ring *r = arg;
    pool *p = r->impl;
    for (;;) {
        DWORD bytes;
        ULONG_PTR key;
        LPOVERLAPPED ov;
        if (!GetQueuedCompletionStatus(p->work, &bytes, &key, &ov, INFINITE) || key == KEY_STOP)
            break;
        uint32_t index = packet_index(ov);
        nd_ring_op *op = &r->ops[index];
        size_t got = 0;
        int32_t rc = nd__os_pread(op->fd, "ring read", op->dst, op->left, op->off, &got);
        op->result = rc != ND_OK      ? rc
                     : got < op->left ? nd__fail(ND_E_IO, "ring read: the file shrank")
                                      : op->len;
        /* the port's queue has a slot for it: posting cannot fail for lack of memory
         * in a way we could recover from here either */
        PostQueuedCompletionStatus(p->done, 0, KEY_OP, packet(index));
    }
    return 0;
}

static int32_t iocp_start(nd_ring *r, uint32_t index)
{
    pool *p = r->impl;
    HANDLE port = r->ops[index].fd == ND_OS_FILE_INVALID ? p->done : p->work;
    if (!PostQueuedCompletionStatus(port, 0, KEY_OP, packet(index)))
        return nd__fail_os((int)GetLastError(), "PostQueuedCompletionStatus");
    return ND_OK;
}

static int32_t iocp_reap(nd_ring *r, uint64_t *tags, int64_t *results, int32_t max,
                         int32_t timeout_ms)
{
    pool *p = r->impl;
    OVERLAPPED_ENTRY entries[REAP_BATCH];
    int32_t n = 0;
    DWORD wait = timeout_ms < 0 ? INFINITE : (DWORD)timeout_ms;
    while (n < max) {
        ULONG want = (ULONG)(max - n < REAP_BATCH ? max - n : REAP_BATCH), got = 0;
        if (!GetQueuedCompletionStatusEx(p->done, entries, want, &got, wait, FALSE)) {
            DWORD e = GetLastError();
            if (e == WAIT_TIMEOUT)
                break;
            return n > 0 ? n : nd__fail_os((int)e, "ring: GetQueuedCompletionStatusEx");
        }
        int woken = 0;
        for (ULONG i = 0; i < got; i++) {
            if (entries[i].lpCompletionKey == KEY_OP)
                nd__ring_complete(r, packet_index(entries[i].lpOverlapped), tags, results, n++);
            else
                woken = 1;
        }
        /* after the first wait, take only what is already there */
        if (woken || got < want || atomic_load(&r->closing))
            break;
        wait = 0;
    }
    return n;
}

static void iocp_wake(nd_ring *r)
{
    pool *p = r->impl;
    PostQueuedCompletionStatus(p->done, 0, KEY_WAKE, NULL);
}

static void iocp_drain(nd_ring *r)
{
    pool *p = r->impl;
    int took_wake = 0;
    while (atomic_load(&r->in_flight) > 0) {
        DWORD bytes;
        ULONG_PTR key;
        LPOVERLAPPED ov;
        if (!GetQueuedCompletionStatus(p->done, &bytes, &key, &ov, 10))
            continue;
        if (key == KEY_OP)
            nd__ring_discard(r, packet_index(ov));
        else
            took_wake = 1;
    }
    /* the wake-up nd_close posted is for a reaper blocked on this same port:
     * taken here, it would leave that reaper waiting forever (and whoever joins
     * it, e.g. the .NET ring's Dispose) */
    if (took_wake)
        iocp_wake(r);
}

static void iocp_free(nd_ring *r)
{
    pool *p = r->impl;
    if (p == NULL)
        return;
    for (int i = 0; i < p->started; i++)
        PostQueuedCompletionStatus(p->work, 0, KEY_STOP, NULL);
    if (p->started > 0)
        WaitForMultipleObjects((DWORD)p->started, p->threads, TRUE, INFINITE);
    for (int i = 0; i < p->started; i++)
        CloseHandle(p->threads[i]);
    if (p->work != NULL)
        CloseHandle(p->work);
    if (p->done != NULL)
        CloseHandle(p->done);
    free(p);
    r->impl = NULL;
}

/* no files held, and no descriptor for an event loop: asyncio's proactor loop
 * on Windows cannot watch one (nd_ring_event_fd is ND_E_NOT_SUPPORTED) */
static const nd_ring_backend_ops iocp_ops = {iocp_start, iocp_reap, iocp_wake, iocp_drain,
                                             iocp_free,  NULL,      NULL};

/* No overlapped-handle backend yet: ring.c falls back to the threads. */
int32_t nd__ring_native_init(nd_ring *r)
{
    (void)r;
    return ND_E_NOT_SUPPORTED;
}

int32_t nd__ring_threads_init(nd_ring *r)
{
    pool *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return nd__fail(ND_E_NO_MEMORY, "ring: out of memory");
    r->impl = p;
    r->vt = &iocp_ops;
    r->backend = ND_RING_THREADS;
    p->work = CreateIoCompletionPort(INVALID_HANDLE_VALUE, NULL, 0, WORKERS);
    p->done = CreateIoCompletionPort(INVALID_HANDLE_VALUE, NULL, 0, 0);
    if (p->work == NULL || p->done == NULL)
        return nd__fail_os((int)GetLastError(), "ring: CreateIoCompletionPort");
    for (int i = 0; i < WORKERS; i++) {
        if (ND_FAULT(ND_FAULT_THREAD))
            return nd__fail_os((int)nd__win_error_from_errno(errno), "ring: CreateThread");
        p->threads[i] = CreateThread(NULL, 0, worker, r, 0, NULL);
        if (p->threads[i] == NULL)
            return nd__fail_os((int)GetLastError(), "ring: CreateThread");
        p->started++;
    }
    return ND_OK;
}
