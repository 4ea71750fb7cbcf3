/*
 * dir.c - directories on Win32.
 *
 * The directory's path is made absolute once, at open, and kept as a \\?\
 * wide path; every file is then named by that path plus one validated
 * component. The directory's own handle stays open without FILE_SHARE_DELETE
 * for the directory's lifetime, so the directory cannot be deleted or renamed
 * under us (and Windows refuses to rename its ancestors while files in it
 * are open): the path keeps naming the directory we opened.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "win.h"

struct nd_os_dir {
    HANDLE h;
    wchar_t *wpath; /* \\?\ form, no trailing separator except at a root */
    size_t wlen;
    char *path; /* as the caller gave it, for messages */
};

const char *nd__os_dir_path(const nd_os_dir *dir)
{
    return dir->path;
}

wchar_t *nd__win_wide(const char *utf8, size_t len, DWORD *err)
{
    if (len == 0) {
        wchar_t *w = calloc(1, sizeof(wchar_t));
        if (w == NULL)
            *err = ERROR_NOT_ENOUGH_MEMORY;
        return w;
    }
    if (len > INT_MAX) {
        *err = ERROR_FILENAME_EXCED_RANGE;
        return NULL;
    }
    int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, utf8, (int)len, NULL, 0);
    if (n <= 0) {
        *err = GetLastError();
        return NULL;
    }
    wchar_t *w = malloc(((size_t)n + 1) * sizeof(wchar_t));
    if (w == NULL) {
        *err = ERROR_NOT_ENOUGH_MEMORY;
        return NULL;
    }
    MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, utf8, (int)len, w, n);
    w[n] = L'\0';
    return w;
}

char *nd__win_utf8(const wchar_t *wide, size_t len, DWORD *err)
{
    if (len > INT_MAX / 4) {
        *err = ERROR_FILENAME_EXCED_RANGE;
        return NULL;
    }
    int n = len == 0 ? 0
                     : WideCharToMultiByte(CP_UTF8, WC_ERR_INVALID_CHARS, wide, (int)len, NULL, 0,
                                           NULL, NULL);
    if (len != 0 && n <= 0) {
        *err = GetLastError();
        return NULL;
    }
    char *s = malloc((size_t)n + 1);
    if (s == NULL) {
        *err = ERROR_NOT_ENOUGH_MEMORY;
        return NULL;
    }
    if (n > 0)
        WideCharToMultiByte(CP_UTF8, WC_ERR_INVALID_CHARS, wide, (int)len, s, n, NULL, NULL);
    s[n] = '\0';
    return s;
}

wchar_t *nd__win_child_path(const nd_os_dir *dir, const char *name, DWORD *err)
{
    wchar_t *wname = nd__win_wide(name, strlen(name), err);
    if (wname == NULL)
        return NULL;
    size_t nlen = wcslen(wname);
    int root = dir->wlen > 0 && dir->wpath[dir->wlen - 1] == L'\\';
    wchar_t *p = malloc((dir->wlen + 1 + nlen + 1) * sizeof(wchar_t));
    if (p == NULL) {
        free(wname);
        *err = ERROR_NOT_ENOUGH_MEMORY;
        return NULL;
    }
    memcpy(p, dir->wpath, dir->wlen * sizeof(wchar_t));
    size_t at = dir->wlen;
    if (!root)
        p[at++] = L'\\';
    memcpy(p + at, wname, (nlen + 1) * sizeof(wchar_t));
    free(wname);
    return p;
}

