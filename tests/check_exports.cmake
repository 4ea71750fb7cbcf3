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

# every export carries the version node, so a later ABI can add ND_2 beside it
string(REGEX MATCHALL "nd_[a-z0-9_]+@@ND_1" versioned "${nm_out}")
list(LENGTH versioned n_versioned)
if(NOT n_versioned EQUAL n_expected)
  message(FATAL_ERROR "check_exports: ${n_versioned} of ${n_expected} exports carry the ND_1 version node")
endif()

execute_process(COMMAND ${READELF} -d ${LIB} OUTPUT_VARIABLE dyn RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT dyn MATCHES "Library soname: \\[([^]]+)\\]")
  message(FATAL_ERROR "check_exports: ${LIB} has no SONAME")
endif()
if(NOT CMAKE_MATCH_1 STREQUAL SONAME)
  message(FATAL_ERROR "check_exports: SONAME is ${CMAKE_MATCH_1}, expected ${SONAME}")
endif()
message(STATUS "check_exports: ${n_expected} public symbols, all versioned ND_1, SONAME ${SONAME}")
