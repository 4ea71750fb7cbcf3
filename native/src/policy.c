/*
 * policy.c - which flags a search engine's file gets for what the engine is
 * about to do with it (nd_policy_input, nd_policy_output): one rule for
 * every binding's directory (Lucene.NET's NativeFSDirectory, Lucene's for
 * Java), so that a measurement that changes it changes it everywhere.
 */
#include <string.h>

#include "internal.h"

/* The files a search reads one small block at an unpredictable offset per
 * term or per hit. Read-around (up to the device's read_ahead_kb per page
 * fault on a mapping) would mostly read bytes nobody asks for and, once the
 * index is larger than memory, evict the ones that were (docs/strategies.md).
 * Postings (.doc, .pos, .pay) are read forward from a term's start, and the
 * rest is read whole at open (term index, norms, field infos, live docs). */
static const struct {
    const char *ext;
    uint32_t flags;
} search_files[] = {
    {"tim", ND_IO_RANDOM}, /* BlockTree terms dictionary: a block per term looked up */
    /* The chunk of a hit's stored fields or term vectors, read for a results
     * page, is seldom read again before a page cache that thrashes evicts it;
     * caching it would evict the terms and postings every query reads
     * (ND_IO_NOREUSE). Most of an index's bytes are stored fields. */
    {"fdt", ND_IO_RANDOM | ND_IO_NOREUSE}, /* compressed stored fields: a chunk per hit */
    {"tvd", ND_IO_RANDOM | ND_IO_NOREUSE}, /* term vectors: a chunk per document asked for */
    {"dvd", ND_IO_RANDOM}, /* doc values: a value (or an ordinal and a term) per document */
    {"kdd", ND_IO_RANDOM}, /* points (Lucene 6+): a leaf block per range visited */
};

/* The extension of a Lucene file name: what follows its last '.', if any. */
static const char *extension(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot == NULL ? "" : dot + 1;
}

static uint32_t search_flags(const char *name)
{
    if (name == NULL)
        return 0;
    const char *ext = extension(name);
    for (size_t i = 0; i < sizeof(search_files) / sizeof(search_files[0]); i++)
        if (strcmp(ext, search_files[i].ext) == 0)
            return search_files[i].flags;
    return 0;
}

int nd__policy_read_per_use(const char *name)
{
    return (search_flags(name) & ND_IO_NOREUSE) != 0;
}

/* The checks both calls share; on success the merge is large or not. */
static int32_t policy_check(nd_handle dir, const char *name, int32_t use, int64_t merge_bytes,
                            int64_t min_direct, int *large_merge)
{
    int32_t rc = name == NULL ? ND_OK : nd__check_name(name);
    if (rc != ND_OK)
        return rc;
    if (use < ND_USE_SEARCH || use > ND_USE_FLUSH)
        return nd__fail(ND_E_INVALID_ARGUMENT, "use %d is not an ND_USE_* value", (int)use);
    if (min_direct < -1)
        return nd__fail(ND_E_INVALID_ARGUMENT, "min_direct %lld: >= 0, or -1 for the default",
                        (long long)min_direct);
    nd_dir *d;
    if (dir != 0) { /* 0: the rules for any directory */
        if ((rc = nd__dir_get(dir, &d)) != ND_OK)
            return rc;
        nd__handle_put(dir);
    }
    int64_t threshold = min_direct == -1 ? ND_POLICY_MIN_DIRECT : min_direct;
    *large_merge = use == ND_USE_MERGE && merge_bytes >= threshold;
    return ND_OK;
}

static int32_t nd_policy_input_impl(nd_handle dir, const char *name, int32_t use,
                                    int64_t merge_bytes, int64_t min_direct)
{
    int large = 0;
    int32_t rc = policy_check(dir, name, use, merge_bytes, min_direct, &large);
    if (rc != ND_OK)
        return rc;
    if (use == ND_USE_READ_ONCE)
        return (int32_t)ND_IO_SEQUENTIAL;
    if (large)
        return (int32_t)ND_IO_MERGE;
    if (use == ND_USE_MERGE)
        return (int32_t)(ND_IO_MMAP | ND_IO_SEQUENTIAL);
    return (int32_t)(ND_IO_MMAP | ND_IO_WARM | search_flags(name));
}

static int32_t nd_policy_output_impl(nd_handle dir, const char *name, int32_t use,
                                     int64_t merge_bytes, int64_t min_direct)
{
    int large = 0;
    int32_t rc = policy_check(dir, name, use, merge_bytes, min_direct, &large);
    if (rc != ND_OK)
        return rc;
    return large ? (int32_t)ND_IO_MERGE : 0;
}

int32_t nd_policy_input(nd_handle dir, const char *name, int32_t use, int64_t merge_bytes,
                        int64_t min_direct)
{
    return (int32_t)nd__in_call("nd_policy_input",
                                nd_policy_input_impl(dir, name, use, merge_bytes, min_direct));
}

int32_t nd_policy_output(nd_handle dir, const char *name, int32_t use, int64_t merge_bytes,
                         int64_t min_direct)
{
    return (int32_t)nd__in_call("nd_policy_output",
                                nd_policy_output_impl(dir, name, use, merge_bytes, min_direct));
}
