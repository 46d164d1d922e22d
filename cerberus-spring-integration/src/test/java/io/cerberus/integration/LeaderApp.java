package io.cerberus.integration;

import io.cerberus.Cerberus;
import io.cerberus.servers.ManagedProcess;
import java.time.Duration;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.leader.event.OnFailedToAcquireMutexEvent;
import org.springframework.integration.leader.event.OnGrantedEvent;
import org.springframework.integration.leader.event.OnRevokedEvent;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * The child JVM of {@link LeaderFailoverAcrossProcessesTest}: a tiny Spring application (no web)
 * whose {@link LockRegistryLeaderInitiator} runs on a {@link CerberusLockRegistry} over the engine of
 * {@link ManagedProcess#engineUri()}, with a lease of {@code args[1]} milliseconds. It prints
 * {@code READY}, then {@code GRANTED <epoch ms>}, {@code REVOKED <epoch ms>} and, once,
 * {@code FOLLOWING} (its first failed attempt) on standard output, and stops when its standard input
 * ends.
 */
public final class LeaderApp {
    private LeaderApp() {}

    public static void main(String[] args) throws Exception {
        String name = args[0];
        Duration lease = Duration.ofMillis(Long.parseLong(args[1]));
        try (Cerberus cerberus = Cerberus.builder()
                        .engine(ManagedProcess.engineUri())
                        .defaultLease(lease)
                        .build();
                GenericApplicationContext context = new GenericApplicationContext()) {
            context.registerBean(CerberusLockRegistry.class, () -> new CerberusLockRegistry(cerberus));
            context.registerBean(LockRegistryLeaderInitiator.class, () -> {
                LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(
                        context.getBean(CerberusLockRegistry.class), new DefaultCandidate(name, "si-leader"));
                initiator.setPublishFailedEvents(true);
                return initiator;
            });
            context.addApplicationListener(new Reporter());
            context.refresh();
            System.out.println("READY");
            while (System.in.read() >= 0) {
                // runs until the parent closes standard input, or kills this process
            }
        }
    }

    private static final class Reporter implements ApplicationListener<ApplicationEvent> {
        private boolean following;

        @Override
        public void onApplicationEvent(ApplicationEvent event) {
            if (event instanceof OnGrantedEvent) {
                System.out.println("GRANTED " + System.currentTimeMillis());
            } else if (event instanceof OnRevokedEvent) {
                System.out.println("REVOKED " + System.currentTimeMillis());
            } else if (event instanceof OnFailedToAcquireMutexEvent && !following) {
                following = true;
                System.out.println("FOLLOWING");
            }
        }
    }
}
