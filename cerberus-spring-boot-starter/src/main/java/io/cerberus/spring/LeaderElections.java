package io.cerberus.spring;

import io.cerberus.Cerberus;
import io.cerberus.Leadership;
import io.cerberus.LeadershipListener;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.SmartLifecycle;

/**
 * Runs the application's elections: one {@link Leadership} per name that a {@link LeaderWork} bean
 * or {@code cerberus.leadership.elections} gives, started with the application (after the other
 * beans), closed — stepping down at once — when it stops. Tells the works and publishes
 * {@link LeadershipEvent}s; an election in doubt is told as a step-down, vouched for again as a lead.
 *
 * <p>Invariants: for each election, the works hear {@code lead} and {@code stepDown} alternately,
 * starting with {@code lead}, in the order the client's event thread delivers them.
 */
public final class LeaderElections implements SmartLifecycle {
    private static final System.Logger LOG = System.getLogger(LeaderElections.class.getName());
    private final Cerberus cerberus;
    private final List<LeaderWork> works;
    private final List<String> names;
    private final ApplicationEventPublisher events;
    private final Map<String, Leadership> running = new ConcurrentHashMap<>();
    private final Map<String, Told> told = new ConcurrentHashMap<>();
    private volatile boolean started;

    LeaderElections(Cerberus cerberus, List<LeaderWork> works, List<String> names, ApplicationEventPublisher events) {
        this.cerberus = cerberus;
        this.works = List.copyOf(works);
        TreeSet<String> all = new TreeSet<>(names);
        works.forEach(work -> all.add(work.leadership()));
        this.names = List.copyOf(all);
        this.events = events;
    }

    /** @return the elections this instance takes part in, by name */
    public Map<String, Leadership> elections() {
        return Map.copyOf(running);
    }

    @Override
    public void start() {
        started = true;
        for (String name : names) {
            Leadership leadership = cerberus.leadership(name);
            Told listener = new Told(leadership, worksOf(name));
            leadership.onChange(listener);
            told.put(name, listener);
            running.put(name, leadership);
            leadership.start();
        }
    }

    @Override
    public void stop() {
        List<Leadership> ending = new ArrayList<>(running.values());
        running.clear();
        started = false;
        // told here, while the application still runs: the client's event thread may be gone soon
        told.values().forEach(listener -> listener.stepDown("stepped down: the application stops"));
        told.clear();
        ending.forEach(Leadership::close);
    }

    @Override
    public boolean isRunning() {
        return started;
    }

    private List<LeaderWork> worksOf(String name) {
        return works.stream().filter(work -> work.leadership().equals(name)).toList();
    }

    /** Tells one election's works and the application of its changes. */
    private final class Told implements LeadershipListener {
        private final Leadership leadership;
        private final List<LeaderWork> works;
        private final AtomicBoolean leading = new AtomicBoolean();

        Told(Leadership leadership, List<LeaderWork> works) {
            this.leadership = leadership;
            this.works = works;
        }

        @Override
        public void elected(Leadership elected, long term) {
            lead(term);
        }

        @Override
        public void confirmed(Leadership vouched) {
            lead(vouched.isLeader() ? termOf(vouched) : -1);
        }

        @Override
        public void uncertain(Leadership doubted) {
            stepDown("in doubt: the engine cannot vouch for the leadership now");
        }

        @Override
        public void revoked(Leadership lost, String reason) {
            stepDown(reason);
        }

        private void lead(long term) {
            if (!started || !leading.compareAndSet(false, true)) {
                return;
            }
            for (LeaderWork work : works) {
                call(() -> work.lead(term), work);
            }
            events.publishEvent(new LeadershipEvent.Granted(
                    LeaderElections.this, leadership.name(), leadership.participantId(), term));
        }

        void stepDown(String reason) {
            if (!leading.compareAndSet(true, false)) {
                return;
            }
            for (LeaderWork work : works) {
                call(() -> work.stepDown(reason), work);
            }
            events.publishEvent(new LeadershipEvent.Revoked(
                    LeaderElections.this, leadership.name(), leadership.participantId(), reason));
        }
    }

    private static void call(Runnable call, LeaderWork work) {
        try {
            call.run();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "the LeaderWork " + work + " of '" + work.leadership() + "' threw", e);
        }
    }

    private static long termOf(Leadership leadership) {
        try {
            return leadership.term();
        } catch (RuntimeException e) {
            return -1; // no fencing tokens, or no longer leading
        }
    }
}
