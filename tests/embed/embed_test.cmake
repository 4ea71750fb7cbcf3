# Embeds the source tree the way other projects do, once with add_subdirectory and once with
# FetchContent from a local path, builds it, runs the consumer, and checks that the embedding
# build holds the library and nothing else of nativedir (no bindings, tests, sanitizer copies,
# benchmarks or cross builds).
# cmake -DSOURCE_DIR=<nativedir> -DWORK_DIR=<scratch> -DCONSUMER=<consumer.c> -DGENERATOR=<g> -P embed_test.cmake
foreach(v SOURCE_DIR WORK_DIR CONSUMER GENERATOR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "embed_test: ${v} not set")
  endif()
endforeach()

# What the embedding project may see of nativedir: the two library variants.
set(allowed nativedir nativedir_static consumer)

function(embed_with how include_code)
  set(src ${WORK_DIR}/${how}/src)
  set(bin ${WORK_DIR}/${how}/build)
  file(REMOVE_RECURSE ${WORK_DIR}/${how})
  file(MAKE_DIRECTORY ${src})
  configure_file(${CONSUMER} ${src}/consumer.c COPYONLY)
  file(WRITE ${src}/CMakeLists.txt
"cmake_minimum_required(VERSION 3.21)
project(embedder LANGUAGES C)
${include_code}
add_executable(consumer consumer.c)
target_link_libraries(consumer PRIVATE nativedir::nativedir)
")
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${src} -B ${bin} -G ${GENERATOR}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${how}: configure failed\n${out}\n${err}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${bin} -j2
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${how}: build failed\n${out}\n${err}")
  endif()
  execute_process(COMMAND ${bin}/consumer RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "embedded nativedir")
    message(FATAL_ERROR "${how}: the consumer failed (${rc})\n${out}\n${err}")
  endif()
  # Every target the embedding build knows: none may be nativedir's beyond the library.
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${bin} --target help
                  RESULT_VARIABLE rc OUTPUT_VARIABLE targets)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${how}: cannot list targets")
  endif()
  string(REGEX MATCHALL "\\.\\.\\. [A-Za-z0-9_.+-]+" lines "${targets}")
  set(extra "")
  foreach(line IN LISTS lines)
    string(REPLACE "... " "" t "${line}")
    if(t MATCHES "\\.(o|i|s)$" OR t MATCHES "^(all|clean|depend|edit_cache|rebuild_cache|install|install/local|install/strip|list_install_components)$")
      continue()
    endif()
    list(FIND allowed ${t} i)
    if(i LESS 0)
      list(APPEND extra ${t})
    endif()
  endforeach()
  if(extra)
    message(FATAL_ERROR "${how}: embedding built more than the library: ${extra}")
  endif()
  # and no tests were registered by nativedir in the embedding build
  if(EXISTS ${bin}/_deps/nativedir-build/CTestTestfile.cmake OR EXISTS ${bin}/nativedir/CTestTestfile.cmake)
    file(GLOB_RECURSE testfiles ${bin}/CTestTestfile.cmake)
    foreach(f IN LISTS testfiles)
      file(STRINGS ${f} adds REGEX "^add_test")
      if(adds)
        message(FATAL_ERROR "${how}: nativedir registered tests in the embedding build (${f})")
      endif()
    endforeach()
  endif()
  message(STATUS "${how}: built the library and the consumer, nothing else")
endfunction()

embed_with(add_subdirectory "add_subdirectory([==[${SOURCE_DIR}]==] nativedir)")
embed_with(fetchcontent "include(FetchContent)
FetchContent_Declare(nativedir SOURCE_DIR [==[${SOURCE_DIR}]==])
FetchContent_MakeAvailable(nativedir)")
