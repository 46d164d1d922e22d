package io.cerberus.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.DoubleAccumulator;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAccumulator;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The canonical text: equal content gives one text in every JVM, different content never does. */
class IdempotencyKeyCanonicalTest {
    private static final List<String> FRUIT = List.of("apple", "pear", "plum", "fig", "kiwi", "lime");

    private static String id(Object content) {
        return IdempotencyKey.ofContent("op", content).id();
    }

    @Test
    void setsGiveOneIdWhateverTheirIterationOrder() {
        List<String> reversed = new ArrayList<>(FRUIT);
        Collections.reverse(reversed);
        Set<String> concurrent = ConcurrentHashMap.newKeySet();
        concurrent.addAll(reversed);
        TreeSet<String> descending = new TreeSet<>(Comparator.reverseOrder());
        descending.addAll(FRUIT);
        List<Set<String>> sets = List.of(
                new HashSet<>(FRUIT),
                new LinkedHashSet<>(FRUIT),
                new LinkedHashSet<>(reversed),
                new TreeSet<>(FRUIT),
                descending,
                Set.copyOf(reversed),
                Set.of("apple", "pear", "plum", "fig", "kiwi", "lime"),
                concurrent);

        for (Set<String> set : sets) {
            assertThat(id(Map.of("items", set)))
                    .as("%s %s", set.getClass().getName(), set)
                    .isEqualTo(id(Map.of("items", sets.get(0))));
        }
    }

    @Test
    void aSetIsTheListOfItsElementsSortedByTheirCanonicalText() {
        assertThat(IdempotencyKey.canonical(new LinkedHashSet<>(List.of(2, 10, "x", List.of(1)))))
                .isEqualTo("[\"x\",#10,#2,[#1]]");
        assertThat(id(new LinkedHashSet<>(List.of("b", "a")))).isEqualTo(id(List.of("a", "b")));
        assertThat(id(List.of("b", "a"))).as("a list keeps its order").isNotEqualTo(id(List.of("a", "b")));
        assertThat(id(new ArrayDeque<>(List.of("b", "a"))))
                .as("a deque keeps its order")
                .isEqualTo(id(List.of("b", "a")));
    }

    @Test
    void collectionsWithoutADefinedOrderAreRefused() {
        for (Object unordered : List.of(
                new PriorityQueue<>(List.of(3, 1, 2)),
                new HashMap<>(Map.of("a", 1, "b", 2)).values(),
                Collections.unmodifiableCollection(List.of(1)))) {
            assertThatThrownBy(() -> id(unordered))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(unordered.getClass().getName())
                    .hasMessageContaining("pass a List");
        }
    }

    @Test
    void aMapThatHoldsOneKeyTwiceIsRefused() {
        Map<String, Object> twice = new IdentityHashMap<>();
        twice.put("a", 1);
        twice.put(new String("a"), 2);

        assertThatThrownBy(() -> id(twice))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("key \"a\" twice");
    }

    record Shipment(String id, Optional<String> note, OptionalInt boxes) {}

    @Test
    void optionalsAreTheirValueAndEmptyIsNull() {
        assertThat(id(Optional.of("a"))).isEqualTo(id("a")).isNotEqualTo(id(Optional.of("b")));
        assertThat(id(Optional.empty())).isEqualTo(id(null));
        assertThat(id(OptionalInt.of(5))).isEqualTo(id(5)).isNotEqualTo(id(OptionalInt.of(6)));
        assertThat(id(OptionalLong.of(5))).isEqualTo(id(5));
        assertThat(id(OptionalDouble.of(0.5))).isEqualTo(id(0.5));
        assertThat(id(OptionalLong.empty())).isEqualTo(id(null));
        Map<String, Object> map = new HashMap<>();
        map.put("id", "s1");
        map.put("note", null);
        map.put("boxes", 3);
        assertThat(id(new Shipment("s1", Optional.empty(), OptionalInt.of(3))))
                .isEqualTo(id(map))
                .isNotEqualTo(id(new Shipment("s1", Optional.empty(), OptionalInt.of(4))));
    }

    @Test
    void oneNumberHasOneTextWhateverItsType() {
        for (Object one : List.of(
                1,
                1L,
                (short) 1,
                (byte) 1,
                1.0,
                1.0f,
                new BigDecimal("1.00"),
                BigInteger.ONE,
                new AtomicInteger(1),
                new AtomicLong(1),
                adder(1),
                doubleAdder(1.0),
                new LongAccumulator(Long::sum, 1),
                new DoubleAccumulator(Double::sum, 1.0))) {
            assertThat(IdempotencyKey.canonical(one))
                    .as(one.getClass().getName())
                    .isEqualTo("#1");
        }
    }

