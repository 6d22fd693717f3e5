package dev.shardberg.tests.lakehouse;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.gaul.s3proxy.AuthenticationType;
import org.gaul.s3proxy.S3Proxy;
import org.jclouds.ContextBuilder;
import org.jclouds.blobstore.BlobStore;
import org.jclouds.blobstore.BlobStoreContext;
import org.jclouds.blobstore.TransientApiMetadata;
import org.jclouds.blobstore.domain.PageSet;
import org.jclouds.blobstore.domain.StorageMetadata;
import org.jclouds.blobstore.domain.StorageType;
import org.jclouds.blobstore.options.ListContainerOptions;

/**
 * A real S3-compatible server in this JVM: S3Proxy speaking the S3 REST protocol (SigV4
 * authentication, path-style buckets) on a free loopback port, over jclouds' transient (in-memory)
 * blob store. Clients reach it the way they reach any S3-compatible store: an endpoint, a region,
 * an access key and a secret key, path-style access.
 *
 * <p>Two limits of S3Proxy that clients see: it does not check the AWS SDK's flexible checksums
 * (ignored), and it does not read aws-chunked uploads with checksum trailers, so Iceberg's S3FileIO
 * needs {@code s3.chunked-encoding-enabled=false} against it.
 *
 * <p>{@link #keys(String)} lists a bucket from the server's side (its blob store), independent of
 * any client's view.
 *
 * <p>Started with a request latency ({@link #start(String, String, Duration)}), every request to
 * {@link #endpoint()} is answered that much later ({@link DelayingBlobStore}); a second endpoint
 * over the same objects, {@link #observerEndpoint()}, answers at once, for a harness that watches
 * the table without slowing itself or the measured client down.
 */
public final class S3Server implements AutoCloseable {
  /** A region name clients must send; the server does not check it. */
  public static final String REGION = "us-east-1";

  private final String accessKey;
  private final String secretKey;
  private final BlobStoreContext context;
  private final S3Proxy proxy;

  /** Serves the same objects without delay; null: no latency, {@link #proxy} is that already. */
  private final S3Proxy observer;

  private final DelayingBlobStore delaying;

  private S3Server(
      String accessKey,
      String secretKey,
      BlobStoreContext context,
      S3Proxy proxy,
      S3Proxy observer,
      DelayingBlobStore delaying) {
    this.accessKey = accessKey;
    this.secretKey = secretKey;
    this.context = context;
    this.proxy = proxy;
    this.observer = observer;
    this.delaying = delaying;
  }

  /** Starts a server that accepts requests signed with {@code accessKey} / {@code secretKey}. */
  public static S3Server start(String accessKey, String secretKey) throws Exception {
    return start(accessKey, secretKey, Duration.ZERO);
  }

  /**
   * Starts a server whose {@link #endpoint()} answers every request {@code requestLatency} late
   * (zero: at once), and whose {@link #observerEndpoint()} answers at once.
   */
  public static S3Server start(String accessKey, String secretKey, Duration requestLatency)
      throws Exception {
    BlobStoreContext context =
        // by its metadata, not by name: a lookup by name loads every provider registered on the
        // class path, and S3Proxy registers some (Azure) whose libraries we leave out
        ContextBuilder.newBuilder(new TransientApiMetadata())
            .credentials(accessKey, secretKey)
            .build(BlobStoreContext.class);
    List<S3Proxy> started = new ArrayList<>();
    try {
      DelayingBlobStore delaying =
          requestLatency.isZero()
              ? null
              : new DelayingBlobStore(context.getBlobStore(), requestLatency);
      S3Proxy proxy =
          startProxy(
              delaying != null ? delaying : context.getBlobStore(), accessKey, secretKey, started);
      S3Proxy observer =
          delaying == null
              ? null
              : startProxy(context.getBlobStore(), accessKey, secretKey, started);
      return new S3Server(accessKey, secretKey, context, proxy, observer, delaying);
    } catch (Exception e) {
      for (S3Proxy p : started) {
        p.stop();
      }
      context.close();
      throw e;
    }
  }

  private static S3Proxy startProxy(
      BlobStore store, String accessKey, String secretKey, List<S3Proxy> started) throws Exception {
    S3Proxy proxy =
        S3Proxy.builder()
            .blobStore(store)
            .endpoint(URI.create("http://127.0.0.1:0"))
            .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, accessKey, secretKey)
            // the AWS SDK v2 sends flexible checksums (x-amz-checksum-crc32 …), which S3Proxy
            // does not implement: it ignores them instead of refusing the request (501)
            .ignoreUnknownHeaders(true)
            .build();
    proxy.start(); // returns once Jetty listens
    started.add(proxy);
    return proxy;
  }

  /** {@code http://127.0.0.1:<port>}: the value of Iceberg's {@code s3.endpoint}. */
  public String endpoint() {
    return "http://127.0.0.1:" + proxy.getPort();
  }

  /**
   * An endpoint over the same objects that answers without the injected latency ({@link
   * #endpoint()} when there is none).
   */
  public String observerEndpoint() {
    return "http://127.0.0.1:" + (observer != null ? observer : proxy).getPort();
  }

  /** Requests {@link #endpoint()} answered late so far (0 without a latency). */
  public long delayedRequests() {
    return delaying == null ? 0 : delaying.calls();
  }

  public String accessKey() {
    return accessKey;
  }

  public String secretKey() {
    return secretKey;
  }

  /** Creates {@code bucket} (S3 has no implicit buckets). */
  public void createBucket(String bucket) {
    context.getBlobStore().createContainerInLocation(null, bucket);
  }

  /** Every object key in {@code bucket}, as the server holds them (all pages, recursively). */
  public List<String> keys(String bucket) {
    BlobStore store = context.getBlobStore();
    List<String> keys = new ArrayList<>();
    ListContainerOptions options = ListContainerOptions.Builder.recursive();
    while (true) {
      PageSet<? extends StorageMetadata> page = store.list(bucket, options);
      for (StorageMetadata entry : page) {
        if (entry.getType() == StorageType.BLOB) {
          keys.add(entry.getName());
        }
      }
      if (page.getNextMarker() == null) {
        return keys;
      }
      options = ListContainerOptions.Builder.recursive().afterMarker(page.getNextMarker());
    }
  }

  @Override
  public void close() throws Exception {
    try {
      proxy.stop();
      if (observer != null) {
        observer.stop();
      }
    } finally {
      context.close();
    }
  }
}
