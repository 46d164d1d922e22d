package io.cerberus.spring;

import org.springframework.context.ApplicationEvent;

/**
 * Published when an election the starter runs ({@link LeaderWork}, or {@code cerberus.leadership.elections})
 * changes for this instance: {@link Granted} when it is elected, {@link Revoked} when it no longer
 * leads or is in doubt. Listen with {@code @EventListener}.
 */
public abstract sealed class LeadershipEvent extends ApplicationEvent {
    private static final long serialVersionUID = 1L;
    private final String leadership;
    private final String participantId;

    LeadershipEvent(Object source, String leadership, String participantId) {
        super(source);
        this.leadership = leadership;
        this.participantId = participantId;
    }

    /** @return the election's name */
    public String leadership() {
        return leadership;
    }

    /** @return this instance's participant id */
    public String participantId() {
        return participantId;
    }

    /** This instance leads, in {@link #term()}. */
    public static final class Granted extends LeadershipEvent {
        private static final long serialVersionUID = 1L;
        private final long term;

        Granted(Object source, String leadership, String participantId, long term) {
            super(source, leadership, participantId);
            this.term = term;
        }

        /** @return the term (the fencing token), or -1 on an engine without fencing tokens */
        public long term() {
            return term;
        }
    }

    /** This instance no longer leads, or cannot vouch for it now. */
    public static final class Revoked extends LeadershipEvent {
        private static final long serialVersionUID = 1L;
        private final String reason;

        Revoked(Object source, String leadership, String participantId, String reason) {
            super(source, leadership, participantId);
            this.reason = reason;
        }

        /** @return why, one sentence */
        public String reason() {
            return reason;
        }
    }
}
