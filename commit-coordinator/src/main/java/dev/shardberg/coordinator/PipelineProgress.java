package dev.shardberg.coordinator;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.Table;

/**
 * The durable progress record of one pipeline: the newest checkpoint it committed to the table, and
 * which entries of which runs are committed. The only place that decides "what has this pipeline
 * committed".
 *
 * <p>It lives in the table property {@code shardberg.progress.<pipeline-id>}, written by the
 * coordinator in the same Iceberg transaction as the checkpoint's data (or heartbeat). Table
 * properties are part of every metadata version, so snapshot expiry, compaction and orphan-file
 * removal never make a pipeline forget what it committed (snapshot summaries do expire).
 *
 * <p>A <em>run</em> is one life of a coordinator: an id it draws at each start (with or without
 * state, see {@link #newRunId()}), never the Flink job id, which two deployments can share (Flink
 * derives it from {@code high-availability.cluster-id} in application mode) and which a restore
 * into the same job keeps. Within one run, Flink checkpoint ids strictly increase and entries are
 * committed in order; so "the entry staged by run R at Flink checkpoint f is committed" is exactly
 * {@code runs[R] ≥ f}, whatever happened since: rewinds to an older state of any run, other runs
 * committing in between, restores of restores. Every commit carries the map forward, adds its own
 * entry's run and the state ancestry of the committing run (a restored run commits every restored
 * entry, in order, before its own), and keeps the {@link #MAX_RUNS} runs that committed last.
 *
 * <p>Tables written before the record existed have none; {@link #read} then falls back to the
 * newest snapshot summary of the pipeline in the current ancestry ({@link #legacy()} true: no runs
 * known), and the next commit writes the record. Version 1 records (runs were Flink job ids, as in
 * the state of that release) are read as version 2: their staging job and restored-from ancestry
 * become runs.
 *
 * <p>Format (version 2), one line of {@code key=value} pairs joined by {@code ;}: {@code
 * version=2;checkpoint=12;flink-checkpoint=12;staged-by=<run>;committed-by=<run>;
 * flink-job=<job>;epoch=-1;runs=<run>@<flink checkpoint>,…} (runs oldest commit first).
 *
 * @param checkpointId pipeline checkpoint id of the newest commit
 * @param flinkCheckpointId Flink checkpoint id whose barrier closed that commit's files ({@code -1}
 *     in a legacy record)
 * @param stagedBy run that staged the committed checkpoint (took its coordinator snapshot); null
 *     for a legacy record
 * @param committedBy run that committed it (differs from {@code stagedBy} after a restore)
 * @param flinkJobId Flink job id of the committing job, for people reading the record only
 * @param epoch fencing epoch of the committing coordinator, {@code -1} when fencing was off
 * @param runs for each run that committed recently (or whose state a committing run descends from),
 *     the highest Flink checkpoint of its entries known committed: every entry that run staged at
 *     or below it is in the table (or was empty)
 */
