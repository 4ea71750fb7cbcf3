# The cross targets, one row each: what cross/CMakeLists.txt builds, what the NuGet package
# (runtimes/<rid>/native/) and nativedir.jar (native/<platform>/) carry from them. Included by
# cross/CMakeLists.txt, bindings/java/CMakeLists.txt and the top-level CMakeLists.txt.
#
#   name | kind | toolchain file | compiler | binutils prefix | runs under | RID | JNI platform
#
# The compiler is a program, or zig:<target> for Zig's C compiler (cross/fetch-zig.sh). "runs
# under" is the emulator of the target's tests, native where they run here as they are, none
# where the target is only built. JNI platform "-": no JNI library (the Java loader tells
# platforms by os.name and os.arch, which do not tell musl from glibc). Why each compiler serves
# its target, and why some targets are only built: cross/README.md.
set(ND_CROSS_TARGET_ROWS
  "win64|windows|x86_64-w64-mingw32|x86_64-w64-mingw32-gcc|x86_64-w64-mingw32|wine64|win-x64|windows-x86_64"
  "arm64|linux|aarch64-linux-gnu|aarch64-linux-gnu-gcc|aarch64-linux-gnu|qemu-aarch64|linux-arm64|linux-aarch64"
  "musl_x64|linux|x86_64-linux-musl|musl-gcc|x86_64-linux-gnu|native|linux-musl-x64|-"
  "musl_arm64|linux|aarch64-linux-musl|aarch64-linux-musl-gcc|aarch64-linux-gnu|qemu-aarch64|linux-musl-arm64|-"
  "win_x86|windows|i686-w64-mingw32|i686-w64-mingw32-gcc|i686-w64-mingw32|none|win-x86|windows-x86"
  "win_arm64|windows|zig|zig:aarch64-windows-gnu|-|none|win-arm64|windows-aarch64"
  "osx_x64|macos|zig|zig:x86_64-macos.11.0-none|-|none|osx-x64|macos-x86_64"
  "osx_arm64|macos|zig|zig:aarch64-macos.11.0-none|-|none|osx-arm64|macos-aarch64")

# nd_cross_target(<row>): sets name, kind, toolchain, compiler, triplet, emulator, rid,
# jni_platform, and the file names glue (the .NET glue) and jni (the JNI library) of the kind
macro(nd_cross_target row)
  string(REPLACE "|" ";" nd_cross_fields "${row}")
  list(GET nd_cross_fields 0 name)
  list(GET nd_cross_fields 1 kind)
  list(GET nd_cross_fields 2 toolchain)
  list(GET nd_cross_fields 3 compiler)
  list(GET nd_cross_fields 4 triplet)
  list(GET nd_cross_fields 5 emulator)
  list(GET nd_cross_fields 6 rid)
  list(GET nd_cross_fields 7 jni_platform)
  if(kind STREQUAL "windows")
    set(glue nativedir_dotnet.dll)
    set(jni nativedir_jni.dll)
  elseif(kind STREQUAL "macos")
    set(glue libnativedir_dotnet.dylib)
    set(jni libnativedir_jni.dylib)
  else()
    set(glue libnativedir_dotnet.so)
    set(jni libnativedir_jni.so)
  endif()
endmacro()
