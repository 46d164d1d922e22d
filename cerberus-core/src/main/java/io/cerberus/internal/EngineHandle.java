package io.cerberus.internal;

import io.cerberus.Capability;
import io.cerberus.UnsupportedCapabilityException;
import io.cerberus.spi.LockEngine;
import java.util.Set;

/** An open engine with the name the client knows it by. */
record EngineHandle(String name, LockEngine engine, Set<Capability> capabilities) {

    static EngineHandle of(String name, LockEngine engine) {
        return new EngineHandle(name, engine, Set.copyOf(engine.capabilities()));
    }

    String uri() {
        return engine.describe();
    }

    boolean has(Capability capability) {
        return capabilities.contains(capability);
    }

    void require(Capability capability) {
        if (!has(capability)) {
            throw new UnsupportedCapabilityException("engine '" + name + "' (" + uri() + ") has no "
                    + capability.description()
                    + engine.whyNot(capability).map(why -> ": " + why).orElse("")
                    + "; engines with " + capability.description() + ": "
                    + EngineRegistry.schemesWith(capability));
        }
    }
}
