package io.nativedir.lucene;

import io.nativedir.FileUse;
import io.nativedir.IOFlag;
import io.nativedir.MappedFile;
import io.nativedir.NativeDirectory;
import io.nativedir.NativeInput;
import io.nativedir.NativeOutput;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.lucene.store.BufferedIndexInput;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexInput;
import org.apache.lucene.store.IndexOutput;
import org.apache.lucene.store.LockFactory;

/**
 * A Lucene {@link FSDirectory} on nativedir, for Lucene 8 (built and tested against 8.8.1).
 *
 * <p>How each file is read or written is the library's policy (nd_policy_input, nd_policy_output),
 * from the IOContext: searches read mapped, with random advice for the files read a block at a
 * time (a compound file's sub-files get their own names' advice on their ranges), read-once files
 * (checksums, commit points) buffered and sequential, merges estimated at or above the direct-I/O
 * threshold read and write with direct I/O so they leave the searches' page cache alone, smaller
 * merges mapped and sequential. A byte read is a load from the mapping or from the input's buffer;
 * outputs keep the library's running CRC-32. {@link #sync} fsyncs through the writing handle while
 * the output is open (by name once it is closed), {@link #syncMetaData} fsyncs the directory,
 * {@link #rename} is an atomic replace, and {@link NativeLockFactory} (the default) locks with
 * nd_lock.
 *
 * <p>The path's file system: the default one, or one wrapping it over the same folder (Lucene's
 * test file systems are such). On a wrapping file system deletes go through its provider, so that
 * whatever it decides about a delete (a virus scanner refusing it, Windows semantics) holds, and a
 * refused delete is retried later as FSDirectory's pending deletes are; everything else goes
 * through the library.
 */
public class NativeFSDirectory extends FSDirectory {
  private final NativeDirectory nd;
  private final boolean wrapped; // the path's file system is not the default one
  private final long minBytesDirect;
  private final Set<String> pendingDeletes = ConcurrentHashMap.newKeySet();
  private final AtomicInteger opsSinceLastDelete = new AtomicInteger();
  private final AtomicLong nextTempFileCounter = new AtomicLong();
  // outputs still open, by name: sync goes through their writing handles
  private final ConcurrentHashMap<String, NativeIndexOutput> open = new ConcurrentHashMap<>();

  /** A directory at {@code path} (created if missing) locked by {@link NativeLockFactory}. */
  public NativeFSDirectory(Path path) throws IOException {
    this(path, NativeLockFactory.INSTANCE);
  }

  /**
   * A directory at {@code path} (created if missing) locked by {@code lockFactory}: the
   * constructor Lucene's {@code FSDirectory} subclasses have, which its test framework's {@code
   * -Dtests.directory=} calls.
   */
  public NativeFSDirectory(Path path, LockFactory lockFactory) throws IOException {
    this(path, lockFactory, -1);
  }

  /**
   * As {@link #NativeFSDirectory(Path, LockFactory)}, with merges estimated at or above {@code
   * minBytesDirect} bytes reading and writing with direct I/O (-1: the library's default,
   * ND_POLICY_MIN_DIRECT; 0: every merge; {@code Long.MAX_VALUE}: none).
   */
  public NativeFSDirectory(Path path, LockFactory lockFactory, long minBytesDirect)
      throws IOException {
    super(path, lockFactory);
    if (minBytesDirect < -1) {
      throw new IllegalArgumentException("minBytesDirect " + minBytesDirect + ": >= 0, or -1");
    }
    this.minBytesDirect = minBytesDirect;
    this.wrapped = directory.getFileSystem() != FileSystems.getDefault();
    this.nd = NativeDirectory.open(localPath(directory));
  }

  /**
   * The default file system's path of the folder {@code dir} names: {@code dir} itself, or, on a
   * file system wrapping the default one, the same folder (its file key checked), else
   * IllegalArgumentException: the library reads only local folders.
   */
  static Path localPath(Path dir) throws IOException {
    if (dir.getFileSystem() == FileSystems.getDefault()) {
      return dir;
    }
    Path local = Paths.get(dir.toAbsolutePath().toString());
    Object key = Files.readAttributes(dir, BasicFileAttributes.class).fileKey();
    Object localKey = Files.exists(local)
        ? Files.readAttributes(local, BasicFileAttributes.class).fileKey()
        : null;
    if (key == null || !key.equals(localKey)) {
      throw new IllegalArgumentException("nativedir reads folders of the local file system; "
          + dir.toUri() + " is not one");
    }
    return local;
  }

