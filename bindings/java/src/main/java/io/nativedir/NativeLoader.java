package io.nativedir;

import io.nativedir.jni.nativedir;
import io.nativedir.jni.nativedirConstants;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Loads {@code libnativedir_jni} (the SWIG glue with the library linked in) once per class loader.
 *
 * <p>Where it looks, in order: the system property {@code nativedir.jni.library} (a full path);
 * the directory holding this jar (or class directory) and its parent, which is where the build
 * puts it; the copy inside the jar for this OS and architecture
 * ({@code native/<os>-<arch>/}, e.g. {@code native/linux-x86_64/libnativedir_jni.so}); then
 * {@code java.library.path} (for a platform the jar does not carry). The generated JNI class
 * calls {@link #load()} from its static initializer, so nothing can reach native code before the
 * library is checked.
 *
 * <p>The jar's copy is written to a new private temporary directory (owner-only permissions
 * where the file system has them, a fresh random name, never a shared predictable path) and
 * loaded from there. Where a loaded library may be unlinked (not Windows), the file and the
 * directory are deleted at once after loading, so nothing is left behind even if the JVM is
 * killed; on Windows they are deleted at exit where the OS allows it.
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
    } else if (!loadBesideCode(tried) && !loadFromJar(tried)) {
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

  /** Where the library was loaded from (a path, {@code java.library.path}, or {@code jar:...}); null before. */
  public static synchronized String loadedFrom() {
    return loadedFrom;
  }

  /** This JVM's platform as the jar names it: {@code linux-x86_64}, {@code windows-x86_64}, ... */
  static String platform() {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    String o = os.startsWith("windows") ? "windows" : os.startsWith("mac") ? "macos"
        : os.replaceAll("[^a-z0-9]", "");
    String a = arch.equals("amd64") || arch.equals("x86_64") ? "x86_64"
        : arch.equals("arm64") || arch.equals("aarch64") ? "aarch64" : arch;
    return o + "-" + a;
  }

  private static boolean loadFromJar(List<String> tried) {
    String file = System.mapLibraryName(NAME);
    String resource = "/native/" + platform() + "/" + file;
    tried.add("jar:" + resource);
    try (InputStream in = NativeLoader.class.getResourceAsStream(resource)) {
      if (in == null) {
        return false;
      }
      boolean posix = FileSystems.getDefault().supportedFileAttributeViews().contains("posix");
      Path dir = posix
          ? Files.createTempDirectory("nativedir-jni-",
              PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")))
          : Files.createTempDirectory("nativedir-jni-");
      Path lib = dir.resolve(file);
      Files.copy(in, lib, StandardCopyOption.REPLACE_EXISTING);
      boolean windows = platform().startsWith("windows");
      if (windows) {
        // a loaded DLL cannot be deleted while the JVM runs: try at exit (file before folder)
        dir.toFile().deleteOnExit();
        lib.toFile().deleteOnExit();
      }
      try {
        System.load(lib.toAbsolutePath().toString());
      } finally {
        if (!windows) {
          // mapped now: the names can go, the mapping stays
          Files.deleteIfExists(lib);
          Files.deleteIfExists(dir);
        }
      }
      loadedFrom = "jar:" + resource + " (extracted to " + lib + ")";
      return true;
    } catch (IOException e) {
      UnsatisfiedLinkError err = new UnsatisfiedLinkError(
          "nativedir: cannot extract " + resource + " from the jar: " + e);
      err.initCause(e);
      throw err;
    }
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
