# cmake -P sub-build.cmake: builds nativedir (and, where the target runs here, its C tests) for
# one cross target and writes the ctest file that runs them in the main build's ctest.
#
#   -DPLATFORM=<name, e.g. win64>  -DSOURCE=<project root>  -DWORK=<this target's dir>
#   -DTOOLCHAIN=<file>  -DKIND=windows|linux|macos
#   -DCC=<compiler: a program, or zig:<zig target>>  -DTRIPLET=<binutils prefix, or ->
#   -DZIG_DIR=<where fetch-zig.sh keeps Zig> (for zig:)
#   -DEMULATOR=<program it runs under> | native (runs here as it is) | none (built only)
#   -DURING=ON|OFF (build liburing for the target too)
#   -DRUNTIME=<dir for the shipped library>  -DOUT=<tests file>  -DJOBS=<n>
#   -DC_SUITE=ON|OFF (build tests/ too, where the target runs)  -DWERROR=ON|OFF (C warnings are
#   errors; always on for a target that is only built)
#   -DJNI_SOURCE=<SWIG's JNI glue> -DJNI_INCLUDE=<jni.h dir;jni_md.h dir> -DJNI_OUT=<dir>
#     (optional: also build the JNI library for nativedir.jar and copy it to JNI_OUT)
#
# Nothing here may fail the main build: a target that cannot be built shows
# up in ctest as a failing ${PLATFORM}_build test that says why.
cmake_minimum_required(VERSION 3.20)

set(deps ${WORK}/deps)
set(log ${WORK}/build.log)
file(WRITE ${log} "")
file(REMOVE ${WORK}/failure.txt)

function(fail_with why)
  file(READ ${log} text)
  string(LENGTH "${text}" n)
  if(n GREATER 6000)
    math(EXPR from "${n} - 6000")
    string(SUBSTRING "${text}" ${from} -1 text)
  endif()
  file(WRITE ${WORK}/failure.txt "${PLATFORM} cross-build failed: ${why}\n--- last lines of ${log} ---\n${text}\n")
  file(WRITE ${OUT} "add_test(${PLATFORM}_build ${CMAKE_COMMAND} -E cat ${WORK}/failure.txt)\n"
                    "set_tests_properties(${PLATFORM}_build PROPERTIES WILL_FAIL TRUE LABELS \"cross;${PLATFORM}\")\n")
  message(WARNING "${PLATFORM}: ${why} (see ${log}); ctest reports it as ${PLATFORM}_build")
  return()
endfunction()

# runs a command with its output in the log; on failure, fails the target
macro(step why)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  file(APPEND ${log} "\n\$ ${ARGN}\n${out}")
  if(NOT rc EQUAL 0)
    fail_with("${why} (exit ${rc})")
    return()
  endif()
endmacro()

# the target runs here (natively or under an emulator) or is only built
if(EMULATOR STREQUAL "none")
  set(runs OFF)
  set(C_SUITE OFF)
else()
  set(runs ON)
endif()

