package io.cerberus.jdbc;

import io.cerberus.spi.Acquisition;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * A release that hands the lock over, in the same statement, to a waiting attempt of the same
 * engine (the head of the core's line for the lock), with the next fence and that attempt's lease
 * counted from the release. It hands over only while no client of another process has marked the
 * row wanted (this engine's own mark does not count), or regardless within this engine's turn;
 * otherwise it releases as a plain release does. One reading of the database's clock decides it all.
 * PostgreSQL and MariaDB/MySQL have one ({@link SqlDialect#handOverRelease}); H2 does not.
 */
interface HandOverRelease {
    /** The answer when the releasing hold was no longer ours or had expired: nothing changed. */
    long NOT_RELEASED = -2;
    /** The answer when the lock was released for all rather than handed over. */
    long RELEASED = -1;

    /**
     * Sends the release of {@code releasing} that hands the lock to {@code next}.
     *
     * @param key the lock's row key
     * @param ownMark the wanted mark this engine last wrote on the row ({@link WantedMarks#ownMarkToPass})
     * @param evenIfWanted whether to hand over though another client marked the row: within the turn
     * @return the new owner's fence when handed over, {@link #RELEASED}, or {@link #NOT_RELEASED}
     */
    long releaseHandingOver(
            Db db,
            Connection connection,
            String key,
            Acquisition releasing,
            Acquisition next,
            long ownMark,
            boolean evenIfWanted)
            throws SQLException;
}
