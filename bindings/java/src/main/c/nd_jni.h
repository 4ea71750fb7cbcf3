/*
 * nd_jni.h - the C helpers the SWIG-generated JNI glue calls (java.i's typemaps
 * and inline wrappers). They live in nd_jni.c, compiled into the same JNI
 * library as the glue; hidden, like everything in it but the Java_* entries.
 */
#ifndef ND_JNI_H
#define ND_JNI_H

#include <jni.h>
#include <stdint.h>

/* Glue-private status for a buffer region outside its array or ByteBuffer. It
 * never leaves the glue: it is thrown as IndexOutOfBoundsException. */
#define ND_JAVA_E_RANGE (-1000)

/* Throws the Java exception for a negative status (io.nativedir.NativeErrors
 * builds it from this thread's last message and OS error), unless one is
 * already pending. */
void nd_java_raise(JNIEnv *jenv, int64_t status);

/* Throws a new `cls_name` (JNI class name) with `msg`. */
void nd_java_throw(JNIEnv *jenv, const char *cls_name, const char *msg);

/* Whether [at, at+len) lies inside a region of `cap` bytes (no overflow). */
int nd_java_region_ok(int64_t cap, int32_t at, int32_t len);

#endif
