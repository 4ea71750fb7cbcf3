/*
 * map.c - read-only mappings on Win32: a section object and one view, and
 * the revocation that lets go of the file while the view's addresses stay
 * readable (nd__os_map_revoke).
 *
 * The view keeps the file open by itself; the token keeps, besides the
 * section, a handle of the file of its own: when the view goes, a file that
 * a delete had to move aside while it was mapped (windows/dir.c) is deleted
 * through it at once.
 *
 * Windows cannot replace a view in one step. Where placeholders exist
 * (Windows 10 1803+: VirtualAlloc2, MapViewOfFile3, UnmapViewOfFile2), the
 * view is mapped into a placeholder, and revocation turns it back into one,
 * then into a reservation of the same addresses: nothing else can take them
 * in between. Elsewhere (older Windows, Wine) the view is unmapped and its
 * addresses reserved right after, which another allocation could in theory
 * take first. Either way a reader that touches the addresses in between, or
 * later, faults; a vectored exception handler finds the address among the
 * revoked ranges, waits for the reservation, commits a zero page there and
 * lets the read run again. Only pages so read cost memory.
 */
#include <stdlib.h>

#include "win.h"

#ifndef MEM_RESERVE_PLACEHOLDER
#  define MEM_RESERVE_PLACEHOLDER 0x00040000
#  define MEM_REPLACE_PLACEHOLDER 0x00004000
#  define MEM_PRESERVE_PLACEHOLDER 0x00000002
#endif

typedef PVOID(WINAPI *virtual_alloc2_fn)(HANDLE, PVOID, SIZE_T, ULONG, ULONG, void *, ULONG);
typedef PVOID(WINAPI *map_view3_fn)(HANDLE, HANDLE, PVOID, ULONG64, SIZE_T, ULONG, ULONG, void *,
                                    ULONG);
typedef BOOL(WINAPI *unmap_view2_fn)(HANDLE, PVOID, ULONG);

typedef struct {
    HANDLE section;
    HANDLE file;     /* our own handle of the file (see the top of the file) */
    int placeholder; /* the view was mapped into a placeholder */
    int revoked;     /* the addresses are a reservation (revoked ranges) */
} win_map;

static struct {
    INIT_ONCE once;
    virtual_alloc2_fn virtual_alloc2;
    map_view3_fn map_view3;
    unmap_view2_fn unmap_view2;
} placeholders = {INIT_ONCE_STATIC_INIT, NULL, NULL, NULL};

static BOOL CALLBACK find_placeholder_calls(PINIT_ONCE once, PVOID arg, PVOID *ctx)
{
    (void)once, (void)arg, (void)ctx;
    HMODULE k = GetModuleHandleW(L"kernelbase.dll");
    if (k != NULL) {
        placeholders.virtual_alloc2 = (virtual_alloc2_fn)(void *)GetProcAddress(k, "VirtualAlloc2");
        placeholders.map_view3 = (map_view3_fn)(void *)GetProcAddress(k, "MapViewOfFile3");
        placeholders.unmap_view2 = (unmap_view2_fn)(void *)GetProcAddress(k, "UnmapViewOfFile2");
    }
    return TRUE;
}

/* A view of `section` in a placeholder of its own, or NULL where placeholders
 * are missing or refused (the caller maps it the classic way). */
static void *map_into_placeholder(HANDLE section, SIZE_T len)
{
    InitOnceExecuteOnce(&placeholders.once, find_placeholder_calls, NULL, NULL);
    if (placeholders.virtual_alloc2 == NULL || placeholders.map_view3 == NULL ||
        placeholders.unmap_view2 == NULL)
        return NULL;
    void *ph =
        placeholders.virtual_alloc2(GetCurrentProcess(), NULL, len,
                                    MEM_RESERVE | MEM_RESERVE_PLACEHOLDER, PAGE_NOACCESS, NULL, 0);
    if (ph == NULL)
        return NULL;
    void *v = placeholders.map_view3(section, GetCurrentProcess(), ph, 0, len,
                                     MEM_REPLACE_PLACEHOLDER, PAGE_READONLY, NULL, 0);
    if (v == NULL)
        VirtualFree(ph, 0, MEM_RELEASE);
    return v;
}

