package dev.shardberg.tests.cluster;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.Collector;

/**
 * A tiny job for the launcher's own tests, packed into a jar at test time by {@link TestJars}:
 * {@code bounded} maps 1..1000 and finishes; {@code unbounded} counts a rate-limited stream per key
 * in keyed state, checkpointing every 500 ms, until it is stopped.
 */
public final class CountingJob {

  private CountingJob() {}

  public static void main(String[] args) throws Exception {
    String mode = args.length > 0 ? args[0] : "";
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    switch (mode) {
      case "bounded" -> {
        env.fromSequence(1, 1000)
            .map(new Double())
            .uid("double")
            .sinkTo(new DiscardingSink<>())
            .uid("discard");
        env.execute("counting-job-bounded");
      }
      case "unbounded" -> {
        env.enableCheckpointing(500);
        DataGeneratorSource<Long> source =
            new DataGeneratorSource<>(
                i -> i, Long.MAX_VALUE, RateLimiterStrategy.perSecond(50), Types.LONG);
        env.fromSource(source, WatermarkStrategy.noWatermarks(), "numbers")
            .uid("numbers")
            .keyBy(new Mod4())
            .process(new CountPerKey())
            .uid("count-per-key")
            .sinkTo(new DiscardingSink<>())
            .uid("discard");
        env.execute("counting-job-unbounded");
      }
      default ->
          throw new IllegalArgumentException(
              "Cannot run CountingJob with arguments '"
                  + String.join(" ", args)
                  + "': pass bounded or unbounded");
    }
  }

  static final class Double implements MapFunction<Long, Long> {
    @Override
    public Long map(Long value) {
      return value * 2;
    }
  }

  static final class Mod4 implements KeySelector<Long, Long> {
    @Override
    public Long getKey(Long value) {
      return value % 4;
    }
  }

  static final class CountPerKey extends KeyedProcessFunction<Long, Long, Long> {
    private transient ValueState<Long> count;

    @Override
    public void open(Configuration parameters) {
      count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Types.LONG));
    }

    @Override
    public void processElement(Long value, Context ctx, Collector<Long> out) throws Exception {
      long next = (count.value() == null ? 0 : count.value()) + 1;
      count.update(next);
      out.collect(next);
    }
  }
}
