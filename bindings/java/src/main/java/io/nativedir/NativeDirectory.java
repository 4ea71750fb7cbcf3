package io.nativedir;

import io.nativedir.jni.nativedir;
import java.io.Closeable;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * An open directory: every name is one path component inside it (an invalid one gets
 * IllegalArgumentException), symbolic links are never followed, and nothing outside it is ever
 * touched. Thread-safe.
 *
 * <p>Exceptions: {@link java.nio.file.NoSuchFileException}, {@link
 * java.nio.file.FileAlreadyExistsException}, {@link java.nio.file.AccessDeniedException}, {@link
 * java.io.EOFException}, {@link IllegalArgumentException} for invalid names and arguments, {@link
 * NativeIOException} (with the status and OS error) for the rest; each message holds the library's
 * own, with the call, the file and the OS's reason. After {@link #close()}, every method but
 * {@code close} throws {@link IllegalStateException}; inputs, outputs and locks opened from it keep
 * working until they are closed.
 */
public final class NativeDirectory implements Closeable {
  private static final VarHandle HANDLE;

  static {
    try {
      HANDLE = MethodHandles.lookup().findVarHandle(NativeDirectory.class, "handle", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private volatile long handle;
  private final Path path;

  private NativeDirectory(long handle, Path path) {
    this.handle = handle;
    this.path = path;
  }

  /** Opens an existing directory. */
  public static NativeDirectory open(Path path) throws IOException {
    return open(path, false);
  }

  /** Opens a directory, creating it and its parents first when {@code create} is set. */
  public static NativeDirectory open(Path path, boolean create) throws IOException {
    if (path.getFileSystem() != java.nio.file.FileSystems.getDefault()) {
      throw new IllegalArgumentException("not on the default file system: " + path.toUri());
    }
    NativeLoader.load(); // NativeLibraryUnavailableError, every time, where no library loads
    long flags = create ? nativedir.ND_DIR_CREATE : 0;
    return new NativeDirectory(nativedir.nd_open_dir(path.toString(), flags), path);
  }

  /** The library's version, "MAJOR.MINOR.PATCH". */
  public static String libraryVersion() {
    NativeLoader.load();
    return nativedir.nd_version();
  }

  private long handle() {
    long h = handle;
    if (h == 0) {
      throw NativeErrors.closed(toString());
    }
    return h;
  }

  /** The path it was opened with. */
  public Path path() {
    return path;
  }

  /** The names of its regular files, sorted by their UTF-8 bytes. */
  public String[] list() throws IOException {
    long h = handle();
    byte[] names = new byte[0];
    long need;
    // the directory can grow between the two calls: ask again with what it says it needs
    while ((need = nativedir.nd_list(h, names)) > names.length) {
      if (need > Integer.MAX_VALUE - 8) {
        throw new NativeIOException("nd_list: " + need + " bytes of names", nativedir.ND_E_NO_MEMORY, 0);
      }
      names = new byte[(int) need];
    }
    List<String> out = new ArrayList<>();
    int start = 0;
    for (int i = 0; i < need; i++) {
      if (names[i] == 0) {
        out.add(new String(names, start, i - start, StandardCharsets.UTF_8));
        start = i + 1;
      }
    }
    return out.toArray(new String[0]);
  }

  /** Whether {@code name} is a regular file (a symbolic link is not). */
  public boolean exists(String name) throws IOException {
    return nativedir.nd_file_exists(handle(), name) == 1;
  }

  /** The length of {@code name} in bytes. */
  public long length(String name) throws IOException {
    return nativedir.nd_file_length(handle(), name);
  }

  /** Deletes {@code name}. */
  public void delete(String name) throws IOException {
    nativedir.nd_delete_file(handle(), name);
  }

  /** Renames {@code from} to {@code to}, atomically replacing {@code to}. */
  public void rename(String from, String to) throws IOException {
    nativedir.nd_rename(handle(), from, to);
  }

  /**
   * Makes the bytes of {@code name} durable. Prefer {@link NativeOutput#sync()} through the
   * writing output: it also covers bytes not yet handed to the OS.
   */
  public void fsync(String name) throws IOException {
    nativedir.nd_fsync(handle(), name);
  }

  /** Makes creates, renames and deletes in this directory durable. */
  public void syncDir() throws IOException {
    nativedir.nd_sync_dir(handle());
  }

  /**
   * Takes the exclusive lock {@code name} (the file is created if missing and left in place);
   * fails with a NativeIOException of status ND_E_LOCKED if another holder has it.
   */
  public NativeLock lock(String name) throws IOException {
    return new NativeLock(nativedir.nd_lock(handle(), name), name);
  }

  /** Opens {@code name} for reading. */
  public NativeInput openInput(String name, IOFlag... flags) throws IOException {
    return NativeInput.open(handle(), name, IOFlag.bits(flags));
  }

  /**
   * Opens {@code name} for reading with ND_IO_* bits as {@link #policyInput} returns them (bits
   * this binding has no {@link IOFlag} for reach the library unchanged).
   */
  public NativeInput openInput(String name, long flags) throws IOException {
    return NativeInput.open(handle(), name, flags);
  }

  /**
   * Opens {@code name} mapped ({@code flags} plus ND_IO_MMAP) as a {@link MappedFile}: views of
   * the mapping that, unlike {@link NativeInput#mappedBuffer()}, do not keep the file past {@link
   * MappedFile#close()} (see there).
   */
  public MappedFile openMapped(String name, long flags) throws IOException {
    return MappedFile.open(handle(), name, flags | IOFlag.MMAP.bits());
  }

  /** Creates {@code name} for writing (FileAlreadyExistsException unless {@link IOFlag#OVERWRITE}). */
  public NativeOutput createOutput(String name, IOFlag... flags) throws IOException {
    return NativeOutput.create(handle(), name, IOFlag.bits(flags));
  }

  /** Creates {@code name} for writing with ND_IO_* bits as {@link #policyOutput} returns them. */
  public NativeOutput createOutput(String name, long flags) throws IOException {
    return NativeOutput.create(handle(), name, flags);
  }

  /**
   * The library's read policy (nd_policy_input): the ND_IO_* bits to open {@code name} with for
   * {@code use}, for {@link #openInput(String, long)} or {@link #openMapped}. {@code mergeBytes} is
   * a merge's estimated size (ignored for other uses); {@code minDirect} the size from which a
   * merge bypasses the page cache, or -1 for the library's default. {@code name} may be a sub-file
   * of a compound file: its advice is the sub-file's. One rule for every binding's directory, so
   * a change of it in the library reaches Java with no Java change. Experimental.
   */
  public long policyInput(String name, FileUse use, long mergeBytes, long minDirect)
      throws IOException {
    return nativedir.nd_policy_input(handle(), name, use.value(), mergeBytes, minDirect);
  }

  /** The library's write policy (nd_policy_output): the ND_IO_* bits to create {@code name} with. */
  public long policyOutput(String name, FileUse use, long mergeBytes, long minDirect)
      throws IOException {
    return nativedir.nd_policy_output(handle(), name, use.value(), mergeBytes, minDirect);
  }

  /** Closes the directory handle. Idempotent. */
  @Override
  public void close() throws IOException {
    long h = (long) HANDLE.getAndSet(this, 0L);
    if (h != 0) {
      nativedir.nd_close(h);
    }
  }

  @Override
  public String toString() {
    return "NativeDirectory(" + path + (handle == 0 ? ", closed" : "") + ")";
  }
}
