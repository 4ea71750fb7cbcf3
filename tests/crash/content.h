/*
 * content.h - the bytes the protocol recorder writes and the sweep expects:
 * version `vid` of a file holds content_byte(vid, off) at every offset, so
 * the checker knows any prefix of any version without storing it.
 */
#ifndef ND_CRASH_CONTENT_H
#define ND_CRASH_CONTENT_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t content_mix(uint64_t x)
{
    /* splitmix64's finaliser */
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Fills dst with bytes [off, off + len) of version vid. */
static inline void content_fill(uint8_t *dst, size_t len, uint64_t vid, uint64_t off)
{
    for (size_t i = 0; i < len; i++) {
        uint64_t o = off + i;
        dst[i] = (uint8_t)(content_mix((vid << 40) ^ (o >> 3)) >> ((o & 7) * 8));
    }
}

#endif /* ND_CRASH_CONTENT_H */
