/*
 * header_alone.c - compiled by itself as C99 and as C++11 with -Werror
 * -pedantic: the public header must need nothing but itself and stdint.h, and
 * every declaration must be usable from both languages.
 */
#include "nativedir.h"

/* Takes the address of every function so a typo in a prototype (or a
 * missing extern "C") shows up as a compile error, not at link time. */
typedef struct {
    int32_t (*abi_version)(void);
    const char *(*version)(void);
    const char *(*status_name)(int32_t);
    const char *(*last_error_message)(void);
    int32_t (*last_os_error)(void);
    int32_t (*open_dir)(const char *, uint32_t, nd_handle *);
    int64_t (*list)(nd_handle, char *, int64_t);
    int32_t (*file_exists)(nd_handle, const char *);
    int32_t (*file_length)(nd_handle, const char *, int64_t *);
    int32_t (*delete_file)(nd_handle, const char *);
    int32_t (*rename_file)(nd_handle, const char *, const char *);
    int32_t (*fsync_file)(nd_handle, const char *);
    int32_t (*sync_dir)(nd_handle);
    int32_t (*lock)(nd_handle, const char *, nd_handle *);
    int32_t (*open_input)(nd_handle, const char *, uint32_t, nd_handle *);
    int32_t (*input_length)(nd_handle, int64_t *);
    int64_t (*read_bytes)(nd_handle, int64_t, void *, int64_t);
    int32_t (*input_seek)(nd_handle, int64_t);
    int64_t (*input_position)(nd_handle);
    int32_t (*read_byte_buffered)(nd_handle);
    int64_t (*read_buffered)(nd_handle, void *, int64_t);
    int64_t (*input_window)(nd_handle, int64_t, const uint8_t **);
    int32_t (*input_clone)(nd_handle, nd_handle *);
    int32_t (*input_slice)(nd_handle, int64_t, int64_t, nd_handle *);
    int32_t (*input_strategy)(nd_handle);
    int32_t (*create_output)(nd_handle, const char *, uint32_t, nd_handle *);
    int64_t (*write_bytes)(nd_handle, const void *, int64_t);
    int32_t (*write_byte)(nd_handle, uint8_t);
    int64_t (*output_position)(nd_handle);
    int64_t (*output_crc32)(nd_handle);
    int32_t (*output_sync)(nd_handle);
    int32_t (*output_strategy)(nd_handle);
    int32_t (*ring_open)(uint32_t, uint32_t, nd_handle *);
    int32_t (*ring_backend)(nd_handle);
    int32_t (*ring_submit_read)(nd_handle, nd_handle, int64_t, void *, int64_t, uint64_t);
    int32_t (*ring_reap)(nd_handle, uint64_t *, int64_t *, int32_t, int32_t);
    int32_t (*ring_in_flight)(nd_handle);
    int32_t (*close_handle)(nd_handle);
} nd_api_table;

extern const nd_api_table nd_api_for_header_test;
/* clang-format off */
const nd_api_table nd_api_for_header_test = {
    nd_abi_version, nd_version, nd_status_name, nd_last_error_message, nd_last_os_error,
    nd_open_dir, nd_list, nd_file_exists, nd_file_length, nd_delete_file, nd_rename, nd_fsync,
    nd_sync_dir, nd_lock, nd_open_input, nd_input_length, nd_read_bytes, nd_input_seek,
    nd_input_position, nd_read_byte_buffered, nd_read_buffered, nd_input_window, nd_input_clone,
    nd_input_slice, nd_input_strategy, nd_create_output, nd_write_bytes, nd_write_byte,
    nd_output_position, nd_output_crc32, nd_output_sync, nd_output_strategy, nd_ring_open,
    nd_ring_backend, nd_ring_submit_read, nd_ring_reap, nd_ring_in_flight, nd_close};
/* clang-format on */

/* The constants are integer constant expressions of the frozen values. */
typedef char nd_abi_is_1[ND_ABI_VERSION == 1 ? 1 : -1];
typedef char
    nd_codes_frozen[(ND_OK == 0 && ND_E_INVALID_ARGUMENT == -1 && ND_E_BAD_HANDLE == -2 &&
                     ND_E_NOT_FOUND == -3 && ND_E_EXISTS == -4 && ND_E_ACCESS == -5 &&
                     ND_E_INVALID_NAME == -6 && ND_E_EOF == -7 && ND_E_NO_SPACE == -8 &&
                     ND_E_IO == -9 && ND_E_NOT_SUPPORTED == -10 && ND_E_LOCKED == -11 &&
                     ND_E_NO_MEMORY == -12 && ND_E_TOO_MANY_OPEN == -13 && ND_E_BUSY == -14)
                        ? 1
                        : -1];
typedef char nd_flags_frozen[(ND_DIR_CREATE == 1u && ND_IO_RANDOM == 1u && ND_IO_SEQUENTIAL == 2u &&
                              ND_IO_MERGE == 4u && ND_IO_MMAP == 8u && ND_IO_PRELOAD == 16u &&
                              ND_IO_REQUIRE_DIRECT == 32u && ND_IO_OVERWRITE == 64u &&
                              ND_IO_NOREUSE == 128u && ND_IO_WARM == 256u)
                                 ? 1
                                 : -1];
typedef char nd_handle_is_64_bits[sizeof(nd_handle) == 8 ? 1 : -1];
