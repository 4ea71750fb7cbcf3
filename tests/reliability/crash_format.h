/*
 * crash_format.h - the self-describing state file the crash writer renames
 * into place, so the checker can tell "wholly version v" from anything torn:
 *   "NDST" | version (u64 LE) | payload length (u32 LE) | payload | crc32 (u32 LE)
 * The payload is rel_fill(seed = version), of a length picked per version.
 */
#ifndef ND_CRASH_FORMAT_H
#define ND_CRASH_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include "rel_util.h"

#define STATE_HEAD 16
#define STATE_MAX_PAYLOAD (80u << 10)
#define STATE_MAX (STATE_HEAD + STATE_MAX_PAYLOAD + 4)

static inline void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t get_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Writes version v's state into buf (STATE_MAX bytes); returns its length. */
static inline size_t state_bytes(uint8_t *buf, long v, uint32_t r)
{
    uint32_t payload = 1 + r % STATE_MAX_PAYLOAD;
    memcpy(buf, "NDST", 4);
    put_le(buf + 4, (uint64_t)v, 8);
    put_le(buf + 12, payload, 4);
    rel_fill(buf + STATE_HEAD, payload, (uint32_t)v, 0);
    uLong crc = crc32(0L, buf, STATE_HEAD + payload);
    put_le(buf + STATE_HEAD + payload, crc, 4);
    return STATE_HEAD + payload + 4;
}

/* The version a whole, untorn state file holds, or -1 if it is not one. */
static inline long state_version(const uint8_t *buf, size_t len)
{
    if (len < STATE_HEAD + 4 || memcmp(buf, "NDST", 4) != 0)
        return -1;
    uint64_t v = get_le(buf + 4, 8);
    uint32_t payload = (uint32_t)get_le(buf + 12, 4);
    if (payload == 0 || payload > STATE_MAX_PAYLOAD || len != STATE_HEAD + payload + 4)
        return -1;
    if (get_le(buf + STATE_HEAD + payload, 4) != crc32(0L, buf, STATE_HEAD + payload))
        return -1;
    static uint8_t expect[STATE_MAX_PAYLOAD];
    rel_fill(expect, payload, (uint32_t)v, 0);
    if (memcmp(expect, buf + STATE_HEAD, payload) != 0)
        return -1;
    return (long)v;
}

#endif /* ND_CRASH_FORMAT_H */
