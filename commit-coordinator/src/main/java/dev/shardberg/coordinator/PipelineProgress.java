package dev.shardberg.coordinator;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.Table;

/**
 * The durable progress record of one pipeline: the newest checkpoint it committed to the table, and
 * the lineage of that commit. The only place that decides "what has this pipeline committed".
 *
 * <p>It lives in the table property {@code shardberg.progress.<pipeline-id>}, written by the
 * coordinator in the same Iceberg transaction as the checkpoint's data (or heartbeat). Table
 * properties are part of every metadata version, so snapshot expiry, compaction and orphan-file
 * removal never make a pipeline forget what it committed (snapshot summaries do expire).
 *
 * <p>Tables written before the record existed have none; {@link #read} then falls back to the newest
 * snapshot summary of the pipeline in the current ancestry ({@link #legacy()} true: no staging
 * lineage known), and the next commit writes the record.
 *
 * <p>Format (version 1), one line of {@code key=value} pairs joined by {@code ;}:
 * {@code version=1;checkpoint=12;flink-checkpoint=12;staged-by=<job>;committed-by=<job>;epoch=-1;
 * restored-from=<job>@<flink checkpoint>,…}.
 *
 * @param checkpointId pipeline checkpoint id of the newest commit
 * @param flinkCheckpointId Flink checkpoint id whose barrier closed that commit's files ({@code -1}
 *     in a legacy record)
 * @param stagedBy Flink job id that staged the committed checkpoint (took its coordinator snapshot);
 *     null for a legacy record
 * @param committedBy Flink job id that committed it (differs from {@code stagedBy} after a restore)
 * @param epoch fencing epoch of the committing coordinator, {@code -1} when fencing was off
 * @param restoredFrom the committing coordinator's state ancestry: for each earlier Flink job whose
 *     state it was restored from (directly or through other restores), the Flink checkpoint of that
 *     state. Every pending entry of such a job up to that checkpoint was committed in order before
 *     this record's checkpoint.
 */
public record PipelineProgress(
    long checkpointId,
    long flinkCheckpointId,
    String stagedBy,
    String committedBy,
    long epoch,
    Map<String, Long> restoredFrom) {

  /** At most this many restored-from entries are kept, newest last. */
  static final int MAX_RESTORED_FROM = 16;

  public PipelineProgress {
    restoredFrom = Collections.unmodifiableMap(new LinkedHashMap<>(restoredFrom));
  }

  /** Prefix of the table property; the pipeline id follows. */
  public static final String PROPERTY_PREFIX = "shardberg.progress.";

  static final int VERSION = 1;

  public static String propertyKey(String pipelineId) {
    return PROPERTY_PREFIX + pipelineId;
  }

  /** True for a progress read back from a snapshot summary of a table without the record. */
  public boolean legacy() {
    return stagedBy == null;
  }

  /** The pipeline's progress as of the table's current metadata; the caller refreshes the table. */
  public static Optional<PipelineProgress> read(Table table, String pipelineId) {
    String value = table.properties().get(propertyKey(pipelineId));
    if (value != null) {
      return Optional.of(decode(value, pipelineId, table.name()));
    }
    return CommittedCheckpoints.latest(table, pipelineId)
        .map(
            commit ->
                new PipelineProgress(
                    commit.checkpointId(),
                    -1L,
                    null,
                    commit.flinkJobId(),
                    commit.epoch(),
                    Map.of()));
  }

  String encode() {
    return "version="
        + VERSION
        + ";checkpoint="
        + checkpointId
        + ";flink-checkpoint="
        + flinkCheckpointId
        + ";staged-by="
        + stagedBy
        + ";committed-by="
        + committedBy
        + ";epoch="
        + epoch
        + ";restored-from="
        + encodeLineage(restoredFrom);
  }

  /** {@code job@checkpoint,job@checkpoint}, oldest first. */
  static String encodeLineage(Map<String, Long> lineage) {
    StringBuilder out = new StringBuilder();
    for (Map.Entry<String, Long> entry : lineage.entrySet()) {
      if (out.length() > 0) {
        out.append(',');
      }
      out.append(entry.getKey()).append('@').append(entry.getValue());
    }
    return out.toString();
  }

  static Map<String, Long> decodeLineage(String text) {
    Map<String, Long> lineage = new LinkedHashMap<>();
    if (text == null || text.isBlank()) {
      return lineage;
    }
    for (String entry : text.split(",")) {
      int at = entry.lastIndexOf('@');
      if (at <= 0) {
        throw new IllegalArgumentException("restored-from entry '" + entry + "' is not job@checkpoint");
      }
      lineage.merge(entry.substring(0, at), Long.parseLong(entry.substring(at + 1)), Math::max);
    }
    return lineage;
  }

  /**
   * True when this record shows the pending entry staged by {@code stagedBy} at {@code
   * flinkCheckpointId} as committed: the record is that job's own later commit, or its committer
   * was restored from that job's state at or after that checkpoint.
   */
  boolean covers(String entryStagedBy, long entryFlinkCheckpointId) {
    if (entryStagedBy.equals(stagedBy) && flinkCheckpointId >= entryFlinkCheckpointId) {
      return true;
    }
    Long restored = restoredFrom.get(entryStagedBy);
    return restored != null && restored >= entryFlinkCheckpointId;
  }

  static PipelineProgress decode(String value, String pipelineId, String tableName) {
    Map<String, String> fields = new LinkedHashMap<>();
    for (String pair : value.split(";")) {
      int eq = pair.indexOf('=');
      if (eq > 0) {
        fields.put(pair.substring(0, eq).trim(), pair.substring(eq + 1).trim());
      }
    }
    String version = fields.get("version");
    if (!Integer.toString(VERSION).equals(version)) {
      throw new IllegalStateException(
          String.format(
              "Cannot read the progress of pipeline %s in table %s: table property %s has version"
                  + " %s, this release reads version %d. Run the release that wrote it.",
              pipelineId, tableName, propertyKey(pipelineId), version, VERSION));
    }
    try {
      return new PipelineProgress(
          Long.parseLong(required(fields, "checkpoint")),
          Long.parseLong(required(fields, "flink-checkpoint")),
          required(fields, "staged-by"),
          required(fields, "committed-by"),
          Long.parseLong(required(fields, "epoch")),
          decodeLineage(fields.get("restored-from")));
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException(
          String.format(
              "Cannot read the progress of pipeline %s in table %s: table property %s is '%s' (%s)."
                  + " It is written by the coordinator only; restore the value from the table's"
                  + " previous metadata file or remove the property to fall back to the snapshot"
                  + " summaries.",
              pipelineId, tableName, propertyKey(pipelineId), value, e.getMessage()),
          e);
    }
  }

  private static String required(Map<String, String> fields, String key) {
    String value = fields.get(key);
    if (value == null || value.isEmpty()) {
      throw new IllegalArgumentException("field '" + key + "' is missing");
    }
    return value;
  }

  @Override
  public String toString() {
    return "checkpoint "
        + checkpointId
        + " (Flink checkpoint "
        + flinkCheckpointId
        + ", staged by Flink job "
        + (stagedBy == null ? "unknown" : stagedBy)
        + ", committed by Flink job "
        + committedBy
        + (epoch >= 0 ? ", epoch " + epoch : "")
        + ")";
  }
}
