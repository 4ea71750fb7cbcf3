/*
 * version.c - what the loaded library is.
 */
#include "internal.h"

#ifndef ND_VERSION_STRING
#  define ND_VERSION_STRING "0.0.0"
#endif

int32_t nd_abi_version(void)
{
    return ND_ABI_VERSION;
}

const char *nd_version(void)
{
    return ND_VERSION_STRING;
}
