/*
 * smoke.c - one pass over every directory, input and output call, run on
 * each cross target. The C suite (tests/) is the real proof; this program
 * says whether the toolchain, the library and the emulator work together
 * at all, naming the first call that does not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nativedir.h"

#ifdef _WIN32
#  include <windows.h> /* GetCurrentProcessId: every CRT's, where _getpid is not (Zig's arm64 msvcrt) */
#  define getpid GetCurrentProcessId
#else
#  include <unistd.h>
#endif

static int failures;

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "FAIL %s:%d: %s (last error: %s)\n", __FILE__, __LINE__, #cond,              \
              nd_last_error_message());                                                            \
      failures++;                                                                                  \
    }                                                                                              \
  } while (0)

static const char *temp_root(void)
{
    const char *names[] = {"TMPDIR", "TEMP", "TMP"};
    for (size_t i = 0; i < 3; i++) {
        const char *v = getenv(names[i]);
        if (v != NULL && v[0] != '\0')
            return v;
    }
    return "/tmp";
}

int main(void)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/nd-smoke-%d/sub", temp_root(), (int)getpid());
    nd_handle dir = 0, out = 0, in = 0, lock = 0, lock2 = 0;
    CHECK(nd_open_dir(path, ND_DIR_CREATE, &dir) == ND_OK);
    if (dir == 0)
        return 1;

    /* a buffered output and its CRC */
    static uint8_t data[300000];
    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (uint8_t)(i * 31 + 7);
    CHECK(nd_create_output(dir, "a.bin", 0, &out) == ND_OK);
    CHECK(nd_write_bytes(out, data, sizeof(data)) == (int64_t)sizeof(data));
    CHECK(nd_output_position(out) == (int64_t)sizeof(data));
    CHECK(nd_output_sync(out) == ND_OK);
    CHECK(nd_close(out) == ND_OK);
    CHECK(nd_create_output(dir, "a.bin", 0, &out) == ND_E_EXISTS);

    /* a merge output: direct where the platform has it, truncated to length */
    CHECK(nd_create_output(dir, "m.bin", ND_IO_MERGE, &out) == ND_OK);
    printf("merge output strategy: %d\n", (int)nd_output_strategy(out));
    CHECK(nd_write_bytes(out, data, 12345) == 12345);
    CHECK(nd_write_byte(out, 42) == ND_OK);
    CHECK(nd_close(out) == ND_OK);
    int64_t len = -1;
    CHECK(nd_file_length(dir, "m.bin", &len) == ND_OK && len == 12346);

    /* every read strategy sees the same bytes */
    uint32_t flags[] = {0, ND_IO_RANDOM, ND_IO_MMAP, ND_IO_MERGE, ND_IO_MMAP | ND_IO_PRELOAD};
    for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++) {
        uint8_t buf[5000];
        CHECK(nd_open_input(dir, "a.bin", flags[f], &in) == ND_OK);
        printf("input flags %u strategy: %d\n", (unsigned)flags[f], (int)nd_input_strategy(in));
        CHECK(nd_input_length(in, &len) == ND_OK && len == (int64_t)sizeof(data));
        CHECK(nd_read_bytes(in, 123457, buf, sizeof(buf)) == (int64_t)sizeof(buf));
        CHECK(memcmp(buf, data + 123457, sizeof(buf)) == 0);
        CHECK(nd_read_bytes(in, (int64_t)sizeof(data) - 10, buf, 11) == ND_E_EOF);
        CHECK(nd_input_seek(in, 7) == ND_OK);
        CHECK(nd_read_byte_buffered(in) == data[7]);
        const uint8_t *w = NULL;
        CHECK(nd_input_window(in, 200000, &w) >= 1 && w != NULL && w[0] == data[200000]);
        CHECK(nd_close(in) == ND_OK);
    }

    /* rename over, delete, list */
    CHECK(nd_rename(dir, "m.bin", "a.bin") == ND_OK);
    CHECK(nd_file_exists(dir, "m.bin") == 0);
    CHECK(nd_file_length(dir, "a.bin", &len) == ND_OK && len == 12346);
    CHECK(nd_create_output(dir, "b.bin", 0, &out) == ND_OK && nd_close(out) == ND_OK);
    char names[256];
    int64_t need = nd_list(dir, names, sizeof(names));
    CHECK(need == 12 && strcmp(names, "a.bin") == 0 && strcmp(names + 6, "b.bin") == 0);
    CHECK(nd_fsync(dir, "a.bin") == ND_OK);
    CHECK(nd_delete_file(dir, "b.bin") == ND_OK);
    CHECK(nd_delete_file(dir, "b.bin") == ND_E_NOT_FOUND);
    CHECK(nd_sync_dir(dir) == ND_OK);

    /* locks exclude within one process too, and free on close */
    CHECK(nd_lock(dir, "write.lock", &lock) == ND_OK);
    CHECK(nd_lock(dir, "write.lock", &lock2) == ND_E_LOCKED);
    CHECK(nd_close(lock) == ND_OK);
    CHECK(nd_lock(dir, "write.lock", &lock2) == ND_OK);
    CHECK(nd_close(lock2) == ND_OK);

    /* names that must never reach the OS */
    CHECK(nd_file_exists(dir, "../a.bin") == ND_E_INVALID_NAME);
    CHECK(nd_file_exists(dir, "") == ND_E_INVALID_NAME);

    CHECK(nd_delete_file(dir, "a.bin") == ND_OK);
    CHECK(nd_delete_file(dir, "write.lock") == ND_OK);
    CHECK(nd_close(dir) == ND_OK);
    printf("%s: %d failure(s)\n", failures ? "FAILED" : "passed", failures);
    return failures ? 1 : 0;
}
