/* java.i - the Java half of the SWIG interface (bindings/java); nativedir.i includes it. */
/*
 * Only the thin layer in bindings/java/src/main/java/io/nativedir calls what is
 * generated here (package io.nativedir.jni). The typemaps keep every hot call
 * free of allocation and copies:
 *   - handles and lengths are plain `long`s; a function with a handle or length
 *     out-parameter returns that value instead of its status (both fit in one
 *     jlong: values are >= 0, statuses < 0), so no long[] is allocated;
 *   - direct ByteBuffers are passed by address (GetDirectBufferAddress);
 *   - byte[] regions are pinned with GetPrimitiveArrayCritical. Nothing inside
 *     the critical region calls back into the JVM: the region spans exactly one
 *     nd_* call (a memcpy from a mapping or page cache, or one pread/pwrite),
 *     and a failure is thrown only after the array is released. The cost is
 *     that a GC waits for that one call; callers moving huge blocks from a slow
 *     device should use direct ByteBuffers, which need no pinning at all;
 *   - a negative status becomes a Java exception before the call returns,
 *     built from this thread's nd_last_error_message()/nd_last_os_error() in
 *     the same native call (so no later call can overwrite them) by
 *     io.nativedir.NativeErrors.
 */
%javaconst(1);
/* `1u` is not Java: the unsigned flags are read from the library when the class loads */
%javaconst(0) ND_DIR_CREATE;
%javaconst(0) ND_IO_RANDOM;
%javaconst(0) ND_IO_SEQUENTIAL;
%javaconst(0) ND_IO_MERGE;
%javaconst(0) ND_IO_MMAP;
%javaconst(0) ND_IO_PRELOAD;
%javaconst(0) ND_IO_REQUIRE_DIRECT;
%javaconst(0) ND_IO_OVERWRITE;
%javaconst(0) ND_IO_NOREUSE;
%javaconst(0) ND_IO_WARM;
%javaconst(0) ND_RING_FORCE_THREADS;
%pragma(java) jniclasscode=%{
  static { io.nativedir.NativeLoader.load(); }
%}
%pragma(java) modulecode=%{
  /* Strict UTF-8: an unpaired surrogate or a NUL must never turn into another name. */
  static byte[] utf8(String s) {
    if (s.indexOf('\0') >= 0)
      throw new IllegalArgumentException("a name or path must not contain NUL: " + s);
    try {
      java.nio.ByteBuffer b = java.nio.charset.StandardCharsets.UTF_8.newEncoder()
          .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
          .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT)
          .encode(java.nio.CharBuffer.wrap(s));
      byte[] out = new byte[b.remaining()];
      b.get(out);
      return out;
    } catch (java.nio.charset.CharacterCodingException e) {
      throw new IllegalArgumentException("not valid Unicode (unpaired surrogate): " + s, e);
    }
  }
%}

%{
#include <stdlib.h>
#include <string.h>
#include "nd_jni.h"
%}

/* ---- statuses: negative results are thrown (after every argument is released) ---- */
%typemap(out, throws="java.io.IOException") int32_t, int64_t %{ $result = ($typemap(jni, $1_type))$1; %}
%typemap(ret) int32_t, int64_t %{ if ($1 < 0) nd_java_raise(jenv, $1); %}
/* nd_abi_version never fails: no throws clause */
%typemap(out) int32_t nd_abi_version %{ $result = (jint)$1; %}
%typemap(ret) int32_t nd_abi_version ""
/* the glue reads the error state itself (nd_java_raise) */
%ignore nd_last_error_message;
%ignore nd_last_os_error;

/* ---- out-parameters folded into the return value ---- */
%typemap(in, numinputs=0) nd_handle *ND_OUT (nd_handle out_value = 0), int64_t *ND_OUT (int64_t out_value = 0)
%{ $1 = &out_value; %}
%typemap(argout) nd_handle *ND_OUT, int64_t *ND_OUT %{ if (result == ND_OK) jresult = (jlong)out_value$argnum; %}
%apply nd_handle *ND_OUT { nd_handle *out_dir, nd_handle *out_lock, nd_handle *out_input,
                           nd_handle *out_clone, nd_handle *out_slice, nd_handle *out_output,
                           nd_handle *out_ring };
