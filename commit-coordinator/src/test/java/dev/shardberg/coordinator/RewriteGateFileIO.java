package dev.shardberg.coordinator;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.io.InputFile;

/**
 * Hadoop's file IO (a table's {@code io-impl}) that holds the partition owners' rewrite thread at
 * its first file until a test opens the gate: a rewrite that is still running at the barriers a
 * test drives, every time. Every other thread reads as usual.
 */
public class RewriteGateFileIO extends HadoopFileIO {
  private static volatile CountDownLatch gate = new CountDownLatch(0);

  public RewriteGateFileIO() {}

  /** Rewrites wait at their next file from now on. */
  static void shut() {
    gate = new CountDownLatch(1);
  }

  /** Rewrites go on. */
  static void open() {
    gate.countDown();
  }

  @Override
  public InputFile newInputFile(String path) {
    waitIfRewriting();
    return super.newInputFile(path);
  }

  @Override
  public InputFile newInputFile(String path, long length) {
    waitIfRewriting();
    return super.newInputFile(path, length);
  }

  private static void waitIfRewriting() {
    if (!Thread.currentThread().getName().startsWith("shardberg-owner-rewrite")) {
      return;
    }
    try {
      if (!gate.await(2, TimeUnit.MINUTES)) {
        throw new IllegalStateException("The test never opened the rewrite gate");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