/* The caller's path, absolute, in the \\?\ form (\\?\UNC\ for shares). */
static wchar_t *full_path(const char *path, DWORD *err)
{
    wchar_t *w = nd__win_wide(path, strlen(path), err);
    if (w == NULL)
        return NULL;
    if (wcsncmp(w, L"\\\\?\\", 4) == 0)
        return w; /* already verbatim: the caller chose every character */
    DWORD need = GetFullPathNameW(w, 0, NULL, NULL);
    wchar_t *full = need == 0 ? NULL : malloc((size_t)need * sizeof(wchar_t));
    DWORD got = full == NULL ? 0 : GetFullPathNameW(w, need, full, NULL);
    if (got == 0 || got >= need) {
        *err = full == NULL && need != 0 ? ERROR_NOT_ENOUGH_MEMORY : GetLastError();
        if (*err == 0)
            *err = ERROR_INVALID_NAME;
        free(w);
        free(full);
        return NULL;
    }
    free(w);
    int unc = full[0] == L'\\' && full[1] == L'\\';
    const wchar_t *prefix = unc ? L"\\\\?\\UNC\\" : L"\\\\?\\";
    const wchar_t *rest = unc ? full + 2 : full;
    size_t plen = wcslen(prefix), rlen = wcslen(rest);
    wchar_t *out = malloc((plen + rlen + 1) * sizeof(wchar_t));
    if (out == NULL) {
        *err = ERROR_NOT_ENOUGH_MEMORY;
        free(full);
        return NULL;
    }
    memcpy(out, prefix, plen * sizeof(wchar_t));
    memcpy(out + plen, rest, (rlen + 1) * sizeof(wchar_t));
    free(full);
    return out;
}

/* Index of the first character after the root (\\?\C:\ or \\?\UNC\srv\share\). */
static size_t root_end(const wchar_t *p, size_t len)
{
    size_t i = 4; /* after \\?\ */
    int skip = 1; /* components that belong to the root */
    if (len >= 8 && wcsncmp(p + 4, L"UNC\\", 4) == 0) {
        i = 8;
        skip = 2;
    }
    for (; i < len && skip > 0; i++)
        if (p[i] == L'\\')
            skip--;
    return i;
}

/* mkdir -p; an intermediate that already exists as a directory is fine. */
static DWORD make_dirs(wchar_t *p, size_t len)
{
    for (size_t i = root_end(p, len); i <= len; i++) {
        if (i < len && p[i] != L'\\')
            continue;
        wchar_t saved = p[i];
        p[i] = L'\0';
        DWORD e = 0;
        if (!CreateDirectoryW(p, NULL)) {
            e = GetLastError();
            DWORD attrs = GetFileAttributesW(p);
            if (attrs != INVALID_FILE_ATTRIBUTES && (attrs & FILE_ATTRIBUTE_DIRECTORY))
                e = 0;
            else if (e == ERROR_ALREADY_EXISTS)
                e = ERROR_DIRECTORY; /* a file is in the way */
        }
        p[i] = saved;
        if (e != 0)
            return e;
    }
    return 0;
}

int32_t nd__os_dir_open(const char *path, int create, nd_os_dir **out)
{
    nd_os_dir *d = calloc(1, sizeof(*d));
    size_t plen = strlen(path);
    char *copy = malloc(plen + 1);
    if (d == NULL || copy == NULL) {
        free(d);
        free(copy);
        return nd__fail(ND_E_NO_MEMORY, "open '%s': out of memory", path);
    }
    memcpy(copy, path, plen + 1);
    d->path = copy;
    d->h = INVALID_HANDLE_VALUE;
    DWORD e = 0;
    d->wpath = full_path(path, &e);
    if (d->wpath == NULL) {
        nd__os_dir_free(d);
        return nd__fail_os((int)e, "GetFullPathNameW '%s'", path);
    }
    d->wlen = wcslen(d->wpath);
    size_t root = root_end(d->wpath, d->wlen);
    while (d->wlen > root && d->wpath[d->wlen - 1] == L'\\')
        d->wpath[--d->wlen] = L'\0';
    if (create && (e = make_dirs(d->wpath, d->wlen)) != 0) {
        nd__os_dir_free(d);
        return nd__fail_os((int)e, "CreateDirectoryW '%s'", path);
    }
    /* no FILE_SHARE_DELETE: nobody deletes or renames the directory while we hold it */
    d->h = CreateFileW(d->wpath, FILE_LIST_DIRECTORY | FILE_READ_ATTRIBUTES | SYNCHRONIZE,
                       FILE_SHARE_READ | FILE_SHARE_WRITE, NULL, OPEN_EXISTING,
                       FILE_FLAG_BACKUP_SEMANTICS, NULL);
    if (d->h == INVALID_HANDLE_VALUE) {
        e = GetLastError();
        nd__os_dir_free(d);
        return nd__fail_os((int)e, "CreateFileW '%s'", path);
    }
    BY_HANDLE_FILE_INFORMATION info;
    if (!GetFileInformationByHandle(d->h, &info)) {
        e = GetLastError();
        nd__os_dir_free(d);
        return nd__fail_os((int)e, "GetFileInformationByHandle '%s'", path);
    }
    if (!(info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)) {
        nd__os_dir_free(d);
        return nd__fail_os(ERROR_DIRECTORY, "'%s' is not a directory", path);
    }
    *out = d;
    return ND_OK;
}

