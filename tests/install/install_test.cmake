# install_test.cmake: `cmake --install` the build into a fresh prefix (or,
# with -DMODE=deb, build the Debian packages with cpack and unpack them into a
# scratch root with dpkg-deb -x), then build and run a consumer with
# pkg-config and one with find_package, each against the installed files only.
foreach(var BUILD_DIR WORK_DIR LIBDIR CONSUMER_DIR CC GENERATOR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "install_test: ${var} is not set")
  endif()
endforeach()

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " cmd)
    message(FATAL_ERROR "install_test: `${cmd}` failed (${rc}):\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
if(MODE STREQUAL "deb")
  include(${CMAKE_CURRENT_LIST_DIR}/deb_check.cmake)
  set(prefix ${WORK_DIR}/root/usr)
  # the .pc file names /usr: pkg-config puts the scratch root in front of it
  set(ENV{PKG_CONFIG_SYSROOT_DIR} ${WORK_DIR}/root)
  set(ENV{PKG_CONFIG_ALLOW_SYSTEM_CFLAGS} 1)
  set(ENV{PKG_CONFIG_ALLOW_SYSTEM_LIBS} 1)
else()
  set(prefix ${WORK_DIR}/prefix)
  run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
endif()
foreach(f include/nativedir.h ${LIBDIR}/libnativedir.so ${LIBDIR}/libnativedir.so.1
          ${LIBDIR}/libnativedir.a ${LIBDIR}/pkgconfig/nativedir.pc
          ${LIBDIR}/cmake/nativedir/nativedirConfig.cmake)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "install_test: ${f} was not installed into ${prefix}")
  endif()
endforeach()
set(ENV{LD_LIBRARY_PATH} ${prefix}/${LIBDIR})

# pkg-config: the .pc file must describe where it was installed, not where
# the build expected to be installed.
if(PKG_CONFIG)
  set(ENV{PKG_CONFIG_PATH} ${prefix}/${LIBDIR}/pkgconfig)
  set(ENV{PKG_CONFIG_LIBDIR} ${prefix}/${LIBDIR}/pkgconfig)
  run(${PKG_CONFIG} --cflags --libs nativedir)
  string(STRIP "${last_output}" flags)
  if(NOT flags MATCHES "-I${prefix}/include" AND NOT flags STREQUAL "")
    message(SEND_ERROR "install_test: pkg-config gives `${flags}`, which does not point into the "
                       "install prefix ${prefix}")
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  run(${CC} -std=c99 -Wall -Werror -o ${WORK_DIR}/consumer_pkgconfig ${CONSUMER_DIR}/consumer.c ${flags})
  run(${WORK_DIR}/consumer_pkgconfig ${WORK_DIR}/scratch_pkgconfig)
  message(STATUS "pkg-config consumer: ${last_output}")
else()
  message(FATAL_ERROR "install_test: pkg-config is not installed (Debian: pkg-config)")
endif()

# find_package(nativedir): the shared and the static library.
run(${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/cmake_consumer -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_C_COMPILER=${CC} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/cmake_consumer)
foreach(kind shared static)
  run(${WORK_DIR}/cmake_consumer/consumer_${kind} ${WORK_DIR}/scratch_${kind})
  message(STATUS "find_package consumer (${kind}): ${last_output}")
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
