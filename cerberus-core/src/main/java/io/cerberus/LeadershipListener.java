package io.cerberus;

/**
 * Told of one participant's leadership: elected, in doubt, vouched for again, revoked. Called one
 * at a time and in order, on the client's event thread; a listener that throws is logged and does
 * not stop the others. Every method does nothing by default.
 */
public interface LeadershipListener {

    /**
     * This participant now leads.
     *
     * @param leadership the participant
     * @param term the term (the hold's fencing token), or -1 on an engine without fencing tokens
     */
    default void elected(Leadership leadership, long term) {}

    /**
     * The client cannot vouch for the leadership now (a renewal could not reach the engine, a
     * ZooKeeper session is suspended): pause the leader's work. Followed by {@link #confirmed} or
     * {@link #revoked}.
     *
     * @param leadership the participant
     */
    default void uncertain(Leadership leadership) {}

    /**
     * After {@link #uncertain}, the engine vouches for the leadership again: the same term goes on.
     *
     * @param leadership the participant
     */
    default void confirmed(Leadership leadership) {}

    /**
     * This participant no longer leads: its hold was lost (another may lead already), or it stepped
     * down ({@link Leadership#close()}). It contends again unless it was closed.
     *
     * @param leadership the participant
     * @param reason why, one sentence
     */
    default void revoked(Leadership leadership, String reason) {}
}
