# Windows with Debian's MinGW-w64 gcc: included by toolchain-x86_64-w64-mingw32.cmake (x64)
# and toolchain-i686-w64-mingw32.cmake (x86), which set ND_CROSS_TRIPLET and the processor.
set(CMAKE_SYSTEM_NAME Windows)

# the POSIX-threads flavour: C11 _Thread_local and <stdatomic.h> need nothing
# more, and winpthreads is linked statically like everything else
find_program(CMAKE_C_COMPILER NAMES ${ND_CROSS_TRIPLET}-gcc-posix ${ND_CROSS_TRIPLET}-gcc REQUIRED)
find_program(CMAKE_RC_COMPILER NAMES ${ND_CROSS_TRIPLET}-windres)
# try_compile projects read this file again: hand them the same settings
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES ND_CROSS_DEPS ND_CROSS_WINEPREFIX)
set(CMAKE_FIND_ROOT_PATH /usr/${ND_CROSS_TRIPLET} ${ND_CROSS_DEPS})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Windows 10 is the oldest Windows the library targets; C99 printf formats
# (%zu, %lld) from MinGW's own stdio instead of the old msvcrt's
set(CMAKE_C_FLAGS_INIT "-D_WIN32_WINNT=0x0A00 -D__USE_MINGW_ANSI_STDIO=1")
# programs carry their runtime: no libgcc or winpthread DLL to find under Wine
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static-libgcc -static")
# and so do the DLLs built with this file (cmocka.dll)
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-static-libgcc -static")

# ctest runs the x64 programs under Wine, in a prefix of this build (created once),
# with the library's and cmocka's DLLs on the Windows PATH. (The x86 ones are built only:
# cross/README.md says why.)
if(NOT ND_CROSS_TRIPLET MATCHES "^x86_64")
  return()
endif()
if(NOT ND_CROSS_WINEPREFIX)
  set(ND_CROSS_WINEPREFIX ${CMAKE_BINARY_DIR}/wineprefix)
endif()
set(CMAKE_CROSSCOMPILING_EMULATOR ${CMAKE_CURRENT_LIST_DIR}/wine-run.sh ${ND_CROSS_WINEPREFIX}
    "${CMAKE_BINARY_DIR}/native:${ND_CROSS_DEPS}/bin")
