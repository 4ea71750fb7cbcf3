/* csharp.i - the C# half of the SWIG interface (bindings/dotnet); nativedir.i includes it. */
/*
 * Every P/Invoke stays blittable so that nothing is marshalled at run time
 * (NativeAOT- and trim-safe; the assembly sets DisableRuntimeMarshalling):
 * integers stay integers, every pointer is a raw C# pointer, strings cross as
 * NUL-terminated UTF-8 bytes that the thin layer encodes and decodes itself.
 * No SWIGTYPE_p_* wrapper objects, no copied arrays. The generated classes are
 * internal: the public API is the hand-written NativeDir layer.
 * CMake runs swig with -DSWIG_CSHARP_NO_EXCEPTION_HELPER, _NO_STRING_HELPER and
 * _NO_IMCLASS_STATIC_CONSTRUCTOR: statuses are return values, so the pending-
 * exception and string callbacks (delegate marshalling) are never needed.
 */
%pragma(csharp) moduleclassmodifiers="internal static unsafe class"
%pragma(csharp) imclassclassmodifiers="internal static unsafe class"
%pragma(csharp) moduleimports=""
%pragma(csharp) imclassimports=""
%csconst(1);

/* names and paths in, static messages out: UTF-8 bytes */
%typemap(ctype)  const char * "const char *"
%typemap(imtype) const char * "byte*"
%typemap(cstype) const char * "byte*"
%typemap(in)     const char * %{ $1 = ($1_ltype)$input; %}
%typemap(out)    const char * %{ $result = (const char *)$1; %}
%typemap(csin)   const char * "$csinput"
%typemap(csout)  const char * { return $imcall; }

/* nd_list's output buffer */
%typemap(ctype)  char *buf "char *"
%typemap(imtype) char *buf "byte*"
%typemap(cstype) char *buf "byte*"
%typemap(in)     char *buf %{ $1 = ($1_ltype)$input; %}
%typemap(csin)   char *buf "$csinput"

/* caller-owned byte buffers (pinned or native memory) */
%typemap(ctype)  void *, const void * "void *"
%typemap(imtype) void *, const void * "byte*"
%typemap(cstype) void *, const void * "byte*"
%typemap(in)     void *, const void * %{ $1 = ($1_ltype)$input; %}
%typemap(csin)   void *, const void * "$csinput"

/* nd_input_window's zero-copy pointer */
%typemap(ctype)  const uint8_t ** "const uint8_t **"
%typemap(imtype) const uint8_t ** "byte**"
%typemap(cstype) const uint8_t ** "byte**"
%typemap(in)     const uint8_t ** %{ $1 = ($1_ltype)$input; %}
%typemap(csin)   const uint8_t ** "$csinput"

/* out-parameters and arrays of handles, lengths, tags: raw pointers */
%define ND_CS_POINTER(CTYPE, CSTYPE)
%typemap(ctype)  CTYPE * "CTYPE *"
%typemap(imtype) CTYPE * "CSTYPE*"
%typemap(cstype) CTYPE * "CSTYPE*"
%typemap(in)     CTYPE * %{ $1 = ($1_ltype)$input; %}
%typemap(csin)   CTYPE * "$csinput"
%enddef
ND_CS_POINTER(nd_handle, long)
ND_CS_POINTER(int64_t, long)
ND_CS_POINTER(uint64_t, ulong)
