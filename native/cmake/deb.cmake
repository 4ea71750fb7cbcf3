# Debian packages of the C library: `cpack -G DEB` (or `cmake --build <dir> --target package`)
# in a Linux build writes libnativedir1_<v>_<arch>.deb (the shared library, with
# a shlibs file) and libnativedir-dev_<v>_<arch>.deb (header, .so link, static
# library, pkg-config file, CMake package), from the "runtime" and "dev"
# install components of native/CMakeLists.txt. Nothing else of the build
# (bindings, tests) is packaged here.
set(CPACK_PACKAGE_NAME nativedir)
set(CPACK_PACKAGE_VENDOR "nativedir")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "File I/O for a search engine's Directory layer, behind a flat C ABI")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR DEB)
set(CPACK_COMPONENTS_ALL runtime dev)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# install with CMAKE_INSTALL_PREFIX=/usr into a staging DESTDIR: the .pc file,
# written at install time, then names /usr and not the staging folder
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "nativedir maintainers")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
# Debian's naming: the runtime package carries the SONAME's major (1)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME libnativedir1)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION "nativedir: the shared library (libnativedir.so.1)")
# its Depends from dpkg-shlibdeps (libc6; zlib1g without libdeflate), and a shlibs
# file so that programs linked to it get "libnativedir1 (>= <v>)"
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libnativedir-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_DEV_DESCRIPTION "nativedir: header, static library, pkg-config file and CMake package")
# the static library's users link libdeflate or zlib (and liburing)
# themselves: the CMake package and the .pc file name them
if(ND_DEFLATE_LIB)
  set(nd_dev_depends "libnativedir1 (= ${PROJECT_VERSION}), libdeflate-dev")
else()
  set(nd_dev_depends "libnativedir1 (= ${PROJECT_VERSION}), zlib1g-dev")
endif()
if(ND_URING_LIB)
  string(APPEND nd_dev_depends ", liburing-dev")
endif()
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "${nd_dev_depends}")
include(CPack)
set(ND_DEB_PACKAGES ON) # tests/CMakeLists.txt checks the packages then