void nd__os_dir_free(nd_os_dir *dir)
{
    if (dir == NULL)
        return;
    if (dir->h != INVALID_HANDLE_VALUE && dir->h != NULL)
        CloseHandle(dir->h);
    free(dir->wpath);
    free(dir->path);
    free(dir);
}

/* Deleted files that readers still hold, where POSIX semantics are missing
 * (see trash_delete), wait under names with this prefix. */
#define TRASH_PREFIX L".nd-deleted-"
#define TRASH_PREFIX_LEN 12

static int is_trash(const wchar_t *name)
{
    return wcsncmp(name, TRASH_PREFIX, TRASH_PREFIX_LEN) == 0;
}

static void sweep_trash(const nd_os_dir *dir);

/* Directories, links and other reparse points, devices: none is a file here. */
static int is_plain_file(DWORD attrs)
{
    return !(attrs &
             (FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_REPARSE_POINT | FILE_ATTRIBUTE_DEVICE));
}

int32_t nd__os_dir_list(nd_os_dir *dir, nd_os_list_fn fn, void *ctx)
{
    sweep_trash(dir);
    wchar_t *pattern = malloc((dir->wlen + 3) * sizeof(wchar_t));
    if (pattern == NULL)
        return nd__fail(ND_E_NO_MEMORY, "list '%s': out of memory", dir->path);
    memcpy(pattern, dir->wpath, dir->wlen * sizeof(wchar_t));
    size_t at = dir->wlen;
    if (at == 0 || pattern[at - 1] != L'\\')
        pattern[at++] = L'\\';
    pattern[at++] = L'*';
    pattern[at] = L'\0';
    WIN32_FIND_DATAW fd;
    HANDLE fh = FindFirstFileExW(pattern, FindExInfoBasic, &fd, FindExSearchNameMatch, NULL,
                                 FIND_FIRST_EX_LARGE_FETCH);
    free(pattern);
    if (fh == INVALID_HANDLE_VALUE) {
        DWORD e = GetLastError();
        if (e == ERROR_FILE_NOT_FOUND || e == ERROR_NO_MORE_FILES)
            return ND_OK; /* nothing matched: an empty root directory */
        return nd__fail_os((int)e, "FindFirstFileExW '%s'", dir->path);
    }
    int32_t rc = ND_OK;
    do {
        if (!is_plain_file(fd.dwFileAttributes))
            continue;
        if (is_trash(fd.cFileName))
            continue; /* deleted, waiting for its last reader (see trash_delete) */
        DWORD e = 0;
        char *name = nd__win_utf8(fd.cFileName, wcslen(fd.cFileName), &e);
        if (name == NULL) {
            if (e == ERROR_NO_UNICODE_TRANSLATION)
                continue; /* an unpaired surrogate: no UTF-8 name reaches it */
            rc = nd__fail_os((int)e, "converting a name in '%s'", dir->path);
            break;
        }
        rc = fn(ctx, name, strlen(name));
        free(name);
        if (rc != ND_OK)
            break;
    } while (FindNextFileW(fh, &fd));
    if (rc == ND_OK) {
        DWORD e = GetLastError();
        if (e != ERROR_NO_MORE_FILES)
            rc = nd__fail_os((int)e, "FindNextFileW '%s'", dir->path);
    }
    FindClose(fh);
    return rc;
}

