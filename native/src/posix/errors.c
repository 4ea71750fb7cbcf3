/*
 * errors.c - errno to the frozen status codes.
 *
 * The table gives each errno the status it has at any call; a call site where
 * an errno means something else (EAGAIN/EACCES from the lock: "held") returns
 * its own status after recording the message.
 */
/* -std=c11 without extensions declares only ISO C; this file needs
 * strerror_r (glibc's char * form). */
#if !defined(_GNU_SOURCE)
#  define _GNU_SOURCE
#endif
#include <errno.h>
#include <string.h>

#include "../internal.h"

int32_t nd__status_from_os(int e)
{
    switch (e) {
    case 0: return ND_E_IO; /* a failure without errno is still a failure */
    case ENOENT:
    case ENOTDIR: return ND_E_NOT_FOUND;
    case EEXIST:
    case ENOTEMPTY: return ND_E_EXISTS;
    case EACCES:
    case EPERM:
    case EROFS:
    case ELOOP: /* O_NOFOLLOW met a symbolic link */
    case EISDIR:
    case ETXTBSY: return ND_E_ACCESS;
    case ENAMETOOLONG: return ND_E_INVALID_NAME;
    case EINVAL:
    case EBADF:
    case EFAULT: return ND_E_INVALID_ARGUMENT;
    case ENOSPC:
#ifdef EDQUOT
    case EDQUOT:
#endif
    case EFBIG: return ND_E_NO_SPACE;
    case ENOMEM:
        /* EAGAIN says a resource is short for now: a thread (pthread_create under
     * RLIMIT_NPROC), locked memory (mmap). Only at the lock's own call does it
     * mean "held", and nd__os_lock returns ND_E_LOCKED there itself: mapped
     * here it would make a failed thread look like a held lock. */
#if defined(EWOULDBLOCK) && EWOULDBLOCK != EAGAIN
    case EWOULDBLOCK:
#endif
    case EAGAIN: return ND_E_NO_MEMORY;
    case EMFILE:
    case ENFILE: return ND_E_TOO_MANY_OPEN;
    case ENOTSUP:
#if defined(EOPNOTSUPP) && EOPNOTSUPP != ENOTSUP
    case EOPNOTSUPP:
#endif
    case ENOSYS: return ND_E_NOT_SUPPORTED;
    default: return ND_E_IO;
    }
}

void nd__os_error_text(int e, char *buf, size_t cap)
{
    if (cap == 0)
        return;
        /* The XSI strerror_r writes into buf; glibc's GNU one may return a static
     * string instead, so copy whichever it gives. */
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
    const char *s = strerror_r(e, buf, cap);
    if (s != buf) {
        strncpy(buf, s, cap - 1);
        buf[cap - 1] = '\0';
    }
#else
    if (strerror_r(e, buf, cap) != 0)
        buf[0] = '\0';
#endif
}
