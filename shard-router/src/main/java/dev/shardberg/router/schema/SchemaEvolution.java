package dev.shardberg.router.schema;

import dev.shardberg.router.ShardRouterException;
import dev.shardberg.router.types.MySqlColumn;
import dev.shardberg.router.types.MySqlType;
import dev.shardberg.router.types.TypeMapping;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.apache.iceberg.Schema;
import org.apache.iceberg.UpdateSchema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;

/**
 * The rules that turn one shard's column change into changes of the one Iceberg table (pure logic;
 * docs/schema-evolution.md is the same table in prose). The shard's columns before and after the
 * DDL are compared with each other (what did the DDL do to the shard's values?) and with the table
 * (what must the table gain so that every shard's rows fit?):
 *
 * <ul>
 *   <li>a column new on the shard and missing in the table: added to the table, optional, at the
 *       end (a RENAME / CHANGE of a column is a drop plus an add, so it becomes a new column too);
 *   <li>a column the table has narrower than the shard now holds (int → long, float → double,
 *       decimal precision up at the same scale): the table's type is widened;
 *   <li>a column dropped on the shard, or made NULL-able: the table's column becomes optional;
 *   <li>a change that keeps the Iceberg type (VARCHAR length, TEXT sizes, ENUM labels, TINYINT →
 *       INT): nothing;
 *   <li>not evolvable, the job stops: a change of the primary key or of a key column's type, a type
 *       change the table cannot take (narrowing, INT → VARCHAR, a DECIMAL scale change) — MySQL
 *       rewrote the shard's existing values, which the binlog does not carry;
 *   <li>not evolvable either, with its own message ({@link #wideDecimalChange}): a DECIMAL that
 *       grows past 38 digits (or shrinks to 38 or fewer). Beyond 38 digits it is an Iceberg string
 *       of its exact digits ({@link MySqlType#DECIMAL_STRING}), and Iceberg cannot change a decimal
 *       column into a string. Such a wide DECIMAL may only grow its precision at the same scale
 *       (the string holds every value).
 * </ul>
 *
 * <p>Every decision is made against the table's current schema, so applying the same DDL twice (a
 * replay after a restore, or the same rollout arriving from a second shard) changes nothing the
 * second time.
 */
public final class SchemaEvolution {
  private SchemaEvolution() {}

  /** One change of the table: add a column, widen its type, or make it optional. */
  public record Change(Kind kind, String column, Type type, String doc) {
    public enum Kind {
      ADD,
      WIDEN,
      MAKE_OPTIONAL
    }

    void applyTo(UpdateSchema update) {
      switch (kind) {
        case ADD -> update.addColumn(column, type, doc);
        case WIDEN ->
            update.updateColumn(column, type.asPrimitiveType()).updateColumnDoc(column, doc);
        case MAKE_OPTIONAL -> update.makeColumnOptional(column);
        default -> throw new IllegalStateException("Unknown change " + kind);
      }
    }

    @Override
    public String toString() {
      return switch (kind) {
        case ADD -> "add optional column '" + column + "' " + type;
        case WIDEN -> "widen column '" + column + "' to " + type;
        case MAKE_OPTIONAL -> "make column '" + column + "' optional";
      };
    }
  }

