/*
 * os_handle.h - the OS side of the calls on files and memory the caller owns
 * (nd_os_*, os_handle.c): posix/os_handle.c and windows/os_handle.c. The
 * common file has checked every argument it can check without the OS; each
 * function records its failure (nd__fail_os) and returns a status.
 */
#ifndef ND_OS_HANDLE_H
#define ND_OS_HANDLE_H

#include <stdint.h>

/* Up to len bytes at off (len > 0): the count, 0 at the end, or a status. */
int64_t nd__os_handle_read(int64_t f, int64_t off, void *dst, int64_t len);
/* All len bytes at off (len > 0): len, or a status. */
int64_t nd__os_handle_write(int64_t f, int64_t off, const void *src, int64_t len);
int32_t nd__os_handle_length(int64_t f, int64_t *out_len);
int32_t nd__os_handle_set_direct(int64_t f, int direct);
/* advice: an ND_OS_ADVICE_* value */
int32_t nd__os_handle_advise(int64_t f, int64_t off, int64_t len, int32_t advice);
/* advice: an ND_OS_ADVICE_* value other than NOREUSE; addr not NULL */
int32_t nd__os_memory_advise(void *addr, int64_t len, int32_t advice, int posix);

#endif /* ND_OS_HANDLE_H */
