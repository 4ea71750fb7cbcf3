# The targets no Debian compiler reaches (macOS x64 and arm64, Windows arm64), with Zig's C
# compiler: -DND_CROSS_ZIG_TARGET=<zig target> -DND_CROSS_BIN=<folder of cc, ar, ranlib>.
# sub-build.cmake writes those three wrappers (`zig cc -target <target>`, `zig ar`,
# `zig ranlib`, each with its caches in the build tree) before it configures anything.
if(NOT ND_CROSS_ZIG_TARGET OR NOT ND_CROSS_BIN)
  message(FATAL_ERROR "toolchain-zig.cmake: set ND_CROSS_ZIG_TARGET and ND_CROSS_BIN")
endif()
if(ND_CROSS_ZIG_TARGET MATCHES "macos")
  set(CMAKE_SYSTEM_NAME Darwin)
elseif(ND_CROSS_ZIG_TARGET MATCHES "windows")
  set(CMAKE_SYSTEM_NAME Windows)
else()
  set(CMAKE_SYSTEM_NAME Linux)
endif()
string(REGEX REPLACE "-.*" "" CMAKE_SYSTEM_PROCESSOR "${ND_CROSS_ZIG_TARGET}")
set(CMAKE_C_COMPILER ${ND_CROSS_BIN}/cc)
set(CMAKE_AR ${ND_CROSS_BIN}/ar CACHE FILEPATH "zig ar")
set(CMAKE_RANLIB ${ND_CROSS_BIN}/ranlib CACHE FILEPATH "zig ranlib")
# try_compile projects read this file again: hand them the same settings
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES ND_CROSS_ZIG_TARGET ND_CROSS_BIN ND_CROSS_DEPS)
# Zig brings each target's libc itself: only this build's dependencies are searched
set(CMAKE_FIND_ROOT_PATH ${ND_CROSS_DEPS})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
if(CMAKE_SYSTEM_NAME STREQUAL "Darwin")
  # no SDK folder: Zig's own macOS headers and libSystem stubs stand for it
  set(CMAKE_OSX_SYSROOT "" CACHE PATH "")
  set(CMAKE_OSX_ARCHITECTURES "" CACHE STRING "")
  # install names relative to the loader's run paths (@rpath/libnativedir.1.dylib), as on a Mac
  # (toolchain-zig-darwin.cmake says why CMake needs help with that here)
  set(CMAKE_USER_MAKE_RULES_OVERRIDE ${CMAKE_CURRENT_LIST_DIR}/toolchain-zig-darwin.cmake)
  set(CMAKE_INSTALL_NAME_DIR "@rpath")
  set(CMAKE_BUILD_WITH_INSTALL_NAME_DIR ON)
endif()
if(CMAKE_SYSTEM_NAME STREQUAL "Windows")
  set(CMAKE_C_FLAGS_INIT "-D_WIN32_WINNT=0x0A00 -D__USE_MINGW_ANSI_STDIO=1")
endif()
