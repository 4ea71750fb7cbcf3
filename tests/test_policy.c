/*
 * test_policy.c - nd_policy_input / nd_policy_output: the flags every use and
 * file gets (the table the bindings' directories rely on), the merge size
 * threshold at its edge and overridden, that the flags open the file they
 * are for, and the argument checks.
 */
#include <stdlib.h>
#include <string.h>

#include "support.h"

#define MIB ((int64_t)1 << 20)

typedef struct {
    const char *name;
    int32_t use;
    int64_t merge_bytes;
    int32_t input, output;
} policy_row;

static const policy_row table[] = {
    /* searches: mapped; random advice for the files read a block at a time, and
     * no reuse for those read per hit */
    {"_0.tim", ND_USE_SEARCH, 0, ND_IO_MMAP | ND_IO_WARM | ND_IO_RANDOM, 0},
    {"_0.fdt", ND_USE_SEARCH, 0, ND_IO_MMAP | ND_IO_WARM | ND_IO_RANDOM | ND_IO_NOREUSE, 0},
    {"_0.tvd", ND_USE_SEARCH, 0, ND_IO_MMAP | ND_IO_WARM | ND_IO_RANDOM | ND_IO_NOREUSE, 0},
    {"_0_Lucene45_0.dvd", ND_USE_SEARCH, 0, ND_IO_MMAP | ND_IO_WARM | ND_IO_RANDOM, 0},
    {"_3.kdd", ND_USE_SEARCH, 0, ND_IO_MMAP | ND_IO_WARM | ND_IO_RANDOM, 0},
    {"_0_Lucene41_0.doc", ND_USE_SEARCH, 0, ND_IO_MMAP | ND_IO_WARM, 0},
    {"_0.pos", ND_USE_SEARCH, 0, ND_IO_MMAP | ND_IO_WARM, 0},
    {"_0.tip", ND_USE_SEARCH, 0, ND_IO_MMAP | ND_IO_WARM, 0},
    {"_0.cfs", ND_USE_SEARCH, 0, ND_IO_MMAP | ND_IO_WARM, 0},
    {"segments_2", ND_USE_SEARCH, 0, ND_IO_MMAP | ND_IO_WARM, 0},
    {"tim", ND_USE_SEARCH, 0, ND_IO_MMAP | ND_IO_WARM, 0}, /* no extension: the name is not one */
    /* a flush writes through the page cache, where its segment is read next */
    {"_1.tim", ND_USE_FLUSH, 0, ND_IO_MMAP | ND_IO_WARM | ND_IO_RANDOM, 0},
    /* read once: buffered, sequential, whatever the file */
    {"_0.tim", ND_USE_READ_ONCE, 0, ND_IO_SEQUENTIAL, 0},
    {"segments_2", ND_USE_READ_ONCE, 0, ND_IO_SEQUENTIAL, 0},
    /* merges: direct from ND_POLICY_MIN_DIRECT on, mapped and sequential below */
    {"_5.fdt", ND_USE_MERGE, ND_POLICY_MIN_DIRECT, ND_IO_MERGE, ND_IO_MERGE},
    {"_5.doc", ND_USE_MERGE, 1 << 30, ND_IO_MERGE, ND_IO_MERGE},
    {"_5.fdt", ND_USE_MERGE, ND_POLICY_MIN_DIRECT - 1, ND_IO_MMAP | ND_IO_SEQUENTIAL, 0},
    {"_5.doc", ND_USE_MERGE, 0, ND_IO_MMAP | ND_IO_SEQUENTIAL, 0},
    /* the merge size means nothing to other uses */
    {"_5.doc", ND_USE_SEARCH, 1 << 30, ND_IO_MMAP | ND_IO_WARM, 0},
};

static void the_table_holds(void **state)
{
    tst_env *env = *state;
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        const policy_row *r = &table[i];
        int32_t in = nd_policy_input(env->dir, r->name, r->use, r->merge_bytes, -1);
        int32_t out = nd_policy_output(env->dir, r->name, r->use, r->merge_bytes, -1);
        if (in != r->input || out != r->output)
            fail_msg("%s, use %d, %lld bytes: input 0x%x output 0x%x, expected 0x%x and 0x%x",
                     r->name, (int)r->use, (long long)r->merge_bytes, (unsigned)in, (unsigned)out,
                     (unsigned)r->input, (unsigned)r->output);
    }
}

static void min_direct_overrides_the_threshold(void **state)
{
    tst_env *env = *state;
    /* 0: every merge is direct; a large value: none is */
    assert_int_equal(ND_IO_MERGE, nd_policy_input(env->dir, "_7.doc", ND_USE_MERGE, 0, 0));
    assert_int_equal(ND_IO_MERGE, nd_policy_output(env->dir, "_7.doc", ND_USE_MERGE, 0, 0));
    assert_int_equal(ND_IO_MMAP | ND_IO_SEQUENTIAL,
                     nd_policy_input(env->dir, "_7.doc", ND_USE_MERGE, 100 * MIB, 101 * MIB));
    assert_int_equal(0, nd_policy_output(env->dir, "_7.doc", ND_USE_MERGE, 100 * MIB, 101 * MIB));
    assert_int_equal(ND_IO_MERGE,
                     nd_policy_output(env->dir, "_7.doc", ND_USE_MERGE, 101 * MIB, 101 * MIB));
}

