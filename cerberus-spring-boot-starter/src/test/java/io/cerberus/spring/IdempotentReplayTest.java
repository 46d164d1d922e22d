package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;

/**
 * A duplicate of an {@link Idempotent @Idempotent} call gets what the first call returned, with its
 * class: not only what the declared return type can hold.
 */
@SpringBootTest(classes = IdempotentReplayTest.App.class, properties = "cerberus.engines=mem:replay")
class IdempotentReplayTest {
    @Autowired
    Shop shop;

    private final String id = UUID.randomUUID().toString();

    @BeforeEach
    void resetRuns() {
        shop.runs().set(0);
    }

    @Test
    void aSubclassResultReplaysWithItsClassAndItsFields() {
        Receipt first = shop.gift(id);
        Receipt duplicate = shop.gift(id);

        assertThat(duplicate).isInstanceOf(GiftReceipt.class).isEqualTo(first);
        assertThat(((GiftReceipt) duplicate).message).isEqualTo("happy birthday");
        assertThat(shop.runs()).hasValue(1);
    }

    @Test
    void anInterfaceResultReplaysAsTheImplementation() {
        Payment first = shop.pay(id);
        assertThat(shop.pay(id)).isInstanceOf(CardPayment.class).isEqualTo(first);
        assertThat(shop.runs()).hasValue(1);
    }

    @Test
    void anObjectResultReplaysAsTheClassItHad() {
        Object first = shop.lookup(id);
        assertThat(shop.lookup(id)).isInstanceOf(Booking.class).isEqualTo(first);
        assertThat(shop.runs()).hasValue(1);
    }

    @Test
    void aResponseEntityReplaysItsStatusHeadersAndBody() {
        ResponseEntity<Receipt> first = shop.refund(id);
        ResponseEntity<Receipt> duplicate = shop.refund(id);

        assertThat(duplicate.getStatusCode()).isEqualTo(HttpStatus.CREATED);
        assertThat(duplicate.getHeaders().get("Location")).containsExactly("/refunds/" + id);
        assertThat(duplicate.getHeaders().get("X-Trace")).containsExactly("a", "b");
        assertThat(duplicate.getBody()).isInstanceOf(GiftReceipt.class).isEqualTo(first.getBody());
        assertThat(shop.runs()).hasValue(1);
    }

    @Test
    void aResponseEntityWithoutABodyReplays() {
        shop.accept(id);
        ResponseEntity<?> duplicate = shop.accept(id);
        assertThat(duplicate.getStatusCode()).isEqualTo(HttpStatus.ACCEPTED);
        assertThat(duplicate.hasBody()).isFalse();
        assertThat(shop.runs()).hasValue(1);
    }

    @Test
    void anOptionalReplaysItsContentOrItsEmptiness() {
        Optional<Payment> first = shop.find(id);
        assertThat(shop.find(id)).containsInstanceOf(CardPayment.class).isEqualTo(first);
        assertThat(shop.find("none-" + id)).isEmpty();
        assertThat(shop.find("none-" + id)).isEmpty();
        assertThat(shop.runs()).hasValue(2);
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Shop.class)
    static class App {}

    static class Receipt {
        public String id;
        public long amountCents;

        Receipt() {}

        Receipt(String id, long amountCents) {
            this.id = id;
            this.amountCents = amountCents;
        }

        @Override
        public boolean equals(Object other) {
            return other != null
                    && other.getClass() == getClass()
                    && Objects.equals(((Receipt) other).id, id)
                    && ((Receipt) other).amountCents == amountCents;
        }

        @Override
        public int hashCode() {
            return Objects.hash(id, amountCents);
        }
    }

    static class GiftReceipt extends Receipt {
        public String message;

        GiftReceipt() {}

        GiftReceipt(String id, long amountCents, String message) {
            super(id, amountCents);
            this.message = message;
        }

        @Override
        public boolean equals(Object other) {
            return super.equals(other) && Objects.equals(((GiftReceipt) other).message, message);
        }

        @Override
        public int hashCode() {
            return Objects.hash(super.hashCode(), message);
        }
    }

    interface Payment {
        long amountCents();
    }

    record CardPayment(String last4, long amountCents, int run) implements Payment {}

    record Booking(String id, int seats, int run) {}

    static class Shop {
        final AtomicInteger runs = new AtomicInteger();

        /** @return how many times a method body ran (a method, as callers hold a proxy) */
        public AtomicInteger runs() {
            return runs;
        }

        @Idempotent(key = "#id")
        public Receipt gift(String id) {
            runs.incrementAndGet();
            return new GiftReceipt(id, 2500, "happy birthday");
        }

        @Idempotent(key = "#id")
        public Payment pay(String id) {
            return new CardPayment("4242", 1000, runs.incrementAndGet());
        }

        @Idempotent(key = "#id")
        public Object lookup(String id) {
            return new Booking(id, 2, runs.incrementAndGet());
        }

        @Idempotent(key = "#id")
        public ResponseEntity<Receipt> refund(String id) {
            runs.incrementAndGet();
            return ResponseEntity.status(HttpStatus.CREATED)
                    .header("Location", "/refunds/" + id)
                    .header("X-Trace", "a", "b")
                    .body(new GiftReceipt(id, 700, "sorry"));
        }

        @Idempotent(key = "#id")
        public ResponseEntity<?> accept(String id) {
            runs.incrementAndGet();
            return ResponseEntity.accepted().build();
        }

        @Idempotent(key = "#id")
        public Optional<Payment> find(String id) {
            int run = runs.incrementAndGet();
            return id.startsWith("none-") ? Optional.empty() : Optional.of(new CardPayment("1881", 300, run));
        }
    }
}
