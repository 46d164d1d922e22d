package io.cerberus.servers;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** What one Sentinel answers about the primary it watches under a name, asked with {@link RespQuery}. */
final class SentinelAnswers {
    private final int sentinelPort;
    private final String masterName;

    /**
     * @param sentinelPort the Sentinel's loopback port
     * @param masterName the name it knows the primary by
     */
    SentinelAnswers(int sentinelPort, String masterName) {
        this.sentinelPort = sentinelPort;
        this.masterName = masterName;
    }

    /** @return the port of the primary it names ({@code SENTINEL GET-MASTER-ADDR-BY-NAME}), empty if it does not answer */
    Optional<Integer> primaryPort() {
        List<String> address = RespQuery.send(sentinelPort, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", masterName);
        return address.size() == 2 ? Optional.of(Integer.parseInt(address.get(1))) : Optional.empty();
    }

    /**
     * @param count the replicas expected
     * @param otherSentinels the other Sentinels expected
     * @return whether it knows that many replicas and other Sentinels: what a failover needs
     */
    boolean knows(int count, int otherSentinels) {
        List<String> master = RespQuery.send(sentinelPort, "SENTINEL", "MASTER", masterName);
        return RespQuery.field(master, "num-slaves").equals(Integer.toString(count))
                && RespQuery.field(master, "num-other-sentinels").equals(Integer.toString(otherSentinels));
    }

    /**
     * Not the link status the Sentinel last read: it refreshes a replica's INFO only every 10 s
     * while the primary is up.
     *
     * @param replicaPort a replica's port
     * @return whether it lists that replica with no flag but {@code slave}, and the replica says it is one
     */
    boolean listsUp(int replicaPort) {
        return replicas().stream()
                .anyMatch(fields -> fields.getOrDefault("port", "").equals(Integer.toString(replicaPort))
                        && fields.getOrDefault("flags", "").equals("slave")
                        && fields.getOrDefault("role-reported", "").equals("slave"));
    }

    /** @return its {@code SENTINEL REPLICAS}: one map of fields per replica */
    private List<Map<String, String>> replicas() {
        List<String> flat = RespQuery.send(sentinelPort, "SENTINEL", "REPLICAS", masterName);
        List<Map<String, String>> replicas = new ArrayList<>();
        for (int i = 0; i + 1 < flat.size(); i += 2) { // key, value pairs; each replica's begin with "name"
            if (flat.get(i).equals("name")) {
                replicas.add(new HashMap<>());
            }
            if (!replicas.isEmpty()) {
                replicas.get(replicas.size() - 1).put(flat.get(i), flat.get(i + 1));
            }
        }
        return replicas;
    }

    /** @return for messages: that it does not answer, or its TILT flag, the primary it names and its replicas' ports and flags */
    String describe() {
        String info = RespQuery.text(sentinelPort, "INFO", "sentinel");
        if (info.isEmpty()) {
            return "does not answer";
        }
        List<String> replicas = replicas().stream()
                .map(fields -> "port=" + fields.get("port") + " flags=" + fields.get("flags") + " role-reported="
                        + fields.get("role-reported"))
                .toList();
        return (info.contains("sentinel_tilt:1") ? "in TILT mode, " : "") + "names primary port "
                + primaryPort().map(String::valueOf).orElse("none") + ", replicas " + replicas;
    }
}
