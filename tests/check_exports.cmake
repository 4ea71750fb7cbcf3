# check_exports.cmake: the shared library exports exactly the public ABI.
# cmake -DLIB=<libnativedir.so> -DEXPORTS=<exports.txt> -DNM=nm -DREADELF=readelf
#       -DSONAME=libnativedir.so.1 -P check_exports.cmake
foreach(var LIB EXPORTS NM READELF SONAME)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "check_exports: ${var} is not set")
  endif()
endforeach()

include(${CMAKE_CURRENT_LIST_DIR}/abi_exports.cmake)
nd_abi_expected(${EXPORTS} expected)
list(LENGTH expected n_expected)

execute_process(COMMAND ${NM} -D --defined-only ${LIB}
                OUTPUT_VARIABLE nm_out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "check_exports: ${NM} failed on ${LIB}")
endif()
string(REPLACE "\n" ";" lines "${nm_out}")
set(actual "")
foreach(line IN LISTS lines)
  # "<addr> <type> <name>[@@VERSION]"; the version node itself is an absolute symbol (A)
  if(line MATCHES "^[0-9a-fA-F]* +([A-Za-z]) +([^ @]+)")
    set(type ${CMAKE_MATCH_1})
    set(sym ${CMAKE_MATCH_2})
    if(type STREQUAL "A")
      continue()
    endif()
    list(APPEND actual ${sym})
  endif()
endforeach()

nd_abi_compare("check_exports: ${LIB}" expected actual)

# every export carries the version node the header puts it in (ND_1 frozen,
# ND_1.<minor> additions, ND_EXPERIMENTAL), so old binaries keep binding to
# the node they were linked against
if(NOT DEFINED NODES)
  get_filename_component(nd_exports_dir ${EXPORTS} DIRECTORY)
  set(NODES ${nd_exports_dir}/exports_nodes.txt)
endif()
nd_abi_nodes(${NODES})
set(n_versioned 0)
set(nd_node_counts "")
foreach(sym IN LISTS expected)
  if(NOT nm_out MATCHES "(^|\n)[0-9a-fA-F]* +[A-Za-z] +${sym}@@([A-Z0-9_.]+)\n")
    message(FATAL_ERROR "check_exports: ${sym} is exported without a version node")
  endif()
  set(node ${CMAKE_MATCH_2})
  if(NOT node STREQUAL nd_node_of_${sym})
    message(FATAL_ERROR "check_exports: ${sym} is exported as ${sym}@@${node}; the header puts "
                        "it in ${nd_node_of_${sym}}")
  endif()
  math(EXPR n_versioned "${n_versioned} + 1")
endforeach()
if(NOT n_versioned EQUAL n_expected)
  message(FATAL_ERROR "check_exports: ${n_versioned} of ${n_expected} exports carry their version node")
endif()
# the nodes themselves, each defined once
foreach(node ND_1 ND_1.1 ND_EXPERIMENTAL)
  string(REPLACE "." "\\." node_re ${node})
  if(NOT nm_out MATCHES "A ${node_re}\n")
    message(FATAL_ERROR "check_exports: ${LIB} defines no version node ${node}")
  endif()
endforeach()

execute_process(COMMAND ${READELF} -d ${LIB} OUTPUT_VARIABLE dyn RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT dyn MATCHES "Library soname: \\[([^]]+)\\]")
  message(FATAL_ERROR "check_exports: ${LIB} has no SONAME")
endif()
if(NOT CMAKE_MATCH_1 STREQUAL SONAME)
  message(FATAL_ERROR "check_exports: SONAME is ${CMAKE_MATCH_1}, expected ${SONAME}")
endif()
message(STATUS "check_exports: ${n_expected} public symbols, each in its header node, SONAME ${SONAME}")
