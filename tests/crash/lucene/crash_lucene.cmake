# Lucene.NET's commits at every power cut: the recorder and checker (NativeDir.CrashLucene) and
# the ctests that run them on the crash-model file system. Included by
# bindings/dotnet/NativeDir.Lucene/lucene.cmake (so ND_DOTNET, ND_DOTNET_PROPS, ND_DOTNET_ENV,
# ND_DOTNET_DIR and DOTNET_EXECUTABLE are set) when tests/crash built the file system.
if(NOT TARGET crashfs OR NOT TARGET crash_lucene_sweep)
  return()
endif()
set(ND_CRASH_LUCENE_SRC ${PROJECT_SOURCE_DIR}/tests/crash/lucene)
file(GLOB ND_CRASH_LUCENE_SOURCES CONFIGURE_DEPENDS ${ND_CRASH_LUCENE_SRC}/*.cs
     ${ND_CRASH_LUCENE_SRC}/*.csproj ${ND_CRASH_LUCENE_SRC}/Directory.Build.props)
set(ND_CRASH_LUCENE_STAMP ${ND_DOTNET_DIR}/crash-lucene-build.stamp)
set(ND_CRASH_LUCENE_APP ${ND_DOTNET_DIR}/artifacts/bin/NativeDir.CrashLucene/release/NativeDir.CrashLucene.dll)
add_custom_command(
  OUTPUT ${ND_CRASH_LUCENE_STAMP}
  COMMAND ${ND_DOTNET} build ${ND_CRASH_LUCENE_SRC}/NativeDir.CrashLucene.csproj -c Release
          ${ND_DOTNET_PROPS} -nologo -v:m
  COMMAND ${CMAKE_COMMAND} -E touch ${ND_CRASH_LUCENE_STAMP}
  DEPENDS ${ND_LUCENE_STAMP} ${ND_CRASH_LUCENE_SOURCES} ${ND_LUCENE_SOURCES}
  COMMENT "dotnet build: NativeDir.CrashLucene (Lucene.NET's commits at every power cut)"
  VERBATIM)
add_custom_target(crash_lucene_app ALL DEPENDS ${ND_CRASH_LUCENE_STAMP})
# after every other dotnet build of NativeDir.Lucene: two at once race on its obj/ files
add_dependencies(crash_lucene_app nativedir_lucene_bench)

set(ND_CRASH_LUCENE_WORK ${PROJECT_BINARY_DIR}/tests/crash)
set(ND_CRASH_LUCENE ${CMAKE_COMMAND} -E env ${ND_DOTNET_ENV} sh
    ${PROJECT_SOURCE_DIR}/tests/crash/crash_lucene.sh $<TARGET_FILE:crashfs>
    $<TARGET_FILE:crash_lucene_sweep> ${DOTNET_EXECUTABLE} ${ND_CRASH_LUCENE_APP})
add_test(NAME crash_lucene_native COMMAND ${ND_CRASH_LUCENE} ${ND_CRASH_LUCENE_WORK}/lucene)
foreach(control dir file)
  add_test(NAME crash_lucene_control_${control}
           COMMAND ${ND_CRASH_LUCENE} ${ND_CRASH_LUCENE_WORK}/lucene_control_${control}
                   $<TARGET_FILE:crash_noop_sync> ${control})
endforeach()
set_tests_properties(crash_lucene_native crash_lucene_control_dir crash_lucene_control_file
  PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
  ENVIRONMENT "ND_REL_COUNTS=${PROJECT_BINARY_DIR}/tests/reliability/counts"
  FIXTURES_REQUIRED rel_counts LABELS "crash;reliability")
