/*
 * nativedir from C: open a directory, write a file and make it durable, read it back.
 *
 *   cc example.c $(pkg-config --cflags --libs nativedir) -o example && ./example /tmp/idx
 */
#include <nativedir.h>
#include <stdio.h>
#include <string.h>

static int check(int64_t rc, const char *what)
{
    if (rc < 0)
        fprintf(stderr, "%s: %s (%s)\n", what, nd_last_error_message(),
                nd_status_name((int32_t)rc));
    return rc < 0;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "example-index";
    const char text[] = "nativedir: durable on return";
    const int64_t len = (int64_t)strlen(text);
    nd_handle dir, out, in;
    if (check(nd_open_dir(path, ND_DIR_CREATE, &dir), "open the directory"))
        return 1;

    /* write under a temporary name, make the bytes durable, then rename: the final name always
     * holds a whole file */
    if (check(nd_create_output(dir, "notes.tmp", ND_IO_OVERWRITE, &out), "create") ||
        check(nd_write_bytes(out, text, len), "write"))
        return 1;
    int64_t crc = nd_output_crc32(out); /* zlib's CRC-32 of every byte written */
    if (check(nd_output_sync(out), "sync") || check(nd_close(out), "close") ||
        check(nd_rename(dir, "notes.tmp", "notes"), "rename") ||
        check(nd_sync_dir(dir), "sync the directory")) /* the rename is durable too */
        return 1;

    /* read it back through a mapping: positional reads are thread-safe */
    char back[sizeof text];
    if (check(nd_open_input(dir, "notes", ND_IO_MMAP | ND_IO_RANDOM, &in), "open") ||
        check(nd_read_bytes(in, 0, back, len), "read"))
        return 1;
    nd_close(in);
    nd_close(dir);
    if (memcmp(back, text, (size_t)len) != 0) {
        fprintf(stderr, "read back something else\n");
        return 1;
    }
    printf("crc32 %08llx\nwrote and read back %lld bytes with nativedir %s\n",
           (unsigned long long)crc, (long long)len, nd_version());
    return 0;
}