int32_t nd__os_map(nd_os_file f, const char *what, int64_t len, void **addr, void **token)
{
    if ((uint64_t)len > (uint64_t)SIZE_MAX)
        return nd__fail(ND_E_NO_MEMORY, "map '%s': %lld bytes do not fit the address space", what,
                        (long long)len);
    win_map *m = calloc(1, sizeof(*m));
    if (m == NULL)
        return nd__fail(ND_E_NO_MEMORY, "map '%s': out of memory", what);
    if (!DuplicateHandle(GetCurrentProcess(), nd__win_handle(f), GetCurrentProcess(), &m->file, 0,
                         FALSE, DUPLICATE_SAME_ACCESS)) {
        DWORD e = GetLastError();
        free(m);
        return nd__fail_os((int)e, "DuplicateHandle '%s'", what);
    }
    /* the section's size is the file's at this moment: len, asked just before */
    m->section =
        CreateFileMappingW(nd__win_handle(f), NULL, PAGE_READONLY, (DWORD)((uint64_t)len >> 32),
                           (DWORD)((uint64_t)len & 0xFFFFFFFFu), NULL);
    if (m->section == NULL) {
        DWORD e = GetLastError();
        CloseHandle(m->file);
        free(m);
        return nd__fail_os((int)e, "CreateFileMappingW '%s' (%lld bytes)", what, (long long)len);
    }
    void *p = map_into_placeholder(m->section, (SIZE_T)len);
    m->placeholder = p != NULL;
    if (p == NULL)
        p = MapViewOfFile(m->section, FILE_MAP_READ, 0, 0, (SIZE_T)len);
    if (p == NULL) {
        DWORD e = GetLastError();
        CloseHandle(m->section);
        CloseHandle(m->file);
        free(m);
        return nd__fail_os((int)e, "MapViewOfFile '%s' (%lld bytes)", what, (long long)len);
    }
    *addr = p;
    *token = m;
    return ND_OK;
}

/* ---- revoked ranges: what the exception handler looks up ---- */

enum { RANGE_REVOKING, RANGE_RESERVED, RANGE_LOST };

typedef struct {
    uintptr_t start, end;
    volatile LONG state; /* RANGE_* */
} revoked_range;

static struct {
    SRWLOCK lock;
    revoked_range *ranges;
    size_t n, cap;
    INIT_ONCE handler_once;
} revoked = {SRWLOCK_INIT, NULL, 0, 0, INIT_ONCE_STATIC_INIT};

/* The state of the revoked range holding `a`, or -1 if none does. */
static LONG range_state(uintptr_t a)
{
    LONG st = -1;
    AcquireSRWLockShared(&revoked.lock);
    for (size_t i = 0; i < revoked.n; i++)
        if (a >= revoked.ranges[i].start && a < revoked.ranges[i].end) {
            st = revoked.ranges[i].state;
            break;
        }
    ReleaseSRWLockShared(&revoked.lock);
    return st;
}

static LONG CALLBACK revoked_read(EXCEPTION_POINTERS *ep)
{
    const EXCEPTION_RECORD *r = ep->ExceptionRecord;
    if (r->ExceptionCode != EXCEPTION_ACCESS_VIOLATION || r->NumberParameters < 2 ||
        r->ExceptionInformation[0] != 0) /* reads only: nothing writes a read-only view */
        return EXCEPTION_CONTINUE_SEARCH;
    uintptr_t a = (uintptr_t)r->ExceptionInformation[1];
    LONG st;
    while ((st = range_state(a)) == RANGE_REVOKING)
        SwitchToThread(); /* the view is gone, its reservation a moment away */
    if (st == RANGE_RESERVED) {
        SYSTEM_INFO si;
        GetSystemInfo(&si);
        uintptr_t page = a - a % si.dwPageSize;
        if (VirtualAlloc((void *)page, si.dwPageSize, MEM_COMMIT, PAGE_READONLY) != NULL)
            return EXCEPTION_CONTINUE_EXECUTION;
    } else if (st == RANGE_LOST) {
        /* another allocation took the addresses first: the read may go on if
         * they are readable now (its bytes are discarded), else it is a real
         * fault */
        MEMORY_BASIC_INFORMATION mi;
        if (VirtualQuery((void *)a, &mi, sizeof(mi)) == sizeof(mi) && mi.State == MEM_COMMIT &&
            (mi.Protect & (PAGE_READONLY | PAGE_READWRITE | PAGE_WRITECOPY)) &&
            !(mi.Protect & PAGE_GUARD))
            return EXCEPTION_CONTINUE_EXECUTION;
    }
    return EXCEPTION_CONTINUE_SEARCH;
}

static BOOL CALLBACK install_handler(PINIT_ONCE once, PVOID arg, PVOID *ctx)
{
    (void)once, (void)arg, (void)ctx;
    /* first in line: before the runtime's own handler turns the fault into
     * an exception of its language */
    return AddVectoredExceptionHandler(1, revoked_read) != NULL;
}

