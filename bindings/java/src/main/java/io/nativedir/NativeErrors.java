package io.nativedir;

import static io.nativedir.jni.nativedirConstants.*;

import io.nativedir.jni.nativedir;
import java.io.EOFException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;

/**
 * Turns a negative nativedir status into the exception a Java user expects. Called by the JNI
 * glue (see bindings/swig/java.i and bindings/java/src/main/c/nd_jni.c) inside the failing native call, with
 * that call's own message and OS error, so they can never belong to another call.
 */
final class NativeErrors {
  /** The glue's private code for a buffer region outside its array or buffer. */
  static final int RANGE = -1000;

  private NativeErrors() {}

  static Throwable toThrowable(int status, byte[] message, int osError) {
    String text = new String(message, StandardCharsets.UTF_8);
    if (status == RANGE) {
      return new IndexOutOfBoundsException(text);
    }
    String full = text + " [" + nativedir.nd_status_name(status)
        + (osError != 0 ? ", OS error " + osError : "") + "]";
    switch (status) {
      case ND_E_NOT_FOUND:
        return new NoSuchFileException(null, null, full);
      case ND_E_EXISTS:
        return new FileAlreadyExistsException(null, null, full);
      case ND_E_ACCESS:
        return new AccessDeniedException(null, null, full);
      case ND_E_EOF:
        return new EOFException(full);
      case ND_E_INVALID_ARGUMENT:
      case ND_E_INVALID_NAME:
        return new IllegalArgumentException(full);
      case ND_E_BAD_HANDLE:
        // the Java objects check for close first; this is a close racing with a call
        return new IllegalStateException("closed: " + full);
      default:
        return new NativeIOException(full, status, osError);
    }
  }

  static IllegalStateException closed(String what) {
    return new IllegalStateException(what + " is closed");
  }
}
