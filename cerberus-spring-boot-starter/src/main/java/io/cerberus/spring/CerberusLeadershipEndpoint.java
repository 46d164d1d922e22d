package io.cerberus.spring;

import io.cerberus.Leadership;
import java.util.Map;
import java.util.TreeMap;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * The actuator endpoint {@code cerberusleadership}: for each election this instance takes part in
 * ({@link LeaderElections}), whether it leads and who leads, as the engine answers now (a snapshot,
 * stale as soon as it is read). Read-only. {@code GET /actuator/cerberusleadership}.
 */
@Endpoint(id = "cerberusleadership")
public class CerberusLeadershipEndpoint {
    private final LeaderElections elections;

    /** @param elections this instance's elections */
    public CerberusLeadershipEndpoint(LeaderElections elections) {
        this.elections = elections;
    }

    /** @return each election by name */
    @ReadOperation
    public Map<String, Election> elections() {
        Map<String, Election> shown = new TreeMap<>();
        for (Map.Entry<String, Leadership> entry : elections.elections().entrySet()) {
            Leadership leadership = entry.getValue();
            String leader;
            String error = null;
            try {
                leader = leadership.currentLeader().orElse(null);
            } catch (RuntimeException e) {
                leader = null;
                error = e.getClass().getSimpleName() + ": " + e.getMessage();
            }
            shown.put(entry.getKey(), new Election(leadership.participantId(), leadership.isLeader(), leader, error));
        }
        return shown;
    }

    /**
     * One election as this instance sees it.
     *
     * @param participantId this instance's participant id
     * @param leading whether this instance leads now
     * @param leader the leader's participant id as the engine lists it, or null (nobody, or not listed)
     * @param error why the leader could not be read (an engine that cannot list its locks, or unreachable), or null
     */
    public record Election(String participantId, boolean leading, String leader, String error) {}
}
