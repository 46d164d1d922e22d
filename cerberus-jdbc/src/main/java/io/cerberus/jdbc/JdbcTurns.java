package io.cerberus.jdbc;

import io.cerberus.spi.TakesTurns;
import java.time.Duration;

/**
 * How the core lines up the waiters of both jdbc engines: a refused head backs off from
 * {@link LeaseRowEngine#FIRST_BACKOFF} to {@link LeaseRowEngine#MAX_BACKOFF}, and where an engine
 * takes turns with other processes (it answers for {@link TakesTurns} itself) a turn lasts
 * {@link LeaseRowEngine#TURN} and a yield holds the line back {@link LeaseRowEngine#HOLD_BACK}.
 */
interface JdbcTurns extends TakesTurns {

    @Override
    default Duration firstBackoff() {
        return LeaseRowEngine.FIRST_BACKOFF;
    }

    @Override
    default Duration maxBackoff() {
        return LeaseRowEngine.MAX_BACKOFF;
    }

    @Override
    default Duration turn() {
        return LeaseRowEngine.TURN;
    }

    @Override
    default Duration holdBack() {
        return LeaseRowEngine.HOLD_BACK;
    }
}
