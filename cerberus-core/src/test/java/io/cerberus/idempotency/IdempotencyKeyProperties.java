package io.cerberus.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Assume;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * The canonical form of idempotency keys, property-based (docs/IDEMPOTENCY.md, "Keys"): equal
 * content gets one id whatever its representation (a set's or a map's order, the type of a number,
 * a record or the map of its components), different content gets different ids, and the id is a
 * pure function of the content.
 */
class IdempotencyKeyProperties {
    /** A record is written as the map of its components. */
    record Line(String sku, long quantity, Set<String> tags) {}

    private static String id(Object content) {
        return IdempotencyKey.ofContent("modelcheck", content).id();
    }

    @Provide
    Arbitrary<List<String>> distinctTexts() {
        return Arbitraries.strings()
                .all()
                .ofMaxLength(8)
                .filter(s -> s.codePoints().noneMatch(c -> Character.getType(c) == Character.SURROGATE))
                .list()
                .uniqueElements()
                .ofMaxSize(12);
    }

    @Property(tries = 300)
    void aSetHasOneIdWhateverItsOrder(@ForAll("distinctTexts") List<String> elements, @ForAll long seed) {
        List<String> shuffled = new ArrayList<>(elements);
        Collections.shuffle(shuffled, new Random(seed));
        String expected = id(new LinkedHashSet<>(elements));

        assertThat(id(new LinkedHashSet<>(shuffled))).isEqualTo(expected);
        assertThat(id(new HashSet<>(shuffled))).isEqualTo(expected);
        assertThat(id(new TreeSet<>(shuffled))).isEqualTo(expected);
        assertThat(id(Set.copyOf(shuffled))).isEqualTo(expected);
    }

    @Property(tries = 300)
    void aMapHasOneIdWhateverItsInsertionOrder(@ForAll("distinctTexts") List<String> keys, @ForAll long seed) {
        Map<String, Object> inOrder = new LinkedHashMap<>();
        for (int i = 0; i < keys.size(); i++) {
            inOrder.put(keys.get(i), i % 2 == 0 ? (Object) i : List.of(keys.get(i), i));
        }
        List<String> shuffled = new ArrayList<>(keys);
        Collections.shuffle(shuffled, new Random(seed));
        Map<String, Object> otherOrder = new LinkedHashMap<>();
        shuffled.forEach(key -> otherOrder.put(key, inOrder.get(key)));

        assertThat(id(otherOrder)).isEqualTo(id(inOrder));
        assertThat(id(new TreeMap<>(otherOrder))).isEqualTo(id(inOrder));
    }

    @Property(tries = 500)
    void aNumberHasOneIdWhateverItsType(
            @ForAll @IntRange(min = -1_000_000, max = 1_000_000) int n, @ForAll @IntRange(max = 6) int scale) {
        String expected = id(n);

        assertThat(id((long) n)).isEqualTo(expected);
        assertThat(id((double) n)).isEqualTo(expected);
        assertThat(id(BigDecimal.valueOf(n).setScale(scale))).isEqualTo(expected);
        assertThat(id(BigInteger.valueOf(n))).isEqualTo(expected);
        assertThat(id(Map.of(
                        "amount", new BigDecimal(BigInteger.valueOf(n).multiply(BigInteger.TEN.pow(scale)), scale))))
                .isEqualTo(id(Map.of("amount", (long) n)));
    }

    @Property(tries = 300)
    void aRecordHasTheIdOfTheMapOfItsComponents(
            @ForAll @Size(max = 10) String sku, @ForAll long quantity, @ForAll("distinctTexts") List<String> tags) {
        Assume.that(sku.codePoints().noneMatch(c -> Character.getType(c) == Character.SURROGATE));
        Line line = new Line(sku, quantity, new LinkedHashSet<>(tags));
        Map<String, Object> asMap = new LinkedHashMap<>();
        asMap.put("tags", new TreeSet<>(tags));
        asMap.put("quantity", BigInteger.valueOf(quantity));
        asMap.put("sku", sku);

        assertThat(id(line)).isEqualTo(id(asMap));
        assertThat(id(List.of(line))).isEqualTo(id(List.of(asMap)));
    }

    /** Content as JSON-like trees: maps of lists, sets, numbers, text, booleans and nulls. */
    @Provide
    Arbitrary<Object> contents() {
        return trees(true);
    }

    /**
     * As {@link #contents()} without sets, whose canonical form is a sorted list: so two trees are
     * the same content exactly when they are {@code equals}.
     */
    @Provide
    Arbitrary<Object> setFreeContents() {
        return trees(false);
    }

    private Arbitrary<Object> trees(boolean withSets) {
        Arbitrary<Object> leaf = Arbitraries.oneOf(
                        Arbitraries.longs().between(-50, 50).map(n -> (Object) n),
                        Arbitraries.strings()
                                .withCharRange('a', 'd')
                                .ofMaxLength(3)
                                .map(s -> (Object) s),
                        Arbitraries.of(true, false).map(b -> (Object) b))
                .injectNull(0.1);
        return Arbitraries.recursive(() -> leaf, inner -> nested(inner, withSets), 0, 3);
    }

    private static Arbitrary<Object> nested(Arbitrary<Object> inner, boolean withSets) {
        Arbitrary<Object> lists = inner.list().ofMaxSize(3).map(list -> (Object) list);
        Arbitrary<Object> sets =
                withSets ? inner.filter(e -> e != null).set().ofMaxSize(3).map(set -> (Object) set) : lists;
        return Arbitraries.oneOf(
                lists,
                sets,
                Arbitraries.maps(Arbitraries.strings().withCharRange('a', 'c').ofMaxLength(2), inner)
                        .ofMaxSize(3)
                        .map(map -> (Object) map));
    }

    @Property(tries = 1000)
    void differentContentGetsDifferentIds(@ForAll("setFreeContents") Object a, @ForAll("setFreeContents") Object b) {
        Assume.that(!java.util.Objects.equals(a, b));

        assertThat(id(a)).isNotEqualTo(id(b));
    }

    @Property(tries = 300)
    void theIdIsAPureFunctionOfTheContent(@ForAll("contents") Object content) {
        String first = id(content);

        assertThat(id(content)).isEqualTo(first);
        assertThat(IdempotencyKey.ofContent("modelcheck", content))
                .isEqualTo(IdempotencyKey.ofContent("modelcheck", content));
        assertThat(id(content)).startsWith("v1:").hasSize("v1:".length() + 64);
    }
}
