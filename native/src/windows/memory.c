/*
 * memory.c - what the page cache the process may use is doing (os.h): Windows
 * tells no refaults of its file cache, so mapped inputs stay mapped there.
 */
#include "win.h"

int64_t nd__os_clock_ns(void)
{
    return (int64_t)GetTickCount64() * 1000000;
}

int32_t nd__os_memory(nd_os_memory *out)
{
    (void)out;
    return ND_E_NOT_SUPPORTED;
}