int32_t nd__os_stat(nd_os_dir *dir, const char *name, int *not_file, int64_t *len)
{
    DWORD e = 0;
    wchar_t *p = nd__win_child_path(dir, name, &e);
    if (p == NULL)
        return nd__fail_os((int)e, "stat '%s' in '%s'", name, dir->path);
    /* describes a link itself, never its target */
    WIN32_FILE_ATTRIBUTE_DATA a;
    BOOL ok = GetFileAttributesExW(p, GetFileExInfoStandard, &a);
    e = ok ? 0 : GetLastError();
    free(p);
    if (!ok)
        return nd__fail_os((int)e, "stat '%s' in '%s'", name, dir->path);
    /* CreateFileW refuses to open a directory as a file with this error */
    *not_file = is_plain_file(a.dwFileAttributes) ? 0 : (int)ERROR_ACCESS_DENIED;
    *len = (int64_t)(((uint64_t)a.nFileSizeHigh << 32) | a.nFileSizeLow);
    return ND_OK;
}

/* Opens `full` itself (a link, not its target) with `access`, for the
 * SetFileInformationByHandle calls that delete and rename. */
static HANDLE open_for_change(const wchar_t *full, DWORD access, DWORD *err)
{
    HANDLE h = CreateFileW(full, access | SYNCHRONIZE, ND_WIN_SHARE_ALL, NULL, OPEN_EXISTING,
                           FILE_FLAG_OPEN_REPARSE_POINT, NULL);
    if (h == INVALID_HANDLE_VALUE)
        *err = GetLastError();
    return h;
}

/* The info classes with POSIX semantics are missing before Windows 10 1607
 * and on file systems without them (FAT, older SMB, Wine): these errors
 * mean "ask the classic way", nothing else. */
static int posix_unsupported(DWORD e)
{
    return e == ERROR_INVALID_PARAMETER || e == ERROR_NOT_SUPPORTED ||
           e == ERROR_INVALID_FUNCTION || e == ERROR_CALL_NOT_IMPLEMENTED;
}

/* Renames the open file `h` to the full \\?\ path `to`; the info class wants
 * the NT form of the path, and \??\ is what \\?\ stands for. */
static int rename_handle(HANDLE h, const wchar_t *to, int replace, int posix, DWORD *err)
{
    size_t len = wcslen(to);
    size_t size = sizeof(FILE_RENAME_INFO) + len * sizeof(wchar_t);
    FILE_RENAME_INFO *ri = calloc(1, size);
    if (ri == NULL) {
        *err = ERROR_NOT_ENOUGH_MEMORY;
        return 0;
    }
    if (posix)
        ri->Flags =
            (replace ? FILE_RENAME_FLAG_REPLACE_IF_EXISTS : 0) | FILE_RENAME_FLAG_POSIX_SEMANTICS;
    else
        ri->ReplaceIfExists = replace ? TRUE : FALSE;
    ri->RootDirectory = NULL;
    ri->FileNameLength = (DWORD)(len * sizeof(wchar_t));
    memcpy(ri->FileName, to, len * sizeof(wchar_t));
    if (len > 2 && wcsncmp(to, L"\\\\?\\", 4) == 0)
        ri->FileName[1] = L'?';
    BOOL ok = SetFileInformationByHandle(h, posix ? ND_FileRenameInfoEx : FileRenameInfo, ri,
                                         (DWORD)size);
    if (!ok)
        *err = GetLastError();
    free(ri);
    return ok;
}

static int set_delete(HANDLE h, BOOL del, DWORD *err)
{
    FILE_DISPOSITION_INFO classic = {del};
    if (SetFileInformationByHandle(h, FileDispositionInfo, &classic, sizeof(classic)))
        return 1;
    *err = GetLastError();
    return 0;
}

/*
 * Where POSIX semantics are missing, a deleted file that someone still has
 * open keeps its name until the last handle closes: the name cannot be
 * created again, and it would still be listed. And a file with a mapped view
 * cannot be deleted at all until the view goes, with or without them. So a
 * delete that the direct way refuses renames the file to a hidden name of
 * its own (allowed while readers hold it, since they share delete access)
 * and then marks it for deletion: its name is free at once, and the file
 * goes with its last reader, or, if it is mapped, at a later sweep of the
 * directory (sweep_trash). nd_list never shows these names.
 */
static volatile LONG trash_counter;

