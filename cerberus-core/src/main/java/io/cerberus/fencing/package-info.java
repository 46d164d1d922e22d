/**
 * Fencing the resource a lock protects: the checks that make a store refuse a write (or a read that
 * precedes a write) carrying an older {@link io.cerberus.Fence} than the newest it has seen, so a
 * holder that was paused past its lease cannot undo the work of the holder after it. JDK only.
 *
 * <p>{@link io.cerberus.fencing.FencedRows} fences the rows of a SQL table over plain JDBC,
 * {@link io.cerberus.fencing.FencedFile} a file; a refused change is a
 * {@link io.cerberus.fencing.StaleFenceException} (also for cerberus-redis's {@code FencedRedis}).
 * See docs/FENCING.md.
 */
package io.cerberus.fencing;
