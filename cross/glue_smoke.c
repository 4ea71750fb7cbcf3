/*
 * glue_smoke.c - the .NET glue library (libnativedir_dotnet), loaded as the .NET runtime loads
 * it (dlopen, then its entry points by name), on a cross target whose .NET runtime cannot run
 * here (linux-musl: see cross/README.md). It proves the shipped file loads with the target's
 * own C library and that its entry points reach the OS: what the .NET suites would call first.
 *
 *   glue_smoke <libnativedir_dotnet.so> <scratch folder>
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "nativedir.h"

#define ENTRY(name) "CSharp_NativeDirfInterop_" name "___"

static void *lib;

static void *entry(const char *name)
{
    void *f = dlsym(lib, name);
    if (f == NULL)
        fprintf(stderr, "glue_smoke: %s is not exported: %s\n", name, dlerror());
    return f;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: glue_smoke <glue library> <scratch folder>\n");
        return 2;
    }
    lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "glue_smoke: cannot load %s: %s\n", argv[1], dlerror());
        return 1;
    }
    int (*abi_version)(void) = (int (*)(void))entry(ENTRY("nd_abi_version"));
    const char *(*version)(void) = (const char *(*)(void))entry(ENTRY("nd_version"));
    int (*open_dir)(const char *, unsigned, nd_handle *) =
        (int (*)(const char *, unsigned, nd_handle *))entry(ENTRY("nd_open_dir"));
    int (*create_output)(long long, const char *, unsigned, nd_handle *) =
        (int (*)(long long, const char *, unsigned, nd_handle *))entry(ENTRY("nd_create_output"));
    long long (*write_bytes)(long long, void *, long long) =
        (long long (*)(long long, void *, long long))entry(ENTRY("nd_write_bytes"));
    int (*file_length)(long long, const char *, int64_t *) =
        (int (*)(long long, const char *, int64_t *))entry(ENTRY("nd_file_length"));
    int (*close_handle)(long long) = (int (*)(long long))entry(ENTRY("nd_close"));
    if (!abi_version || !version || !open_dir || !create_output || !write_bytes || !file_length ||
        !close_handle)
        return 1;

    int failures = 0;
    if (abi_version() != ND_ABI_VERSION) {
        fprintf(stderr, "glue_smoke: ABI %d, the header says %d\n", abi_version(), ND_ABI_VERSION);
        failures++;
    }
    nd_handle dir = 0, out = 0;
    char text[] = "written through the .NET glue";
    int64_t length = -1;
    if (open_dir(argv[2], ND_DIR_CREATE, &dir) != ND_OK ||
        create_output(dir, "glue", ND_IO_OVERWRITE, &out) != ND_OK ||
        write_bytes(out, text, (long long)strlen(text)) != (long long)strlen(text) ||
        close_handle(out) != ND_OK || file_length(dir, "glue", &length) != ND_OK ||
        length != (int64_t)strlen(text) || close_handle(dir) != ND_OK) {
        fprintf(stderr, "glue_smoke: a call through the glue failed (length %lld)\n",
                (long long)length);
        failures++;
    }
    printf("glue_smoke: %s: nativedir %s, ABI %d; wrote and measured a file through it: %s\n",
           argv[1], version(), abi_version(), failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