# the compiler, archiver and strip for the target (cc, ar, strip)
set(toolchain_args -DCMAKE_TOOLCHAIN_FILE=${TOOLCHAIN})
if(CC MATCHES "^zig:(.+)$")
  # Zig: wrappers that name the target, each with its caches in this build tree
  set(zig_target ${CMAKE_MATCH_1})
  step("fetching Zig (cross/fetch-zig.sh)" ${SOURCE}/cross/fetch-zig.sh ${ZIG_DIR})
  file(GLOB zig ${ZIG_DIR}/zig-*/zig)
  set(caches "ZIG_GLOBAL_CACHE_DIR=${ZIG_DIR}/cache ZIG_LOCAL_CACHE_DIR=${WORK}/zig-cache")
  file(MAKE_DIRECTORY ${WORK}/bin)
  file(WRITE ${WORK}/bin/cc "#!/bin/sh\n${caches} exec ${zig} cc -target ${zig_target} \"$@\"\n")
  file(WRITE ${WORK}/bin/ar "#!/bin/sh\n${caches} exec ${zig} ar \"$@\"\n")
  file(WRITE ${WORK}/bin/ranlib "#!/bin/sh\n${caches} exec ${zig} ranlib \"$@\"\n")
  file(CHMOD ${WORK}/bin/cc ${WORK}/bin/ar ${WORK}/bin/ranlib
       PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
  set(cc ${WORK}/bin/cc)
  set(ar ${WORK}/bin/ar)
  if(KIND STREQUAL "macos")
    # the libSystem stubs of the oldest macOS SDK Zig carries, for the linker (toolchain-zig-darwin.cmake)
    get_filename_component(zig_home ${zig} DIRECTORY)
    file(GLOB stubs ${zig_home}/lib/libc/darwin/libSystem.*.tbd)
    list(SORT stubs COMPARE NATURAL)
    list(GET stubs 0 stub)
    file(MAKE_DIRECTORY ${WORK}/bin/macos-sdk)
    file(CREATE_LINK ${stub} ${WORK}/bin/macos-sdk/libSystem.tbd SYMBOLIC)
  endif()
  # LLVM's strip reads ARM64 PE (Zig 0.11 has none of its own). Mach-O images are shipped as
  # the linker wrote and signed them (their debug information stays in the object files anyway)
  if(NOT KIND STREQUAL "macos")
    find_program(strip NAMES llvm-strip llvm-strip-16 llvm-strip-15 llvm-strip-14 NO_CACHE)
  endif()
  list(APPEND toolchain_args -DND_CROSS_ZIG_TARGET=${zig_target} -DND_CROSS_BIN=${WORK}/bin)
else()
  find_program(cc NAMES ${CC} NO_CACHE)
  if(NOT cc)
    fail_with("${CC} is not installed (see scripts/deps.sh)")
    return()
  endif()
  find_program(ar NAMES ${TRIPLET}-ar NO_CACHE)
  find_program(strip NAMES ${TRIPLET}-strip NO_CACHE)
endif()
if(runs AND NOT EMULATOR STREQUAL "native")
  find_program(emu NAMES ${EMULATOR} PATHS /usr/lib/wine NO_CACHE)
  if(NOT emu)
    fail_with("the emulator '${EMULATOR}' is not installed (see scripts/deps.sh)")
    return()
  endif()
endif()
list(APPEND toolchain_args -DND_CROSS_DEPS=${deps})

# what the target's toolchain file adds for every compile, for the dependencies built with their
# own Makefiles too (toolchain-aarch64-linux-musl.cmake says why)
set(extra_cflags "")
if(CC MATCHES "^aarch64-linux-musl")
  set(extra_cflags -mno-outline-atomics)
endif()

if(KIND STREQUAL "linux" AND URING)
  # the Linux UAPI headers liburing.h includes, for compilers whose libc has none (musl's specs
  # drop the system folders): the machine's own, for the target's architecture
  if(TRIPLET STREQUAL "x86_64-linux-gnu")
    set(uapi /usr/include)
    set(uapi_asm /usr/include/x86_64-linux-gnu/asm)
  else()
    set(uapi /usr/${TRIPLET}/include)
    set(uapi_asm /usr/${TRIPLET}/include/asm)
  endif()
  file(MAKE_DIRECTORY ${deps}/include)
  foreach(d linux asm-generic)
    if(NOT EXISTS ${deps}/include/${d})
      file(CREATE_LINK ${uapi}/${d} ${deps}/include/${d} SYMBOLIC)
    endif()
  endforeach()
  if(NOT EXISTS ${deps}/include/asm)
    file(CREATE_LINK ${uapi_asm} ${deps}/include/asm SYMBOLIC)
  endif()
  if(NOT EXISTS ${deps}/include/linux/io_uring.h)
    fail_with("the Linux UAPI headers are missing in ${uapi} (Debian: linux-libc-dev, or libc6-dev-arm64-cross for arm64)")
    return()
  endif()
endif()

# zlib and cmocka for the target, from Debian's source packages, once: only the C suite needs
# them (the library's CRC is libdeflate's, below)
set(zlib_args -DCMAKE_POSITION_INDEPENDENT_CODE=ON)
set(cmocka_args -DWITH_EXAMPLES=OFF -DUNIT_TESTING=OFF -DWITH_STATIC_LIB=ON -DPICKY_DEVELOPER=OFF)
set(suite_deps "")
if(C_SUITE)
  set(suite_deps zlib cmocka)
endif()
foreach(pkg IN LISTS suite_deps)
  if(NOT EXISTS ${deps}/.${pkg}-done)
    step("fetching the Debian source of ${pkg}"
         ${SOURCE}/cross/fetch-debian-source.sh ${WORK}/../apt ${pkg} ${WORK}/src/${pkg})
    file(REMOVE_RECURSE ${WORK}/deps-build/${pkg})
    if(pkg STREQUAL "zlib" AND NOT EXISTS ${WORK}/src/zlib/win32/zlib1.rc)
      # Debian's repacked zlib drops win32/, but zlib's CMakeLists still names
      # the resource file of the DLL (which is not built here)
      file(WRITE ${WORK}/src/zlib/win32/zlib1.rc "")
    endif()
    step("configuring ${pkg}" ${CMAKE_COMMAND} -S ${WORK}/src/${pkg} -B ${WORK}/deps-build/${pkg}
         ${toolchain_args} -DCMAKE_BUILD_TYPE=Release
         -DCMAKE_INSTALL_PREFIX=${deps} ${${pkg}_args})
    if(pkg STREQUAL "zlib")
      # only the static library: Debian's zlib source has no Windows resource
      # file for the DLL, and the library links zlib statically anyway
      step("building zlib" ${CMAKE_COMMAND} --build ${WORK}/deps-build/zlib --target zlibstatic
           -j ${JOBS})
      file(GLOB zlib_a ${WORK}/deps-build/zlib/lib*.a)
      file(INSTALL ${zlib_a} DESTINATION ${deps}/lib)
      file(INSTALL ${WORK}/src/zlib/zlib.h ${WORK}/deps-build/zlib/zconf.h
           DESTINATION ${deps}/include)
    else()
      step("building ${pkg}" ${CMAKE_COMMAND} --build ${WORK}/deps-build/${pkg} -j ${JOBS})
      step("installing ${pkg}" ${CMAKE_COMMAND} --install ${WORK}/deps-build/${pkg})
    endif()
    file(TOUCH ${deps}/.${pkg}-done)
  endif()
endforeach()

# liburing for the rings (musl targets: Debian's liburing-dev is glibc's), static and PIC, from
# Debian's source: its own configure and Makefile with the target's compiler
if(URING AND NOT EXISTS ${deps}/.liburing-done)
  step("fetching the Debian source of liburing"
       ${SOURCE}/cross/fetch-debian-source.sh ${WORK}/../apt liburing ${WORK}/src/liburing)
  file(REMOVE_RECURSE ${WORK}/deps-build/liburing)
  file(COPY ${WORK}/src/liburing/ DESTINATION ${WORK}/deps-build/liburing)
  step("configuring liburing" ${CMAKE_COMMAND} -E chdir ${WORK}/deps-build/liburing
       ./configure --cc=${cc} --prefix=${deps})
  step("building liburing" make -C ${WORK}/deps-build/liburing/src -j ${JOBS} liburing.a
       "CFLAGS=-O2 -fPIC -isystem ${deps}/include ${extra_cflags}" AR=${ar} RANLIB=${TRIPLET}-ranlib)
  file(INSTALL ${WORK}/deps-build/liburing/src/liburing.a DESTINATION ${deps}/lib)
  file(INSTALL ${WORK}/deps-build/liburing/src/include/liburing.h
               ${WORK}/deps-build/liburing/src/include/liburing
       DESTINATION ${deps}/include)
  file(TOUCH ${deps}/.liburing-done)
endif()

# libdeflate for the outputs' CRC (native/CMakeLists.txt), from Debian's
# source too: its own Makefile builds the static library with any gcc or clang
if(KIND STREQUAL "windows")
  set(deflate_a libdeflatestatic.lib) # the Makefile's name for MinGW targets
  set(deflate_cflags -O2)
else()
  set(deflate_a libdeflate.a)
  set(deflate_cflags -O2 -fPIC) # linked into a shared library
endif()
list(APPEND deflate_cflags ${extra_cflags})
if(NOT EXISTS ${deps}/.libdeflate-done)
  step("fetching the Debian source of libdeflate"
       ${SOURCE}/cross/fetch-debian-source.sh ${WORK}/../apt libdeflate ${WORK}/src/libdeflate)
  file(REMOVE_RECURSE ${WORK}/deps-build/libdeflate)
  file(COPY ${WORK}/src/libdeflate/ DESTINATION ${WORK}/deps-build/libdeflate)
  string(REPLACE ";" " " deflate_cflags "${deflate_cflags}")
  step("building libdeflate" make -C ${WORK}/deps-build/libdeflate -j ${JOBS} ${deflate_a}
       CC=${cc} AR=${ar} "CFLAGS=${deflate_cflags}")
  file(INSTALL ${WORK}/deps-build/libdeflate/${deflate_a} DESTINATION ${deps}/lib)
  file(INSTALL ${WORK}/src/libdeflate/libdeflate.h DESTINATION ${deps}/include)
  file(TOUCH ${deps}/.libdeflate-done)
endif()

# file names per kind: the library, the .NET glue (the one file NativeDir loads), the JNI glue
if(KIND STREQUAL "windows")
  set(zlib_lib ${deps}/lib/libzlibstatic.a)
  set(lib_name nativedir.dll)
  set(glue_name nativedir_dotnet.dll)
  set(jni_name nativedir_jni.dll)
elseif(KIND STREQUAL "macos")
  set(zlib_lib ${deps}/lib/libz.a)
  set(lib_name libnativedir.dylib)
  set(glue_name libnativedir_dotnet.dylib)
  set(jni_name libnativedir_jni.dylib)
else()
  set(zlib_lib ${deps}/lib/libz.a)
  set(lib_name libnativedir.so)
  set(glue_name libnativedir_dotnet.so)
  set(jni_name libnativedir_jni.so)
endif()
set(bin ${WORK}/build)
# the targets that are only built compile with -Werror in any case: zero warnings is all their
# build proves beyond linking
if(NOT runs)
  set(WERROR ON)
endif()
set(configure_args -S ${SOURCE} -B ${bin} -G "Unix Makefiles" ${toolchain_args}
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DND_CROSS_WINEPREFIX=${WORK}/wineprefix
    -DND_CROSS_RUNS=${runs}
    -DZLIB_LIBRARY=${zlib_lib} -DZLIB_INCLUDE_DIR=${deps}/include
    -DND_LIBDEFLATE_STATIC=${deps}/lib/${deflate_a} -DND_LIBDEFLATE_INCLUDE=${deps}/include
    -DND_BUILD_CROSS=ON -DND_BUILD_DOTNET=ON -DND_BUILD_JAVA=OFF -DND_BUILD_PYTHON=OFF
    -DND_BUILD_BENCH=OFF -DND_BUILD_SANITIZED_TESTS=OFF -DND_BUILD_TESTS=${C_SUITE}
    -DND_WERROR=${WERROR})
if(URING)
  list(APPEND configure_args -DND_LIBURING=${deps}/lib/liburing.a -DND_LIBURING_INCLUDE=${deps}/include)
endif()
if(JNI_SOURCE)
  # one -D per folder: a list would split into two arguments on the command line
  list(GET JNI_INCLUDE 0 jni_h_dir)
  list(GET JNI_INCLUDE 1 jni_md_dir)
  list(APPEND configure_args -DND_CROSS_JNI_SOURCE=${JNI_SOURCE} -DND_CROSS_JNI_H_DIR=${jni_h_dir}
       -DND_CROSS_JNI_MD_DIR=${jni_md_dir})
endif()
# configure once, and again only when these settings or the toolchain files change (the build
# itself re-runs CMake when a CMakeLists.txt changes, but a cached compiler flag stays)
set(stamp ${WORK}/configure-args.txt)
file(GLOB toolchain_files ${SOURCE}/cross/toolchain-*.cmake)
set(toolchain_text "")
foreach(f IN LISTS toolchain_files)
  file(READ ${f} t)
  string(APPEND toolchain_text "${t}")
endforeach()
string(SHA256 toolchain_hash "${toolchain_text}")
set(configure_stamp "${configure_args}\ntoolchains ${toolchain_hash}")
if(EXISTS ${bin}/CMakeCache.txt)
  # a build tree configured from another source tree cannot be reused
  file(STRINGS ${bin}/CMakeCache.txt home REGEX "^CMAKE_HOME_DIRECTORY:INTERNAL=")
  string(REPLACE "CMAKE_HOME_DIRECTORY:INTERNAL=" "" home "${home}")
  if(NOT home STREQUAL SOURCE)
    file(REMOVE_RECURSE ${bin})
  endif()
endif()
set(previous "")
if(EXISTS ${stamp} AND EXISTS ${bin}/CMakeCache.txt)
  file(READ ${stamp} previous)
endif()
if(NOT previous STREQUAL "${configure_stamp}")
  file(REMOVE_RECURSE ${bin}) # a changed toolchain or option: a fresh tree, not a stale cache
  step("configuring nativedir"
       ${CMAKE_COMMAND} -E env PKG_CONFIG_LIBDIR=${deps}/lib/pkgconfig:${deps}/share/pkgconfig
                               PKG_CONFIG_PATH=
       ${CMAKE_COMMAND} ${configure_args})
  file(WRITE ${stamp} "${configure_stamp}")
endif()
# keep going past a program that does not build for this target: every test
# that did build still runs, and the failure is a test of its own
execute_process(COMMAND ${CMAKE_COMMAND} --build ${bin} -j ${JOBS} -- -k
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
file(APPEND ${log} "\n\$ cmake --build ${bin} -j ${JOBS} -- -k\n${out}")
set(build_failed "")
if(NOT rc EQUAL 0)
  string(REGEX MATCHALL "[^\n]*(error:|undefined reference|\\*\\*\\*)[^\n]*" errors "${out}")
  list(JOIN errors "\n" errors)
  set(build_failed "some programs of ${bin} do not build for ${PLATFORM} (exit ${rc}):\n${errors}\n")
  message(WARNING "${PLATFORM}: ${build_failed}")
endif()
if(NOT EXISTS ${bin}/native/${lib_name})
  fail_with("the library itself does not build")
  return()
endif()

# the .NET glue (SWIG's C side + the static core), the one library NativeDir loads and the only
# file of runtimes/<rid>/native/ in the package: the plain C library is not shipped there, since
# its name (nativedir.dll) collides with the managed NativeDir.dll on a case-insensitive file
# system when a RID-specific publish flattens both into one folder (NETSDK1152)
file(REMOVE_RECURSE ${RUNTIME})
file(MAKE_DIRECTORY ${RUNTIME})
set(glue ${bin}/bindings/dotnet/${glue_name})
if(EXISTS ${glue})
  configure_file(${glue} ${RUNTIME}/${glue_name} COPYONLY)
else()
  set(build_failed "${build_failed}the .NET glue library ${glue} was not built\n")
endif()
# the shipped copies carry no debug information (the build tree keeps it)
set(shipped ${RUNTIME}/${glue_name})
# and the JNI glue, where nativedir.jar picks it up
if(JNI_SOURCE)
  set(jni ${bin}/cross/${jni_name})
  if(EXISTS ${jni})
    file(MAKE_DIRECTORY ${JNI_OUT})
    configure_file(${jni} ${JNI_OUT}/${jni_name} COPYONLY)
    list(APPEND shipped ${JNI_OUT}/${jni_name})
  else()
    set(build_failed "${build_failed}the JNI library ${jni} was not built\n")
  endif()
endif()
if(strip)
  foreach(f IN LISTS shipped)
    if(EXISTS ${f})
      step("stripping the debug information of ${f}" ${strip} --strip-debug ${f})
    endif()
  endforeach()
endif()

if(EMULATOR STREQUAL "wine64")
  # wineboot now, at build time, rather than inside the first test
  step("creating the Wine prefix" ${SOURCE}/cross/wine-run.sh ${WORK}/wineprefix - --init-only)
endif()

# every test of the sub-build becomes ${PLATFORM}_<name> in the main ctest run
execute_process(COMMAND ${CMAKE_CTEST_COMMAND} --show-only=json-v1 WORKING_DIRECTORY ${bin}
                RESULT_VARIABLE rc OUTPUT_VARIABLE json ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  file(APPEND ${log} "${err}")
  fail_with("ctest cannot list the tests of ${bin}")
  return()
endif()
string(JSON count LENGTH "${json}" tests)
set(text "# generated by cross/sub-build.cmake: the ${PLATFORM} tests of ${bin}\n")
set(renamed DEPENDS FIXTURES_SETUP FIXTURES_CLEANUP FIXTURES_REQUIRED RESOURCE_LOCK)
set(names "")
if(count GREATER 0)
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last})
    string(JSON name GET "${json}" tests ${i} name)
    string(JSON ncmd ERROR_VARIABLE nocmd LENGTH "${json}" tests ${i} command)
    if(nocmd)
      # a test whose program did not build (the build went on with -k): it fails, saying so
      string(APPEND text "add_test([==[${PLATFORM}_${name}]==] [==[${CMAKE_COMMAND}]==] -E echo "
                         "[==[${name} was not built for ${PLATFORM}: see ${PLATFORM}_build]==])\n"
                         "set_tests_properties([==[${PLATFORM}_${name}]==] PROPERTIES WILL_FAIL TRUE "
                         "LABELS [==[cross;${PLATFORM}]==])\n")
      list(APPEND names ${name})
      continue()
    endif()
    set(cmd "")
    math(EXPR clast "${ncmd} - 1")
    foreach(j RANGE ${clast})
      string(JSON arg GET "${json}" tests ${i} command ${j})
      string(APPEND cmd " [==[${arg}]==]")
    endforeach()
    string(APPEND text "add_test([==[${PLATFORM}_${name}]==]${cmd})\n")
    set(props "LABELS [==[cross;${PLATFORM}]==]")
    set(has_env FALSE)
    string(JSON nprops ERROR_VARIABLE noprops LENGTH "${json}" tests ${i} properties)
    if(NOT noprops AND nprops GREATER 0)
      math(EXPR plast "${nprops} - 1")
      foreach(j RANGE ${plast})
        string(JSON pname GET "${json}" tests ${i} properties ${j} name)
        string(JSON ptype TYPE "${json}" tests ${i} properties ${j} value)
        if(pname STREQUAL "LABELS")
          continue()
        endif()
        set(values "")
        if(ptype STREQUAL "ARRAY")
          string(JSON nv LENGTH "${json}" tests ${i} properties ${j} value)
          math(EXPR vlast "${nv} - 1")
          foreach(k RANGE ${vlast})
            string(JSON v GET "${json}" tests ${i} properties ${j} value ${k})
            list(APPEND values "${v}")
          endforeach()
        else()
          string(JSON values GET "${json}" tests ${i} properties ${j} value)
        endif()
        if(pname IN_LIST renamed)
          list(TRANSFORM values PREPEND "${PLATFORM}_")
        endif()
        if(pname STREQUAL "ENVIRONMENT" AND emu)
          list(APPEND values "ND_TEST_EMULATOR=${EMULATOR}")
          set(has_env TRUE)
        endif()
        string(APPEND props " ${pname} [==[${values}]==]")
      endforeach()
    endif()
    if(NOT has_env AND emu)
      # tests may tell an emulator's quirks from the OS's behaviour by this
      string(APPEND props " ENVIRONMENT [==[ND_TEST_EMULATOR=${EMULATOR}]==]")
    endif()
    string(APPEND text "set_tests_properties([==[${PLATFORM}_${name}]==] PROPERTIES ${props})\n")
    list(APPEND names ${name})
  endforeach()
else()
  fail_with("the build has no tests")
  return()
endif()
if(build_failed)
  file(WRITE ${WORK}/failure.txt "${build_failed}")
  string(APPEND text "add_test(${PLATFORM}_build [==[${CMAKE_COMMAND}]==] -E cat [==[${WORK}/failure.txt]==])\n"
                     "set_tests_properties(${PLATFORM}_build PROPERTIES WILL_FAIL TRUE LABELS [==[cross;${PLATFORM}]==])\n")
endif()
file(WRITE ${OUT} "${text}")
list(JOIN names ", " listed)
message(STATUS "${PLATFORM}: ${count} tests: ${listed}")
