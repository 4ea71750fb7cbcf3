package io.nativedir;

import static org.junit.Assert.*;

import io.nativedir.jni.nativedirConstants;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.junit.After;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

public class NativeDirectoryTest {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();
  private Path root;
  private NativeDirectory dir;

  @Before
  public void open() throws IOException {
    root = tmp.getRoot().toPath();
    dir = NativeDirectory.open(root);
  }

  @After
  public void close() throws IOException {
    dir.close();
  }

  @Test
  public void versionIsSemantic() {
    assertTrue(NativeDirectory.libraryVersion().matches("\\d+\\.\\d+\\.\\d+"));
  }

  @Test
  public void openMissingDirectoryThrowsNoSuchFile() {
    Path missing = root.resolve("missing");
    assertThrows(NoSuchFileException.class, () -> NativeDirectory.open(missing));
  }

  @Test
  public void openWithCreateMakesParents() throws IOException {
    Path deep = root.resolve("a").resolve("b");
    try (NativeDirectory d = NativeDirectory.open(deep, true)) {
      assertTrue(Files.isDirectory(deep));
      assertEquals(deep, d.path());
      assertEquals(0, d.list().length);
    }
  }

  @Test
  public void listIsSortedAndHoldsOnlyRegularFiles() throws IOException {
    TestFiles.write(root, "b", 1, 1);
    TestFiles.write(root, "a", 2, 2);
    TestFiles.write(root, "\u00e9t\u00e9\uD83D\uDE00", 3, 3); // non-ASCII, beyond the BMP
    Files.createDirectory(root.resolve("sub"));
    Files.createSymbolicLink(root.resolve("link"), root.resolve("a"));
    assertArrayEquals(new String[] {"a", "b", "\u00e9t\u00e9\uD83D\uDE00"}, dir.list());
  }

  @Test
  public void listGrowsWithTheDirectory() throws IOException {
    for (int i = 0; i < 300; i++) {
      TestFiles.write(root, String.format("file-with-a-long-name-%04d", i), 0, i);
    }
    String[] names = dir.list();
    assertEquals(300, names.length);
    assertEquals("file-with-a-long-name-0299", names[299]);
  }

  @Test
  public void existsLengthDeleteRename() throws IOException {
    TestFiles.write(root, "f", 123, 7);
    assertTrue(dir.exists("f"));
    assertFalse(dir.exists("g"));
    assertEquals(123, dir.length("f"));
    dir.rename("f", "g");
    assertFalse(dir.exists("f"));
    assertEquals(123, dir.length("g"));
    dir.delete("g");
    assertFalse(Files.exists(root.resolve("g")));
  }

  @Test
  public void renameReplacesTheTarget() throws IOException {
    byte[] a = TestFiles.write(root, "a", 10, 1);
    TestFiles.write(root, "b", 20, 2);
    dir.rename("a", "b");
    assertArrayEquals(a, Files.readAllBytes(root.resolve("b")));
    assertArrayEquals(new String[] {"b"}, dir.list());
  }

  @Test
  public void existsIsFalseForSymlinksAndDirectories() throws IOException {
    TestFiles.write(root, "target", 5, 1);
    Files.createSymbolicLink(root.resolve("link"), root.resolve("target"));
    Files.createDirectory(root.resolve("sub"));
    assertFalse(dir.exists("link"));
    assertFalse(dir.exists("sub"));
  }

  @Test
  public void missingFilesThrowNoSuchFile() {
    assertThrows(NoSuchFileException.class, () -> dir.length("nope"));
    assertThrows(NoSuchFileException.class, () -> dir.delete("nope"));
    assertThrows(NoSuchFileException.class, () -> dir.rename("nope", "other"));
    assertThrows(NoSuchFileException.class, () -> dir.fsync("nope"));
    NoSuchFileException e = assertThrows(NoSuchFileException.class, () -> dir.openInput("nope"));
    // the library's own message: the call, the name and the OS's reason
    assertTrue(e.getMessage(), e.getMessage().contains("nope"));
    assertTrue(e.getMessage(), e.getMessage().contains("ND_E_NOT_FOUND"));
  }

