package io.cerberus.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.LockInfo;
import io.cerberus.spi.LockKey;
import io.lettuce.core.cluster.SlotHash;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** What the engine does on a real Redis Cluster beyond the conformance suite. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class RedisClusterTest {
    private final String namespace = "cluster-" + UUID.randomUUID().toString().substring(0, 8);

    private Cerberus client(String uri, Duration lease) {
        return Cerberus.builder().engine(uri).namespace(namespace).defaultLease(lease).build();
    }

    /** Masters (by port) that own at least one of the names' slots. */
    private static Set<Integer> mastersOf(String namespace, List<String> names) {
        Set<Integer> slots = names.stream().map(name -> SlotHash.getSlot(LockKeys.of(new LockKey(namespace, name)).owner()))
                .collect(Collectors.toSet());
        Set<Integer> masters = new HashSet<>();
        for (RedisServer node : RedisClusterSetup.shared().nodes()) {
            for (String line : node.admin().clusterNodes().lines().toList()) {
                String[] fields = line.split(" ");
                if (fields[2].contains("myself") && fields[2].contains("master")) {
                    for (int f = 8; f < fields.length; f++) {
                        String[] range = fields[f].split("-");
                        int from = Integer.parseInt(range[0]);
                        int to = Integer.parseInt(range[range.length - 1]);
                        if (slots.stream().anyMatch(slot -> slot >= from && slot <= to)) {
                            masters.add(node.port());
                        }
                    }
                }
            }
        }
        return masters;
    }

    @Test
    void holdsOnEveryMasterAreRenewedTogetherAndStayValid() throws Exception {
        Duration lease = Duration.ofMillis(900);
        List<String> names = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            names.add("held-" + i);
        }
        assertThat(mastersOf(namespace, names)).as("the names spread over every master").hasSize(3);
        try (Cerberus cerberus = client(RedisClusterSetup.shared().uri(), lease)) {
            List<DistributedLock> held = new ArrayList<>();
            for (String name : names) {
                DistributedLock lock = cerberus.lock(name);
                lock.lock();
                held.add(lock);
            }
            // three lease periods: without renewals grouped by slot every renewal would fail (CROSSSLOT)
            Thread.sleep(lease.multipliedBy(3).toMillis());
            for (DistributedLock lock : held) {
                assertThat(lock.lease().isValid()).as("lease of %s after 3 lease periods", lock.name()).isTrue();
            }
            held.forEach(DistributedLock::unlock);
        }
    }

    @Test
    void inspectListsTheLocksOfEveryMaster() {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            names.add("seen-" + i);
        }
        assertThat(mastersOf(namespace, names)).hasSize(3);
        try (Cerberus cerberus = client(RedisClusterSetup.shared().uri(), Duration.ofSeconds(30))) {
            for (String name : names) {
                assertThat(cerberus.lock(name).tryLock()).isTrue();
            }
            assertThat(cerberus.inspect("").stream().map(LockInfo::name)).containsExactlyInAnyOrderElementsOf(names);
            names.forEach(name -> cerberus.lock(name).unlock());
        }
    }

    @Test
    void aGrantWaitsForItsReplica() {
        try (Cerberus cerberus = client(RedisClusterSetup.shared().uri() + "?waitReplicas=1&waitTimeout=2s", Duration.ofSeconds(30))) {
            List<String> names = List.of("replicated-a", "replicated-b", "replicated-c", "replicated-d", "replicated-e");
            for (String name : names) {
                DistributedLock lock = cerberus.lock(name);
                assertThat(lock.tryLock()).isTrue();
                lock.unlock();
            }
        }
    }

    @Test
    void aClusterHasOnlyDatabaseZero() {
        String uri = RedisClusterSetup.shared().uri();
        assertThatThrownBy(() -> Cerberus.builder().engine(uri + "/3").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("only database 0");
    }
}
