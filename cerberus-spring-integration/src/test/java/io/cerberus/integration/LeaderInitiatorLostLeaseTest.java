package io.cerberus.integration;

import static io.cerberus.integration.AbstractLockRegistryContractTest.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Cerberus;
import io.cerberus.LockInfo;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.integration.leader.AbstractCandidate;
import org.springframework.integration.leader.Context;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * {@code LockRegistryLeaderInitiator} on the registry when the leader's lease is lost while it leads
 * (freed by force, as an operator or an expiry during a pause would): the initiator learns it at its
 * next heartbeat and revokes leadership, the instance competes again and leads again, and stopping
 * the initiator releases the lock (no hold count left behind). On {@code mem:}, in one JVM.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class LeaderInitiatorLostLeaseTest {
    @Test
    void aLeaseLostWhileLeadingRevokesLeadershipAndTheInstanceLeadsAgain() throws Exception {
        List<String> events = new CopyOnWriteArrayList<>();
        try (Cerberus cerberus = Cerberus.builder()
                        .engine("mem:leader-lost")
                        .defaultLease(Duration.ofMillis(600))
                        .build();
                Cerberus operator = Cerberus.connect("mem:leader-lost")) {
            LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(
                    new CerberusLockRegistry(cerberus), new AbstractCandidate("a", "role") {
                        @Override
                        public void onGranted(Context context) {
                            events.add("granted");
                        }

                        @Override
                        public void onRevoked(Context context) {
                            events.add("revoked");
                        }
                    });
            initiator.start();
            try {
                await("leadership", () -> events.contains("granted"));
                LockInfo hold = operator.inspect("role").get(0);
                assertThat(operator.forceRelease("role", hold.fencingToken())).isTrue();
                await("revoked and granted again", () -> events.size() >= 3);
                assertThat(events.subList(0, 3)).containsExactly("granted", "revoked", "granted");
                assertThat(initiator.getContext().isLeader()).isTrue();
            } finally {
                initiator.stop();
            }
            await("the lock freed by the stop", () -> operator.inspect("role").isEmpty());
            assertThat(events).endsWith("revoked");
        }
    }
}
