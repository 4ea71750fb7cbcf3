package io.nativedir;

import io.nativedir.jni.nativedir;
import io.nativedir.jni.nativedirConstants;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
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
 * <p>Where no library loads, {@link #load()} throws {@link NativeLibraryUnavailableError}, and so
 * does every later call, the same: the public classes call it before they touch the generated
 * JNI class, whose static initializer would otherwise fail once and leave a different error
 * ({@code NoClassDefFoundError}) to every later call.
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
  /** The jar's list of the platforms it carries, one a line (bindings/java/package/make_jar.cmake). */
  private static final String PLATFORMS_RESOURCE = "/native/platforms.txt";
  private static volatile boolean loaded;
  private static String loadedFrom;
  /** The first load's failure, thrown again (the same) by every later call. */
  private static NativeLibraryUnavailableError failure;

  private NativeLoader() {}

  /**
   * Loads the library if it is not loaded yet. Where it cannot be loaded, throws {@link
   * NativeLibraryUnavailableError} with the platform, every place tried, the loader's reason and
   * the platforms the jar carries, and the same error again on every later call.
   */
  public static void load() {
    if (!loaded) {
      loadOnce();
    }
  }

  private static synchronized void loadOnce() {
    if (loaded) {
      return;
    }
    if (failure != null) {
      throw failure.again();
    }
    List<String> tried = new ArrayList<>();
    try {
      String explicit = System.getProperty(LIBRARY_PROPERTY);
      if (explicit != null) {
        String path = new File(explicit).getAbsolutePath();
        tried.add(path + " (-D" + LIBRARY_PROPERTY + ")");
        if (!new File(path).isFile()) {
          throw unavailable(tried, "no such file", null);
        }
        loadFrom(path, tried);
        loadedFrom = path;
      } else if (!loadBesideCode(tried) && !loadFromJar(tried)) {
        tried.add("java.library.path=" + System.getProperty("java.library.path"));
        try {
          System.loadLibrary(NAME);
        } catch (UnsatisfiedLinkError e) {
          throw unavailable(tried, "no " + System.mapLibraryName(NAME) + " for " + platform()
              + " in any of these places (" + e.getMessage() + ")", e);
        }
        loadedFrom = "java.library.path";
      }
      // the glue was compiled against one header; refuse a library from another ABI (loaded
      // first: the generated class's static initializer calls load() again)
      loaded = true;
      int abi = nativedir.nd_abi_version();
      if (abi != nativedirConstants.ND_ABI_VERSION) {
        loaded = false;
        throw unavailable(List.of(loadedFrom), "the library implements ABI " + abi
            + ", this jar was built for ABI " + nativedirConstants.ND_ABI_VERSION, null);
      }
    } catch (NativeLibraryUnavailableError e) {
      failure = e;
      throw e;
    }
  }

  /** System.load, its failure (corrupted, another CPU, a missing symbol) made the documented one. */
  private static void loadFrom(String path, List<String> tried) {
    try {
      System.load(path);
    } catch (UnsatisfiedLinkError e) {
      throw unavailable(tried, e.getMessage(), e);
    }
  }

  private static NativeLibraryUnavailableError unavailable(List<String> tried, String reason,
      Throwable cause) {
    String where = platform() + " (os.name=" + System.getProperty("os.name") + ", os.arch="
        + System.getProperty("os.arch") + ", Java " + System.getProperty("java.version") + ")";
    return new NativeLibraryUnavailableError(where, String.join(", ", tried), reason, carried(),
        cause);
  }

  /** The platforms the jar carries a library for, from its list. */
  static List<String> carried() {
    List<String> platforms = new ArrayList<>();
    try (InputStream in = NativeLoader.class.getResourceAsStream(PLATFORMS_RESOURCE)) {
      if (in != null) {
        for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
          if (!line.isBlank()) {
            platforms.add(line.strip());
          }
        }
      }
    } catch (IOException e) {
      // the list is only part of a message: without it the message says the jar carries none
    }
    return platforms;
  }

  /** Prints which library was loaded and its version: {@code java -cp nativedir.jar io.nativedir.NativeLoader}. */
  public static void main(String[] args) {
    load(); // NativeLibraryUnavailableError, with what it tried, where there is no usable library
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
        loadFrom(lib.toAbsolutePath().toString(), tried);
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
      throw unavailable(tried, "cannot extract it from the jar: " + e, e);
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
        loadFrom(candidate.getAbsolutePath(), tried);
        loadedFrom = candidate.getAbsolutePath();
        return true;
      }
    }
    return false;
  }
}
