package dev.shardberg.tests.bench;

/**
 * The row versions (shard, key, MySQL commit time) a freshness measurement has already timed, as a
 * set of 64-bit fingerprints with open addressing: 8 to 16 bytes per version, where a {@code
 * HashSet} of records would take ~10 times that for the millions of changes of a long run. A row
 * that a compaction writes again keeps its key and commit time; it was visible since the snapshot
 * that first added it and is not timed again. Two versions share a fingerprint with a probability
 * of about n²/2⁶⁵ (below one in a million for 4 million changes): such a version is not timed.
 */
final class SeenRowVersions {
  private static final long EMPTY = 0;

  private long[] slots = new long[1 << 12];
  private int size;
  private boolean emptyFingerprintSeen;

  /** True the first time this version is added. */
  synchronized boolean add(int shard, long key, long commitMicros) {
    long fingerprint = fingerprint(shard, key, commitMicros);
    if (fingerprint == EMPTY) {
      boolean first = !emptyFingerprintSeen;
      emptyFingerprintSeen = true;
      return first;
    }
    if ((size + 1) * 2 > slots.length) {
      grow();
    }
    if (!insert(slots, fingerprint)) {
      return false;
    }
    size++;
    return true;
  }

  synchronized int size() {
    return size + (emptyFingerprintSeen ? 1 : 0);
  }

  private void grow() {
    long[] bigger = new long[slots.length * 2];
    for (long f : slots) {
      if (f != EMPTY) {
        insert(bigger, f);
      }
    }
    slots = bigger;
  }

  private static boolean insert(long[] table, long fingerprint) {
    int mask = table.length - 1;
    for (int i = (int) (fingerprint ^ (fingerprint >>> 32)) & mask; ; i = (i + 1) & mask) {
      if (table[i] == fingerprint) {
        return false;
      }
      if (table[i] == EMPTY) {
        table[i] = fingerprint;
        return true;
      }
    }
  }

  /** Mixes the three values so that neighbouring keys and times spread over all 64 bits. */
  static long fingerprint(int shard, long key, long commitMicros) {
    long h = mix(shard * 0x9E3779B97F4A7C15L + 0x632BE59BD9B4E019L);
    h = mix(h ^ key);
    return mix(h ^ commitMicros);
  }

  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }
}
