/*
 * os_handle.c - nd_os_read, nd_os_write, nd_os_length, nd_os_set_direct,
 * nd_os_advise, nd_os_madvise: calls on files and memory the caller opened or
 * mapped itself. Nothing here owns the file: no handle, no buffer, no state
 * between calls, so they are as thread-safe as the OS call each one makes.
 * The argument checks are here; the OS calls in posix/ and windows/
 * os_handle.c.
 */
#include "internal.h"
#include "os_handle.h"

static int32_t check_range(int64_t offset, const void *buf, int64_t len)
{
    if (offset < 0)
        return nd__fail(ND_E_INVALID_ARGUMENT, "negative offset %lld", (long long)offset);
    if (len < 0)
        return nd__fail(ND_E_INVALID_ARGUMENT, "negative length %lld", (long long)len);
    if (buf == NULL && len > 0)
        return nd__fail(ND_E_INVALID_ARGUMENT, "NULL buffer for %lld bytes", (long long)len);
    if (len > INT64_MAX - offset)
        return nd__fail(ND_E_INVALID_ARGUMENT, "offset %lld + length %lld overflows",
                        (long long)offset, (long long)len);
    return ND_OK;
}

static int32_t check_advice(int32_t advice)
{
    if (advice < ND_OS_ADVICE_NORMAL || advice > ND_OS_ADVICE_NOREUSE)
        return nd__fail(ND_E_INVALID_ARGUMENT, "advice %d is not an ND_OS_ADVICE_* value",
                        (int)advice);
    return ND_OK;
}

static int64_t read_impl(int64_t os_file, int64_t offset, void *dst, int64_t len)
{
    int32_t rc = check_range(offset, dst, len);
    if (rc != ND_OK)
        return rc;
    /* a zero-length read still tells a closed or unreadable file apart */
    return nd__os_handle_read(os_file, offset, dst, len);
}

static int64_t write_impl(int64_t os_file, int64_t offset, const void *src, int64_t len)
{
    int32_t rc = check_range(offset, src, len);
    if (rc != ND_OK)
        return rc;
    if (len == 0)
        return 0; /* a write of nothing must not touch the file (nor a Windows pipe's state) */
    return nd__os_handle_write(os_file, offset, src, len);
}

static int32_t length_impl(int64_t os_file, int64_t *out_len)
{
    if (out_len == NULL)
        return nd__fail(ND_E_INVALID_ARGUMENT, "NULL out_len");
    *out_len = 0;
    return nd__os_handle_length(os_file, out_len);
}

static int32_t set_direct_impl(int64_t os_file, int32_t direct)
{
    if (direct != 0 && direct != 1)
        return nd__fail(ND_E_INVALID_ARGUMENT, "direct is %d: 1 (on) or 0 (off)", (int)direct);
    return nd__os_handle_set_direct(os_file, direct);
}

static int32_t advise_impl(int64_t os_file, int64_t offset, int64_t len, int32_t advice)
{
    int32_t rc = check_advice(advice);
    if (rc == ND_OK && offset < 0)
        rc = nd__fail(ND_E_INVALID_ARGUMENT, "negative offset %lld", (long long)offset);
    if (rc == ND_OK && len < 0)
        rc = nd__fail(ND_E_INVALID_ARGUMENT, "negative length %lld", (long long)len);
    if (rc != ND_OK)
        return rc;
    return nd__os_handle_advise(os_file, offset, len, advice);
}

static int32_t madvise_impl(void *addr, int64_t len, int32_t advice, uint32_t flags)
{
    int32_t rc = check_advice(advice);
    if (rc != ND_OK)
        return rc;
    if (advice == ND_OS_ADVICE_NOREUSE)
        return nd__fail(ND_E_INVALID_ARGUMENT, "NOREUSE is advice for files, not memory");
    if (flags & ~(uint32_t)ND_OS_MADVISE_POSIX)
        return nd__fail(ND_E_INVALID_ARGUMENT, "unknown flags 0x%x", (unsigned)flags);
    if (addr == NULL)
        return nd__fail(ND_E_INVALID_ARGUMENT, "NULL address");
    if (len < 0)
        return nd__fail(ND_E_INVALID_ARGUMENT, "negative length %lld", (long long)len);
    return nd__os_memory_advise(addr, len, advice, (flags & ND_OS_MADVISE_POSIX) != 0);
}

int64_t nd_os_read(int64_t os_file, int64_t offset, void *dst, int64_t len)
{
    return nd__in_call("nd_os_read", read_impl(os_file, offset, dst, len));
}

int64_t nd_os_write(int64_t os_file, int64_t offset, const void *src, int64_t len)
{
    return nd__in_call("nd_os_write", write_impl(os_file, offset, src, len));
}

int32_t nd_os_length(int64_t os_file, int64_t *out_len)
{
    return (int32_t)nd__in_call("nd_os_length", length_impl(os_file, out_len));
}

int32_t nd_os_set_direct(int64_t os_file, int32_t direct)
{
    return (int32_t)nd__in_call("nd_os_set_direct", set_direct_impl(os_file, direct));
}

int32_t nd_os_advise(int64_t os_file, int64_t offset, int64_t len, int32_t advice)
{
    return (int32_t)nd__in_call("nd_os_advise", advise_impl(os_file, offset, len, advice));
}

int32_t nd_os_madvise(void *addr, int64_t len, int32_t advice, uint32_t flags)
{
    return (int32_t)nd__in_call("nd_os_madvise", madvise_impl(addr, len, advice, flags));
}