/* Every flag set the policy gives opens and reads the file it names. */
static void its_flags_open_the_file(void **state)
{
    tst_env *env = *state;
    uint8_t *data = tst_put_random(env, "_0.tim", 70000, 11);
    const int32_t uses[] = {ND_USE_SEARCH, ND_USE_READ_ONCE, ND_USE_MERGE, ND_USE_FLUSH};
    const int64_t sizes[] = {0, 1 << 30};
    for (size_t u = 0; u < 4; u++)
        for (size_t s = 0; s < 2; s++) {
            int32_t flags = nd_policy_input(env->dir, "_0.tim", uses[u], sizes[s], -1);
            assert_true(flags >= 0);
            nd_handle in;
            assert_status(ND_OK, nd_open_input(env->dir, "_0.tim", (uint32_t)flags, &in));
            uint8_t got[4096];
            assert_status(4096, nd_read_bytes(in, 65536 - 4096, got, 4096));
            assert_memory_equal(data + 65536 - 4096, got, 4096);
            assert_status(ND_OK, nd_close(in));
            int32_t oflags = nd_policy_output(env->dir, "out", uses[u], sizes[s], -1);
            assert_true(oflags >= 0);
            nd_handle out;
            assert_status(
                ND_OK, nd_create_output(env->dir, "out", (uint32_t)oflags | ND_IO_OVERWRITE, &out));
            assert_status(4096, nd_write_bytes(out, data, 4096));
            assert_status(ND_OK, nd_close(out));
            assert_int_equal(4096, tst_file_size(tst_join((char[TST_PATH_MAX]){0}, TST_PATH_MAX,
                                                          env->dir_path, "out")));
        }
    free(data);
}

/* Directory 0 is the rules for any directory; a NULL name the flags of the use alone. */
static void no_directory_and_no_name(void **state)
{
    tst_env *env = *state;
    assert_int_equal(ND_IO_MMAP | ND_IO_WARM | ND_IO_RANDOM,
                     nd_policy_input(0, "_0.tim", ND_USE_SEARCH, 0, -1));
    assert_int_equal(ND_IO_MMAP | ND_IO_WARM,
                     nd_policy_input(env->dir, NULL, ND_USE_SEARCH, 0, -1));
    assert_int_equal(ND_IO_MMAP | ND_IO_WARM, nd_policy_input(0, NULL, ND_USE_SEARCH, 0, -1));
    assert_int_equal(ND_IO_SEQUENTIAL, nd_policy_input(0, NULL, ND_USE_READ_ONCE, 0, -1));
    assert_int_equal(ND_IO_MERGE, nd_policy_input(0, NULL, ND_USE_MERGE, 1 << 30, -1));
    assert_int_equal(ND_IO_MERGE, nd_policy_output(0, NULL, ND_USE_MERGE, 1 << 30, -1));
    assert_int_equal(0, nd_policy_output(0, NULL, ND_USE_FLUSH, 0, -1));
}

static void bad_arguments_are_refused(void **state)
{
    tst_env *env = *state;
    assert_status(ND_E_INVALID_ARGUMENT, nd_policy_input(env->dir, "_0.tim", -1, 0, -1));
    assert_message_contains("use -1");
    assert_status(ND_E_INVALID_ARGUMENT, nd_policy_output(env->dir, "_0.tim", 4, 0, -1));
    assert_status(ND_E_INVALID_ARGUMENT, nd_policy_input(env->dir, "_0.tim", 0, 0, -5));
    assert_message_contains("min_direct");
    assert_status(ND_E_INVALID_NAME, nd_policy_input(env->dir, "..", 0, 0, -1));
    assert_status(ND_E_INVALID_NAME, nd_policy_output(env->dir, "a/b.tim", 0, 0, -1));
    assert_status(ND_E_BAD_HANDLE, nd_policy_input(env->dir + 1, "_0.tim", 0, 0, -1));
    nd_handle in;
    free(tst_put_random(env, "x", 16, 1));
    assert_status(ND_OK, nd_open_input(env->dir, "x", 0, &in));
    assert_status(ND_E_BAD_HANDLE, nd_policy_output(in, "_0.tim", 0, 0, -1)); /* not a directory */
    assert_status(ND_OK, nd_close(in));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(the_table_holds, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(min_direct_overrides_the_threshold, tst_setup,
                                        tst_teardown),
        cmocka_unit_test_setup_teardown(its_flags_open_the_file, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(no_directory_and_no_name, tst_setup, tst_teardown),
        cmocka_unit_test_setup_teardown(bad_arguments_are_refused, tst_setup, tst_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
