package io.cerberus.check.log;

import io.cerberus.Fence;
import io.cerberus.fencing.StaleFenceException;
import io.cerberus.redis.FencedRedis;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.Optional;

/**
 * A register in a Redis string key ({@code VALUE ACCEPTED}) kept by {@link FencedRedis}. A write reads the count it
 * adds to under the writer's own fence, then sets: a newer holder that read or wrote in between makes the set stale,
 * so value and count change together.
 */
final class RedisRegister implements Register {
    private final FencedRedis fenced;
    private final RedisCommands<String, String> plain;
    private final String key;
    private final Fence constant;

    /** @param constant the fence every operation carries instead of the holder's (the negative control), or null */
    RedisRegister(FencedRedis fenced, RedisCommands<String, String> plain, String key, Fence constant) {
        this.fenced = fenced;
        this.plain = plain;
        this.key = key;
        this.constant = constant;
    }

    /** Creates the register at value 0 with no fence, replacing any of an earlier run. */
    void reset() {
        plain.del(key, FencedRedis.fenceKey(key));
        plain.set(key, State.EMPTY.text());
    }

    @Override
    public State read() {
        String text = plain.get(key);
        return text == null ? State.EMPTY : State.parse(text);
    }

    @Override
    public Optional<State> read(Fence fence) {
        try {
            return Optional.of(
                    fenced.get(effective(fence), key).map(State::parse).orElse(State.EMPTY));
        } catch (StaleFenceException e) {
            return Optional.empty();
        }
    }

    @Override
    public boolean write(long value, Fence fence) {
        Fence writer = effective(fence);
        try {
            State before = fenced.get(writer, key).map(State::parse).orElse(State.EMPTY);
            fenced.set(writer, key, new State(value, before.accepted() + 1).text());
            return true;
        } catch (StaleFenceException e) {
            return false;
        }
    }

    private Fence effective(Fence fence) {
        return constant == null ? fence : constant;
    }
}
