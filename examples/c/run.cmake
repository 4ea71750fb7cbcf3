# examples_c: install the build into a scratch prefix, as `cmake --install` does for a user, then
# configure, build and run the example against it with find_package(nativedir).
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK}/prefix
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SRC} -B ${WORK}/build -G ${GENERATOR}
                        -DCMAKE_C_COMPILER=${CC} -DCMAKE_PREFIX_PATH=${WORK}/prefix
                RESULT_VARIABLE rc)
if(NOT rc)
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/build RESULT_VARIABLE rc)
endif()
if(rc)
  message(FATAL_ERROR "the example did not build against the installed library (${rc})")
endif()
execute_process(COMMAND ${WORK}/build/example ${WORK}/index RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "the example failed (${rc})")
endif()
