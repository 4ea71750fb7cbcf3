# Windows x64 with MinGW-w64 (Debian's gcc-mingw-w64-x86-64).
set(CMAKE_SYSTEM_PROCESSOR AMD64)
set(ND_CROSS_TRIPLET x86_64-w64-mingw32)
include(${CMAKE_CURRENT_LIST_DIR}/toolchain-mingw.cmake)
