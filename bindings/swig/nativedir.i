/*
 * nativedir.i - the one SWIG interface file the C# and the Java bindings are
 * both generated from. What both share is here; each language's typemaps sit in
 * its own file (csharp.i, java.i; the JNI helpers they call are C in
 * bindings/java/src/main/c). The declarations come from the public header
 * itself, so the bindings can never drift from the C ABI.
 */
%module nativedir

%{
#include "nativedir.h"
%}

%include <stdint.i>

#if defined(SWIGCSHARP)
%include "csharp.i"
#endif
#if defined(SWIGJAVA)
%include "java.i"
#endif

#define ND_EXTERN
%include "nativedir.h"
