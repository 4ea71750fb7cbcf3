package io.nativedir;

import java.util.List;

/**
 * The JNI library cannot be loaded on this machine: there is none for this platform, or the one
 * found is not one this JVM can load (corrupted, built for another CPU or OS, needing a C library
 * symbol this system lacks), or it implements another ABI than this jar.
 *
 * <p>Thrown by the first call that needs native code ({@link NativeDirectory#open(java.nio.file.Path)},
 * {@link NativeDirectory#libraryVersion()}, {@link NativeLoader#load()}), and again, with the same
 * message, by every later one: a failed load is remembered, never retried into a different
 * error. An {@link UnsatisfiedLinkError}, as the JVM's own loading failures are; its cause is
 * the JVM's error, where there was one.
 *
 * <p>The message, and the accessors, name the platform as the loader sees it, the file or files
 * looked for, the loader's own reason, and the platforms this jar carries a library for.
 */
public final class NativeLibraryUnavailableError extends UnsatisfiedLinkError {
  private final String platform;
  private final String lookedFor;
  private final String reason;
  private final List<String> carried;

  NativeLibraryUnavailableError(String platform, String lookedFor, String reason,
      List<String> carried, Throwable cause) {
    super("nativedir: cannot load the native library on " + platform + ": looked for "
        + lookedFor + "; the loader said: " + reason + ". "
        + (carried.isEmpty() ? "This jar carries no native library"
            : "This jar carries the native library for " + String.join(", ", carried))
        + ". Run on a platform it carries, or point -D" + NativeLoader.LIBRARY_PROPERTY
        + " at a library built for this one.");
    this.platform = platform;
    this.lookedFor = lookedFor;
    this.reason = reason;
    this.carried = List.copyOf(carried);
    if (cause != null) {
      initCause(cause);
    }
  }

  /** The same error again, for a later call: same message and cause, this call's stack. */
  NativeLibraryUnavailableError again() {
    return new NativeLibraryUnavailableError(platform, lookedFor, reason, carried, getCause());
  }

  /** This JVM's platform as the jar names them, with os.name and os.arch. */
  public String platform() {
    return platform;
  }

  /** The file, or the places, looked for. */
  public String lookedFor() {
    return lookedFor;
  }

  /** The loader's own reason. */
  public String reason() {
    return reason;
  }

  /** The platforms this jar carries a native library for ({@code linux-x86_64}, ...). */
  public List<String> carried() {
    return carried;
  }
}
