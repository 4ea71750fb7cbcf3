/*
 * win.h - what the Win32 files of the OS layer share.
 *
 * Names arrive as UTF-8 and are validated by the common code; here they become
 * UTF-16 full paths with the \\?\ prefix, so that no Win32 path rewriting
 * (trailing dots, device names, the 260-character limit) applies to them.
 */
#ifndef ND_WIN_H
#define ND_WIN_H

#ifndef WIN32_LEAN_AND_MEAN
#  define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include "../fault.h"
#include "../internal.h"

/* Windows 10 1607's POSIX-semantics info classes, which the MinGW headers
 * hide behind a version test of their own: the values are the SDK's. */
#define ND_FileDispositionInfoEx ((FILE_INFO_BY_HANDLE_CLASS)21)
#define ND_FileRenameInfoEx ((FILE_INFO_BY_HANDLE_CLASS)22)

/* Every file is opened so that others may read, write, rename and delete it
 * while we hold it: Lucene deletes and renames over files that readers have
 * open, as it can on POSIX. */
#define ND_WIN_SHARE_ALL (FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE)

/*
 * nd_os_file carries a HANDLE. Kernel handles are multiples of 4 and the
 * kernel ignores their two low bits, which are left for applications: we keep
 * there what the layer must know later about how the file was opened.
 */
#define ND_WIN_TAG_LOCK ((intptr_t)1)   /* holds a LockFileEx range: unlock at close */
#define ND_WIN_TAG_DIRECT ((intptr_t)2) /* FILE_FLAG_NO_BUFFERING: check alignment */
#define ND_WIN_TAGS (ND_WIN_TAG_LOCK | ND_WIN_TAG_DIRECT)

static inline HANDLE nd__win_handle(nd_os_file f)
{
    return (HANDLE)(f & ~ND_WIN_TAGS);
}

/* UTF-8 -> UTF-16, strict: invalid input fails with ERROR_NO_UNICODE_TRANSLATION.
 * Returns a malloc'd, NUL-terminated string, or NULL with the error in *err. */
wchar_t *nd__win_wide(const char *utf8, size_t len, DWORD *err);
/* UTF-16 -> UTF-8 into a malloc'd string; NULL (with *err) if it has an
 * unpaired surrogate, which no UTF-8 name could reach. */
char *nd__win_utf8(const wchar_t *wide, size_t len, DWORD *err);

/* The full \\?\ path of `name` inside `dir`, malloc'd; NULL with *err. */
wchar_t *nd__win_child_path(const nd_os_dir *dir, const char *name, DWORD *err);

/* dir.c: a file that a delete had to move aside because it was mapped
 * (named .nd-deleted-*; the delete remembers it by file identity) is deleted
 * once its view is gone: `file` is a handle of it. Any other file is left
 * alone. */
void nd__win_delete_if_trash(HANDLE file);

/* errors.c: errno (from fault injection) -> the Win32 error the same failure
 * would give. */
DWORD nd__win_error_from_errno(int e);

/* An OVERLAPPED that carries a file offset and nothing else. */
static inline OVERLAPPED nd__win_at_offset(int64_t off)
{
    OVERLAPPED ov;
    ZeroMemory(&ov, sizeof(ov));
    ov.Offset = (DWORD)((uint64_t)off & 0xFFFFFFFFu);
    ov.OffsetHigh = (DWORD)((uint64_t)off >> 32);
    return ov;
}

/* On an unbuffered handle, ND_OK only for whole aligned sectors from aligned
 * memory; otherwise records why (naming the OS call `call`) and returns the status. */
int32_t nd__win_check_direct(nd_os_file f, const char *call, const char *what, const void *buf,
                             size_t len, int64_t off);

/* file.c: an event to wait on for one transfer in flight, from a pool that
 * grows to the most transfers ever in flight at once and never shrinks (NULL
 * and *err when none can be made); give it back when the transfer is done. */
HANDLE nd__win_event_take(DWORD *err);
void nd__win_event_give(HANDLE ev);

/* The alignment NO_BUFFERING needs on this handle (cached by the caller). */
uint32_t nd__win_alignment(HANDLE h);

#endif /* ND_WIN_H */
