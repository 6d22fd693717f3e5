package dev.shardberg.router.watch;

import java.time.Duration;

/**
 * What the job knows about one MySQL host while it reads its binlog: whether the host answers (from
 * {@link SourceHostWatch}'s probes), since when it does not, and the newest binlog change read.
 * Pure bookkeeping with caller-supplied times, so it is unit-tested without a server.
 *
 * <pre>
 *   UNKNOWN ──probe ok──▶ REACHABLE ──probe fails──▶ UNREACHABLE ──probe ok──▶ REACHABLE (gap reported)
 *      └────────probe fails────────────────────────────▲        └── down longer than the limit: fail the job
 * </pre>
 *
 * The connection state is written by the prober thread and read by the task thread and metric
 * reporters: its methods are synchronized (a reader never sees UNREACHABLE without its start). The
 * binlog fields are volatile: the task thread writes, metric reporters read.
 */
public final class HostHealth {
  public enum State {
    UNKNOWN,
    REACHABLE,
    UNREACHABLE
  }

  /** What one probe result changed. */
  public enum Transition {
    NONE,
    LOST,
    BACK
  }

  private final Duration unreachableLimit;

  private State state = State.UNKNOWN;
  private long unreachableSinceMillis = -1;
  private long lastGapMillis = -1;
  private String lastError;
  private volatile long lastEventTimeMillis = -1; // binlog timestamp of the newest change read
  private volatile long lastEventReadMillis = -1; // when it was read
  private volatile long eventsRead;

  public HostHealth(Duration unreachableLimit) {
    this.unreachableLimit = unreachableLimit;
  }

  /** A probe answered at {@code nowMillis}. */
  public synchronized Transition probeSucceeded(long nowMillis) {
    State before = state;
    state = State.REACHABLE;
    if (before == State.UNREACHABLE) {
      lastGapMillis = nowMillis - unreachableSinceMillis;
      unreachableSinceMillis = -1;
      return Transition.BACK;
    }
    return Transition.NONE;
  }

  /** A probe failed at {@code nowMillis} with {@code error}. */
  public synchronized Transition probeFailed(long nowMillis, String error) {
    lastError = error;
    if (state != State.UNREACHABLE) {
      state = State.UNREACHABLE;
      unreachableSinceMillis = nowMillis;
      return Transition.LOST;
    }
    return Transition.NONE;
  }

  /** True when the host has not answered for longer than the limit at {@code nowMillis}. */
  public synchronized boolean pastLimit(long nowMillis) {
    return state == State.UNREACHABLE
        && nowMillis - unreachableSinceMillis > unreachableLimit.toMillis();
  }

  /** A binlog change with event time {@code eventTimeMillis} was read at {@code nowMillis}. */
  public void eventRead(long eventTimeMillis, long nowMillis) {
    if (eventTimeMillis > lastEventTimeMillis) {
      lastEventTimeMillis = eventTimeMillis;
    }
    lastEventReadMillis = nowMillis;
    eventsRead++;
  }

  public synchronized State state() {
    return state;
  }

  /** How long the host has not answered at {@code nowMillis}; 0 when it answers. */
  public synchronized long unreachableMillis(long nowMillis) {
    return state == State.UNREACHABLE ? Math.max(0, nowMillis - unreachableSinceMillis) : 0;
  }

  /** The length of the last outage, -1 before the first. */
  public synchronized long lastGapMillis() {
    return lastGapMillis;
  }

  public synchronized String lastError() {
    return lastError;
  }

  public Duration unreachableLimit() {
    return unreachableLimit;
  }

  /** Binlog timestamp of the newest change read, -1 before the first. */
  public long lastEventTimeMillis() {
    return lastEventTimeMillis;
  }

  /** Time since a change was last read at {@code nowMillis}, -1 before the first. */
  public long millisSinceLastEvent(long nowMillis) {
    long read = lastEventReadMillis;
    return read < 0 ? -1 : nowMillis - read;
  }

  /**
   * How far behind the binlog the reading was when the newest change was read, -1 before the first.
   */
  public long eventTimeLagMillis() {
    long event = lastEventTimeMillis;
    long read = lastEventReadMillis;
    return event < 0 || read < 0 ? -1 : Math.max(0, read - event);
  }

  public long eventsRead() {
    return eventsRead;
  }
}
