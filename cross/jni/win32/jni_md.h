/* jni_md.h for the windows-x86_64 JNI library cross-built with MinGW-w64 (cross/):
 * Debian has no Windows JDK, and the Linux JDK's jni_md.h describes Linux. These are
 * the Windows JNI ABI's machine-dependent definitions: exported entry points, the
 * JNICALL convention (ignored on x86-64) and 32-bit jint as `long` (LLP64). */
#ifndef ND_CROSS_JNI_MD_H
#define ND_CROSS_JNI_MD_H

#define JNIEXPORT __declspec(dllexport)
#define JNIIMPORT __declspec(dllimport)
#define JNICALL __stdcall

typedef long jint;
typedef long long jlong;
typedef signed char jbyte;

#endif
