package io.cerberus.servers;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;
import java.util.stream.Collectors;

/**
 * Servers that elect a leader among themselves ({@link ZooKeeperEnsemble}, {@link EtcdCluster}):
 * what a fault loop needs to kill the leader, any member or a majority ({@link #kill(List)},
 * {@link #restart(List)}) and see them rejoin, and the lifecycle
 * they share. Members are numbered from 0 in start order and never change; each runs in a
 * directory of its own under the ensemble's, which is deleted on close when it was made
 * temporary. {@link #heal()} resumes and relaunches every faulted member, then waits until all
 * serve. Not thread-safe.
 *
 * @param <S> the kind of member
 */
public abstract class Ensemble<S extends LoopbackServer> implements Deployment {
    private final List<S> members;
    private final Path dir;
    private final boolean temporaryDir;

    /**
     * @param members the members, filled in by the builder as it starts them
     * @param dir the ensemble's directory
     * @param temporaryDir whether {@link #close()} deletes it
     */
    Ensemble(List<S> members, Path dir, boolean temporaryDir) {
        this.members = members;
        this.dir = dir;
        this.temporaryDir = temporaryDir;
    }

    /** @return how many members it has */
    public final int size() {
        return members.size();
    }

    /**
     * @param index 0 to {@link #size()} - 1
     * @return that member, to fault or ask
     * @throws IndexOutOfBoundsException if there is no such member
     */
    public final S member(int index) {
        return members.get(index);
    }

    /** @return the members, in start order */
    public final List<S> members() {
        return List.copyOf(members);
    }

    /** @return {@code 127.0.0.1:P1,127.0.0.1:P2,...}, in start order */
    protected final String hostPorts() {
        return members.stream().map(LoopbackServer::hostPort).collect(Collectors.joining(","));
    }

    /**
     * @param index 0 to {@link #size()} - 1
     * @return what the member says it is now: {@code leader} or {@code follower}; empty when it
     *     does not serve (down, paused, or without a quorum)
     * @throws IndexOutOfBoundsException if there is no such member
     */
    public abstract String role(int index);

    /** @return the index of the member that says it leads now; empty while there is none (an election runs) */
    public OptionalInt leader() {
        for (int i = 0; i < members.size(); i++) {
            if (role(i).equals("leader")) {
                return OptionalInt.of(i);
            }
        }
        return OptionalInt.empty();
    }

    /**
     * Waits until a member says it leads.
     *
     * @param within how long an election may take
     * @return the index of the leader
     * @throws ServerException if none leads within the time
     */
    public final int awaitLeader(Duration within) {
        OptionalInt[] leader = {OptionalInt.empty()};
        Await.until("a leader in the " + this, within, () -> (leader[0] = leader()).isPresent());
        return leader[0].getAsInt();
    }

    /** @return how many members make a majority: {@code size() / 2 + 1}, without which none serves */
    public final int majority() {
        return members.size() / 2 + 1;
    }

    /**
     * Kills several members with SIGKILL, one after the other, each confirmed as by
     * {@link LoopbackServer#kill()} (exited, client port refusing). Killing a majority
     * ({@link #majority()}) leaves the others without a quorum: they serve no client until enough
     * are back ({@link #restart(List)}).
     *
     * @param indexes the members, 0 to {@link #size()} - 1
     * @throws IndexOutOfBoundsException if there is no such member
     * @throws ServerException if one does not exit, or its port does not close, in time
     */
    public final void kill(List<Integer> indexes) {
        indexes.forEach(index -> members.get(index).kill());
    }

    /**
     * Starts killed members again on their ports and data, all before waiting for any (a member
     * serves only once a quorum runs), then waits until each serves as leader or follower.
     *
     * @param indexes the members, 0 to {@link #size()} - 1, none running
     * @throws IndexOutOfBoundsException if there is no such member
     * @throws IllegalArgumentException if one of them still runs
     * @throws ServerException if one does not serve within the start timeout
     */
    public final void restart(List<Integer> indexes) {
        List<S> chosen = indexes.stream().map(members::get).toList();
        for (int i = 0; i < chosen.size(); i++) {
            if (chosen.get(i).isRunning()) {
                throw new IllegalArgumentException("restart takes killed members; member " + indexes.get(i) + " ("
                        + chosen.get(i) + ") still runs");
            }
        }
        chosen.forEach(LoopbackServer::healWithoutWaiting);
        chosen.forEach(LoopbackServer::awaitServes);
    }

    /**
     * Resumes paused members and starts killed ones again, then waits until every one serves.
     *
     * @throws ServerException if a member does not serve in time
     */
    @Override
    public final void heal() {
        List<S> launched =
                members.stream().filter(LoopbackServer::healWithoutWaiting).toList();
        launched.forEach(LoopbackServer::awaitServes);
    }

    /** Kills every member and waits for them; deletes the directory if it made it. */
    @Override
    public final void close() {
        members.forEach(LoopbackServer::close);
        if (temporaryDir) {
            Directories.deleteQuietly(dir);
        }
    }
}