%apply int64_t *ND_OUT { int64_t *out_len };
%typemap(jni) int32_t ND_STATUS_OR_VALUE "jlong"
%typemap(jtype) int32_t ND_STATUS_OR_VALUE "long"
%typemap(jstype) int32_t ND_STATUS_OR_VALUE "long"
%typemap(out, throws="java.io.IOException") int32_t ND_STATUS_OR_VALUE %{ $result = (jlong)$1; %}
%apply int32_t ND_STATUS_OR_VALUE { int32_t nd_open_dir, int32_t nd_lock, int32_t nd_open_input,
                                    int32_t nd_input_clone, int32_t nd_input_slice,
                                    int32_t nd_create_output, int32_t nd_file_length,
                                    int32_t nd_input_length, int32_t nd_ring_open };

/* ---- names and paths: Java String -> strict UTF-8 -> NUL-terminated copy ---- */
%typemap(jni) const char *ND_UTF8 "jbyteArray"
%typemap(jtype) const char *ND_UTF8 "byte[]"
%typemap(jstype) const char *ND_UTF8 "String"
%typemap(javain) const char *ND_UTF8 "utf8($javainput)"
%typemap(in) const char *ND_UTF8 {
    if ($input == NULL) {
        nd_java_throw(jenv, "java/lang/NullPointerException", "name is null");
        return $null;
    }
    jsize n = (*jenv)->GetArrayLength(jenv, $input);
    $1 = malloc((size_t)n + 1);
    if ($1 == NULL) {
        nd_java_throw(jenv, "java/lang/OutOfMemoryError", "nativedir: name copy");
        return $null;
    }
    (*jenv)->GetByteArrayRegion(jenv, $input, 0, n, (jbyte *)$1);
    $1[n] = '\0';
    if (memchr($1, '\0', (size_t)n) != NULL) {
        free($1);
        nd_java_throw(jenv, "java/lang/IllegalArgumentException", "a name must not contain NUL");
        return $null;
    }
}
%typemap(freearg) const char *ND_UTF8 %{ free($1); %}
%apply const char *ND_UTF8 { const char *path, const char *name, const char *from, const char *to };

/* ---- nd_list: a byte[] the names are copied into (readdir must not run pinned) ---- */
%typemap(jni) (char *buf, int64_t cap) "jbyteArray"
%typemap(jtype) (char *buf, int64_t cap) "byte[]"
%typemap(jstype) (char *buf, int64_t cap) "byte[]"
%typemap(javain) (char *buf, int64_t cap) "$javainput"
%typemap(in) (char *buf, int64_t cap) {
    $1 = NULL;
    $2 = $input == NULL ? 0 : (*jenv)->GetArrayLength(jenv, $input);
    if ($2 > 0 && ($1 = malloc((size_t)$2)) == NULL) {
        nd_java_throw(jenv, "java/lang/OutOfMemoryError", "nativedir: list buffer");
        return $null;
    }
}
%typemap(argout) (char *buf, int64_t cap)
%{ if (result >= 0 && result <= $2 && $1 != NULL)
       (*jenv)->SetByteArrayRegion(jenv, $input, 0, (jsize)result, (const jbyte *)$1); %}
%typemap(freearg) (char *buf, int64_t cap) %{ free($1); %}

/* ---- direct ByteBuffer: its address and capacity, no copy, no pin ---- */
%typemap(jni) (void *nio, int64_t nio_cap) "jobject"
%typemap(jtype) (void *nio, int64_t nio_cap) "java.nio.ByteBuffer"
%typemap(jstype) (void *nio, int64_t nio_cap) "java.nio.ByteBuffer"
%typemap(javain) (void *nio, int64_t nio_cap) "$javainput"
%typemap(in) (void *nio, int64_t nio_cap) {
    $1 = $input == NULL ? NULL : (*jenv)->GetDirectBufferAddress(jenv, $input);
    if ($1 == NULL) {
        nd_java_throw(jenv, "java/lang/IllegalArgumentException", "not a direct ByteBuffer");
        return $null;
    }
    $2 = (int64_t)(*jenv)->GetDirectBufferCapacity(jenv, $input);
}

/* ---- byte[]: pinned for exactly one nd_* call (see the note at the top) ---- */
%typemap(jni) (void *array, int64_t array_cap) "jbyteArray"
%typemap(jtype) (void *array, int64_t array_cap) "byte[]"
%typemap(jstype) (void *array, int64_t array_cap) "byte[]"
%typemap(javain) (void *array, int64_t array_cap) "$javainput"
%typemap(in) (void *array, int64_t array_cap) {
    if ($input == NULL) {
        nd_java_throw(jenv, "java/lang/NullPointerException", "array is null");
        return $null;
    }
    $2 = (*jenv)->GetArrayLength(jenv, $input);
    /* the last JNI call before the nd_* call: nothing runs in the critical region but it */
    $1 = (*jenv)->GetPrimitiveArrayCritical(jenv, $input, NULL);
    if ($1 == NULL)
        return $null; /* OutOfMemoryError is pending */
}
%typemap(freearg) (void *array, int64_t array_cap)
%{ if ($1 != NULL) (*jenv)->ReleasePrimitiveArrayCritical(jenv, $input, $1, 0); %}