  /** The library's handle on the folder (closed with this directory). */
  public NativeDirectory nativeDirectory() {
    ensureOpen();
    return nd;
  }

  // ---- what a file is for, and the library's flags for it ----

  private long inputFlags(String name, IOContext context) throws IOException {
    return nd.policyInput(name, Lucene8.use(context), Lucene8.mergeBytes(context), minBytesDirect);
  }

  /**
   * A compound file's sub-file, sliced from the input the directory opened: the advice its own
   * name calls for on its range of the mapping, when the compound file's context chose none.
   */
  void adviseSlice(MappedIndexInput.Source src, String sliceName, long offset, long length)
      throws IOException {
    if (!Lucene8.isCompoundData(src.file.name())
        || (src.flags & IOFlag.bitsOf(IOFlag.RANDOM, IOFlag.SEQUENTIAL, IOFlag.MERGE)) != 0) {
      return;
    }
    long flags;
    try {
      flags = nd.policyInput(sliceName, src.use, src.mergeBytes, minBytesDirect);
    } catch (IllegalArgumentException notAName) {
      return; // a description, not a sub-file's name: no advice of its own
    }
    if (IOFlag.RANDOM.in(flags)) {
      src.file.advise(offset, length, IOFlag.RANDOM);
    } else if (IOFlag.SEQUENTIAL.in(flags)) {
      src.file.advise(offset, length, IOFlag.SEQUENTIAL);
    }
  }

  // ---- reading ----

  @Override
  public IndexInput openInput(String name, IOContext context) throws IOException {
    ensureOpen();
    ensureCanRead(name);
    long flags = inputFlags(name, context);
    String desc = "NativeIndexInput(path=\"" + directory.resolve(name) + "\")";
    if (IOFlag.MMAP.in(flags)) {
      MappedFile file = nd.openMapped(name, flags);
      try {
        return MappedIndexInput.open(desc, new MappedIndexInput.Source(file, this, flags,
            Lucene8.use(context), Lucene8.mergeBytes(context)));
      } catch (IOException | RuntimeException e) {
        file.close();
        throw e;
      }
    }
    NativeInput in = nd.openInput(name, flags);
    try {
      return new BufferedNativeIndexInput(desc, new BufferedNativeIndexInput.Source(in), 0,
          in.length(), Math.max(in.bufferSize(), BufferedIndexInput.MIN_BUFFER_SIZE), true);
    } catch (IOException | RuntimeException e) {
      in.close();
      throw e;
    }
  }

  @Override
  protected void ensureCanRead(String name) throws IOException {
    if (pendingDeletes.contains(name)) {
      throw new NoSuchFileException("file \"" + name + "\" is pending delete and cannot be opened for read");
    }
  }

  @Override
  public String[] listAll() throws IOException {
    ensureOpen();
    String[] names = nd.list();
    if (!pendingDeletes.isEmpty()) {
      List<String> kept = new ArrayList<>(names.length);
      for (String n : names) {
        if (!pendingDeletes.contains(n)) {
          kept.add(n);
        }
      }
      names = kept.toArray(new String[0]);
    }
    Arrays.sort(names); // Directory.listAll's order is String's (UTF-16), the library's UTF-8's
    return names;
  }

  @Override
  public long fileLength(String name) throws IOException {
    ensureOpen();
    if (pendingDeletes.contains(name)) {
      throw new NoSuchFileException("file \"" + name + "\" is pending delete");
    }
    return nd.length(name);
  }

  // ---- writing ----

  @Override
  public IndexOutput createOutput(String name, IOContext context) throws IOException {
    ensureOpen();
    maybeDeletePendingFiles();
    // a name pending delete comes back to life: try its delete once more first
    if (pendingDeletes.remove(name)) {
      privateDeleteFile(name, true);
      pendingDeletes.remove(name);
    }
    return create(name, context);
  }

  private NativeIndexOutput create(String name, IOContext context) throws IOException {
    long flags = nd.policyOutput(name, Lucene8.use(context), Lucene8.mergeBytes(context),
        minBytesDirect);
    NativeOutput o = nd.createOutput(name, flags); // FileAlreadyExistsException if it exists
    NativeIndexOutput out = new NativeIndexOutput(this,
        "NativeIndexOutput(path=\"" + directory.resolve(name) + "\")", name, o);
    open.put(name, out);
    return out;
  }

