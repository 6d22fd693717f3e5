package dev.shardberg.coordinator.zk;

import java.nio.charset.StandardCharsets;

/**
 * Where the HA mode keeps its znodes:
 *
 * <pre>
 * &lt;root&gt;/locks/&lt;table&gt;               Curator InterProcessMutex of one Iceberg table
 * &lt;root&gt;/pipelines/&lt;pipeline&gt;/epoch    fencing epoch of one pipeline (decimal text)
 * </pre>
 *
 * <p>Names are encoded so that two different table names or pipeline ids never share a znode: a
 * shared lock would only over-serialise, but a shared epoch would fence an unrelated pipeline.
 */
final class ZooKeeperPaths {
  private static final char[] HEX = "0123456789ABCDEF".toCharArray();

  private ZooKeeperPaths() {}

  static String lockPath(String rootPath, String tableName) {
    return rootPath + "/locks/" + nodeName(tableName);
  }

  static String epochPath(String rootPath, String pipelineId) {
    return rootPath + "/pipelines/" + nodeName(pipelineId) + "/epoch";
  }

  /**
   * An injective encoding of {@code name} into one znode name: {@code [A-Za-z0-9._-]} are kept,
   * every other UTF-8 byte (including {@code %} and {@code /}) becomes {@code %XX}, and the
   * reserved names {@code .} and {@code ..} are escaped too. {@code hadoop.shop.orders} stays
   * readable as is.
   */
  static String nodeName(String name) {
    if (name.equals(".") || name.equals("..")) {
      return name.replace(".", "%2E");
    }
    StringBuilder out = new StringBuilder(name.length());
    for (byte b : name.getBytes(StandardCharsets.UTF_8)) {
      char c = (char) (b & 0xFF);
      boolean plain =
          (c >= 'a' && c <= 'z')
              || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9')
              || c == '.'
              || c == '_'
              || c == '-';
      if (plain) {
        out.append(c);
      } else {
        out.append('%').append(HEX[(b >> 4) & 0xF]).append(HEX[b & 0xF]);
      }
    }
    return out.toString();
  }
}