static int mark_deleted(HANDLE h, DWORD *err)
{
    FILE_DISPOSITION_INFO_EX ex = {FILE_DISPOSITION_FLAG_DELETE |
                                   FILE_DISPOSITION_FLAG_POSIX_SEMANTICS};
    if (SetFileInformationByHandle(h, ND_FileDispositionInfoEx, &ex, sizeof(ex)))
        return 1;
    *err = GetLastError();
    return posix_unsupported(*err) ? set_delete(h, TRUE, err) : 0;
}

/* The files moved aside while mapped, by file index (which a rename keeps), so
 * that the last unmap of one deletes it (nd__win_delete_if_trash). Not by
 * volume too: a handle's volume number can change with a rename (Wine gives
 * 0), and a file of another volume with the same index could only make us
 * delete early a moved-aside file nobody maps any more, which the next
 * listing would delete anyway. */
typedef struct {
    DWORD index_high, index_low;
    wchar_t *path;
} trashed_file;

static struct {
    SRWLOCK lock;
    trashed_file *files;
    size_t n, cap;
} trashed = {SRWLOCK_INIT, NULL, 0, 0};

static void remember_trash(HANDLE h, const wchar_t *path)
{
    BY_HANDLE_FILE_INFORMATION info;
    wchar_t *copy = _wcsdup(path);
    if (copy == NULL || !GetFileInformationByHandle(h, &info)) {
        free(copy); /* forgotten: the directory's next listing sweeps it */
        return;
    }
    trashed_file t = {info.nFileIndexHigh, info.nFileIndexLow, copy};
    AcquireSRWLockExclusive(&trashed.lock);
    if (trashed.n == trashed.cap) {
        size_t cap = trashed.cap ? trashed.cap * 2 : 8;
        trashed_file *grown = realloc(trashed.files, cap * sizeof(*grown));
        if (grown != NULL) {
            trashed.files = grown;
            trashed.cap = cap;
        }
    }
    if (trashed.n < trashed.cap)
        trashed.files[trashed.n++] = t;
    else
        free(copy);
    ReleaseSRWLockExclusive(&trashed.lock);
}

static int trash_delete(const nd_os_dir *dir, HANDLE h, const wchar_t *original, DWORD *err)
{
    BY_HANDLE_FILE_INFORMATION info;
    if (GetFileInformationByHandle(h, &info) && (info.dwFileAttributes & FILE_ATTRIBUTE_READONLY)) {
        *err = ERROR_ACCESS_DENIED; /* really refused: never hide it */
        return 0;
    }
    wchar_t tail[64];
    swprintf(tail, 64, L"%ls%08lx-%08lx-%llx", TRASH_PREFIX, (unsigned long)GetCurrentProcessId(),
             (unsigned long)InterlockedIncrement(&trash_counter),
             (unsigned long long)GetTickCount64());
    size_t tlen = wcslen(tail);
    wchar_t *trash = malloc((dir->wlen + 2 + tlen) * sizeof(wchar_t));
    if (trash == NULL) {
        *err = ERROR_NOT_ENOUGH_MEMORY;
        return 0;
    }
    memcpy(trash, dir->wpath, dir->wlen * sizeof(wchar_t));
    size_t at = dir->wlen;
    if (at > 0 && trash[at - 1] != L'\\')
        trash[at++] = L'\\';
    memcpy(trash + at, tail, (tlen + 1) * sizeof(wchar_t));
    DWORD rename_err = 0;
    int renamed = rename_handle(h, trash, 0, 0, &rename_err);
    if (mark_deleted(h, err)) {
        free(trash);
        return 1;
    }
    if (renamed && *err == ERROR_ACCESS_DENIED) {
        /* mapped: the name is gone, the bytes go when the mapping does */
        remember_trash(h, trash);
        free(trash);
        return 1;
    }
    free(trash);
    if (renamed) {
        DWORD ignored;
        (void)rename_handle(h, original, 0, 0, &ignored);
    }
    return 0;
}

