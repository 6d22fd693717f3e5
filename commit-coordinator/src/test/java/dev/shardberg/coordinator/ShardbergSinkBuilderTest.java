package dev.shardberg.coordinator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.dag.Transformation;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.operators.SimpleOperatorFactory;
import org.apache.flink.streaming.api.transformations.OneInputTransformation;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ShardbergSinkBuilderTest {
  @TempDir Path warehouse;
  private StreamExecutionEnvironment env;
  private DataStream<RowData> changes;

  @BeforeEach
  void setUp() {
    TestTables.create(warehouse, 4);
    env = StreamExecutionEnvironment.getExecutionEnvironment();
    changes =
        env.fromData(
            InternalTypeInfo.of(TestTables.ROW_TYPE), TestTables.row(RowKind.INSERT, 1, 1, "a"));
  }

  private ShardbergSink.Builder builder() {
    return ShardbergSink.forRowData(changes)
        .tableLoader(TestTables.loader(warehouse))
        .tableName(TestTables.TABLE_NAME)
        .rowType(TestTables.ROW_TYPE)
        .pipelineId("orders");
  }

  @Test
  void wiresWritersAndOneCoordinatorWithStableUids() {
    builder().writeParallelism(3).uidPrefix("p").append();
    Transformation<?> writer = transformation("p-writer");
    Transformation<?> coordinator = transformation("p-coordinator");
    assertThat(writer.getParallelism()).isEqualTo(3);
    assertThat(coordinator.getParallelism()).isEqualTo(1);
    assertThat(coordinator.getMaxParallelism()).isEqualTo(1);
  }

  @Test
  void defaultsTheEqualityColumnsToTheTablesIdentifierFields() throws Exception {
    builder().uidPrefix("p").append(); // no equalityColumns given
    // The writer the builder wired, run on the table: a delete names its key by the identifier
    // fields.
    OneInputTransformation<?, ?> writer = (OneInputTransformation<?, ?>) transformation("p-writer");
    @SuppressWarnings("unchecked")
    OneInputStreamOperator<RowData, WriterResult> operator =
        (OneInputStreamOperator<RowData, WriterResult>)
            ((SimpleOperatorFactory<?>) writer.getOperatorFactory()).getOperator();
    List<DeleteFile> deletes = new ArrayList<>();
    try (OneInputStreamOperatorTestHarness<RowData, WriterResult> harness =
        new OneInputStreamOperatorTestHarness<>(operator)) {
      harness.setup(WriterResultTypeInfo.WireSerializer.INSTANCE);
      harness.open();
      harness.processElement(new StreamRecord<>(TestTables.row(RowKind.DELETE, 1, 7, "x")));
      harness.prepareSnapshotPreBarrier(1);
      harness
          .extractOutputValues()
          .forEach(result -> deletes.addAll(List.of(result.files().deleteFiles())));
    }
    assertThat(deletes).as("delete files of one DELETE").hasSize(1);
    assertThat(deletes.get(0).content()).isEqualTo(FileContent.EQUALITY_DELETES);
    assertThat(deletes.get(0).equalityFieldIds())
        .as("field ids of shard_number and id, the table's identifier fields")
        .containsExactly(1, 2);
  }

  @Test
  void refusesToDefaultTheEqualityColumnsOfATableWithoutIdentifierFields() {
    TestTables.load(warehouse).updateSchema().setIdentifierFields(List.of()).commit();
    assertThatThrownBy(() -> builder().append())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "Cannot build the Shardberg sink for hadoop.shop.orders: equalityColumns are not set and the"
                + " table has no identifier fields; set them to the shard column plus the primary key");
  }

  @Test
  void refusesAMissingPipelineId() {
    assertThatThrownBy(() -> builder().pipelineId(" ").append())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "Cannot build the Shardberg sink for hadoop.shop.orders: pipelineId is not set; give"
                + " every pipeline a stable id");
  }

  @Test
  void refusesACloseConcurrencyBelowOne() {
    assertThatThrownBy(() -> builder().closeConcurrency(0).append())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "Cannot build the Shardberg sink for hadoop.shop.orders: closeConcurrency"
                + " (target.close-concurrency) must be at least 1, got 0");
  }

  @Test
  void refusesUnalignedCheckpoints() {
    env.getCheckpointConfig().enableUnalignedCheckpoints();
    assertThatThrownBy(() -> builder().append())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unaligned checkpoints are enabled")
        .hasMessageContaining("execution.checkpointing.unaligned");
  }

  @Test
  void refusesARowTypeWithoutTheShardColumnFirst() {
    RowType wrong = RowType.of(new BigIntType(false), new IntType(false));
    assertThatThrownBy(() -> builder().rowType(wrong).append())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(
            "the first field of the row type must be the shard column, INT NOT NULL")
        .hasMessageContaining("'f0' BIGINT NOT NULL");
  }

  @Test
  void refusesEqualityColumnsWithoutTheShardColumn() {
    assertThatThrownBy(() -> builder().equalityColumns(List.of("id")).append())
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            "Cannot write upserts to table hadoop.shop.orders: equality columns [id] must include"
                + " the shard column 'shard_number' (a key is unique only within its shard)");
  }

  @Test
  void refusesAnEqualityColumnTheTableDoesNotHave() {
    assertThatThrownBy(
            () -> builder().equalityColumns(List.of("shard_number", "order_id")).append())
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            "Cannot write upserts to table hadoop.shop.orders: equality column 'order_id' is not in"
                + " the table schema [shard_number, id, name]");
  }

  private Transformation<?> transformation(String uid) {
    return env.getTransformations().stream()
        .filter(t -> uid.equals(t.getUid()))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no operator with uid " + uid));
  }
}
