package dev.shardberg.job;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps Hadoop's JVM shutdown hook quiet in the {@code flink run} client.
 *
 * <p>The client runs {@link ShardbergJob} in Flink's user-code class loader, which it closes once
 * the job is submitted. Hadoop (inside our jar) registers one JVM shutdown hook the first time a
 * file system is used; that hook runs at client exit, after the close, and (1) builds a {@code new
 * Configuration()}, which looks up {@code core-default.xml} through the context class loader it
 * inherited — the closed one ("Trying to access closed classloader") — and (2) loads a few classes
 * it had not needed before (NoClassDefFoundError). Both printed a stack trace after a successful
 * submission.
 *
 * <p>So: {@link #prepare} initializes Hadoop's shutdown hook manager while the context class loader
 * is the parent of ours (never closed; it has no Hadoop resources, which Hadoop tolerates), and
 * {@link #beforeExit} closes the cached file systems and loads what the hook still needs while our
 * loader is open. Both do nothing when Hadoop is not on the classpath.
 */
final class HadoopClientExit {
  private static final Logger LOG = LoggerFactory.getLogger(HadoopClientExit.class);

  /**
   * Loaded lazily by the hook's own code (anonymous comparator, hook entries, the file system
   * finalizer).
   */
  private static final List<String> HOOK_CLASSES =
      List.of(
          "org.apache.hadoop.util.ShutdownHookManager$1",
          "org.apache.hadoop.util.ShutdownHookManager$2",
          "org.apache.hadoop.util.ShutdownHookManager$HookEntry",
          "org.apache.hadoop.fs.FileSystem$Cache$ClientFinalizer");

  private HadoopClientExit() {}

  /** Call first in the client's main, before anything touches Hadoop. */
  static void prepare() {
    ClassLoader ours = HadoopClientExit.class.getClassLoader();
    ClassLoader parent =
        ours.getParent() != null ? ours.getParent() : ClassLoader.getPlatformClassLoader();
    Thread thread = Thread.currentThread();
    ClassLoader before = thread.getContextClassLoader();
    thread.setContextClassLoader(parent);
    try {
      // its static initializer creates the hook thread, which inherits this context class loader
      org.apache.hadoop.util.ShutdownHookManager.get();
    } catch (LinkageError noHadoop) {
      LOG.debug("No Hadoop on the classpath: nothing to prepare ({})", noHadoop.toString());
    } finally {
      thread.setContextClassLoader(before);
    }
  }

  /** Call last in the client's main, while the user-code class loader is still open. */
  static void beforeExit() {
    try {
      org.apache.hadoop.fs.FileSystem.closeAll();
      // the hook reads its own timeout from a fresh Configuration: the same path once, now
      new org.apache.hadoop.conf.Configuration()
          .getTimeDuration("hadoop.service.shutdown.timeout", 30, TimeUnit.SECONDS);
      ClassLoader ours = HadoopClientExit.class.getClassLoader();
      for (String name : HOOK_CLASSES) {
        Class.forName(name, false, ours);
      }
    } catch (Exception | LinkageError e) {
      LOG.debug("Cannot prepare Hadoop's shutdown hook for exit: {}", e.toString());
    }
  }
}
