package dev.shardberg.tests.lakehouse;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.jclouds.blobstore.BlobStore;
import org.jclouds.blobstore.domain.Blob;
import org.jclouds.blobstore.domain.BlobMetadata;
import org.jclouds.blobstore.domain.MultipartPart;
import org.jclouds.blobstore.domain.MultipartUpload;
import org.jclouds.blobstore.domain.PageSet;
import org.jclouds.blobstore.domain.StorageMetadata;
import org.jclouds.blobstore.options.CopyOptions;
import org.jclouds.blobstore.options.GetOptions;
import org.jclouds.blobstore.options.ListContainerOptions;
import org.jclouds.blobstore.options.PutOptions;
import org.jclouds.blobstore.util.ForwardingBlobStore;
import org.jclouds.domain.Location;
import org.jclouds.io.Payload;

/**
 * A blob store that waits a fixed time before the operation that answers a client's request, then
 * delegates: the request latency of a remote object store, put in front of an in-memory one. For
 * the requests Iceberg's S3FileIO and a REST catalog make (PUT, GET, HEAD and DELETE of an object,
 * a bucket listing, a bulk delete) S3Proxy calls exactly one of the delayed operations, on its own
 * request thread, so each request is answered that much later and concurrent requests wait
 * concurrently, as on a real store. The multipart calls (only for files above S3FileIO's multipart
 * threshold) are delayed per call as well; the helper lookups S3Proxy makes inside them (listing an
 * upload's parts, an existence check) are not. Bandwidth is not limited.
 *
 * <p>S3Proxy ships a latency store of its own ({@code org.gaul.s3proxy.LatencyBlobStore}), but only
 * its command-line launcher can create it (its factory is package-private, configured from {@code
 * s3proxy.latency-blobstore.*} properties); an embedded server wraps its store itself.
 */
final class DelayingBlobStore extends ForwardingBlobStore {
  private final long delayMillis;
  private final AtomicLong calls = new AtomicLong();

  DelayingBlobStore(BlobStore delegate, Duration delay) {
    super(delegate);
    this.delayMillis = delay.toMillis();
  }

  /** Operations delayed so far. */
  long calls() {
    return calls.get();
  }

  private void delay() {
    calls.incrementAndGet();
    try {
      Thread.sleep(delayMillis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while delaying a store request", e);
    }
  }

  @Override
  public PageSet<? extends StorageMetadata> list() {
    delay();
    return super.list();
  }

  @Override
  public boolean containerExists(String container) {
    delay();
    return super.containerExists(container);
  }

  @Override
  public boolean createContainerInLocation(Location location, String container) {
    delay();
    return super.createContainerInLocation(location, container);
  }

  @Override
  public PageSet<? extends StorageMetadata> list(String container) {
    delay();
    return super.list(container);
  }

  @Override
  public PageSet<? extends StorageMetadata> list(String container, ListContainerOptions options) {
    delay();
    return super.list(container, options);
  }

  @Override
  public String putBlob(String container, Blob blob) {
    delay();
    return super.putBlob(container, blob);
  }

  @Override
  public String putBlob(String container, Blob blob, PutOptions options) {
    delay();
    return super.putBlob(container, blob, options);
  }

  @Override
  public String copyBlob(
      String fromContainer,
      String fromName,
      String toContainer,
      String toName,
      CopyOptions options) {
    delay();
    return super.copyBlob(fromContainer, fromName, toContainer, toName, options);
  }

  @Override
  public BlobMetadata blobMetadata(String container, String name) {
    delay();
    return super.blobMetadata(container, name);
  }

  @Override
  public Blob getBlob(String container, String name) {
    delay();
    return super.getBlob(container, name);
  }

  @Override
  public Blob getBlob(String container, String name, GetOptions options) {
    delay();
    return super.getBlob(container, name, options);
  }

  @Override
  public void removeBlob(String container, String name) {
    delay();
    super.removeBlob(container, name);
  }

  @Override
  public void removeBlobs(String container, Iterable<String> names) {
    delay();
    super.removeBlobs(container, names);
  }

  @Override
  public MultipartUpload initiateMultipartUpload(
      String container, BlobMetadata metadata, PutOptions options) {
    delay();
    return super.initiateMultipartUpload(container, metadata, options);
  }

  @Override
  public void abortMultipartUpload(MultipartUpload upload) {
    delay();
    super.abortMultipartUpload(upload);
  }

  @Override
  public String completeMultipartUpload(MultipartUpload upload, List<MultipartPart> parts) {
    delay();
    return super.completeMultipartUpload(upload, parts);
  }

  @Override
  public MultipartPart uploadMultipartPart(
      MultipartUpload upload, int partNumber, Payload payload) {
    delay();
    return super.uploadMultipartPart(upload, partNumber, payload);
  }

  @Override
  public List<MultipartUpload> listMultipartUploads(String container) {
    delay();
    return super.listMultipartUploads(container);
  }
}
