# Windows x86 (32-bit) with MinGW-w64 (Debian's gcc-mingw-w64-i686).
set(CMAKE_SYSTEM_PROCESSOR x86)
set(ND_CROSS_TRIPLET i686-w64-mingw32)
include(${CMAKE_CURRENT_LIST_DIR}/toolchain-mingw.cmake)
