# abi_exports.cmake - what the two export checks share: the shared library's
# (tests/check_exports.cmake) and the Windows DLL's (cross/check-dll-exports.cmake).

# nd_abi_expected(<exports.txt> <out-var>): the public names, sorted.
function(nd_abi_expected file out)
  file(STRINGS ${file} names)
  list(REMOVE_ITEM names "")
  list(SORT names)
  list(LENGTH names n)
  if(n LESS 30)
    message(FATAL_ERROR "${file} lists only ${n} names; the header has more")
  endif()
  set(${out} ${names} PARENT_SCOPE)
endfunction()

# nd_abi_compare(<what> <expected-var> <actual-var>): fails unless both lists
# name the same symbols.
# (Parameter names no caller uses: a function's parameter shadows the caller's
# variable of the same name.)
function(nd_abi_compare what nd_abi_expected_var nd_abi_actual_var)
  set(missing ${${nd_abi_expected_var}})
  list(REMOVE_ITEM missing ${${nd_abi_actual_var}})
  set(extra ${${nd_abi_actual_var}})
  list(REMOVE_ITEM extra ${${nd_abi_expected_var}})
  if(missing OR extra)
    message(FATAL_ERROR "${what} does not export exactly the public ABI\n"
                        "  missing: ${missing}\n  not public but exported: ${extra}")
  endif()
endfunction()

# What shipped as ND_1 in 0.1.0 and stays there, frozen: the brief's C ABI
# contract plus nd_input_strategy / nd_output_strategy. (The rings and
# nd_read_cached were ND_1 in 0.1.0 too; they moved to ND_EXPERIMENTAL before
# 1.0.) A name added to or dropped from ND_1 in the header fails the check.
set(ND_ABI_FROZEN_ND_1
    nd_abi_version nd_version nd_status_name nd_last_error_message nd_last_os_error
    nd_open_dir nd_list nd_file_exists nd_file_length nd_delete_file nd_rename nd_fsync
    nd_sync_dir nd_lock nd_open_input nd_input_length nd_read_bytes nd_input_seek
    nd_input_position nd_read_byte_buffered nd_read_buffered nd_input_window nd_input_clone
    nd_input_slice nd_input_strategy nd_create_output nd_write_bytes nd_write_byte
    nd_output_position nd_output_crc32 nd_output_sync nd_output_strategy nd_close)

# nd_abi_nodes(<exports_nodes.txt>): sets nd_node_of_<name> for every public
# name, and checks the header's assignment: ND_1 is exactly the frozen list,
# and every other node is ND_1.<minor> or ND_EXPERIMENTAL.
macro(nd_abi_nodes file)
  file(STRINGS ${file} nd_abi_node_rows)
  set(nd_abi_nd1 "")
  foreach(row IN LISTS nd_abi_node_rows)
    if(NOT row MATCHES "^(nd_[a-z0-9_]+) (ND_[A-Z0-9_.]+)$")
      message(FATAL_ERROR "${file}: bad row '${row}'")
    endif()
    set(nd_abi_sym ${CMAKE_MATCH_1})
    set(nd_abi_node ${CMAKE_MATCH_2})
    set(nd_node_of_${nd_abi_sym} ${nd_abi_node})
    if(nd_abi_node STREQUAL "ND_1")
      list(APPEND nd_abi_nd1 ${nd_abi_sym})
    elseif(NOT nd_abi_node MATCHES "^ND_1\\.[1-9][0-9]*$" AND
           NOT nd_abi_node STREQUAL "ND_EXPERIMENTAL")
      message(FATAL_ERROR "${nd_abi_sym} is in node ${nd_abi_node}: nodes are ND_1, "
                          "ND_1.<minor> or ND_EXPERIMENTAL")
    endif()
  endforeach()
  nd_abi_compare("the header's ND_1 node (frozen: tests/abi_exports.cmake)"
                 ND_ABI_FROZEN_ND_1 nd_abi_nd1)
endmacro()
