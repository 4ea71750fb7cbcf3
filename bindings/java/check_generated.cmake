# Fails the build when SWIG wrote a Java file other than the three the jar
# compiles: a SWIGTYPE_p_* class means a pointer argument with no typemap.
file(GLOB generated RELATIVE ${DIR} ${DIR}/*.java)
list(REMOVE_ITEM generated nativedir.java nativedirJNI.java nativedirConstants.java)
if(generated)
  message(FATAL_ERROR "SWIG generated unexpected Java classes: ${generated}; give their pointer "
                      "arguments typemaps in bindings/swig/java.i")
endif()
