/* A program of a project that embeds nativedir: it links the library target and calls it. */
#include <nativedir.h>
#include <stdio.h>

int main(void)
{
    if (nd_abi_version() != ND_ABI_VERSION) {
        fprintf(stderr, "ABI %d, header %d\n", (int)nd_abi_version(), ND_ABI_VERSION);
        return 1;
    }
    printf("embedded nativedir %s\n", nd_version());
    return 0;
}