  @Override
  public IndexOutput createTempOutput(String prefix, String suffix, IOContext context)
      throws IOException {
    ensureOpen();
    maybeDeletePendingFiles();
    while (true) {
      String name = getTempFileName(prefix, suffix, nextTempFileCounter.getAndIncrement());
      if (pendingDeletes.contains(name)) {
        continue;
      }
      try {
        return create(name, context);
      } catch (FileAlreadyExistsException taken) {
        // the next counter value
      }
    }
  }

  void outputClosed(NativeIndexOutput out) {
    open.remove(out.getName(), out);
  }

  // ---- durability ----

  /**
   * Makes the named files durable: through the writing handle of an output still open (with the
   * bytes it has not handed over yet), by name (nd_fsync) once it is closed. The names survive a
   * crash once {@link #syncMetaData} has run.
   */
  @Override
  public void sync(Collection<String> names) throws IOException {
    ensureOpen();
    for (String name : names) {
      fsync(name);
    }
    maybeDeletePendingFiles();
  }

  @Override
  protected void fsync(String name) throws IOException {
    NativeIndexOutput out = open.get(name);
    if (out == null || !out.syncIfOpen()) {
      nd.fsync(name);
    }
  }

  /** Makes creates, renames and deletes in the folder durable (nd_sync_dir). */
  @Override
  public void syncMetaData() throws IOException {
    ensureOpen();
    nd.syncDir();
    maybeDeletePendingFiles();
  }

  /** Renames atomically, replacing {@code dest} (nd_rename). */
  @Override
  public void rename(String source, String dest) throws IOException {
    ensureOpen();
    if (pendingDeletes.contains(source)) {
      throw new NoSuchFileException("file \"" + source + "\" is pending delete and cannot be moved");
    }
    maybeDeletePendingFiles();
    if (pendingDeletes.remove(dest)) {
      privateDeleteFile(dest, true);
      pendingDeletes.remove(dest);
    }
    nd.rename(source, dest);
  }

  // ---- deleting: FSDirectory's pending-delete contract ----

  @Override
  public void deleteFile(String name) throws IOException {
    ensureOpen();
    if (pendingDeletes.contains(name)) {
      throw new NoSuchFileException("file \"" + name + "\" is already pending delete");
    }
    privateDeleteFile(name, false);
    maybeDeletePendingFiles();
  }

  private void privateDeleteFile(String name, boolean isPendingDelete) throws IOException {
    try {
      if (wrapped) {
        Files.delete(directory.resolve(name)); // the wrapping provider decides
      } else {
        nd.delete(name);
      }
      pendingDeletes.remove(name);
    } catch (NoSuchFileException | FileNotFoundException e) {
      pendingDeletes.remove(name);
      throw e;
    } catch (IOException e) {
      // refused for now (a scanner holding the file, a share's lock): retried later, and hidden
      // from listAll, fileLength and openInput meanwhile
      pendingDeletes.add(name);
    }
  }

  @Override
  public synchronized void deletePendingFiles() throws IOException {
    for (String name : new HashSet<>(pendingDeletes)) {
      privateDeleteFile(name, true);
    }
  }

  private void maybeDeletePendingFiles() throws IOException {
    if (!pendingDeletes.isEmpty()) {
      // one retry round per as many operations as files are pending: linear, not quadratic
      int count = opsSinceLastDelete.incrementAndGet();
      if (count >= pendingDeletes.size()) {
        opsSinceLastDelete.addAndGet(-count);
        deletePendingFiles();
      }
    }
  }

  @Override
  public synchronized Set<String> getPendingDeletions() throws IOException {
    deletePendingFiles();
    return pendingDeletes.isEmpty() ? Collections.emptySet()
        : Collections.unmodifiableSet(new HashSet<>(pendingDeletes));
  }

  /** Closes the directory: pending deletes are tried once more, then the library's handle. */
  @Override
  public synchronized void close() throws IOException {
    if (!isOpen) {
      return;
    }
    isOpen = false;
    try {
      deletePendingFiles();
    } finally {
      nd.close();
    }
  }
}