public record PipelineProgress(
    long checkpointId,
    long flinkCheckpointId,
    String stagedBy,
    String committedBy,
    String flinkJobId,
    long epoch,
    Map<String, Long> runs) {

  /** At most this many runs are kept in the record, those that committed last. */
  static final int MAX_RUNS = 32;

  public PipelineProgress {
    runs = Collections.unmodifiableMap(new LinkedHashMap<>(runs));
  }

  /**
   * A new run id: 16 random hex digits, drawn at every start of a coordinator. Unique across
   * deployments that share a Flink job id, and short enough to keep {@link #MAX_RUNS} of them in a
   * table property that a Hive Metastore also stores.
   */
  static String newRunId() {
    return String.format("%016x", RANDOM.nextLong());
  }

  private static final java.security.SecureRandom RANDOM = new java.security.SecureRandom();

  /**
   * The record a commit writes on top of {@code previous} (empty: the first commit, or a legacy
   * table): this entry's run at its Flink checkpoint, the committing run's ancestry, and every run
   * the previous record knew, newest commit last, bounded by {@link #MAX_RUNS}.
   */
  static PipelineProgress next(
      Optional<PipelineProgress> previous,
      long checkpointId,
      long flinkCheckpointId,
      String stagedBy,
      String committedBy,
      String flinkJobId,
      long epoch,
      Map<String, Long> ancestry) {
    LinkedHashMap<String, Long> runs = new LinkedHashMap<>();
    previous.ifPresent(p -> runs.putAll(p.runs()));
    ancestry.forEach((run, f) -> raise(runs, run, f));
    raise(runs, stagedBy, flinkCheckpointId);
    raise(runs, committedBy, runs.getOrDefault(committedBy, -1L));
    while (runs.size() > MAX_RUNS) {
      runs.remove(runs.keySet().iterator().next());
    }
    return new PipelineProgress(
        checkpointId, flinkCheckpointId, stagedBy, committedBy, flinkJobId, epoch, runs);
  }

  /** Sets {@code run}'s mark to at least {@code flinkCheckpointId} and makes it the newest. */
  private static void raise(LinkedHashMap<String, Long> runs, String run, long flinkCheckpointId) {
    Long before = runs.remove(run);
    runs.put(run, before == null ? flinkCheckpointId : Math.max(before, flinkCheckpointId));
  }

  /** Prefix of the table property; the pipeline id follows. */
  public static final String PROPERTY_PREFIX = "shardberg.progress.";

  static final int VERSION = 2;

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
        + ";flink-job="
        + flinkJobId
        + ";epoch="
        + epoch
        + ";runs="
        + encodeLineage(runs);
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
        throw new IllegalArgumentException(
            "restored-from entry '" + entry + "' is not job@checkpoint");
      }
      lineage.merge(entry.substring(0, at), Long.parseLong(entry.substring(at + 1)), Math::max);
    }
    return lineage;
  }

  /**
   * True when this record shows the pending entry staged by run {@code entryStagedBy} at {@code
   * entryFlinkCheckpointId} as committed (see the class comment).
   */
  boolean covers(String entryStagedBy, long entryFlinkCheckpointId) {
    Long committed = runs.get(entryStagedBy);
    return committed != null && committed >= entryFlinkCheckpointId;
  }

  /** True when the record knows {@code run} (it committed, or a committer descends from it). */
  boolean knows(String run) {
    return runs.containsKey(run);
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
    if ("1".equals(version)) {
      return decodeVersion1(fields, value, pipelineId, tableName);
    }
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
          required(fields, "flink-job"),
          Long.parseLong(required(fields, "epoch")),
          decodeLineage(fields.get("runs")));
    } catch (IllegalArgumentException e) {
      throw unreadable(value, pipelineId, tableName, e);
    }
  }

  /**
   * A version 1 record: runs were Flink job ids; the committer's restored-from ancestry and the
   * staging job at its Flink checkpoint are exactly the runs known committed.
   */
  private static PipelineProgress decodeVersion1(
      Map<String, String> fields, String value, String pipelineId, String tableName) {
    try {
      String stagedBy = required(fields, "staged-by");
      long flinkCheckpoint = Long.parseLong(required(fields, "flink-checkpoint"));
      LinkedHashMap<String, Long> runs =
          new LinkedHashMap<>(decodeLineage(fields.get("restored-from")));
      raise(runs, stagedBy, flinkCheckpoint);
      String committedBy = required(fields, "committed-by");
      return new PipelineProgress(
          Long.parseLong(required(fields, "checkpoint")),
          flinkCheckpoint,
          stagedBy,
          committedBy,
          committedBy,
          Long.parseLong(required(fields, "epoch")),
          runs);
    } catch (IllegalArgumentException e) {
      throw unreadable(value, pipelineId, tableName, e);
    }
  }

  private static IllegalStateException unreadable(
      String value, String pipelineId, String tableName, IllegalArgumentException e) {
    {
      return new IllegalStateException(
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
        + ", staged by run "
        + (stagedBy == null ? "unknown" : stagedBy)
        + ", committed by run "
        + committedBy
        + " of Flink job "
        + flinkJobId
        + (epoch >= 0 ? ", epoch " + epoch : "")
        + ")";
  }
}
