/*
 * consumer.c - what a C user writes after installing nativedir: built once
 * with pkg-config and once with find_package(nativedir), against the
 * installed copy only. argv[1] is a scratch directory.
 */
#include <stdio.h>
#include <string.h>

#include <nativedir.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: consumer <scratch dir>\n");
        return 2;
    }
    if (nd_abi_version() != ND_ABI_VERSION) {
        fprintf(stderr, "ABI %d, header %d\n", (int)nd_abi_version(), ND_ABI_VERSION);
        return 1;
    }
    nd_handle dir, out, in;
    int32_t rc = nd_open_dir(argv[1], ND_DIR_CREATE, &dir);
    if (rc == ND_OK)
        rc = nd_create_output(dir, "hello.txt", ND_IO_OVERWRITE, &out);
    if (rc == ND_OK) {
        rc = nd_write_bytes(out, "hello", 5) == 5 ? ND_OK : ND_E_IO;
        int32_t closed = nd_close(out);
        rc = rc == ND_OK ? closed : rc;
    }
    char buf[6] = {0};
    if (rc == ND_OK)
        rc = nd_open_input(dir, "hello.txt", ND_IO_MMAP, &in);
    if (rc == ND_OK) {
        rc = nd_read_bytes(in, 0, buf, 5) == 5 && memcmp(buf, "hello", 5) == 0 ? ND_OK : ND_E_IO;
        nd_close(in);
    }
    if (rc != ND_OK) {
        fprintf(stderr, "consumer: %s: %s\n", nd_status_name(rc), nd_last_error_message());
        return 1;
    }
    nd_close(dir);
    printf("consumer: nativedir %s read back \"%s\"\n", nd_version(), buf);
    return 0;
}
