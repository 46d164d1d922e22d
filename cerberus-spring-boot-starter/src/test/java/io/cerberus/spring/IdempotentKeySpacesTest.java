package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Import;

/**
 * Which calls of {@link Idempotent @Idempotent} methods share a key: only those of one method on one
 * bean class, or of methods given one {@code operation} name.
 */
@SpringBootTest(classes = IdempotentKeySpacesTest.App.class, properties = "cerberus.engines=mem:key-spaces")
class IdempotentKeySpacesTest {
    @Autowired
    Overloads overloads;

    @Autowired
    io.cerberus.spring.ledgers.cash.Ledger cash;

    @Autowired
    io.cerberus.spring.ledgers.card.Ledger card;

    @Autowired
    EmailNotifier email;

    @Autowired
    SmsNotifier sms;

    @Autowired
    Renamed renamed;

    private final String id = UUID.randomUUID().toString();

    @Test
    void overloadsDoNotShareKeys() {
        assertThat(overloads.ship(id)).isEqualTo("ship " + id);
        assertThat(overloads.ship(id, 2)).isEqualTo("ship " + id + " x2");
        assertThat(overloads.runs()).hasValue(2);
    }

    @Test
    void classesOfOneSimpleNameInTwoPackagesDoNotShareKeys() {
        assertThat(cash.post(id)).isEqualTo("cash " + id + " run 1");
        assertThat(card.post(id)).isEqualTo("card " + id + " run 1");
        assertThat(card.post(id)).as("a duplicate on the same class").isEqualTo("card " + id + " run 1");
    }

    @Test
    void anInheritedMethodIsOneOperationPerBeanClass() {
        assertThat(email.send(id)).isEqualTo("EmailNotifier " + id);
        assertThat(sms.send(id)).isEqualTo("SmsNotifier " + id);
        assertThat(sms.send(id)).isEqualTo("SmsNotifier " + id);
        assertThat(email.runs().get() + sms.runs().get()).isEqualTo(2);
    }

    @Test
    void methodsGivenOneOperationNameShareKeys() {
        String first = renamed.chargeBeforeTheRename(id);
        assertThat(renamed.chargeAfterTheRename(id)).isEqualTo(first);
        assertThat(renamed.runs()).hasValue(1);
    }

    @Test
    void theDefaultOperationNameIsTheBeanClassAndTheSignature() throws Exception {
        assertThat(IdempotentAspect.operation(
                        Overloads.class.getMethod("ship", String.class, int.class), Overloads.class))
                .isEqualTo("io.cerberus.spring.IdempotentKeySpacesTest$Overloads.ship(java.lang.String,int)");
        assertThat(IdempotentAspect.operation(Notifier.class.getMethod("send", String.class), SmsNotifier.class))
                .isEqualTo("io.cerberus.spring.IdempotentKeySpacesTest$SmsNotifier.send(java.lang.String)");
    }

    @Test
    void anOverlongDefaultNameEndsWithItsHash() throws Exception {
        String name = IdempotentAspect.operation(
                Overloads.class.getMethod(
                        "wide",
                        String.class,
                        String.class,
                        String.class,
                        String.class,
                        String.class,
                        String.class,
                        String.class,
                        String.class,
                        String.class,
                        String.class,
                        String.class,
                        String.class),
                Overloads.class);
        assertThat(name)
                .hasSize(256)
                .startsWith("io.cerberus.spring.IdempotentKeySpacesTest$Overloads.wide(java.lang.String,")
                .matches(".*#[0-9a-f]{64}");
    }

    @Test
    void anEmptyOrOverlongOperationNameFailsTheStart() {
        ApplicationContextRunner runner = new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(CerberusAutoConfiguration.class, AopAutoConfiguration.class));
        runner.withBean(BlankName.class)
                .run(context -> assertThat(context.getStartupFailure())
                        .hasMessageContaining(
                                "@Idempotent(operation = \" \") on BlankName.run(..) must have 1 to 256 characters"));
        runner.withBean(LongName.class)
                .run(context -> assertThat(context.getStartupFailure())
                        .hasMessageContaining("on LongName.run(..) must have 1 to 256 characters"));
        assertThatThrownBy(() -> AnnotatedMethodsCheck.check(LongName.class.getMethod("run", String.class)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import({
        Overloads.class,
        io.cerberus.spring.ledgers.cash.Ledger.class,
        io.cerberus.spring.ledgers.card.Ledger.class,
        EmailNotifier.class,
        SmsNotifier.class,
        Renamed.class
    })
    static class App {}

    static class Overloads {
        final AtomicInteger runs = new AtomicInteger();

        /** @return how many times a method body ran (a method, as callers hold a proxy) */
        public AtomicInteger runs() {
            return runs;
        }

        @Idempotent(key = "#id")
        public String ship(String id) {
            runs.incrementAndGet();
            return "ship " + id;
        }

        @Idempotent(key = "#id")
        public String ship(String id, int parcels) {
            runs.incrementAndGet();
            return "ship " + id + " x" + parcels;
        }

        @Idempotent(key = "#a")
        public String wide(
                String a,
                String b,
                String c,
                String d,
                String e,
                String f,
                String g,
                String h,
                String i,
                String j,
                String k,
                String l) {
            return a;
        }
    }

    abstract static class Notifier {
        final AtomicInteger runs = new AtomicInteger();

        /** @return how many times a method body ran (a method, as callers hold a proxy) */
        public AtomicInteger runs() {
            return runs;
        }

        @Idempotent(key = "#id")
        public String send(String id) {
            runs.incrementAndGet();
            return getClass().getSimpleName() + " " + id;
        }
    }

    static class EmailNotifier extends Notifier {}

    static class SmsNotifier extends Notifier {}

    /** One operation before and after a rename of its method: its keys stay. */
    static class Renamed {
        final AtomicInteger runs = new AtomicInteger();

        /** @return how many times a method body ran (a method, as callers hold a proxy) */
        public AtomicInteger runs() {
            return runs;
        }

        @Idempotent(key = "#id", operation = "charge")
        public String chargeBeforeTheRename(String id) {
            return "charged " + id + " run " + runs.incrementAndGet();
        }

        @Idempotent(key = "#id", operation = "charge")
        public String chargeAfterTheRename(String id) {
            return "charged " + id + " run " + runs.incrementAndGet();
        }
    }

    static class BlankName {
        @Idempotent(key = "#id", operation = " ")
        public String run(String id) {
            return id;
        }
    }

    static class LongName {
        @Idempotent(
                key = "#id",
                operation =
                        "operation-with-a-name-far-too-long-to-be-one-................................................"
                                + "........................................................................................................."
                                + "..........................................................................................")
        public String run(String id) {
            return id;
        }
    }
}
