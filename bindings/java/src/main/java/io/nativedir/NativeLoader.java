package io.nativedir;

import io.nativedir.jni.nativedir;
import io.nativedir.jni.nativedirConstants;
import java.io.File;
import java.net.URISyntaxException;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.List;

/**
 * Loads {@code libnativedir_jni} (the SWIG glue with the library linked in) once per class loader.
 *
 * <p>Where it looks, in order: the system property {@code nativedir.jni.library} (a full path);
 * the directory holding this jar (or class directory) and its parent, which is where the build
 * puts it; then {@code java.library.path}. The generated JNI class calls {@link #load()} from its
 * static initializer, so nothing can reach native code before the library is checked.
 */
public final class NativeLoader {
  /** System property naming the JNI library's full path. */
  public static final String LIBRARY_PROPERTY = "nativedir.jni.library";

  private static final String NAME = "nativedir_jni";
  private static boolean loaded;
  private static String loadedFrom;

  private NativeLoader() {}

  /** Loads the library if it is not loaded yet; throws UnsatisfiedLinkError with every place tried. */
  public static synchronized void load() {
    if (loaded) {
      return;
    }
    List<String> tried = new ArrayList<>();
    String explicit = System.getProperty(LIBRARY_PROPERTY);
    if (explicit != null) {
      loadedFrom = new File(explicit).getAbsolutePath();
      System.load(loadedFrom);
    } else if (!loadBesideCode(tried)) {
      try {
        System.loadLibrary(NAME);
        loadedFrom = "java.library.path";
      } catch (UnsatisfiedLinkError e) {
        tried.add("java.library.path=" + System.getProperty("java.library.path"));
        UnsatisfiedLinkError err = new UnsatisfiedLinkError(
            "nativedir: cannot find " + System.mapLibraryName(NAME) + "; tried " + tried
                + "; set -D" + LIBRARY_PROPERTY + "=/path/to/" + System.mapLibraryName(NAME));
        err.initCause(e);
        throw err;
      }
    }
    loaded = true;
    // the glue was compiled against one header; refuse a library from another ABI
    int abi = nativedir.nd_abi_version();
    if (abi != nativedirConstants.ND_ABI_VERSION) {
      throw new UnsatisfiedLinkError("nativedir: the loaded library implements ABI " + abi
          + ", this jar was built for ABI " + nativedirConstants.ND_ABI_VERSION);
    }
  }

  /** Prints which library was loaded and its version: {@code java -cp nativedir.jar io.nativedir.NativeLoader}. */
  public static void main(String[] args) {
    load();
    System.out.println("nativedir " + nativedir.nd_version() + " (ABI " + nativedir.nd_abi_version()
        + ") from " + loadedFrom);
  }

  private static boolean loadBesideCode(List<String> tried) {
    CodeSource source = NativeLoader.class.getProtectionDomain().getCodeSource();
    if (source == null || source.getLocation() == null) {
      return false;
    }
    File where;
    try {
      where = new File(source.getLocation().toURI());
    } catch (URISyntaxException | IllegalArgumentException e) {
      return false;
    }
    File dir = where.isFile() ? where.getParentFile() : where;
    File[] places = {dir, dir == null ? null : dir.getParentFile()};
    for (File d : places) {
      if (d == null) {
        continue;
      }
      File candidate = new File(d, System.mapLibraryName(NAME));
      tried.add(candidate.getPath());
      if (candidate.isFile()) {
        loadedFrom = candidate.getAbsolutePath();
        System.load(loadedFrom);
        return true;
      }
    }
    return false;
  }
}
