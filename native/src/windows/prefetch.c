/*
 * prefetch.c - residency checks on Win32, for the prefetch back-off. Windows
 * has no cheap look at a view's or a file's pages (QueryWorkingSetEx sees only
 * the working set, not the standby list a read would be served from), so the
 * answer is "cannot tell" and every prefetch of a view asks
 * PrefetchVirtualMemory, which itself skips pages already in memory.
 */
#include "win.h"

int64_t nd__os_page_size(void)
{
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    return si.dwPageSize > 0 ? (int64_t)si.dwPageSize : 4096;
}

int nd__os_map_resident(const void *addr, int64_t len)
{
    (void)addr, (void)len;
    return -1;
}

int nd__os_file_resident(nd_os_file f, int64_t off, int64_t len)
{
    (void)f, (void)off, (void)len;
    return -1;
}
