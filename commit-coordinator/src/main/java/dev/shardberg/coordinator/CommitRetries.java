package dev.shardberg.coordinator;

import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.util.PropertyUtil;
import org.apache.iceberg.util.Tasks;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The two retry budgets of one checkpoint commit, both on Iceberg's {@link Tasks}. Every try starts
 * from a fresh refresh (the attempt refreshes under the lock), so a commit that landed while the
 * catalog reported a failure is not repeated.
 *
 * <ul>
 *   <li>A swap the catalog kept rejecting on an unchanged base ({@link CommitFailedException},
 *       after Iceberg's own retries): tried again up to {@code coordinator.commit-attempts} times,
 *       waiting {@code coordinator.commit-retry-backoff}, doubled each time.
 *   <li>A base that moved under the checks ({@link PinnedBaseOperations.BaseChangedException}:
 *       another instance of this pipeline committed, the schema changed, or insert-only rows need
 *       their history check again): nothing landed; checked again within the table's {@code
 *       commit.retry.*} properties, without counting as a failed attempt.
 * </ul>
 *
 * <p>Anything else is not retried: {@code CommitStateUnknownException} fails the task, which keeps
 * its pending checkpoints and manifests, and the next attempt resolves the state from the table.
 */
final class CommitRetries {
  private static final Logger LOG = LoggerFactory.getLogger(CommitRetries.class);

  private CommitRetries() {}

  static <T> T run(
      Table table,
      CoordinatorOptions options,
      long checkpointId,
      CheckpointCommitter.Metrics metrics,
      Callable<T> attempt)
      throws Exception {
    AtomicReference<T> result = new AtomicReference<>();
    AtomicInteger attempts = new AtomicInteger();
    AtomicReference<Exception> lastFailure = new AtomicReference<>();
    Tasks.foreach(checkpointId)
        .retry(Math.max(0, options.commitAttempts() - 1))
        .onlyRetryOn(CommitFailedException.class)
        .exponentialBackoff(
            options.retryBackoff().toMillis(), Long.MAX_VALUE / 4, Long.MAX_VALUE / 4, 2.0)
        .throwFailureWhenFinished()
        .run(
            id -> {
              int n = attempts.incrementAndGet();
              if (n > 1) {
                metrics.retry();
                LOG.warn(
                    "Commit of checkpoint {} to table {} did not land, checking again from a fresh table"
                        + " (attempt {} of {}): {}",
                    id,
                    options.tableName(),
                    n,
                    options.commitAttempts(),
                    lastFailure.get() == null ? "" : lastFailure.get().getMessage());
              }
              try {
                result.set(onMovingBases(table, options, id, metrics, attempt));
              } catch (CommitFailedException e) {
                lastFailure.set(e);
                throw e;
              }
            },
            Exception.class);
    return result.get();
  }

  private static <T> T onMovingBases(
      Table table,
      CoordinatorOptions options,
      long checkpointId,
      CheckpointCommitter.Metrics metrics,
      Callable<T> attempt)
      throws Exception {
    Map<String, String> properties = table.properties();
    AtomicReference<T> result = new AtomicReference<>();
    AtomicInteger rebases = new AtomicInteger();
    try {
      Tasks.foreach(checkpointId)
          .retry(
              PropertyUtil.propertyAsInt(
                  properties,
                  TableProperties.COMMIT_NUM_RETRIES,
                  TableProperties.COMMIT_NUM_RETRIES_DEFAULT))
          .onlyRetryOn(PinnedBaseOperations.BaseChangedException.class)
          .exponentialBackoff(
              PropertyUtil.propertyAsLong(
                  properties,
                  TableProperties.COMMIT_MIN_RETRY_WAIT_MS,
                  TableProperties.COMMIT_MIN_RETRY_WAIT_MS_DEFAULT),
              PropertyUtil.propertyAsLong(
                  properties,
                  TableProperties.COMMIT_MAX_RETRY_WAIT_MS,
                  TableProperties.COMMIT_MAX_RETRY_WAIT_MS_DEFAULT),
              PropertyUtil.propertyAsLong(
                  properties,
                  TableProperties.COMMIT_TOTAL_RETRY_TIME_MS,
                  TableProperties.COMMIT_TOTAL_RETRY_TIME_MS_DEFAULT),
              2.0)
          .throwFailureWhenFinished()
          .run(
              id -> {
                try {
                  result.set(attempt.call());
                } catch (PinnedBaseOperations.BaseChangedException e) {
                  rebases.incrementAndGet();
                  metrics.retry();
                  LOG.info(
                      "Table {} changed between the checks and the swap of checkpoint {} ({}); checking again",
                      options.tableName(),
                      id,
                      e.getMessage());
                  throw e;
                }
              },
              Exception.class);
    } catch (PinnedBaseOperations.BaseChangedException e) {
      throw new IllegalStateException(
          String.format(
              "Cannot commit checkpoint %d of pipeline %s to table %s: the table changed"
                  + " under %d commit attempts in a row (%s). Another committer keeps"
                  + " changing it; serialise the committers with the ZooKeeper lock"
                  + " ("
                  + CoordinatorConfigOptions.ZK_PREFIX
                  + "*) or raise %s.",
              checkpointId,
              options.pipelineId(),
              options.tableName(),
              rebases.get(),
              e.getMessage(),
              TableProperties.COMMIT_NUM_RETRIES),
          e);
    }
    return result.get();
  }
}