    private static LongAdder adder(long value) {
        LongAdder adder = new LongAdder();
        adder.add(value);
        return adder;
    }

    private static DoubleAdder doubleAdder(double value) {
        DoubleAdder adder = new DoubleAdder();
        adder.add(value);
        return adder;
    }

    @Test
    void aFloatIsTheDecimalItPrintsAs() {
        assertThat(id(0.1f)).isEqualTo(id(0.1)).isEqualTo(id(new BigDecimal("0.1")));
        assertThat(IdempotencyKey.canonical(Float.MAX_VALUE)).isEqualTo("#340282350000000000000000000000000000000");
        assertThatThrownBy(() -> id(Float.NaN)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void doubleAddersKeepTheirFraction() {
        assertThat(IdempotencyKey.canonical(doubleAdder(0.5))).isEqualTo("#0.5");
        assertThat(IdempotencyKey.canonical(new DoubleAccumulator(Double::sum, 2.25)))
                .isEqualTo("#2.25");
    }

    static final class Money extends Number {
        private static final long serialVersionUID = 1L;

        @Override
        public int intValue() {
            return 1;
        }

        @Override
        public long longValue() {
            return 1;
        }

        @Override
        public float floatValue() {
            return 1.5f;
        }

        @Override
        public double doubleValue() {
            return 1.5;
        }
    }

    @Test
    void numberTypesOfUnknownPrecisionAreRefused() {
        assertThatThrownBy(() -> id(new Money()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(Money.class.getName())
                .hasMessageContaining("BigDecimal");
    }

    @Test
    void numbersFarFromTheDecimalPointAreWrittenInScientificNotation() {
        assertThat(IdempotencyKey.canonical(new BigDecimal("1e1000"))).hasSize(1 + 1001);
        assertThat(IdempotencyKey.canonical(new BigDecimal("1e1001"))).isEqualTo("#1E+1001");
        assertThat(IdempotencyKey.canonical(BigInteger.TEN.pow(2000))).isEqualTo("#1E+2000");
        assertThat(IdempotencyKey.canonical(new BigDecimal("-1.50e-2000"))).isEqualTo("#-1.5E-2000");
        assertThat(IdempotencyKey.canonical(new BigDecimal("1e-1000")))
                .as("1000 places after the point are still written plain")
                .isEqualTo("#0." + "0".repeat(999) + "1");
        assertThat(IdempotencyKey.canonical(new BigDecimal("1e-1001"))).isEqualTo("#1E-1001");
    }

    @Test
    void hugeExponentsKeepTheTextSmall() {
        assertThat(IdempotencyKey.canonical(new BigDecimal("1e999999999"))).isEqualTo("#1E+999999999");
        assertThat(IdempotencyKey.canonical(new BigDecimal("1e-999999999"))).isEqualTo("#1E-999999999");
        assertThat(id(new BigDecimal("10e999999999"))).isEqualTo(id(new BigDecimal("1.0e1000000000")));
        assertThatThrownBy(() -> id(new BigDecimal(BigInteger.TEN, Integer.MIN_VALUE)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("out of range");
    }

    @Test
    void unpairedSurrogatesAreEscapedNotReadAsQuestionMarks() {
        assertThat(List.of(id("\uD800"), id("\uDC00"), id("?"), id("\uDC00\uD800"), id("??"), id("\\uD800")))
                .doesNotHaveDuplicates();
        assertThat(IdempotencyKey.canonical("a\uD800b")).isEqualTo("\"a\\uD800b\"");
        assertThat(IdempotencyKey.canonical("\\uD800")).isEqualTo("\"\\\\uD800\"");
        assertThat(IdempotencyKey.canonical("\uD83D\uDE00"))
                .as("a pair is a character")
                .isEqualTo("\"\uD83D\uDE00\"");
    }

    @Test
    void quotingCannotMakeTwoContentsOneText() {
        Map<String, Object> twoFields = Map.of("a", "", "b", "c");
        Map<String, Object> oneField = Map.of("a", "\",\"b\":\"c");
        assertThat(id(twoFields)).isNotEqualTo(id(oneField));
        assertThat(id(List.of("a\\", "b"))).isNotEqualTo(id(List.of("a\\\",\"b")));
        assertThat(id(Map.of("a\":\"b", "c"))).isNotEqualTo(id(Map.of("a", "b\":\"c")));
        assertThat(id(List.of("x", "y"))).isNotEqualTo(id(List.of("x\",\"y"))).isNotEqualTo(id("[\"x\",\"y\"]"));
        assertThat(id("#1")).isNotEqualTo(id(1));
        assertThat(id("null")).isNotEqualTo(id(null));
    }

    @Test
    void operationNamesCannotReachIntoTheContent() {
        assertThatThrownBy(() -> IdempotencyKey.ofContent("a\u0000key", "x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("NUL");
        assertThatThrownBy(() -> IdempotencyKey.ofContent("op\uD800", "x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unpaired surrogate");
        assertThatThrownBy(() -> IdempotencyKey.of("op", "k\uDC00", "x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unpaired surrogate");
        assertThat(IdempotencyKey.of("op", "k\uD83D\uDE00", "x").id())
                .isNotEqualTo(IdempotencyKey.of("op", "k?", "x").id());
    }

    static final class Basket implements Iterable<String> {
        public String getOwner() {
            return "ann";
        }

        @Override
        public Iterator<String> iterator() {
            return List.of("apple").iterator();
        }
    }

    @Test
    void contentThatGettersCannotDescribeIsRefused() {
        for (Object opaque : List.of(Stream.of(1, 2), List.of(1).iterator(), new Basket())) {
            assertThatThrownBy(() -> id(opaque))
                    .as(opaque.getClass().getName())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(opaque.getClass().getName())
                    .hasMessageContaining("pass a List");
        }
    }

    public static final class Broken {
        public String getName() {
            throw new IllegalStateException("not loaded");
        }
    }

    @Test
    void beansWhoseGettersFailOrThatHaveNoneAreRefused() {
        assertThatThrownBy(() -> id(new Broken()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("getName")
                .hasMessageContaining(Broken.class.getName());
        assertThatThrownBy(() -> id(new Object()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("java.lang.Object");
    }

    @Test
    void mapKeysMustBeStrings() {
        assertThatThrownBy(() -> id(Map.of(1, 2)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("map keys must be strings, found java.lang.Integer");
        Map<String, Object> nullKey = new HashMap<>();
        nullKey.put(null, 1);
        assertThatThrownBy(() -> id(nullKey))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageEndingWith("map keys must be strings, found null");
    }

    /** Each container, nested in itself: 64 levels are content, 65 are refused as a probable cycle. */
    @Test
    void contentNestedDeeperThan64LevelsIsRefusedWhateverHoldsIt() {
        Map<String, UnaryOperator<Object>> containers = new LinkedHashMap<>();
        containers.put("list", List::of);
        containers.put("set", Set::of);
        containers.put("map", inner -> Map.of("v", inner));
        containers.put("array", inner -> new Object[] {inner});
        containers.put("optional", Optional::of);
        containers.put("record", Box::new);
        containers.put("bean", Holder::new);
        containers.forEach((kind, wrap) -> {
            assertThat(IdempotencyKey.canonical(nested(wrap, 64)))
                    .as("64 levels of %s", kind)
                    .contains("\"x\"");
            assertThatThrownBy(() -> IdempotencyKey.canonical(nested(wrap, 65)))
                    .as("65 levels of %s", kind)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("idempotency key content is nested more than 64 levels deep (a cycle?)");
        });
        List<Object> cycle = new ArrayList<>();
        cycle.add(Optional.of(cycle));
        assertThatThrownBy(() -> id(cycle))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("a cycle?");
    }

    static Object nested(UnaryOperator<Object> wrap, int levels) {
        return nested("x", wrap, levels);
    }

    static Object nested(Object innermost, UnaryOperator<Object> wrap, int levels) {
        Object value = innermost;
        for (int i = 0; i < levels; i++) {
            value = wrap.apply(value);
        }
        return value;
    }

    record Box(Object value) {}

    /** A bean: its one getter is its content. */
    static final class Holder {
        private final Object value;

        Holder(Object value) {
            this.value = value;
        }

        public Object getValue() {
            return value;
        }
    }

    @Test
    void methodsNamedGetOrIsAloneAreNoProperties() {
        assertThat(IdempotencyKey.canonical(new Supplied())).isEqualTo("{\"name\":\"ann\"}");
    }

    /** A bean with a {@code get()} and an {@code is()}: neither names a property. */
    static final class Supplied {
        public String get() {
            return "not a property";
        }

        public boolean is() {
            return true;
        }

        public String getName() {
            return "ann";
        }
    }
}
