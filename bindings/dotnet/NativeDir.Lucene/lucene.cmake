# NativeDir.Lucene: the Lucene.NET directory, its tests, its package and its benchmark.
# Included by bindings/dotnet/CMakeLists.txt, so ND_DOTNET, ND_DOTNET_PROPS, ND_DOTNET_CONFIG,
# ND_DOTNET_FEED, ND_DOTNET_NUPKG and SRC are set. Every dotnet step here runs after the NativeDir
# build and pack have finished: two dotnet processes building NativeDir at once would race on its
# obj/ files.
set(ND_LUCENE_DIR ${SRC}/NativeDir.Lucene)
file(GLOB_RECURSE ND_LUCENE_SOURCES CONFIGURE_DEPENDS
     ${ND_LUCENE_DIR}/*.cs ${ND_LUCENE_DIR}/*.csproj ${ND_LUCENE_DIR}/README.md
     ${SRC}/NativeDir.Lucene.Tests/*.cs ${SRC}/NativeDir.Lucene.Tests/*.csproj)
file(GLOB_RECURSE ND_LUCENE_BENCH_SOURCES CONFIGURE_DEPENDS
     ${SRC}/NativeDir.Lucene.Benchmarks/*.cs ${SRC}/NativeDir.Lucene.Benchmarks/*.csproj)

set(ND_LUCENE_STAMP ${ND_DOTNET_DIR}/lucene-build.stamp)
add_custom_command(
  OUTPUT ${ND_LUCENE_STAMP}
  COMMAND ${ND_DOTNET} build ${ND_LUCENE_DIR}/NativeDir.Lucene.csproj -c ${ND_DOTNET_CONFIG}
          ${ND_DOTNET_PROPS} -nologo -v:m
  COMMAND ${CMAKE_COMMAND} -E touch ${ND_LUCENE_STAMP}
  DEPENDS ${ND_DOTNET_STAMP} ${ND_DOTNET_NUPKG} ${ND_LUCENE_SOURCES} ${ND_DOTNET_SOURCES}
  COMMENT "dotnet build: NativeDir.Lucene (its tests are published per RID: platforms.cmake)"
  VERBATIM)
add_custom_target(nativedir_lucene_build ALL DEPENDS ${ND_LUCENE_STAMP})
add_dependencies(nativedir_lucene_build nativedir_dotnet_build nativedir_dotnet_pack)

# the package depends on the NativeDir package of the same version (its project reference)
set(ND_LUCENE_NUPKG ${ND_DOTNET_FEED}/NativeDir.Lucene.${PROJECT_VERSION}.nupkg)
add_custom_command(
  OUTPUT ${ND_LUCENE_NUPKG}
  COMMAND ${ND_DOTNET} pack ${ND_LUCENE_DIR}/NativeDir.Lucene.csproj -c ${ND_DOTNET_CONFIG}
          ${ND_DOTNET_PROPS} -o ${ND_DOTNET_FEED} -nologo -v:m
  DEPENDS ${ND_LUCENE_STAMP}
  COMMENT "dotnet pack: NativeDir.Lucene.${PROJECT_VERSION}.nupkg"
  VERBATIM)
add_custom_target(nativedir_lucene_pack ALL DEPENDS ${ND_LUCENE_NUPKG})
add_dependencies(nativedir_lucene_pack nativedir_lucene_build)

# the benchmark (run by bench/suites.d/lucene.sh); built with everything so a broken benchmark
# fails the build, not only the bench run
set(ND_LUCENE_BENCH_STAMP ${ND_DOTNET_DIR}/lucene-bench.stamp)
add_custom_command(
  OUTPUT ${ND_LUCENE_BENCH_STAMP}
  COMMAND ${ND_DOTNET} build ${SRC}/NativeDir.Lucene.Benchmarks/NativeDir.Lucene.Benchmarks.csproj
          -c Release ${ND_DOTNET_PROPS} -nologo -v:m
  COMMAND ${CMAKE_COMMAND} -E touch ${ND_LUCENE_BENCH_STAMP}
  DEPENDS ${ND_LUCENE_NUPKG} ${ND_LUCENE_BENCH_SOURCES} ${ND_LUCENE_SOURCES}
  COMMENT "dotnet build: NativeDir.Lucene.Benchmarks"
  VERBATIM)
add_custom_target(nativedir_lucene_bench ALL DEPENDS ${ND_LUCENE_BENCH_STAMP})
add_dependencies(nativedir_lucene_bench nativedir_lucene_pack)

# every benchmark method runs once on a small file and its result is checked (not timed)
add_test(NAME dotnet_lucene_bench_verify
  COMMAND ${CMAKE_COMMAND} -E env ${ND_DOTNET_ENV} ${DOTNET_EXECUTABLE}
          ${ND_DOTNET_DIR}/artifacts/bin/NativeDir.Lucene.Benchmarks/release/NativeDir.Lucene.Benchmarks.dll
          --verify --dir ${ND_DOTNET_DIR}/lucene-bench-verify)
set_tests_properties(dotnet_lucene_bench_verify PROPERTIES TIMEOUT 300)

# the Mono benchmark row (bench/suites.d/lucene-mono.sh), one small round: every directory finds
# the same hits and reads the same bytes (NativeDir.Lucene.MonoBench/mono-bench.sh)
add_test(NAME dotnet_lucene_mono_bench_verify
  COMMAND bash ${SRC}/NativeDir.Lucene.MonoBench/mono-bench.sh ${PROJECT_BINARY_DIR} verify)
set_tests_properties(dotnet_lucene_mono_bench_verify PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77
  RESOURCE_LOCK dotnet_platform_publish)

# the larger-than-memory cells on a small index inside nd_memlimit's cgroup, every limit and the
# merges once, each cell's result checked (not timed); where no memory cgroup can be made
# nd_memlimit exits 77 and says why
if(TARGET nd_memlimit)
  add_test(NAME dotnet_lucene_ltm_verify
    COMMAND ${CMAKE_COMMAND} -E env ${ND_DOTNET_ENV} ND_MEMLIMIT=$<TARGET_FILE:nd_memlimit>
            $<TARGET_FILE:nd_memlimit> run -- ${DOTNET_EXECUTABLE}
            ${ND_DOTNET_DIR}/artifacts/bin/NativeDir.Lucene.Benchmarks/release/NativeDir.Lucene.Benchmarks.dll
            --ltm-cache ${ND_DOTNET_DIR}/lucene-ltm-verify/cache --verify
            --dir ${ND_DOTNET_DIR}/lucene-ltm-verify)
  set_tests_properties(dotnet_lucene_ltm_verify PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77)
endif()
# the converter of those cells to the shared format, on a made-up run
add_test(NAME dotnet_lucene_ltm_to_shared_json
  COMMAND ${ND_SYSTEM_PYTHON} ${SRC}/NativeDir.Lucene.Benchmarks/test_ltm_to_shared_json.py)
set_tests_properties(dotnet_lucene_ltm_to_shared_json PROPERTIES TIMEOUT 120)

# an application that knows NativeDir.Lucene only as a package (and NativeDir through it)
add_test(NAME dotnet_lucene_nupkg_consumer
  COMMAND ${CMAKE_COMMAND} -E env ${ND_DOTNET_ENV}
          bash ${SRC}/NativeDir.Lucene.Tests/consumer/consumer-test.sh ${DOTNET_EXECUTABLE}
          ${ND_DOTNET_FEED} ${PROJECT_VERSION} ${ND_DOTNET_DIR}/lucene-consumer)
set_tests_properties(dotnet_lucene_nupkg_consumer PROPERTIES TIMEOUT 900)

# a .NET Framework 4.8 application and a netstandard2.0 library on the packages (built once), run
# on Mono and on .NET 10 with the native library in place, removed and damaged: OpenOrFallback
# and NativeDirUnavailableException (NativeDir.Lucene.NetFx/netfx-test.sh)
set(ND_NETFX_SCRIPT ${SRC}/NativeDir.Lucene.NetFx/netfx-test.sh)
set(ND_NETFX_WORK ${ND_DOTNET_DIR}/netfx-consumer)
add_test(NAME dotnet_netfx_consumer_build
  COMMAND ${CMAKE_COMMAND} -E env ${ND_DOTNET_ENV}
          bash ${ND_NETFX_SCRIPT} build ${DOTNET_EXECUTABLE} ${ND_DOTNET_FEED} ${PROJECT_VERSION} ${ND_NETFX_WORK})
set_tests_properties(dotnet_netfx_consumer_build PROPERTIES TIMEOUT 900 FIXTURES_SETUP dotnet_netfx_built
  RESOURCE_LOCK dotnet_platform_publish)
foreach(runtime mono net10)
  add_test(NAME dotnet_netfx_consumer_${runtime}
    COMMAND ${CMAKE_COMMAND} -E env ${ND_DOTNET_ENV}
            bash ${ND_NETFX_SCRIPT} run ${runtime} ${DOTNET_EXECUTABLE} ${ND_DOTNET_FEED} ${PROJECT_VERSION} ${ND_NETFX_WORK})
  set_tests_properties(dotnet_netfx_consumer_${runtime} PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77
    FIXTURES_REQUIRED dotnet_netfx_built)
endforeach()

# both packages carry what .NET users look for: license, readme, repository, XML docs, symbols
foreach(pkg NativeDir NativeDir.Lucene)
  add_test(NAME dotnet_nupkg_metadata_${pkg}
    COMMAND ${CMAKE_COMMAND} -DNUPKG=${ND_DOTNET_FEED}/${pkg}.${PROJECT_VERSION}.nupkg
            -DWORK=${ND_DOTNET_DIR}/nupkg-metadata/${pkg}
            -P ${SRC}/check_nupkg_metadata.cmake)
endforeach()

# Lucene.NET itself under NativeAOT: a small application on NativeFSDirectory (index,
# commit, search, reopen, merge) published once with PublishAot and run once. Lucene.NET's
# reflection-built codecs and attributes need its assemblies rooted (see README.md, "NativeAOT");
# its own trim warnings are reported, any from NativeDir or NativeDir.Lucene fails the test.
add_test(NAME dotnet_lucene_nativeaot_smoke
  COMMAND ${CMAKE_COMMAND} -E env ${ND_DOTNET_ENV}
          bash ${SRC}/scripts/aot-smoke.sh ${DOTNET_EXECUTABLE}
          ${SRC}/NativeDir.Lucene.AotSmoke/NativeDir.Lucene.AotSmoke.csproj
          ${ND_DOTNET_DIR}/lucene-aot ${ND_DOTNET_PROPS})
set_tests_properties(dotnet_lucene_nativeaot_smoke PROPERTIES TIMEOUT 900)

# Lucene.NET's commits at every power cut, on the crash-model file system (tests/crash)
include(${PROJECT_SOURCE_DIR}/tests/crash/lucene/crash_lucene.cmake)
