package io.nativedir;

import static org.junit.Assert.*;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.CRC32;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/** Threads reading one file through clones (cursors) and one shared handle (positional). */
public class ConcurrentReadsTest {
  private static final int SIZE = 1 << 20;
  private static final int THREADS = 8;

  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @Test
  public void buffered() throws Exception {
    run();
  }

  @Test
  public void mapped() throws Exception {
    run(IOFlag.MMAP);
  }

  private void run(IOFlag... flags) throws Exception {
    Path root = tmp.getRoot().toPath();
    byte[] data = TestFiles.write(root, "f", SIZE, 11);
    CRC32 expected = new CRC32();
    expected.update(data);
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    try (NativeDirectory dir = NativeDirectory.open(root);
         NativeInput in = dir.openInput("f", flags)) {
      List<Future<Long>> cursors = new ArrayList<>();
      List<Future<Boolean>> positional = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        NativeInput clone = in.clone();
        cursors.add(pool.submit(() -> {
          try (NativeInput c = clone) {
            CRC32 crc = new CRC32();
            for (int i = 0; i < SIZE; i++) {
              crc.update(c.readByte());
            }
            return crc.getValue();
          }
        }));
        long seed = t;
        positional.add(pool.submit(() -> {
          Random r = new Random(seed);
          ByteBuffer dst = ByteBuffer.allocateDirect(512);
          byte[] arr = new byte[512];
          for (int i = 0; i < 20_000; i++) {
            int at = r.nextInt(SIZE - 512);
            dst.clear();
            in.read(at, dst);
            in.read(at, arr);
            if (dst.get(i % 512) != data[at + i % 512] || arr[i % 512] != data[at + i % 512]) {
              return false;
            }
          }
          return true;
        }));
      }
      for (Future<Long> f : cursors) {
        assertEquals(expected.getValue(), (long) f.get(120, TimeUnit.SECONDS));
      }
      for (Future<Boolean> f : positional) {
        assertTrue(f.get(120, TimeUnit.SECONDS));
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  public void closeRacingWithReadsNeverCrashes() throws Exception {
    Path root = tmp.getRoot().toPath();
    TestFiles.write(root, "f", SIZE, 12);
    try (NativeDirectory dir = NativeDirectory.open(root)) {
      for (IOFlag[] flags : new IOFlag[][] {{}, {IOFlag.MMAP}}) {
        for (int round = 0; round < 20; round++) {
          NativeInput in = dir.openInput("f", flags);
          AtomicReference<Throwable> failure = new AtomicReference<>();
          boolean cursor = round % 2 == 1; // positional reads, then byte-at-a-time cursor reads
          Thread reader = new Thread(() -> {
            byte[] arr = new byte[4096];
            try {
              for (long i = 0; ; i = (i + 4096) % (SIZE - 4096)) {
                if (cursor) {
                  in.seek(i);
                  for (int k = 0; k < 4096; k++) {
                    in.readByte();
                  }
                } else {
                  in.read(i, arr);
                }
              }
            } catch (IllegalStateException expectedOnClose) {
              // what a read after (or racing with) close must get
            } catch (Throwable e) {
              failure.set(e);
            }
          });
          reader.start();
          Thread.sleep(2);
          in.close();
          reader.join(10_000);
          assertFalse(reader.isAlive());
          assertNull(failure.get());
        }
      }
    }
  }
}
