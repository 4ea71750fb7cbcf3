using System.Runtime.CompilerServices;

// Every P/Invoke in this assembly is blittable (SWIG typemaps in bindings/swig/nativedir.i):
// with runtime marshalling disabled, a signature that needed marshalling would fail loudly
// instead of silently generating an IL stub that NativeAOT and trimming cannot see.
#if NET
[assembly: DisableRuntimeMarshalling]
#endif
[assembly: InternalsVisibleTo("NativeDir.Tests")]
