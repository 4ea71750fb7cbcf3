/*
 * map.c - read-only mappings on Win32: a section object and one view.
 *
 * The token is the section handle; the view keeps the file open by itself,
 * so the caller may close the file handle as soon as the view exists.
 */
#include "win.h"

int32_t nd__os_map(nd_os_file f, const char *what, int64_t len, void **addr, void **token)
{
    if ((uint64_t)len > (uint64_t)SIZE_MAX)
        return nd__fail(ND_E_NO_MEMORY, "map '%s': %lld bytes do not fit the address space", what,
                        (long long)len);
    /* the section's size is the file's at this moment: len, asked just before */
    HANDLE section =
        CreateFileMappingW(nd__win_handle(f), NULL, PAGE_READONLY, (DWORD)((uint64_t)len >> 32),
                           (DWORD)((uint64_t)len & 0xFFFFFFFFu), NULL);
    if (section == NULL)
        return nd__fail_os((int)GetLastError(), "CreateFileMappingW '%s' (%lld bytes)", what,
                           (long long)len);
    void *p = MapViewOfFile(section, FILE_MAP_READ, 0, 0, (SIZE_T)len);
    if (p == NULL) {
        DWORD e = GetLastError();
        CloseHandle(section);
        return nd__fail_os((int)e, "MapViewOfFile '%s' (%lld bytes)", what, (long long)len);
    }
    *addr = p;
    *token = section;
    return ND_OK;
}

void nd__os_unmap(void *addr, int64_t len, void *token)
{
    (void)len;
    UnmapViewOfFile(addr);
    if (token != NULL)
        CloseHandle((HANDLE)token);
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