  /**
   * The table changes that make {@code table} accept the shard's rows after the DDL; empty when the
   * DDL changes no column the table cares about.
   *
   * @param where the shard, for messages ("shard 7 ('shop.orders_7' on host 'a')")
   * @param ddl the statement, for messages
   * @param before the shard's columns before the DDL
   * @param after the shard's columns after it
   * @param keyBefore the primary key before ({@code null}: unknown)
   * @param keyAfter the primary key after ({@code null}: unknown)
   * @param keyColumns the table's key columns (without the shard column)
   * @throws ShardRouterException when the change is not evolvable, naming shard, column, DDL and
   *     the fix
   */
  public static List<Change> plan(
      String where,
      String ddl,
      List<MySqlColumn> before,
      List<MySqlColumn> after,
      List<String> keyBefore,
      List<String> keyAfter,
      Set<String> keyColumns,
      Schema table) {
    Objects.requireNonNull(table, "table");
    if (keyBefore != null && keyAfter != null && !keyBefore.equals(keyAfter)) {
      throw notEvolvable(
          where,
          ddl,
          String.join(", ", keyAfter),
          String.format(
              "the primary key changes from %s to %s; the table's rows are identified by the key",
              keyBefore, keyAfter));
    }
    Map<String, MySqlColumn> previous = new LinkedHashMap<>();
    before.forEach(c -> previous.put(c.name(), c));
    List<Change> changes = new ArrayList<>();
    for (MySqlColumn column : after) {
      Type shardType = TypeMapping.toIcebergType(column);
      MySqlColumn old = previous.remove(column.name());
      if (old != null) {
        String wideDecimal = wideDecimalChange(old, column);
        if (wideDecimal != null) {
          throw notEvolvable(where, ddl, column.name(), wideDecimal);
        }
        Type oldType = TypeMapping.toIcebergType(old);
        if (!oldType.equals(shardType)) {
          if (keyColumns.contains(column.name())) {
            throw notEvolvable(
                where,
                ddl,
                column.name(),
                String.format(
                    "key column '%s' changes type from %s to %s",
                    column.name(), old.describeType(), column.describeType()));
          }
          if (!promotable(oldType, shardType)) {
            throw notEvolvable(
                where,
                ddl,
                column.name(),
                String.format(
                    "column '%s' changes from %s (Iceberg %s) to %s (Iceberg %s): a narrowing or incompatible change"
                        + " (MySQL rewrote the shard's existing values, which the binlog does not carry)",
                    column.name(), old.describeType(), oldType, column.describeType(), shardType));
          }
        }
      }
      Types.NestedField field = table.findField(column.name());
      if (field == null) {
        changes.add(new Change(Change.Kind.ADD, column.name(), shardType, column.columnType()));
        continue;
      }
      if (!field.type().equals(shardType)) {
        if (field.type() instanceof Types.DecimalType && isWideDecimal(column)) {
          throw notEvolvable(
              where,
              ddl,
              column.name(),
              String.format(
                  "column '%s' is %s on the shard, more than %d digits, which Shardberg keeps as an Iceberg string of its"
                      + " exact digits, but the table's column is %s, and Iceberg cannot change a decimal column into a"
                      + " string. %s",
                  column.name(),
                  column.describeType(),
                  TypeMapping.MAX_DECIMAL_PRECISION,
                  field.type(),
                  wideDecimalFix(column)));
        }
        if (promotable(field.type(), shardType)) {
          changes.add(new Change(Change.Kind.WIDEN, column.name(), shardType, column.columnType()));
        } else if (!promotable(shardType, field.type())) {
          throw notEvolvable(
              where,
              ddl,
              column.name(),
              String.format(
                  "column '%s' is %s on the shard (Iceberg %s) but the table's column is %s, and neither widens to the other",
                  column.name(), column.describeType(), shardType, field.type()));
        } // else the table is already wider (another shard widened first): its values fit
      }
      if (field.isRequired() && column.nullable()) {
        changes.add(new Change(Change.Kind.MAKE_OPTIONAL, column.name(), field.type(), null));
      }
    }
    for (MySqlColumn dropped : previous.values()) {
      if (keyColumns.contains(dropped.name())) {
        throw notEvolvable(
            where,
            ddl,
            dropped.name(),
            String.format("key column '%s' is dropped", dropped.name()));
      }
      Types.NestedField field = table.findField(dropped.name());
      if (field != null && field.isRequired()) {
        changes.add(new Change(Change.Kind.MAKE_OPTIONAL, dropped.name(), field.type(), null));
      }
    }
    return changes;
  }

  /**
   * Why a column of a shard cannot change from {@code from} to {@code to} when either is a DECIMAL
   * of more than 38 digits ({@link MySqlType#DECIMAL_STRING}, an Iceberg string), naming the change
   * and what to do; null when neither is, or when only its precision grows at the same scale (the
   * string holds every value). Checked before the Iceberg types are compared: a scale change or a
   * change from or to another text type keeps the Iceberg type (string) while MySQL rewrote the
   * shard's existing values.
   */
  static String wideDecimalChange(MySqlColumn from, MySqlColumn to) {
    boolean wideFrom = isWideDecimal(from);
    boolean wideTo = isWideDecimal(to);
    if (!wideFrom && !wideTo) {
      return null;
    }
    String change =
        String.format(
            "column '%s' changes from %s to %s", to.name(), from.describeType(), to.describeType());
    int max = TypeMapping.MAX_DECIMAL_PRECISION;
    if (wideFrom && wideTo) {
      if (Objects.equals(from.scale(), to.scale()) && to.precision() >= from.precision()) {
        return null;
      }
      return change
          + ": "
          + (Objects.equals(from.scale(), to.scale()) ? "a narrowing" : "a DECIMAL scale change")
          + " (MySQL rewrote the shard's existing values, which the binlog does not carry)";
    }
    if (wideTo && isDecimal(from)) { // 38 digits or fewer before
      return String.format(
          "%s: more than %d digits, which Shardberg keeps as an Iceberg string of its exact digits, but the table's column"
              + " is an Iceberg decimal, and Iceberg cannot change a decimal column into a string. %s",
          change, max, wideDecimalFix(to));
    }
    if (wideFrom && isDecimal(to)) { // 38 digits or fewer after
      return String.format(
          "%s: the table's column is an Iceberg string of the exact digits (more than %d digits), and Iceberg cannot"
              + " change a string column into a decimal. Give the shard's column back its digits (MODIFY %s %s)",
          change, max, to.name(), from.columnType());
    }
    return change
        + ": a DECIMAL of more than "
        + max
        + " digits is an Iceberg string of its exact digits, and a change"
        + " between it and another type keeps the column a string while MySQL rewrote the shard's existing values,"
        + " which the binlog does not carry";
  }