  @Test
  public void createExistingThrowsFileAlreadyExists() throws IOException {
    TestFiles.write(root, "f", 1, 1);
    assertThrows(FileAlreadyExistsException.class, () -> dir.createOutput("f"));
    try (NativeOutput out = dir.createOutput("f", IOFlag.OVERWRITE)) {
      out.write(new byte[] {9, 8});
    }
    assertEquals(2, dir.length("f"));
  }

  @Test
  public void symlinkIsNeverFollowedAndDeniesAccess() throws IOException {
    Path outside = tmp.newFolder("outside").toPath();
    TestFiles.write(outside, "secret", 16, 5);
    Files.createSymbolicLink(root.resolve("link"), outside.resolve("secret"));
    assertThrows(AccessDeniedException.class, () -> dir.openInput("link"));
    assertThrows(AccessDeniedException.class, () -> dir.length("link"));
  }

  @Test
  public void directoryAsInputDeniesAccess() throws IOException {
    Files.createDirectory(root.resolve("sub"));
    assertThrows(AccessDeniedException.class, () -> dir.openInput("sub"));
  }

  @Test
  public void invalidNamesThrowIllegalArgument() {
    String[] bad = {"", ".", "..", "a/b", "a\\b", "nul\0byte", "lone\uD800surrogate",
                    "x".repeat(256)};
    for (String name : bad) {
      assertThrows(name, IllegalArgumentException.class, () -> dir.openInput(name));
      assertThrows(name, IllegalArgumentException.class, () -> dir.createOutput(name));
      assertThrows(name, IllegalArgumentException.class, () -> dir.exists(name));
    }
    assertThrows(NullPointerException.class, () -> dir.exists(null));
  }

  @Test
  public void fsyncAndSyncDirSucceed() throws IOException {
    TestFiles.write(root, "f", 100, 1);
    dir.fsync("f");
    dir.syncDir();
    assertEquals(100, dir.length("f"));
  }

  @Test
  public void lockExcludesUntilClosed() throws IOException {
    NativeLock lock = dir.lock("write.lock");
    assertTrue(lock.isHeld());
    NativeIOException held = assertThrows(NativeIOException.class, () -> dir.lock("write.lock"));
    assertEquals(nativedirConstants.ND_E_LOCKED, held.status());
    assertEquals("ND_E_LOCKED", held.statusName());
    // another directory handle on the same path is excluded too
    try (NativeDirectory other = NativeDirectory.open(root)) {
      assertThrows(NativeIOException.class, () -> other.lock("write.lock"));
    }
    lock.close();
    assertFalse(lock.isHeld());
    lock.close(); // idempotent
    try (NativeLock again = dir.lock("write.lock")) {
      assertTrue(again.isHeld());
    }
    assertTrue(dir.exists("write.lock"));
  }

  @Test
  public void useAfterCloseThrowsIllegalState() throws IOException {
    TestFiles.write(root, "f", 1, 1);
    NativeDirectory d = NativeDirectory.open(root);
    d.close();
    d.close(); // idempotent
    assertThrows(IllegalStateException.class, d::list);
    assertThrows(IllegalStateException.class, () -> d.exists("f"));
    assertThrows(IllegalStateException.class, () -> d.length("f"));
    assertThrows(IllegalStateException.class, () -> d.delete("f"));
    assertThrows(IllegalStateException.class, () -> d.rename("f", "g"));
    assertThrows(IllegalStateException.class, () -> d.fsync("f"));
    assertThrows(IllegalStateException.class, d::syncDir);
    assertThrows(IllegalStateException.class, () -> d.lock("l"));
    assertThrows(IllegalStateException.class, () -> d.openInput("f"));
    assertThrows(IllegalStateException.class, () -> d.createOutput("g"));
    assertTrue(d.toString().contains("closed"));
  }

  @Test
  public void inputsOutliveTheirDirectory() throws IOException {
    byte[] data = TestFiles.write(root, "f", 64, 3);
    NativeDirectory d = NativeDirectory.open(root);
    NativeInput in = d.openInput("f");
    NativeOutput out = d.createOutput("g");
    d.close();
    byte[] got = new byte[64];
    in.read(0, got);
    assertArrayEquals(data, got);
    out.write(data);
    out.close();
    in.close();
    assertArrayEquals(data, Files.readAllBytes(root.resolve("g")));
  }
}
