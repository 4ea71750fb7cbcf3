/*
 * error.c - status names and the thread's last failure.
 *
 * Errors are return values; the message is a convenience kept per thread so
 * that concurrent callers never see each other's failures (as libgit2 does).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define ND_MESSAGE_CAP sizeof(((nd_error_state *)0)->message)

static _Thread_local char tl_message[ND_MESSAGE_CAP];
static _Thread_local int tl_os_error;
static _Thread_local int tl_has_error;

const char *nd_status_name(int32_t status)
{
    switch (status) {
    case ND_OK: return "ND_OK";
    case ND_E_INVALID_ARGUMENT: return "ND_E_INVALID_ARGUMENT";
    case ND_E_BAD_HANDLE: return "ND_E_BAD_HANDLE";
    case ND_E_NOT_FOUND: return "ND_E_NOT_FOUND";
    case ND_E_EXISTS: return "ND_E_EXISTS";
    case ND_E_ACCESS: return "ND_E_ACCESS";
    case ND_E_INVALID_NAME: return "ND_E_INVALID_NAME";
    case ND_E_EOF: return "ND_E_EOF";
    case ND_E_NO_SPACE: return "ND_E_NO_SPACE";
    case ND_E_IO: return "ND_E_IO";
    case ND_E_NOT_SUPPORTED: return "ND_E_NOT_SUPPORTED";
    case ND_E_LOCKED: return "ND_E_LOCKED";
    case ND_E_NO_MEMORY: return "ND_E_NO_MEMORY";
    case ND_E_TOO_MANY_OPEN: return "ND_E_TOO_MANY_OPEN";
    case ND_E_BUSY: return "ND_E_BUSY";
    default: return "ND_E_UNKNOWN";
    }
}

const char *nd_last_error_message(void)
{
    return tl_has_error ? tl_message : "no error";
}

int32_t nd_last_os_error(void)
{
    return tl_os_error;
}

/* vprintf-style (format argument 2, no variadic ones): its callers' formats are checked, and
 * clang's -Wformat-nonliteral takes fmt's pass-through to vsnprintf as it does in them */
static void record(int os_error, const char *fmt, va_list ap) ND_PRINTF(2, 0);
static void record(int os_error, const char *fmt, va_list ap)
{
    int n = vsnprintf(tl_message, sizeof(tl_message), fmt, ap);
    if (n < 0)
        tl_message[0] = '\0';
    if (os_error != 0) {
        size_t used = strlen(tl_message);
        if (used + 3 < sizeof(tl_message)) {
            memcpy(tl_message + used, ": ", 3);
            used += 2;
            nd__os_error_text(os_error, tl_message + used, sizeof(tl_message) - used);
        }
    }
    tl_os_error = os_error;
    tl_has_error = 1;
}

int32_t nd__fail(int32_t status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(0, fmt, ap);
    va_end(ap);
    return status;
}

int32_t nd__fail_os(int os_error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(os_error, fmt, ap);
    va_end(ap);
    return nd__status_from_os(os_error);
}

int64_t nd__in_call_failed(const char *call, int64_t status)
{
    if (!tl_has_error)
        return status;
    size_t clen = strlen(call);
    size_t mlen = strlen(tl_message);
    if (clen + 2 + mlen >= sizeof(tl_message))
        mlen = sizeof(tl_message) - clen - 3;
    memmove(tl_message + clen + 2, tl_message, mlen);
    memcpy(tl_message, call, clen);
    memcpy(tl_message + clen, ": ", 2);
    tl_message[clen + 2 + mlen] = '\0';
    return status;
}

int32_t nd__fail_again(int32_t status, const char *fmt, ...)
{
    char old[ND_MESSAGE_CAP];
    memcpy(old, tl_message, sizeof(old));
    int os_error = tl_os_error;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tl_message, sizeof(tl_message), fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n + 3 < sizeof(tl_message))
        snprintf(tl_message + n, sizeof(tl_message) - (size_t)n, ": %s", old);
    tl_os_error = os_error;
    tl_has_error = 1;
    return status;
}

void nd__error_save(nd_error_state *s)
{
    memcpy(s->message, tl_message, sizeof(s->message));
    s->os_error = tl_os_error;
    s->has_error = tl_has_error;
}

void nd__error_restore(const nd_error_state *s)
{
    memcpy(tl_message, s->message, sizeof(tl_message));
    tl_os_error = s->os_error;
    tl_has_error = s->has_error;
}
