package io.cerberus.spring;

import java.beans.PropertyDescriptor;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import java.util.TreeMap;
import org.springframework.beans.BeanUtils;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.Environment;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;

/**
 * Fails the start when the application's configuration names a {@code cerberus.*} property the
 * starter does not have ({@code cerberus.engine} for {@code cerberus.engines}), naming the nearest
 * one: a misspelt property would otherwise be ignored and its default used, silently. The known
 * properties are read off {@link CerberusProperties} (its getters, nested groups and lists), so
 * they never drift from what binds. Environment variables and JVM system properties are not
 * checked: other programs may set {@code CERBERUS_*} there, as Spring's own strict binding allows.
 */
final class UnknownProperties {
    private static final ConfigurationPropertyName ROOT = ConfigurationPropertyName.of("cerberus");
    private static final Node KNOWN = Node.of("cerberus", CerberusProperties.class);

    private UnknownProperties() {}

    /** A known property, by its dashed name: a value, a list of values, or a group of properties. */
    private record Node(String dashed, boolean list, Map<String, Node> children) {

        /** @return the group of a settings class: one child per property, keyed by its uniform name */
        static Node of(String dashed, Class<?> settings) {
            Map<String, Node> children = new TreeMap<>();
            for (PropertyDescriptor property : BeanUtils.getPropertyDescriptors(settings)) {
                if (property.getReadMethod() == null || property.getName().equals("class")) {
                    continue;
                }
                Class<?> type = property.getPropertyType();
                String name = dashed + "." + UnknownProperties.dashed(property.getName());
                Node child = type.getDeclaringClass() == CerberusProperties.class
                        ? of(name, type)
                        : new Node(name, Collection.class.isAssignableFrom(type), Map.of());
                children.put(property.getName().toLowerCase(Locale.ROOT), child);
            }
            return new Node(dashed, false, children);
        }

        boolean group() {
            return !children.isEmpty();
        }

        /** Adds the dashed names of the values and lists under this group. */
        void leaves(List<String> into) {
            children.values().forEach(child -> {
                if (child.group()) {
                    child.leaves(into);
                } else {
                    into.add(child.dashed());
                }
            });
        }
    }

    /**
     * @param environment the application's environment
     * @throws ConfigurationMistake naming every unknown {@code cerberus.*} property, where it
     *     was set, and the known property nearest to it
     */
    static void check(Environment environment) {
        Map<String, String> unknown = new LinkedHashMap<>();
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            if (!(source instanceof IterableConfigurationPropertySource names) || fromOutsideTheApplication(source)) {
                continue;
            }
            names.stream()
                    .filter(ROOT::isAncestorOf)
                    .filter(name -> !isKnown(name))
                    .forEach(name -> {
                        ConfigurationProperty property = source.getConfigurationProperty(name);
                        String origin = property == null || property.getOrigin() == null
                                ? ""
                                : " (" + property.getOrigin() + ")";
                        unknown.putIfAbsent(dashed(name), origin);
                    });
        }
        if (unknown.isEmpty()) {
            return;
        }
        StringJoiner message = new StringJoiner(
                "\n  ",
                "unknown Cerberus propert" + (unknown.size() == 1 ? "y" : "ies") + " (nothing reads "
                        + (unknown.size() == 1 ? "it" : "them")
                        + ", so a misspelt setting would silently keep its default):\n  ",
                "");
        unknown.forEach((name, origin) -> message.add(name + origin + ": " + advice(name)));
        throw new ConfigurationMistake(
                message.toString(),
                "Correct the name, or remove the property: every cerberus.* property"
                        + " belongs to the Cerberus starter (listed in its SPRING.md, completed by IDEs)");
    }

    private static boolean fromOutsideTheApplication(ConfigurationPropertySource source) {
        Object underlying = source.getUnderlyingSource();
        if (!(underlying instanceof PropertySource<?> propertySource)) {
            return false;
        }
        String name = propertySource.getName();
        return StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME.equals(name)
                || StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME.equals(name);
    }

    private static boolean isKnown(ConfigurationPropertyName name) {
        Node node = KNOWN;
        for (int i = 1; i < name.getNumberOfElements(); i++) {
            if (node.list()) {
                // a list of values: cerberus.engines[0], nothing below an index
                return name.isNumericIndex(i) && i == name.getNumberOfElements() - 1;
            }
            node = node.children().get(name.getElement(i, Form.UNIFORM));
            if (node == null) {
                return false;
            }
        }
        return !node.group();
    }

    /** @return "did you mean ...?", or the properties known where the name goes astray */
    private static String advice(String name) {
        List<String> known = new ArrayList<>();
        KNOWN.leaves(known);
        String nearest = null;
        int best = Integer.MAX_VALUE;
        for (String candidate : known) {
            int distance = distance(name, candidate);
            if (distance < best) {
                best = distance;
                nearest = candidate;
            }
        }
        String last = name.substring(name.lastIndexOf('.') + 1);
        if (nearest != null && best <= Math.max(2, last.length() / 3)) {
            return "did you mean " + nearest + "?";
        }
        String parent = name.substring(0, Math.max(0, name.lastIndexOf('.')));
        List<String> siblings = known.stream()
                .filter(candidate -> candidate.startsWith(parent + "."))
                .toList();
        return "not a property of the starter; known" + (siblings.isEmpty() ? "" : " under " + parent) + ": "
                + String.join(", ", siblings.isEmpty() ? known : siblings);
    }

    /** @return the name as written in a properties file, in the dashed form: cerberus.default-lease, cerberus.engines[0] */
    private static String dashed(ConfigurationPropertyName name) {
        StringBuilder dashed = new StringBuilder();
        for (int i = 0; i < name.getNumberOfElements(); i++) {
            String element = name.getElement(i, Form.DASHED);
            if (name.isNumericIndex(i) || element.isEmpty()) {
                dashed.append('[').append(name.getElement(i, Form.ORIGINAL)).append(']');
            } else {
                dashed.append(i == 0 ? "" : ".").append(element);
            }
        }
        return dashed.toString();
    }

    /** @return a Java property name in the dashed form: defaultLease -> default-lease */
    private static String dashed(String javaName) {
        StringBuilder dashed = new StringBuilder();
        for (char c : javaName.toCharArray()) {
            if (Character.isUpperCase(c)) {
                dashed.append('-').append(Character.toLowerCase(c));
            } else {
                dashed.append(c);
            }
        }
        return dashed.toString();
    }

    /** @return the Levenshtein distance of two names */
    private static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }
}
