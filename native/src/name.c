/*
 * name.c - the one rule that keeps every call inside its directory: a name is
 * exactly one path component, checked before any OS call sees it.
 */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#  define _POSIX_C_SOURCE 200809L /* strnlen; ISO C11 alone lacks it */
#endif
#include <string.h>
#ifdef _WIN32
#  include <winerror.h>
#  define ND_NAME_TOO_LONG ERROR_FILENAME_EXCED_RANGE
#else
#  include <errno.h>
#  define ND_NAME_TOO_LONG ENAMETOOLONG
#endif

#include "internal.h"

#define ND_NAME_MAX 255

/* Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF. */
static int utf8_ok(const unsigned char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        unsigned c = s[i];
        size_t n;
        unsigned min, cp;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            n = 1, min = 0x80, cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            n = 2, min = 0x800, cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            n = 3, min = 0x10000, cp = c & 0x07;
        } else {
            return 0;
        }
        if (len - i <= n)
            return 0;
        for (size_t k = 1; k <= n; k++) {
            unsigned cc = s[i + k];
            if ((cc & 0xC0) != 0x80)
                return 0;
            cp = (cp << 6) | (cc & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += n + 1;
    }
    return 1;
}

#ifdef _WIN32
/* CON, PRN, AUX, NUL, COM1-9, LPT1-9, with or without an extension, in any case. */
static int windows_reserved(const char *name, size_t len)
{
    static const char *const plain[] = {"CON", "PRN", "AUX", "NUL"};
    size_t stem = 0;
    while (stem < len && name[stem] != '.')
        stem++;
    char up[5] = {0};
    if (stem < 3 || stem > 4)
        return 0;
    for (size_t i = 0; i < stem; i++)
        up[i] = (char)((name[i] >= 'a' && name[i] <= 'z') ? name[i] - 32 : name[i]);
    if (stem == 3) {
        for (size_t i = 0; i < 4; i++)
            if (memcmp(up, plain[i], 3) == 0)
                return 1;
        return 0;
    }
    return (memcmp(up, "COM", 3) == 0 || memcmp(up, "LPT", 3) == 0) && up[3] >= '1' && up[3] <= '9';
}
#endif

static const char *why_not(const char *name, size_t len)
{
    if (len == 0)
        return "empty name";
    if (len > ND_NAME_MAX)
        return "name longer than 255 bytes";
    if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
        return "'.' and '..' are not file names";
    for (size_t i = 0; i < len; i++) {
        if (name[i] == '/' || name[i] == '\\')
            return "name contains a path separator";
#ifdef _WIN32
        if (name[i] == ':')
            return "name contains ':' (an NTFS stream or a drive)";
        if ((unsigned char)name[i] < 0x20 || strchr("<>\"|?*", name[i]) != NULL)
            return "name contains a character Windows forbids";
#endif
    }
    if (!utf8_ok((const unsigned char *)name, len))
        return "name is not valid UTF-8";
#ifdef _WIN32
    if (name[len - 1] == '.' || name[len - 1] == ' ')
        return "name ends with a dot or a space (Windows would strip it)";
    if (windows_reserved(name, len))
        return "name is a reserved device name";
#endif
    return NULL;
}

int nd__name_ok(const char *name, size_t len)
{
    return why_not(name, len) == NULL;
}

int32_t nd__check_name(const char *name)
{
    if (name == NULL)
        return nd__fail(ND_E_INVALID_ARGUMENT, "name is NULL");
    size_t len = strnlen(name, ND_NAME_MAX + 1);
    const char *why = why_not(name, len);
    /* Too long is the one refusal the OS would make itself: leave its error (the status
     * stays ND_E_INVALID_NAME), so bindings report it as the call they replace does. */
    if (len > ND_NAME_MAX)
        return nd__fail_os(ND_NAME_TOO_LONG, "invalid name '%.64s...': %s", name, why);
    if (why != NULL)
        return nd__fail(ND_E_INVALID_NAME, "invalid name '%.64s%s': %s", name,
                        len > 64 ? "..." : "", why);
    return ND_OK;
}
