# The .NET suites on every RID the NativeDir package ships, from the PACKAGES: each test
# project is published as a user publishes an application (RID-specific, self-contained, the
# NativeDir and NativeDir.Lucene packages restored from the built feed) once per RID, and each
# suite runs once per RID: natively on linux-x64, under Wine on win-x64, under qemu-user on
# linux-arm64. Included by bindings/dotnet/CMakeLists.txt after lucene.cmake (ND_LUCENE_NUPKG).
set(ND_PLATFORM_WORK ${ND_DOTNET_DIR}/platforms)
set(ND_PLATFORM_SCRIPT ${SRC}/scripts/platform-tests.sh)
set(ND_PLATFORM_PROJECTS ${SRC}/NativeDir.Tests/NativeDir.Tests.csproj
                         ${SRC}/NativeDir.Lucene.Tests/NativeDir.Lucene.Tests.csproj)
set(ND_PLATFORM_RIDS linux-x64)
# the cross-builds (cross/, added after the bindings) put these RIDs into the package. win-x64 runs
# under Wine (without wine64 its runs report themselves skipped: exit 77); linux-arm64 runs under
# qemu-user wherever qemu-aarch64 is installed (without it ctest reports the run skipped, and
# platform-tests.sh skips loudly when Debian's arm64 libraries are missing).
find_program(ND_QEMU_AARCH64 qemu-aarch64)
if(ND_DOTNET_EXTRA_RUNTIMES)
  list(APPEND ND_PLATFORM_RIDS win-x64)
  if(ND_QEMU_AARCH64)
    list(APPEND ND_PLATFORM_RIDS linux-arm64)
  else()
    add_test(NAME dotnet_suites_linux-arm64
             COMMAND ${CMAKE_COMMAND} -E echo
             "SKIPPED: qemu-aarch64 is not installed (scripts/deps.sh installs qemu-user): the .NET suites are not run on linux-arm64")
    set_tests_properties(dotnet_suites_linux-arm64 PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED")
  endif()
endif()
# linux-musl-x64 (Alpine): the unit suite is published as for the others, which shows the publish
# takes the package's musl glue; its run needs musl builds of libstdc++ and libgcc_s for the .NET
# runtime itself, and reports itself skipped where musl's loader finds none (platform-tests.sh)
set(ND_PLATFORM_MUSL_RIDS "")
if(ND_DOTNET_EXTRA_RUNTIMES)
  set(ND_PLATFORM_MUSL_RIDS linux-musl-x64)
endif()
# the cross-build's prefix: wineboot runs once, at build time (cross/sub-build.cmake)
set(ND_PLATFORM_WINEPREFIX ${PROJECT_BINARY_DIR}/cross/win64/wineprefix)
# the SDK whose reference pack is the Lucene end-to-end tests' corpus
get_filename_component(ND_PLATFORM_DOTNET_ROOT ${DOTNET_EXECUTABLE} REALPATH)
get_filename_component(ND_PLATFORM_DOTNET_ROOT ${ND_PLATFORM_DOTNET_ROOT} DIRECTORY)

# Two more builds of the suites, run on this machine (platform-tests.sh): "mono", the .NET
# Framework 4.7.2 build (the packages' net462 assets) on Mono, and "netstandard2.0", the packages'
# netstandard2.0 assemblies on .NET 10 with the Lucene suite on Lucene.NET 4.8.0-beta00018 (the
# linux-x64 run is beta00017: the two ends of NativeDir.Lucene's range).
list(APPEND ND_PLATFORM_RIDS mono netstandard2.0)

foreach(rid IN LISTS ND_PLATFORM_RIDS)
  add_test(NAME dotnet_publish_${rid}
    COMMAND ${CMAKE_COMMAND} -E env ${ND_DOTNET_ENV}
            bash ${ND_PLATFORM_SCRIPT} publish ${DOTNET_EXECUTABLE} ${ND_DOTNET_FEED} ${PROJECT_VERSION}
            ${rid} ${ND_PLATFORM_WORK} ${ND_PLATFORM_PROJECTS})
  # one publish at a time: they share the package cache, and each wants both cores
  set_tests_properties(dotnet_publish_${rid} PROPERTIES TIMEOUT 900
    FIXTURES_SETUP dotnet_published_${rid} RESOURCE_LOCK dotnet_platform_publish)
  foreach(suite IN ITEMS "dotnet_tests|NativeDir.Tests" "dotnet_lucene_tests|NativeDir.Lucene.Tests")
    string(REPLACE "|" ";" suite "${suite}")
    list(GET suite 0 test)
    list(GET suite 1 name)
    set(tname ${test}_${rid})
    if(rid STREQUAL "netstandard2.0" AND test STREQUAL "dotnet_lucene_tests")
      set(tname ${test}_${rid}_beta00018)
    endif()
    add_test(NAME ${tname}
      COMMAND bash ${ND_PLATFORM_SCRIPT} run ${rid} ${ND_PLATFORM_WORK} ${name} ${ND_PLATFORM_WINEPREFIX}
              ${ND_PLATFORM_DOTNET_ROOT})
    set_tests_properties(${tname} PROPERTIES TIMEOUT 1200 SKIP_RETURN_CODE 77
      FIXTURES_REQUIRED dotnet_published_${rid} LABELS "dotnet;${rid}")
  endforeach()
endforeach()

foreach(rid IN LISTS ND_PLATFORM_MUSL_RIDS)
  add_test(NAME dotnet_publish_${rid}
    COMMAND ${CMAKE_COMMAND} -E env ${ND_DOTNET_ENV}
            bash ${ND_PLATFORM_SCRIPT} publish ${DOTNET_EXECUTABLE} ${ND_DOTNET_FEED} ${PROJECT_VERSION}
            ${rid} ${ND_PLATFORM_WORK} ${SRC}/NativeDir.Tests/NativeDir.Tests.csproj)
  set_tests_properties(dotnet_publish_${rid} PROPERTIES TIMEOUT 900
    FIXTURES_SETUP dotnet_published_${rid} RESOURCE_LOCK dotnet_platform_publish)
  add_test(NAME dotnet_tests_${rid}
    COMMAND bash ${ND_PLATFORM_SCRIPT} run ${rid} ${ND_PLATFORM_WORK} NativeDir.Tests ${ND_PLATFORM_WINEPREFIX}
            ${ND_PLATFORM_DOTNET_ROOT})
  set_tests_properties(dotnet_tests_${rid} PROPERTIES TIMEOUT 1200 SKIP_RETURN_CODE 77
    FIXTURES_REQUIRED dotnet_published_${rid} LABELS "dotnet;${rid}")
endforeach()