static void set_range_state(uintptr_t start, LONG st)
{
    AcquireSRWLockExclusive(&revoked.lock);
    for (size_t i = 0; i < revoked.n; i++)
        if (revoked.ranges[i].start == start)
            revoked.ranges[i].state = st;
    ReleaseSRWLockExclusive(&revoked.lock);
}

static int add_range(uintptr_t start, uintptr_t end)
{
    int ok = 1;
    AcquireSRWLockExclusive(&revoked.lock);
    if (revoked.n == revoked.cap) {
        size_t cap = revoked.cap ? revoked.cap * 2 : 16;
        revoked_range *grown = realloc(revoked.ranges, cap * sizeof(*grown));
        if (grown == NULL)
            ok = 0;
        else {
            revoked.ranges = grown;
            revoked.cap = cap;
        }
    }
    if (ok) {
        revoked_range r = {start, end, RANGE_REVOKING};
        revoked.ranges[revoked.n++] = r;
    }
    ReleaseSRWLockExclusive(&revoked.lock);
    return ok;
}

static void remove_range(uintptr_t start)
{
    AcquireSRWLockExclusive(&revoked.lock);
    for (size_t i = 0; i < revoked.n; i++)
        if (revoked.ranges[i].start == start) {
            revoked.ranges[i] = revoked.ranges[--revoked.n];
            break;
        }
    ReleaseSRWLockExclusive(&revoked.lock);
}

/* The view is gone: the section and our handle of the file go too, and a
 * file moved aside by a delete while it was mapped is deleted now. */
static void let_go_of_file(win_map *m)
{
    CloseHandle(m->section);
    m->section = NULL;
    nd__win_delete_if_trash(m->file);
    CloseHandle(m->file);
    m->file = NULL;
}

void nd__os_map_revoke(void *addr, int64_t len, void **token)
{
    win_map *m = *token;
    uintptr_t start = (uintptr_t)addr;
    if (m->revoked || !InitOnceExecuteOnce(&revoked.handler_once, install_handler, NULL, NULL) ||
        !add_range(start, start + (uintptr_t)len))
        return; /* the view stays until the last reference unmaps it */
    LONG st = RANGE_LOST;
    if (m->placeholder) {
        if (placeholders.unmap_view2(GetCurrentProcess(), addr, MEM_PRESERVE_PLACEHOLDER) &&
            placeholders.virtual_alloc2(GetCurrentProcess(), addr, (SIZE_T)len,
                                        MEM_RESERVE | MEM_REPLACE_PLACEHOLDER, PAGE_NOACCESS, NULL,
                                        0) != NULL)
            st = RANGE_RESERVED;
    } else if (UnmapViewOfFile(addr) &&
               VirtualAlloc(addr, (SIZE_T)len, MEM_RESERVE, PAGE_NOACCESS) != NULL) {
        st = RANGE_RESERVED;
    }
    set_range_state(start, st);
    m->revoked = 1;
    let_go_of_file(m);
}

void nd__os_unmap(void *addr, int64_t len, void *token)
{
    (void)len;
    win_map *m = token;
    if (m->revoked) {
        remove_range((uintptr_t)addr);
        VirtualFree(addr, 0, MEM_RELEASE); /* fails harmlessly on a lost range */
    } else {
        UnmapViewOfFile(addr); /* a placeholder's view goes with its placeholder */
        let_go_of_file(m);
    }
    free(m);
}

static void prefetch(void *addr, int64_t len)
{
    WIN32_MEMORY_RANGE_ENTRY range = {addr, (SIZE_T)len};
    (void)PrefetchVirtualMemory(GetCurrentProcess(), 1, &range, 0);
}

/* Windows has no per-view access advice; read-ahead of a view follows the
 * faults it sees. WILLNEED has a real counterpart: prefetch the range. */
void nd__os_map_advise(void *addr, int64_t len, nd_advice advice)
{
    if (advice == ND_ADVICE_WILLNEED)
        prefetch(addr, len);
}

void nd__os_map_populate(void *addr, int64_t len)
{
    prefetch(addr, len);
    /* touch one byte per page: PrefetchVirtualMemory reads the pages into
     * memory but may leave them out of the working set, and is only a hint */
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    int64_t page = si.dwPageSize ? (int64_t)si.dwPageSize : 4096;
    volatile const unsigned char *p = addr;
    unsigned char sink = 0;
    for (int64_t i = 0; i < len; i += page)
        sink ^= p[i];
    (void)sink;
}
