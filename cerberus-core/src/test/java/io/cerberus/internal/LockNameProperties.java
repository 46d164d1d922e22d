package io.cerberus.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Lock names, property-based: every name of 1 to 512 characters without control characters or
 * lone surrogates is a lock that can be taken and released; every other one is refused by
 * {@code lock(name)} with an {@link IllegalArgumentException} naming the rule, never another
 * exception.
 */
class LockNameProperties {
    private static Cerberus client;

    @BeforeContainer
    static void open() {
        client = Cerberus.connect("mem:lock-name-properties");
    }

    @AfterContainer
    static void close() {
        client.close();
    }

    /** Any Unicode text a name may hold: letters of every script, symbols, emoji (paired surrogates), spaces. */
    @Provide
    Arbitrary<String> validNames() {
        return Arbitraries.strings()
                .all()
                .ofMinLength(1)
                .ofMaxLength(Checks.MAX_LOCK_NAME)
                .filter(name -> name.codePoints()
                        .noneMatch(c -> Character.isISOControl(c) || Character.getType(c) == Character.SURROGATE));
    }

    @Property(tries = 300)
    void everyValidNameIsALockThatCanBeTakenAndReleased(@ForAll("validNames") String name) {
        DistributedLock lock = client.lock(name);

        assertThat(lock.name()).isEqualTo(name);
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();
        assertThat(lock.isLocked()).isFalse();
    }

    /** A valid name with one rule broken: a control character or a lone surrogate put in, or too long. */
    @Provide
    Arbitrary<String> invalidNames() {
        Arbitrary<Character> control = Arbitraries.oneOf(
                Arbitraries.chars().range('\u0000', '\u001f'),
                Arbitraries.chars().range('\u007f', '\u009f'));
        Arbitrary<Character> loneSurrogate = Arbitraries.chars().range('\ud800', '\udfff');
        Arbitrary<String> withBadChar = Combinators.combine(
                        validNames(),
                        Arbitraries.oneOf(control, loneSurrogate),
                        Arbitraries.integers().between(0, 1000))
                .as((name, bad, at) -> {
                    int index = Math.min(at, name.length());
                    if (index > 0 && Character.isHighSurrogate(name.charAt(index - 1))) {
                        index--; // never split a pair: then the pair, not the character put in, would be what breaks
                    }
                    String broken = name.substring(0, index) + bad + name.substring(index);
                    return broken.length() > Checks.MAX_LOCK_NAME
                            ? broken.substring(broken.length() - Checks.MAX_LOCK_NAME)
                            : broken;
                })
                .filter(name -> !isValid(name));
        Arbitrary<String> tooLong = Arbitraries.strings()
                .alpha()
                .ofMinLength(Checks.MAX_LOCK_NAME + 1)
                .ofMaxLength(Checks.MAX_LOCK_NAME + 100);
        return Arbitraries.oneOf(withBadChar, tooLong, Arbitraries.just(""));
    }

    private static boolean isValid(String name) {
        return !name.isEmpty()
                && name.length() <= Checks.MAX_LOCK_NAME
                && name.codePoints()
                        .noneMatch(c -> Character.isISOControl(c) || Character.getType(c) == Character.SURROGATE);
    }

    @Property(tries = 500)
    void everyInvalidNameIsRefusedWithTheRuleItBreaks(@ForAll("invalidNames") String name) {
        Throwable thrown = catchThrowable(() -> client.lock(name));

        assertThat(thrown).isExactlyInstanceOf(IllegalArgumentException.class);
        assertThat(thrown.getMessage()).startsWith("lock name must ");
        String rule = name.isEmpty()
                ? "must not be empty"
                : name.length() > Checks.MAX_LOCK_NAME
                        ? "must be at most 512 characters"
                        : name.codePoints().anyMatch(Character::isISOControl) && firstBad(name) == FirstBad.CONTROL
                                ? "must not contain control characters"
                                : "must be valid Unicode, found a lone surrogate";
        assertThat(thrown.getMessage()).contains(rule);
    }

    private enum FirstBad {
        CONTROL,
        SURROGATE
    }

    /** The rule the first offending character breaks, as a reader scanning from the start meets it. */
    private static FirstBad firstBad(String name) {
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (Character.isISOControl(c)) {
                return FirstBad.CONTROL;
            }
            if (Character.isHighSurrogate(c) && i + 1 < name.length() && Character.isLowSurrogate(name.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return FirstBad.SURROGATE;
            }
        }
        throw new IllegalStateException("no offending character in a name generated to have one");
    }
}
