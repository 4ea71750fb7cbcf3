# check-dll-exports.cmake: nativedir.dll exports exactly the public ABI.
# cmake -DDLL=<nativedir.dll> -DEXPORTS=<exports.txt> -DOBJDUMP=<x86_64-w64-mingw32-objdump>
#       -P check-dll-exports.cmake
include(${CMAKE_CURRENT_LIST_DIR}/../tests/abi_exports.cmake)
nd_abi_expected(${EXPORTS} expected)
execute_process(COMMAND ${OBJDUMP} -p ${DLL} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "check-dll-exports: ${OBJDUMP} -p ${DLL} failed")
endif()
# the export name table: "[Ordinal/Name Pointer] Table" then "\t[   n] name" lines
string(REGEX MATCH "\\[Ordinal/Name Pointer\\] Table[^\n]*\n(([ \t]+\\[ *[0-9]+\\] [^\n]+\n)+)" _ "${out}")
string(REPLACE "\n" ";" rows "${CMAKE_MATCH_1}")
set(actual "")
foreach(row IN LISTS rows)
  if(row MATCHES "\\] +([A-Za-z_][A-Za-z0-9_]*)")
    list(APPEND actual "${CMAKE_MATCH_1}")
  endif()
endforeach()
nd_abi_compare("check-dll-exports: ${DLL}" expected actual)
# the DLL is self-contained: nothing but system DLLs
string(REGEX MATCHALL "DLL Name: [^\n]+" imports "${out}")
foreach(imp IN LISTS imports)
  string(TOUPPER "${imp}" up)
  if(NOT up MATCHES "DLL NAME: (KERNEL32|MSVCRT|UCRTBASE|API-MS-WIN-[A-Z0-9-]+)\\.DLL")
    message(FATAL_ERROR "check-dll-exports: ${DLL} needs a DLL that Windows does not ship: ${imp}")
  endif()
endforeach()
list(LENGTH actual n)
message(STATUS "check-dll-exports: ${n} exports, exactly the ABI; imports: ${imports}")