/* ---- nd_input_window: a ByteBuffer over the pinned window (io.nativedir.NativeInput, Mapping) ---- */
%typemap(in, numinputs=0) const uint8_t **out_ptr (const uint8_t *window = NULL) %{ $1 = ($1_ltype)&window; %}
%typemap(jni) int64_t nd_input_window, int64_t nd_input_map "jobject"
%typemap(jtype) int64_t nd_input_window, int64_t nd_input_map "java.nio.ByteBuffer"
%typemap(jstype) int64_t nd_input_window, int64_t nd_input_map "java.nio.ByteBuffer"
%typemap(javaout) int64_t nd_input_window, int64_t nd_input_map { return $jnicall; }
%typemap(out, throws="java.io.IOException") int64_t nd_input_window, int64_t nd_input_map %{ $result = NULL; %}
%typemap(argout) const uint8_t **out_ptr
%{ if (result > 0)
       jresult = (*jenv)->NewDirectByteBuffer(jenv, (void *)window$argnum,
                                              result > INT32_MAX ? INT32_MAX : result); %}

/* ---- nd_input_read_from into a byte[] / a direct ByteBuffer: the ByteBuffer is the window
 * after the read (null for none). It is made in `ret`, after the array is released: no JNI call
 * may run while it is pinned. ---- */
%typemap(in, numinputs=0) const uint8_t **after_ptr (const uint8_t *after = NULL) %{ $1 = ($1_ltype)&after; %}
%typemap(jni) int64_t nd_input_read_into_array, int64_t nd_input_read_into_buffer "jobject"
%typemap(jtype) int64_t nd_input_read_into_array, int64_t nd_input_read_into_buffer "java.nio.ByteBuffer"
%typemap(jstype) int64_t nd_input_read_into_array, int64_t nd_input_read_into_buffer "java.nio.ByteBuffer"
%typemap(javaout) int64_t nd_input_read_into_array, int64_t nd_input_read_into_buffer { return $jnicall; }
%typemap(out, throws="java.io.IOException") int64_t nd_input_read_into_array,
                                            int64_t nd_input_read_into_buffer %{ $result = NULL; %}
%typemap(ret) int64_t nd_input_read_into_array, int64_t nd_input_read_into_buffer
%{ if ($1 < 0)
       nd_java_raise(jenv, $1);
   else if ($1 > 0)
       jresult = (*jenv)->NewDirectByteBuffer(jenv, (void *)after7, $1 > INT32_MAX ? INT32_MAX : $1); %}

/* The thin layer keeps its own cursor over nd_input_window (io.nativedir.NativeInput):
 * the raw pointer entry points are replaced by the region-checked ones below. */
%ignore nd_read_bytes;
%ignore nd_write_bytes;
%ignore nd_read_buffered;
%ignore nd_input_read_from;
%ignore nd_read_byte_buffered;
%ignore nd_input_seek;
%ignore nd_input_position;
/* The calls on files and memory the caller opened itself (nd_os_*) serve runtimes whose own file
 * API has no positional I/O on its handles; Java's FileChannel has it, and a FileDescriptor's
 * number is not reachable without reflection. */
%ignore nd_os_read;
%ignore nd_os_write;
%ignore nd_os_length;
%ignore nd_os_set_direct;
%ignore nd_os_advise;
%ignore nd_os_madvise;
/* Rings (io.nativedir.NativeRing): open, backend and in-flight count as they are; the
 * pointer calls through the region-checked wrappers below. The event descriptor is for event
 * loops: Java reaps on a thread of its own. */
%ignore nd_ring_submit_read;
%ignore nd_ring_reap;
%ignore nd_ring_event_fd;
%ignore nd_read_cached;
/* A full ring (ND_E_BUSY) is an answer, not a failure: returned; everything else is thrown. */
%typemap(ret) int32_t nd_java_ring_submit %{ if ($1 < 0 && $1 != ND_E_BUSY) nd_java_raise(jenv, $1); %}
/* The completion thread's reap: a closed ring (< 0) ends its loop, thrown nothing. */
%typemap(out) int32_t nd_java_ring_reap %{ $result = (jint)$1; %}
%typemap(ret) int32_t nd_java_ring_reap ""

