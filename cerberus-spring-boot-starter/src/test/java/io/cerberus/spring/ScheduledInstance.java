package io.cerberus.spring;

import io.cerberus.servers.ManagedProcess;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * One instance of an application with a job scheduled every second under {@link ExclusiveRun}, for
 * {@link ScheduledJobAcrossProcessesTest}: prints {@code READY} once started, {@code RAN <second>
 * <instance>} for each run (the wall-clock second it began in), and its log lines as {@code LOG
 * <level> <logger> <message>}; it stops when its input ends.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableScheduling
public class ScheduledInstance {
    /** How long a run keeps the lock at least: half the period, so a late instance cannot run the tick again. */
    static final String AT_LEAST = "500ms";

    @Bean
    Reminders reminders(@Value("${instance}") String instance) {
        return new Reminders(instance);
    }

    /** The job. */
    public static class Reminders {
        private final String instance;

        Reminders(String instance) {
            this.instance = instance;
        }

        /** Runs on every instance every second; one of them does the work. */
        @Scheduled(cron = "* * * * * *")
        @ExclusiveRun(name = "reminders", atLeast = AT_LEAST)
        public void send() {
            ExclusiveRuns.assertHeld();
            System.out.println("RAN " + System.currentTimeMillis() / 1000 + " " + instance);
            System.out.flush();
        }
    }

    /**
     * @param args the instance's name
     * @throws Exception if it cannot start
     */
    public static void main(String[] args) throws Exception {
        ConfigurableApplicationContext context = new SpringApplicationBuilder(ScheduledInstance.class)
                .web(WebApplicationType.NONE)
                .properties(
                        "cerberus.engines[0]=" + ManagedProcess.engineUri(),
                        "instance=" + args[0],
                        "spring.main.banner-mode=off",
                        "logging.pattern.console=LOG %level %logger %msg%n",
                        "logging.level.io.cerberus=DEBUG")
                .run();
        System.out.println("READY");
        System.out.flush();
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
        context.close();
    }
}
