package io.nativedir;

import static org.junit.Assert.*;

import io.nativedir.jni.nativedir;
import io.nativedir.jni.nativedirConstants;
import java.io.EOFException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.junit.After;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * The generated layer itself (io.nativedir.jni), below the checks of the Java classes: the
 * typemaps must hold on their own, since the generated classes are public.
 */
public class GlueTest {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();
  private long dir;
  private long in;
  private byte[] data;

  @Before
  public void open() throws Exception {
    Path root = tmp.getRoot().toPath();
    data = TestFiles.write(root, "f", 100, 1);
    dir = nativedir.nd_open_dir(root.toString(), 0);
    in = nativedir.nd_open_input(dir, "f", 0);
  }

  @After
  public void close() throws Exception {
    nativedir.nd_close(in);
    nativedir.nd_close(dir);
  }

  @Test
  public void outParametersComeBackAsTheReturnValue() throws Exception {
    assertTrue(dir > 0);
    assertTrue(in > 0);
    assertEquals(100, nativedir.nd_input_length(in));
    assertEquals(100, nativedir.nd_file_length(dir, "f"));
    assertEquals(nativedirConstants.ND_ABI_VERSION, nativedir.nd_abi_version());
  }

  @Test
  public void regionsAreCheckedInC() throws Exception {
    byte[] arr = new byte[4];
    assertThrows(IndexOutOfBoundsException.class, () -> nativedir.nd_read_into_array(in, 0, arr, 2, 3));
    assertThrows(IndexOutOfBoundsException.class, () -> nativedir.nd_read_into_array(in, 0, arr, -1, 1));
    assertThrows(IndexOutOfBoundsException.class, () -> nativedir.nd_read_into_array(in, 0, arr, 0, -1));
    ByteBuffer direct = ByteBuffer.allocateDirect(4);
    assertThrows(IndexOutOfBoundsException.class,
        () -> nativedir.nd_read_into_buffer(in, 0, direct, Integer.MAX_VALUE, 1));
    assertEquals(3, nativedir.nd_read_into_array(in, 5, arr, 1, 3));
    assertEquals(data[5], arr[1]);
    assertEquals(data[7], arr[3]);
    assertEquals(4, nativedir.nd_read_into_buffer(in, 96, direct, 0, 4));
    assertEquals(data[99], direct.get(3));
  }

  @Test
  public void buffersAndArraysAreValidatedBeforeUse() {
    assertThrows(IllegalArgumentException.class,
        () -> nativedir.nd_read_into_buffer(in, 0, ByteBuffer.allocate(4), 0, 4));
    assertThrows(IllegalArgumentException.class, () -> nativedir.nd_read_into_buffer(in, 0, null, 0, 4));
    assertThrows(NullPointerException.class, () -> nativedir.nd_read_into_array(in, 0, null, 0, 4));
    assertThrows(EOFException.class, () -> nativedir.nd_read_into_array(in, 97, new byte[4], 0, 4));
  }

  @Test
  public void staleHandlesThrowIllegalState() throws Exception {
    long clone = nativedir.nd_input_clone(in);
    nativedir.nd_close(clone);
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> nativedir.nd_close(clone));
    assertTrue(e.getMessage(), e.getMessage().contains("ND_E_BAD_HANDLE"));
    assertThrows(IllegalStateException.class, () -> nativedir.nd_input_length(clone));
    assertThrows(IllegalStateException.class, () -> nativedir.nd_input_length(12345));
    assertThrows(IllegalStateException.class, () -> nativedir.nd_input_length(dir)); // wrong kind
  }

  @Test
  public void namesAreStrictUtf8() throws Exception {
    assertThrows(IllegalArgumentException.class, () -> nativedir.nd_file_exists(dir, "a\0b"));
    assertThrows(IllegalArgumentException.class, () -> nativedir.nd_file_exists(dir, "\uDC00"));
    assertThrows(NullPointerException.class, () -> nativedir.nd_file_exists(dir, null));
    assertEquals(0, nativedir.nd_file_exists(dir, "\u00e9\uD83D\uDE00"));
    assertThrows(NoSuchFileException.class, () -> nativedir.nd_open_input(dir, "\u00e9", 0));
  }

  @Test
  public void listWritesNothingWhenTheBufferIsShort() throws Exception {
    byte[] small = new byte[1];
    assertEquals(2, nativedir.nd_list(dir, small)); // "f\0"
    assertEquals(0, small[0]);
    byte[] exact = new byte[2];
    assertEquals(2, nativedir.nd_list(dir, exact));
    assertEquals("f\0", new String(exact, StandardCharsets.UTF_8));
    assertEquals(2, nativedir.nd_list(dir, null));
  }

  @Test
  public void mappedWindowIsADirectBufferOverTheMapping() throws Exception {
    long m = nativedir.nd_open_input(dir, "f", nativedirConstants.ND_IO_MMAP);
    try {
      ByteBuffer w = nativedir.nd_input_window(m, 10);
      assertTrue(w.isDirect());
      assertEquals(90, w.capacity());
      assertEquals(data[10], w.get(0));
      assertThrows(EOFException.class, () -> nativedir.nd_input_window(m, 100));
    } finally {
      nativedir.nd_close(m);
    }
  }
}
