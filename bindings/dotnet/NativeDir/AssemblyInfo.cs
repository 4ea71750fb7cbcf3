using System.Runtime.CompilerServices;

// Every P/Invoke in this assembly is blittable (SWIG typemaps in bindings/swig/nativedir.i):
// with runtime marshalling disabled, a signature that needed marshalling would fail loudly
// instead of silently generating an IL stub that NativeAOT and trimming cannot see.
[assembly: DisableRuntimeMarshalling]
[assembly: InternalsVisibleTo("NativeDir.Tests")]