  /**
   * For two shards whose column is a DECIMAL of 38 digits or fewer on one and of more on the other:
   * why they cannot share one column, and what to do; null otherwise.
   */
  static String wideDecimalNote(MySqlColumn expected, MySqlColumn found) {
    if (!isDecimal(expected)
        || !isDecimal(found)
        || isWideDecimal(expected) == isWideDecimal(found)) {
      return null;
    }
    int max = TypeMapping.MAX_DECIMAL_PRECISION;
    return String.format(
        "a DECIMAL of more than %d digits is an Iceberg string of its exact digits, one of %d or fewer an Iceberg decimal,"
            + " and Iceberg cannot change a decimal column into a string: give the column %d digits or fewer on this shard,"
            + " or more than %d on every shard",
        max, max, max, max);
  }

  private static boolean isDecimal(MySqlColumn c) {
    return c.dataType().equals("decimal") || c.dataType().equals("numeric");
  }

  /** A DECIMAL of more than 38 digits: an Iceberg string ({@link MySqlType#DECIMAL_STRING}). */
  private static boolean isWideDecimal(MySqlColumn c) {
    return isDecimal(c) && MySqlType.of(c) == MySqlType.DECIMAL_STRING;
  }

  /**
   * What to do about a shard whose DECIMAL column {@code wide} has more digits than the table's
   * decimal column.
   */
  private static String wideDecimalFix(MySqlColumn wide) {
    int max = TypeMapping.MAX_DECIMAL_PRECISION;
    return String.format(
        "Either keep the column at %d digits or fewer on this shard (MODIFY %s decimal(%d,%d), if its values fit), or, if"
            + " it needs the digits, give every shard the wider column and load a new Iceberg table (its column is then a"
            + " string of the exact digits; docs/type-mapping.md)",
        max, wide.name(), max, Math.min(wide.scale() == null ? 0 : wide.scale(), max));
  }

  /**
   * True when both lists hold the same columns with the same Iceberg types and nullability (any
   * order).
   */
  public static boolean sameColumns(List<MySqlColumn> before, List<MySqlColumn> after) {
    Map<String, String> a = new LinkedHashMap<>();
    before.forEach(c -> a.put(c.name(), TypeMapping.toIcebergType(c) + "|" + c.nullable()));
    Map<String, String> b = new LinkedHashMap<>();
    after.forEach(c -> b.put(c.name(), TypeMapping.toIcebergType(c) + "|" + c.nullable()));
    return a.equals(b);
  }

  /**
   * True when Iceberg can widen a column of type {@code from} to {@code to} (or they are equal).
   */
  static boolean promotable(Type from, Type to) {
    if (from.equals(to)) {
      return true;
    }
    return from.isPrimitiveType()
        && to.isPrimitiveType()
        && TypeUtil.isPromotionAllowed(from, to.asPrimitiveType());
  }

  private static ShardRouterException notEvolvable(
      String where, String ddl, String column, String what) {
    return new ShardRouterException(
        String.format(
            "Cannot evolve the table for a schema change on %s, column '%s': %s. DDL: '%s'. The job stops here"
                + " for good (a restart would meet the same DDL); nothing after the last completed checkpoint is"
                + " lost. Prefer evolvable changes (add a new column, widen a type); how to go on from here is in"
                + " docs/schema-evolution.md, section 'When the job stops'",
            where, column, what, ddl));
  }
}
