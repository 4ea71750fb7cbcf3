/*
 * nd_jni.c - the JNI glue's helpers: statuses thrown as Java exceptions, and
 * region checks for the byte[] / ByteBuffer wrappers (see nd_jni.h).
 */
#include <string.h>

#include "nativedir.h"
#include "nd_jni.h"

void nd_java_raise(JNIEnv *jenv, int64_t status)
{
    if ((*jenv)->ExceptionCheck(jenv))
        return; /* a typemap already threw (null array, bad buffer) */
    const char *msg =
        status == ND_JAVA_E_RANGE ? "buffer region out of bounds" : nd_last_error_message();
    int32_t os_error = status == ND_JAVA_E_RANGE ? 0 : nd_last_os_error();
    jsize n = (jsize)strlen(msg);
    /* bytes, not NewStringUTF: the message holds real UTF-8 paths, not modified UTF-8 */
    jbyteArray bytes = (*jenv)->NewByteArray(jenv, n);
    if (bytes == NULL)
        return;
    (*jenv)->SetByteArrayRegion(jenv, bytes, 0, n, (const jbyte *)msg);
    jclass cls = (*jenv)->FindClass(jenv, "io/nativedir/NativeErrors");
    if (cls == NULL)
        return;
    jmethodID make =
        (*jenv)->GetStaticMethodID(jenv, cls, "toThrowable", "(I[BI)Ljava/lang/Throwable;");
    if (make == NULL)
        return;
    jobject t =
        (*jenv)->CallStaticObjectMethod(jenv, cls, make, (jint)status, bytes, (jint)os_error);
    if (t != NULL && !(*jenv)->ExceptionCheck(jenv))
        (*jenv)->Throw(jenv, (jthrowable)t);
}

void nd_java_throw(JNIEnv *jenv, const char *cls_name, const char *msg)
{
    jclass cls = (*jenv)->FindClass(jenv, cls_name);
    if (cls != NULL)
        (*jenv)->ThrowNew(jenv, cls, msg);
}

/* [at, at+len) inside a region of `cap` bytes, computed without overflow */
int nd_java_region_ok(int64_t cap, int32_t at, int32_t len)
{
    return at >= 0 && len >= 0 && (int64_t)at <= cap && (int64_t)len <= cap - at;
}
