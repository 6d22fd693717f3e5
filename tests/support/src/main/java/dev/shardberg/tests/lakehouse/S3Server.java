package dev.shardberg.tests.lakehouse;

import java.net.URI;
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
 */
public final class S3Server implements AutoCloseable {
  /** A region name clients must send; the server does not check it. */
  public static final String REGION = "us-east-1";

  private final String accessKey;
  private final String secretKey;
  private final BlobStoreContext context;
  private final S3Proxy proxy;

  private S3Server(String accessKey, String secretKey, BlobStoreContext context, S3Proxy proxy) {
    this.accessKey = accessKey;
    this.secretKey = secretKey;
    this.context = context;
    this.proxy = proxy;
  }

  /** Starts a server that accepts requests signed with {@code accessKey} / {@code secretKey}. */
  public static S3Server start(String accessKey, String secretKey) throws Exception {
    BlobStoreContext context =
        // by its metadata, not by name: a lookup by name loads every provider registered on the
        // class path, and S3Proxy registers some (Azure) whose libraries we leave out
        ContextBuilder.newBuilder(new TransientApiMetadata())
            .credentials(accessKey, secretKey)
            .build(BlobStoreContext.class);
    S3Proxy proxy =
        S3Proxy.builder()
            .blobStore(context.getBlobStore())
            .endpoint(URI.create("http://127.0.0.1:0"))
            .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, accessKey, secretKey)
            // the AWS SDK v2 sends flexible checksums (x-amz-checksum-crc32 …), which S3Proxy
            // does not implement: it ignores them instead of refusing the request (501)
            .ignoreUnknownHeaders(true)
            .build();
    try {
      proxy.start(); // returns once Jetty listens
    } catch (Exception e) {
      context.close();
      throw e;
    }
    return new S3Server(accessKey, secretKey, context, proxy);
  }

  /** {@code http://127.0.0.1:<port>}: the value of Iceberg's {@code s3.endpoint}. */
  public String endpoint() {
    return "http://127.0.0.1:" + proxy.getPort();
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
    } finally {
      context.close();
    }
  }
}
