package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.event.EventListener;

/**
 * {@link LeaderWork} beans of two instances of an application: one leads, its work started with a
 * term; when it stops, it steps down at once and the other leads with a higher term; the events are
 * published and the actuator endpoint's view shows who leads.
 */
class LeaderWorkTest {
    private final String store = "mem:leaders-" + UUID.randomUUID();
    private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

    @AfterEach
    void stopInstances() {
        instances.forEach(ConfigurableApplicationContext::close);
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean
        Billing billing() {
            return new Billing();
        }
    }

    /** Work done only while leading; records what it was told, and the events the application saw. */
    static class Billing implements LeaderWork {
        final BlockingQueue<String> told = new LinkedBlockingQueue<>();
        final BlockingQueue<LeadershipEvent> events = new LinkedBlockingQueue<>();

        @Override
        public String leadership() {
            return "billing";
        }

        @Override
        public void lead(long term) {
            told.add("lead " + term);
        }

        @Override
        public void stepDown(String reason) {
            told.add("step down: " + reason);
        }

        @EventListener
        void on(LeadershipEvent event) {
            events.add(event);
        }
    }

    private Billing instance() {
        ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class)
                .web(WebApplicationType.NONE)
                .properties("cerberus.engines=" + store)
                .run();
        instances.add(context);
        return context.getBean(Billing.class);
    }

    @Test
    void oneInstanceLeadsAndAStoppedLeaderHandsOverAtOnceWithAHigherTerm() throws Exception {
        Billing first = instance();
        String firstLead = first.told.poll(10, TimeUnit.SECONDS);
        assertThat(firstLead).as("the first instance leads").startsWith("lead ");
        long firstTerm = Long.parseLong(firstLead.substring("lead ".length()));
        LeadershipEvent granted = first.events.poll(10, TimeUnit.SECONDS);
        assertThat(granted).isInstanceOf(LeadershipEvent.Granted.class);
        assertThat(((LeadershipEvent.Granted) granted).term()).isEqualTo(firstTerm);
        assertThat(granted.leadership()).isEqualTo("billing");

        Billing second = instance();
        assertThat(second.told.poll(300, TimeUnit.MILLISECONDS))
                .as("the second waits")
                .isNull();
        Map<String, CerberusLeadershipEndpoint.Election> shown =
                new CerberusLeadershipEndpoint(instances.get(1).getBean(LeaderElections.class)).elections();
        assertThat(shown.get("billing").leading()).isFalse();
        assertThat(shown.get("billing").leader()).isEqualTo(granted.participantId());

        long stoppedAt = System.nanoTime();
        instances.get(0).close();
        assertThat(first.told.poll(5, TimeUnit.SECONDS)).startsWith("step down:");
        assertThat(first.events.poll(5, TimeUnit.SECONDS)).isInstanceOf(LeadershipEvent.Revoked.class);
        String secondLead = second.told.poll(10, TimeUnit.SECONDS);
        assertThat(secondLead).as("the second instance leads").startsWith("lead ");
        assertThat(System.nanoTime() - stoppedAt)
                .as("at once, not after a lease")
                .isLessThan(TimeUnit.SECONDS.toNanos(2));
        assertThat(Long.parseLong(secondLead.substring("lead ".length()))).isGreaterThan(firstTerm);
    }
}
