/**
 * The partition owner's write path (issue 28): the writer subtask that handles every change of a
 * partition knows where each live row of it is, and deletes a row of a committed file by its
 * position (a deletion vector on format-v3 tables, a position-delete file on v2) instead of by its
 * key, so readers never pay for equality deletes.
 *
 * <p>Building blocks, each usable without Flink: {@link
 * dev.shardberg.coordinator.owner.CommittedRows} reads where the live rows of one partition are in
 * the committed table; {@link dev.shardberg.coordinator.owner.CommittedRowDeletes} turns the
 * positions deleted in one checkpoint into delete files, merged with each data file's previous
 * deletion vector.
 */
package dev.shardberg.coordinator.owner;
