# Lucene (Java)'s commits at every power cut: the recorder and checker (CrashLucene.java, a jar
# run with java -jar) and the ctests that run them on the crash-model file system with
# crash_lucene.sh and lucene_sweep, as Lucene.NET's are. Included by bindings/java/lucene (so
# nativedir_java, nativedir_lucene, ND_JAVA_FULL_JAR, ND_LUCENE_JAR and ND_LUCENE_CORE_JAR are
# set) when tests/crash built the file system.
if(NOT TARGET crashfs OR NOT TARGET crash_lucene_sweep)
  return()
endif()
set(nd_crash_java_dir ${PROJECT_BINARY_DIR}/tests/crash)
# the manifest's Class-Path: absolute file: URLs, wrapped at 72 bytes a line as manifests are
set(nd_mf_cp "Class-Path:")
foreach(jar IN ITEMS ${ND_JAVA_FULL_JAR} ${ND_LUCENE_JAR} ${ND_LUCENE_CORE_JAR})
  string(APPEND nd_mf_cp " file:${jar}")
endforeach()
set(nd_manifest "Main-Class: CrashLucene\n")
string(LENGTH "${nd_mf_cp}" nd_left)
set(nd_first 1)
while(nd_left GREATER 0)
  if(nd_first)
    set(nd_take 72)
  else()
    set(nd_take 71)
  endif()
  if(nd_take GREATER nd_left)
    set(nd_take ${nd_left})
  endif()
  string(SUBSTRING "${nd_mf_cp}" 0 ${nd_take} nd_line)
  string(SUBSTRING "${nd_mf_cp}" ${nd_take} -1 nd_mf_cp)
  if(nd_first)
    string(APPEND nd_manifest "${nd_line}\n")
  else()
    string(APPEND nd_manifest " ${nd_line}\n")
  endif()
  set(nd_first 0)
  math(EXPR nd_left "${nd_left} - ${nd_take}")
endwhile()
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/crash-lucene-java.MF "${nd_manifest}")
add_jar(crash_lucene_java
  SOURCES ${PROJECT_SOURCE_DIR}/tests/crash/lucene-java/CrashLucene.java
  INCLUDE_JARS nativedir_java nativedir_lucene ${ND_LUCENE_CORE_JAR}
  MANIFEST ${CMAKE_CURRENT_BINARY_DIR}/crash-lucene-java.MF
  OUTPUT_NAME crash-lucene-java
  OUTPUT_DIR ${nd_crash_java_dir})
get_target_property(ND_CRASH_LUCENE_JAVA_JAR crash_lucene_java JAR_FILE)

set(ND_CRASH_LUCENE_JAVA sh ${PROJECT_SOURCE_DIR}/tests/crash/crash_lucene.sh
    $<TARGET_FILE:crashfs> $<TARGET_FILE:crash_lucene_sweep> ${Java_JAVA_EXECUTABLE}
    ${ND_CRASH_LUCENE_JAVA_JAR})
add_test(NAME crash_lucene_java_native COMMAND ${ND_CRASH_LUCENE_JAVA} ${nd_crash_java_dir}/lucene_java)
foreach(control dir file)
  add_test(NAME crash_lucene_java_control_${control}
           COMMAND ${ND_CRASH_LUCENE_JAVA} ${nd_crash_java_dir}/lucene_java_control_${control}
                   $<TARGET_FILE:crash_noop_sync> ${control})
endforeach()
set_tests_properties(crash_lucene_java_native crash_lucene_java_control_dir
                     crash_lucene_java_control_file
  PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
  ENVIRONMENT "ND_REL_COUNTS=${PROJECT_BINARY_DIR}/tests/reliability/counts"
  FIXTURES_REQUIRED rel_counts LABELS "crash;reliability")