void nd__win_delete_if_trash(HANDLE file)
{
    BY_HANDLE_FILE_INFORMATION info;
    if (!GetFileInformationByHandle(file, &info))
        return;
    AcquireSRWLockExclusive(&trashed.lock);
    for (size_t i = 0; i < trashed.n; i++) {
        trashed_file *t = &trashed.files[i];
        if (t->index_high != info.nFileIndexHigh || t->index_low != info.nFileIndexLow)
            continue;
        DWORD e;
        HANDLE h = open_for_change(t->path, DELETE, &e);
        int gone = h == INVALID_HANDLE_VALUE ? e == ERROR_FILE_NOT_FOUND : mark_deleted(h, &e);
        if (h != INVALID_HANDLE_VALUE)
            CloseHandle(h);
        if (gone) { /* else still mapped elsewhere: that unmap, or the next sweep */
            free(t->path);
            trashed.files[i] = trashed.files[--trashed.n];
        }
        break;
    }
    ReleaseSRWLockExclusive(&trashed.lock);
}

/* Deletes what earlier trash_delete calls could not (mapped files since
 * unmapped, or a process that died between the rename and the delete). */
static void sweep_trash(const nd_os_dir *dir)
{
    size_t cap = dir->wlen + 2 + TRASH_PREFIX_LEN + 2 + MAX_PATH;
    wchar_t *p = malloc(cap * sizeof(wchar_t));
    if (p == NULL)
        return;
    memcpy(p, dir->wpath, dir->wlen * sizeof(wchar_t));
    size_t at = dir->wlen;
    if (at > 0 && p[at - 1] != L'\\')
        p[at++] = L'\\';
    memcpy(p + at, TRASH_PREFIX L"*", (TRASH_PREFIX_LEN + 2) * sizeof(wchar_t));
    WIN32_FIND_DATAW fd;
    HANDLE fh = FindFirstFileExW(p, FindExInfoBasic, &fd, FindExSearchNameMatch, NULL, 0);
    if (fh != INVALID_HANDLE_VALUE) {
        do {
            size_t n = wcslen(fd.cFileName);
            if (!is_plain_file(fd.dwFileAttributes) || at + n + 1 > cap)
                continue;
            memcpy(p + at, fd.cFileName, (n + 1) * sizeof(wchar_t));
            DWORD e;
            HANDLE h = open_for_change(p, DELETE, &e);
            if (h != INVALID_HANDLE_VALUE) {
                (void)mark_deleted(h, &e); /* still mapped: next time */
                CloseHandle(h);
            }
        } while (FindNextFileW(fh, &fd));
        FindClose(fh);
    }
    free(p);
}

int32_t nd__os_unlink(nd_os_dir *dir, const char *name)
{
    DWORD e = 0;
    wchar_t *p = nd__win_child_path(dir, name, &e);
    HANDLE h = p == NULL ? INVALID_HANDLE_VALUE : open_for_change(p, DELETE, &e);
    if (h == INVALID_HANDLE_VALUE) {
        free(p);
        return nd__fail_os((int)e, "open '%s' in '%s'", name, dir->path);
    }
    /* POSIX semantics: the name goes now even while readers have the file
     * open, and can be created again at once, as Lucene expects */
    FILE_DISPOSITION_INFO_EX ex = {FILE_DISPOSITION_FLAG_DELETE |
                                   FILE_DISPOSITION_FLAG_POSIX_SEMANTICS};
    int ok = SetFileInformationByHandle(h, ND_FileDispositionInfoEx, &ex, sizeof(ex));
    if (!ok)
        e = GetLastError();
    /* else the classic way would leave the name until the last reader closes */
    if (!ok && (e == ERROR_ACCESS_DENIED || posix_unsupported(e)))
        ok = trash_delete(dir, h, p, &e);
    CloseHandle(h);
    free(p);
    if (!ok)
        return nd__fail_os((int)e, "delete '%s' in '%s'", name, dir->path);
    return ND_OK;
}

/*
 * Without POSIX semantics, a file that readers hold open cannot be replaced
 * by a rename (ERROR_ACCESS_DENIED), and a mapped one cannot be replaced
 * even with them. Then the target is first deleted as above (its readers
 * keep their bytes) and the rename retried; if that fails, the target is put
 * back. This is two steps, not one: a crash between them leaves `from` in
 * place and no `to`, which is why the one-step ways are always tried first.
 */
