package io.nativedir;

import io.nativedir.jni.nativedir;
import java.io.IOException;

/**
 * An I/O failure with no more specific Java exception (no space, a lock held elsewhere, an I/O
 * error, direct I/O refused, too many open files...). It carries the nativedir status and the
 * operating system's error code.
 */
public class NativeIOException extends IOException {
  private static final long serialVersionUID = 1L;
  private final int status;
  private final int osError;

  public NativeIOException(String message, int status, int osError) {
    super(message);
    this.status = status;
    this.osError = osError;
  }

  /** The ND_E_* status (see {@code io.nativedir.jni.nativedirConstants}). */
  public int status() {
    return status;
  }

  /** Its name, e.g. "ND_E_LOCKED". */
  public String statusName() {
    return nativedir.nd_status_name(status);
  }

  /** errno (or GetLastError() on Windows) of the failure, 0 if the OS reported none. */
  public int osError() {
    return osError;
  }
}
