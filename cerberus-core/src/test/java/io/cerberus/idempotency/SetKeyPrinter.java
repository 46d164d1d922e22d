package io.cerberus.idempotency;

import java.util.Map;
import java.util.Set;

/**
 * Prints the id of a key whose content holds a {@code Set.of}, then the set's iteration order, which
 * the JVM salts at start-up. {@link IdempotencyKeyAcrossJvmsTest} runs it in several JVMs.
 */
final class SetKeyPrinter {
    private SetKeyPrinter() {}

    public static void main(String[] args) {
        Set<String> items = Set.of("apple", "pear", "plum", "fig", "kiwi", "lime");
        System.out.println(
                IdempotencyKey.ofContent("op", Map.of("items", items)).id() + " " + items);
    }
}