static int replace_open_target(nd_os_dir *dir, const wchar_t *src, const wchar_t *dst, DWORD *err)
{
    HANDLE t = open_for_change(dst, DELETE, err);
    if (t == INVALID_HANDLE_VALUE)
        return 0;
    int ok = trash_delete(dir, t, dst, err);
    if (ok && !MoveFileExW(src, dst, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) {
        *err = GetLastError();
        ok = 0;
        DWORD ignored;
        (void)set_delete(t, FALSE, &ignored);
        (void)rename_handle(t, dst, 0, 0, &ignored); /* undo: the old target returns */
    }
    CloseHandle(t);
    return ok;
}

int32_t nd__os_rename(nd_os_dir *dir, const char *from, const char *to)
{
    if (ND_FAULT(ND_FAULT_RENAME))
        return nd__fail_os((int)nd__win_error_from_errno(errno), "rename '%s' to '%s' in '%s'",
                           from, to, dir->path);
    DWORD e = 0;
    wchar_t *src = nd__win_child_path(dir, from, &e);
    wchar_t *dst = src == NULL ? NULL : nd__win_child_path(dir, to, &e);
    if (dst == NULL) {
        free(src);
        return nd__fail_os((int)e, "rename '%s' to '%s' in '%s'", from, to, dir->path);
    }
    int32_t rc = ND_OK;
    /* First the POSIX way: one atomic step that replaces a target readers
     * hold open (they keep the old file), which the classic rename refuses */
    HANDLE h = open_for_change(src, DELETE, &e);
    if (h == INVALID_HANDLE_VALUE) {
        rc = nd__fail_os((int)e, "open '%s' in '%s'", from, dir->path);
    } else {
        int ok = rename_handle(h, dst, 1, 1, &e);
        CloseHandle(h);
        /* ERROR_ACCESS_DENIED: a mapped target, which only the two steps replace */
        if (!ok && !posix_unsupported(e) && e != ERROR_ACCESS_DENIED)
            rc = nd__fail_os((int)e, "rename '%s' to '%s' in '%s'", from, to, dir->path);
        else if (!ok) {
            /* The classic way, which refuses an open target: that one goes aside
             * first. Another thread replacing the same name can put a new open
             * target there (or take the old one away) between those steps, so a
             * refusal is tried again a few times before it counts. */
            for (int attempt = 0; attempt < 16 && !ok; attempt++) {
                if (attempt > 1)
                    Sleep((DWORD)attempt); /* let the other replacer finish its steps */
                ok = MoveFileExW(src, dst, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH);
                if (ok)
                    break;
                e = GetLastError();
                if (e != ERROR_ACCESS_DENIED && e != ERROR_SHARING_VIOLATION)
                    break;
                ok = replace_open_target(dir, src, dst, &e);
                if (!ok && e != ERROR_ACCESS_DENIED && e != ERROR_SHARING_VIOLATION &&
                    e != ERROR_FILE_NOT_FOUND)
                    break;
            }
            if (!ok)
                rc = nd__fail_os((int)e, "MoveFileExW '%s' to '%s' in '%s'", from, to, dir->path);
        }
    }
    free(src);
    free(dst);
    return rc;
}

/*
 * Windows cannot fsync a directory: FlushFileBuffers needs write access that
 * a directory handle cannot have. NTFS journals creates, renames and deletes
 * itself, and renames here ask for write-through. What is left to check is
 * that the directory is still there; holding its handle without
 * FILE_SHARE_DELETE keeps it there, unless the volume went away.
 */
int32_t nd__os_dir_sync(nd_os_dir *dir)
{
    FILE_STANDARD_INFO si;
    if (!GetFileInformationByHandleEx(dir->h, FileStandardInfo, &si, sizeof(si)))
        return nd__fail_os((int)GetLastError(), "sync '%s'", dir->path);
    if (si.DeletePending || !si.Directory)
        return nd__fail_os(ERROR_FILE_NOT_FOUND, "sync '%s': it is being deleted", dir->path);
    DWORD attrs = GetFileAttributesW(dir->wpath);
    if (attrs == INVALID_FILE_ATTRIBUTES)
        return nd__fail_os((int)GetLastError(), "sync '%s'", dir->path);
    if (!(attrs & FILE_ATTRIBUTE_DIRECTORY))
        return nd__fail_os(ERROR_DIRECTORY, "sync '%s': not a directory", dir->path);
    return ND_OK;
}
