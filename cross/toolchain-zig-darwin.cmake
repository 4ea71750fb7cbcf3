# Read after CMake's Darwin platform files (CMAKE_USER_MAKE_RULES_OVERRIDE of toolchain-zig.cmake).
#
# Run paths: CMake turns them on (-rpath and @rpath install names) only when the HOST's macOS is
# 10.5 or newer (sw_vers), and this host is Linux. Every macOS this library targets has them.
# (The linker is called directly, below: its own spelling, not the compiler driver's -Wl,.)
set(CMAKE_SHARED_LIBRARY_RUNTIME_C_FLAG "-rpath ")

# Linking: with LLVM's Mach-O linker (ld64.lld) against the libSystem stubs (.tbd) that Zig ships
# from Apple's SDK, not with `zig cc`: Zig 0.11 links its compiler-rt into every image, one
# object whose symbols are all exported (memcpy, memmove, cos, __divti3 ... from
# libnativedir.dylib), where Apple's linker takes them from libSystem. ld64.lld also signs arm64
# images ad hoc, as Apple's linker does: an unsigned arm64 library is refused by macOS.
find_program(ND_LD64_LLD NAMES ld64.lld PATHS /usr/lib/llvm-16/bin /usr/lib/llvm-15/bin
             /usr/lib/llvm-14/bin REQUIRED)
if(CMAKE_SYSTEM_PROCESSOR STREQUAL "aarch64")
  set(nd_macho_arch arm64)
else()
  set(nd_macho_arch ${CMAKE_SYSTEM_PROCESSOR})
endif()
# the deployment target of ND_CROSS_ZIG_TARGET (x86_64-macos.11.0-none), and the SDK of the stubs
string(REGEX MATCH "macos\\.([0-9]+\\.[0-9]+)" _ "${ND_CROSS_ZIG_TARGET}")
set(nd_macos_min ${CMAKE_MATCH_1})
set(nd_ld "${ND_LD64_LLD} -arch ${nd_macho_arch} -platform_version macos ${nd_macos_min} ${nd_macos_min} -headerpad_max_install_names -dead_strip")
set(nd_sys "-L${ND_CROSS_BIN}/macos-sdk -lSystem")
set(CMAKE_C_CREATE_SHARED_LIBRARY
    "${nd_ld} -dylib <LINK_FLAGS> -o <TARGET> -install_name <TARGET_INSTALLNAME_DIR><TARGET_SONAME> <OBJECTS> <LINK_LIBRARIES> ${nd_sys}")
set(CMAKE_C_CREATE_SHARED_MODULE
    "${nd_ld} -bundle <LINK_FLAGS> -o <TARGET> <OBJECTS> <LINK_LIBRARIES> ${nd_sys}")
set(CMAKE_C_LINK_EXECUTABLE
    "${nd_ld} -execute <LINK_FLAGS> -o <TARGET> <OBJECTS> <LINK_LIBRARIES> ${nd_sys}")
