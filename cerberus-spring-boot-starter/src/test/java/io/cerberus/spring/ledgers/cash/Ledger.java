package io.cerberus.spring.ledgers.cash;

import io.cerberus.spring.Idempotent;
import java.util.concurrent.atomic.AtomicInteger;

/** A ledger with the same simple name as the one in the other package. */
public class Ledger {
    private final AtomicInteger runs = new AtomicInteger();

    @Idempotent(key = "#entry")
    public String post(String entry) {
        return "cash " + entry + " run " + runs.incrementAndGet();
    }
}
