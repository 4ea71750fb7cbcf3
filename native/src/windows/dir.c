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
                     : WideCharToMultiByte(CP_UTF8, WC_ERR_INVALID_CHARS, wide, (int)len, NULL,
                                           0, NULL, NULL);
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
        return nd__fail(ND_E_NO_MEMORY, "nd_open_dir: out of memory");
    }
    memcpy(copy, path, plen + 1);
    d->path = copy;
    d->h = INVALID_HANDLE_VALUE;
    DWORD e = 0;
    d->wpath = full_path(path, &e);
    if (d->wpath == NULL) {
        nd__os_dir_free(d);
        return nd__fail_os((int)e, "nd_open_dir: GetFullPathNameW '%s'", path);
    }
    d->wlen = wcslen(d->wpath);
    size_t root = root_end(d->wpath, d->wlen);
    while (d->wlen > root && d->wpath[d->wlen - 1] == L'\\')
        d->wpath[--d->wlen] = L'\0';
    if (create && (e = make_dirs(d->wpath, d->wlen)) != 0) {
        nd__os_dir_free(d);
        return nd__fail_os((int)e, "nd_open_dir: CreateDirectoryW '%s'", path);
    }
    /* no FILE_SHARE_DELETE: nobody deletes or renames the directory while we hold it */
    d->h = CreateFileW(d->wpath, FILE_LIST_DIRECTORY | FILE_READ_ATTRIBUTES | SYNCHRONIZE,
                       FILE_SHARE_READ | FILE_SHARE_WRITE, NULL, OPEN_EXISTING,
                       FILE_FLAG_BACKUP_SEMANTICS, NULL);
    if (d->h == INVALID_HANDLE_VALUE) {
        e = GetLastError();
        nd__os_dir_free(d);
        return nd__fail_os((int)e, "nd_open_dir: CreateFileW '%s'", path);
    }
    BY_HANDLE_FILE_INFORMATION info;
    if (!GetFileInformationByHandle(d->h, &info)) {
        e = GetLastError();
        nd__os_dir_free(d);
        return nd__fail_os((int)e, "nd_open_dir: GetFileInformationByHandle '%s'", path);
    }
    if (!(info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)) {
        nd__os_dir_free(d);
        return nd__fail_os(ERROR_DIRECTORY, "nd_open_dir: '%s' is not a directory", path);
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

/* Directories, links and other reparse points, devices: none is a file here. */
static int is_plain_file(DWORD attrs)
{
    return !(attrs & (FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_REPARSE_POINT |
                      FILE_ATTRIBUTE_DEVICE));
}

int32_t nd__os_dir_list(nd_os_dir *dir, nd_os_list_fn fn, void *ctx)
{
    wchar_t *pattern = malloc((dir->wlen + 3) * sizeof(wchar_t));
    if (pattern == NULL)
        return nd__fail(ND_E_NO_MEMORY, "nd_list: out of memory");
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
        return nd__fail_os((int)e, "nd_list: FindFirstFileExW '%s'", dir->path);
    }
    int32_t rc = ND_OK;
    do {
        if (!is_plain_file(fd.dwFileAttributes))
            continue;
        DWORD e = 0;
        char *name = nd__win_utf8(fd.cFileName, wcslen(fd.cFileName), &e);
        if (name == NULL) {
            if (e == ERROR_NO_UNICODE_TRANSLATION)
                continue; /* an unpaired surrogate: no UTF-8 name reaches it */
            rc = nd__fail_os((int)e, "nd_list: converting a name in '%s'", dir->path);
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
            rc = nd__fail_os((int)e, "nd_list: FindNextFileW '%s'", dir->path);
    }
    FindClose(fh);
    return rc;
}

int32_t nd__os_stat(nd_os_dir *dir, const char *name, int *is_file, int64_t *len)
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
    *is_file = is_plain_file(a.dwFileAttributes);
    *len = (int64_t)(((uint64_t)a.nFileSizeHigh << 32) | a.nFileSizeLow);
    return ND_OK;
}

/* Opens `name` itself (a link, not its target) with `access` for a
 * SetFileInformationByHandle call. */
static HANDLE open_for_change(nd_os_dir *dir, const char *name, DWORD access, DWORD *err)
{
    wchar_t *p = nd__win_child_path(dir, name, err);
    if (p == NULL)
        return INVALID_HANDLE_VALUE;
    HANDLE h = CreateFileW(p, access | SYNCHRONIZE, ND_WIN_SHARE_ALL, NULL, OPEN_EXISTING,
                           FILE_FLAG_OPEN_REPARSE_POINT, NULL);
    if (h == INVALID_HANDLE_VALUE)
        *err = GetLastError();
    free(p);
    return h;
}

/* The file info classes that ask for POSIX semantics are missing before
 * Windows 10 1607 and on some file systems (FAT, older SMB, Wine): these
 * errors mean "ask the classic way", nothing else. */
static int posix_unsupported(DWORD e)
{
    return e == ERROR_INVALID_PARAMETER || e == ERROR_NOT_SUPPORTED ||
           e == ERROR_INVALID_FUNCTION || e == ERROR_CALL_NOT_IMPLEMENTED;
}

