package io.cerberus.servers;

import java.time.Duration;
import java.util.OptionalInt;

/**
 * Servers that elect a leader among themselves ({@link ZooKeeperEnsemble}, {@link EtcdCluster}):
 * what a fault loop needs to kill the leader or any member and see it rejoin. Members are numbered
 * from 0 in start order. Not thread-safe.
 */
public interface Ensemble extends Deployment {

    /** @return how many members it has */
    int size();

    /**
     * @param index 0 to {@link #size()} - 1
     * @return that member, to fault or ask
     * @throws IndexOutOfBoundsException if there is no such member
     */
    LoopbackServer member(int index);

    /**
     * @param index 0 to {@link #size()} - 1
     * @return what the member says it is now: {@code leader} or {@code follower}; empty when it
     *     does not serve (down, paused, or without a quorum)
     * @throws IndexOutOfBoundsException if there is no such member
     */
    String role(int index);

    /** @return the index of the member that says it leads now; empty while there is none (an election runs) */
    OptionalInt leader();

    /**
     * Waits until a member says it leads.
     *
     * @param within how long an election may take
     * @return the index of the leader
     * @throws ServerException if none leads within the time
     */
    int awaitLeader(Duration within);
}
