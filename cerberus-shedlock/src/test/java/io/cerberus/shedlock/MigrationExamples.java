package io.cerberus.shedlock;

import io.cerberus.Cerberus;
import io.cerberus.Fence;
import javax.sql.DataSource;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.Scheduled;

/** The code of docs/MIGRATION.md, "From ShedLock", compiled here; MigrationExamplesTest checks the page has it. */
final class MigrationExamples {
    private MigrationExamples() {}

    static class Before {
        @Bean
        LockProvider lockProvider(DataSource dataSource) {
            return new JdbcTemplateLockProvider(dataSource);
        }
    }

    static class After {
        @Bean
        LockProvider lockProvider(Cerberus cerberus) {
            return new CerberusLockProvider(cerberus);
        }
    }

    static class WithoutTheStarter {
        @Bean(destroyMethod = "close")
        Cerberus cerberus() {
            return Cerberus.connect("redis://redis.internal:6379");
        }
    }

    interface Alerts {
        void raise(String message);
    }

    static class RenewingPastLockAtMostFor {
        Alerts alerts;

        @Bean
        LockProvider lockProvider(Cerberus cerberus) {
            return CerberusLockProvider.builder(cerberus)
                    .renewPastLockAtMostFor(true)
                    .onLost((lease, reason) -> alerts.raise("job lock lost: " + reason.getMessage()))
                    .build();
        }
    }

    interface Invoices {
        void sendPending(Fence fence);
    }

    static class InvoiceJob {
        CerberusLockProvider locks;
        Invoices invoices;

        @Scheduled(cron = "0 */5 * * * *")
        @SchedulerLock(name = "invoices", lockAtMostFor = "PT10M")
        public void sendInvoices() {
            Fence fence = locks.lease("invoices").orElseThrow().fence();
            invoices.sendPending(fence);
        }
    }
}
