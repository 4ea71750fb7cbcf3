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