%inline %{
/* Reads into [at, at+len) of a direct ByteBuffer / a byte[]; returns len. */
static int64_t nd_read_into_buffer(nd_handle input, int64_t offset, void *nio, int64_t nio_cap,
                                   int32_t at, int32_t len)
{
    if (!nd_java_region_ok(nio_cap, at, len))
        return ND_JAVA_E_RANGE;
    return nd_read_bytes(input, offset, (uint8_t *)nio + at, len);
}
static int64_t nd_read_into_array(nd_handle input, int64_t offset, void *array, int64_t array_cap,
                                  int32_t at, int32_t len)
{
    if (!nd_java_region_ok(array_cap, at, len))
        return ND_JAVA_E_RANGE;
    return nd_read_bytes(input, offset, (uint8_t *)array + at, len);
}
/* nd_input_read_from into [at, at+len) of a direct ByteBuffer / a byte[] (the cursor's call
 * where its window ends); returns the window after it (see the typemaps above). */
static int64_t nd_input_read_into_buffer(nd_handle input, int64_t pos, void *nio, int64_t nio_cap,
                                         int32_t at, int32_t len, const uint8_t **after_ptr)
{
    if (!nd_java_region_ok(nio_cap, at, len))
        return ND_JAVA_E_RANGE;
    return nd_input_read_from(input, pos, (uint8_t *)nio + at, len, after_ptr);
}
static int64_t nd_input_read_into_array(nd_handle input, int64_t pos, void *array,
                                        int64_t array_cap, int32_t at, int32_t len,
                                        const uint8_t **after_ptr)
{
    if (!nd_java_region_ok(array_cap, at, len))
        return ND_JAVA_E_RANGE;
    return nd_input_read_from(input, pos, (uint8_t *)array + at, len, after_ptr);
}
/* nd_read_cached into [at, at+len) of a direct ByteBuffer / a byte[]: the count of bytes
 * copied without waiting for the device (the first half of NativeRing's reads). */
static int64_t nd_java_read_cached(nd_handle input, int64_t offset, void *nio, int64_t nio_cap,
                                   int32_t at, int32_t len)
{
    if (!nd_java_region_ok(nio_cap, at, len))
        return ND_JAVA_E_RANGE;
    return nd_read_cached(input, offset, (uint8_t *)nio + at, len);
}
static int64_t nd_java_read_cached_array(nd_handle input, int64_t offset, void *array,
                                         int64_t array_cap, int32_t at, int32_t len)
{
    if (!nd_java_region_ok(array_cap, at, len))
        return ND_JAVA_E_RANGE;
    return nd_read_cached(input, offset, (uint8_t *)array + at, len);
}
/* nd_ring_submit_read into [at, at+len) of a direct ByteBuffer, which the Java side keeps
 * reachable until the read's completion is reaped. */
static int32_t nd_java_ring_submit(nd_handle ring, nd_handle input, int64_t offset, void *nio,
                                   int64_t nio_cap, int32_t at, int32_t len, int64_t tag)
{
    if (!nd_java_region_ok(nio_cap, at, len))
        return ND_JAVA_E_RANGE;
    return nd_ring_submit_read(ring, input, offset, (uint8_t *)nio + at, len, (uint64_t)tag);
}
/* nd_ring_reap into a direct ByteBuffer of n = capacity / 16 pairs, in native byte order: the
 * tags at [0, 8n), the results at [8n, 16n). Returns how many, or < 0 (closed). */
static int32_t nd_java_ring_reap(nd_handle ring, void *nio, int64_t nio_cap, int32_t timeout_ms)
{
    int32_t max = (int32_t)(nio_cap / 16);
    if (max <= 0 || (uintptr_t)nio % 8 != 0)
        return ND_E_INVALID_ARGUMENT;
    return nd_ring_reap(ring, (uint64_t *)nio, (int64_t *)nio + max, max, timeout_ms);
}

/* Appends [at, at+len) of a direct ByteBuffer / a byte[]; returns len. */
static int64_t nd_write_from_buffer(nd_handle output, void *nio, int64_t nio_cap, int32_t at,
                                    int32_t len)
{
    if (!nd_java_region_ok(nio_cap, at, len))
        return ND_JAVA_E_RANGE;
    return nd_write_bytes(output, (const uint8_t *)nio + at, len);
}
static int64_t nd_write_from_array(nd_handle output, void *array, int64_t array_cap, int32_t at,
                                   int32_t len)
{
    if (!nd_java_region_ok(array_cap, at, len))
        return ND_JAVA_E_RANGE;
    return nd_write_bytes(output, (const uint8_t *)array + at, len);
}
%}