int32_t nd__os_unlink(nd_os_dir *dir, const char *name)
{
    DWORD e = 0;
    HANDLE h = open_for_change(dir, name, DELETE, &e);
    if (h == INVALID_HANDLE_VALUE)
        return nd__fail_os((int)e, "nd_delete_file: open '%s' in '%s'", name, dir->path);
    /* POSIX semantics: the name goes away now even if readers still have the
     * file open, so the name can be created again at once, as Lucene expects */
    FILE_DISPOSITION_INFO_EX ex = {FILE_DISPOSITION_FLAG_DELETE |
                                   FILE_DISPOSITION_FLAG_POSIX_SEMANTICS};
    BOOL ok = SetFileInformationByHandle(h, ND_FileDispositionInfoEx, &ex, sizeof(ex));
    if (!ok && posix_unsupported(GetLastError())) {
        /* classic: the file is deleted when its last handle closes */
        FILE_DISPOSITION_INFO classic = {TRUE};
        ok = SetFileInformationByHandle(h, FileDispositionInfo, &classic, sizeof(classic));
    }
    e = ok ? 0 : GetLastError();
    CloseHandle(h);
    if (!ok)
        return nd__fail_os((int)e, "nd_delete_file: delete '%s' in '%s'", name, dir->path);
    return ND_OK;
}

int32_t nd__os_rename(nd_os_dir *dir, const char *from, const char *to)
{
    if (ND_FAULT(ND_FAULT_RENAME))
        return nd__fail_os((int)nd__win_error_from_errno(errno),
                           "nd_rename: rename '%s' to '%s' in '%s'", from, to, dir->path);
    DWORD e = 0;
    wchar_t *src = nd__win_child_path(dir, from, &e);
    wchar_t *dst = src == NULL ? NULL : nd__win_child_path(dir, to, &e);
    if (dst == NULL) {
        free(src);
        return nd__fail_os((int)e, "nd_rename: '%s' to '%s' in '%s'", from, to, dir->path);
    }
    /* First the POSIX way: it replaces a target that readers hold open (the
     * readers keep the old file), which the classic rename refuses. The
     * target is named by its NT path: \??\ is what \\?\ stands for. */
    int done = 0;
    HANDLE h = CreateFileW(src, DELETE | SYNCHRONIZE, ND_WIN_SHARE_ALL, NULL, OPEN_EXISTING,
                           FILE_FLAG_OPEN_REPARSE_POINT, NULL);
    if (h == INVALID_HANDLE_VALUE) {
        e = GetLastError();
        free(src);
        free(dst);
        return nd__fail_os((int)e, "nd_rename: open '%s' in '%s'", from, dir->path);
    }
    size_t dlen = wcslen(dst);
    size_t size = sizeof(FILE_RENAME_INFO) + dlen * sizeof(wchar_t);
    FILE_RENAME_INFO *ri = calloc(1, size);
    if (ri == NULL) {
        CloseHandle(h);
        free(src);
        free(dst);
        return nd__fail(ND_E_NO_MEMORY, "nd_rename: out of memory");
    }
    ri->Flags = FILE_RENAME_FLAG_REPLACE_IF_EXISTS | FILE_RENAME_FLAG_POSIX_SEMANTICS;
    ri->RootDirectory = NULL;
    ri->FileNameLength = (DWORD)(dlen * sizeof(wchar_t));
    memcpy(ri->FileName, dst, dlen * sizeof(wchar_t));
    ri->FileName[1] = L'?'; /* \\?\ -> \??\ */
    if (SetFileInformationByHandle(h, ND_FileRenameInfoEx, ri, (DWORD)size)) {
        done = 1;
    } else {
        e = GetLastError();
        if (!posix_unsupported(e)) {
            free(ri);
            CloseHandle(h);
            free(src);
            free(dst);
            return nd__fail_os((int)e, "nd_rename: rename '%s' to '%s' in '%s'", from, to,
                               dir->path);
        }
    }
    free(ri);
    CloseHandle(h);
    if (!done && !MoveFileExW(src, dst, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) {
        e = GetLastError();
        free(src);
        free(dst);
        return nd__fail_os((int)e, "nd_rename: MoveFileExW '%s' to '%s' in '%s'", from, to,
                           dir->path);
    }
    free(src);
    free(dst);
    return ND_OK;
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
        return nd__fail_os((int)GetLastError(), "nd_sync_dir: '%s'", dir->path);
    if (si.DeletePending || !si.Directory)
        return nd__fail_os(ERROR_FILE_NOT_FOUND, "nd_sync_dir: '%s' is being deleted",
                           dir->path);
    DWORD attrs = GetFileAttributesW(dir->wpath);
    if (attrs == INVALID_FILE_ATTRIBUTES)
        return nd__fail_os((int)GetLastError(), "nd_sync_dir: '%s'", dir->path);
    if (!(attrs & FILE_ATTRIBUTE_DIRECTORY))
        return nd__fail_os(ERROR_DIRECTORY, "nd_sync_dir: '%s' is not a directory", dir->path);
    return ND_OK;
}
