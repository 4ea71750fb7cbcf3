package io.nativedir;

import static io.nativedir.jni.nativedirConstants.*;
import static org.junit.Assert.*;

import java.io.EOFException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import org.junit.Test;

/**
 * The status-to-exception table for every status, including the ones a test cannot provoke on
 * demand (a full disk, an I/O error): the glue hands each status to this same method.
 */
public class NativeErrorsTest {
  private static Throwable of(int status) {
    return NativeErrors.toThrowable(status, "nd_x: 'f' in '/d': \u00e9 reason".getBytes(StandardCharsets.UTF_8), 2);
  }

  @Test
  public void everyStatusHasItsJavaException() {
    assertTrue(of(ND_E_NOT_FOUND) instanceof NoSuchFileException);
    assertTrue(of(ND_E_EXISTS) instanceof FileAlreadyExistsException);
    assertTrue(of(ND_E_ACCESS) instanceof AccessDeniedException);
    assertTrue(of(ND_E_EOF) instanceof EOFException);
    assertTrue(of(ND_E_INVALID_ARGUMENT) instanceof IllegalArgumentException);
    assertTrue(of(ND_E_INVALID_NAME) instanceof IllegalArgumentException);
    assertTrue(of(ND_E_BAD_HANDLE) instanceof IllegalStateException);
    assertTrue(of(NativeErrors.RANGE) instanceof IndexOutOfBoundsException);
    int[] plain = {ND_E_NO_SPACE, ND_E_IO, ND_E_NOT_SUPPORTED, ND_E_LOCKED, ND_E_NO_MEMORY,
                   ND_E_TOO_MANY_OPEN, ND_E_BUSY, -99};
    for (int status : plain) {
      Throwable t = of(status);
      assertEquals(NativeIOException.class, t.getClass());
      assertEquals(status, ((NativeIOException) t).status());
      assertEquals(2, ((NativeIOException) t).osError());
    }
    assertEquals("ND_E_NO_SPACE", ((NativeIOException) of(ND_E_NO_SPACE)).statusName());
  }

  @Test
  public void messagesKeepTheNativeTextStatusAndOsError() {
    String m = of(ND_E_NOT_FOUND).getMessage();
    assertTrue(m, m.startsWith("nd_x: 'f' in '/d': \u00e9 reason"));
    assertTrue(m, m.contains("ND_E_NOT_FOUND"));
    assertTrue(m, m.contains("OS error 2"));
  }
}
