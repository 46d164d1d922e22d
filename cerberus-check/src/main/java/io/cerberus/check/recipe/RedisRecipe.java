package io.cerberus.check.recipe;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;

/**
 * The Redis recipes of {@link Recipe}, each as the classic articles wrote it, on one connection
 * shared by the client's loops (its key: {@code recipe:NAME}):
 *
 * <ul>
 *   <li>{@code setnx-expire}: {@code SETNX} then {@code PEXPIRE}, two commands; release {@code DEL}.
 *       A client that dies between them leaves a lock that never expires (its failpoint).</li>
 *   <li>{@code setnx-getset}: the value is the expiry time on the client's clock; a waiter that
 *       finds it past takes the lock with {@code GETSET} and keeps it if the old value was past too;
 *       release {@code DEL} if the holder's own expiry has not passed.</li>
 *   <li>{@code set-nx-px-del}: {@code SET NX PX}; release a plain {@code DEL}, with no owner check.</li>
 *   <li>{@code check-then-delete}: {@code SET NX PX} with an owner value; release {@code GET}, and
 *       {@code DEL} if it was ours: two commands (its failpoint lies between them).</li>
 *   <li>{@code no-renewal}: {@code SET NX PX} with an owner; release compares and deletes in one
 *       script: the single-server recipe done right, but its lease is never renewed.</li>
 * </ul>
 */
final class RedisRecipe implements Recipe {
    private static final String COMPARE_AND_DELETE =
            "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
    private static final Duration RETRY = Duration.ofMillis(20);

    private final String name;
    private final Duration lease;
    private final Failpoint failpoint;
    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;
    private final RedisCommands<String, String> redis;

    private RedisRecipe(String name, Duration lease, Failpoint failpoint, RedisClient client) {
        this.name = name;
        this.lease = lease;
        this.failpoint = failpoint;
        this.client = client;
        this.connection = client.connect();
        this.redis = connection.sync();
    }

    static RedisRecipe connect(String name, String engineUri, Duration lease, Failpoint failpoint) {
        if (!Recipe.runsOn(name, engineUri)) {
            throw new IllegalArgumentException("--recipe " + name + " needs " + Recipe.needs(name));
        }
        RedisURI uri = RedisURI.create(engineUri);
        uri.setTimeout(Duration.ofSeconds(2));
        return new RedisRecipe(name, lease, failpoint, RedisClient.create(uri));
    }

    @Override
    public Optional<Hold> tryAcquire(String lockName, Duration wait) throws InterruptedException {
        String key = "recipe:" + lockName;
        long deadline = System.nanoTime() + wait.toNanos();
        do {
            Optional<Hold> hold = tryOnce(key);
            if (hold.isPresent()) {
                return hold;
            }
            Thread.sleep(RETRY.toMillis());
        } while (System.nanoTime() - deadline < 0);
        return Optional.empty();
    }

    @SuppressWarnings("deprecation") // SETNX and GETSET: the commands the articles used, deprecated by Redis since
    private Optional<Hold> tryOnce(String key) throws InterruptedException {
        String owner = UUID.randomUUID().toString();
        switch (name) {
            case "setnx-expire" -> {
                if (!redis.setnx(key, owner)) {
                    return Optional.empty();
                }
                failpoint.reached();
                redis.pexpire(key, lease.toMillis());
                return Optional.of(() -> redis.del(key));
            }
            case "setnx-getset" -> {
                long expires = System.currentTimeMillis() + lease.toMillis() + 1;
                if (!redis.setnx(key, Long.toString(expires))) {
                    String current = redis.get(key);
                    if (current == null || Long.parseLong(current) >= System.currentTimeMillis()) {
                        return Optional.empty();
                    }
                    String old = redis.getset(key, Long.toString(expires));
                    if (old != null && Long.parseLong(old) >= System.currentTimeMillis()) {
                        return Optional.empty(); // another waiter was first
                    }
                }
                return Optional.of(() -> {
                    if (System.currentTimeMillis() < expires) {
                        redis.del(key);
                    }
                });
            }
            case "set-nx-px-del" -> {
                return set(key, owner) ? Optional.of(() -> redis.del(key)) : Optional.empty();
            }
            case "check-then-delete" -> {
                return set(key, owner)
                        ? Optional.of(() -> {
                            if (owner.equals(redis.get(key))) {
                                try {
                                    failpoint.reached();
                                } catch (InterruptedException e) {
                                    Thread.currentThread().interrupt();
                                }
                                redis.del(key);
                            }
                        })
                        : Optional.empty();
            }
            case "no-renewal" -> {
                return set(key, owner)
                        ? Optional.of(() ->
                                redis.eval(COMPARE_AND_DELETE, ScriptOutputType.INTEGER, new String[] {key}, owner))
                        : Optional.empty();
            }
            default -> throw new IllegalArgumentException("not a Redis recipe: " + name);
        }
    }

    private boolean set(String key, String owner) {
        return "OK".equals(redis.set(key, owner, SetArgs.Builder.nx().px(lease.toMillis())));
    }

    @Override
    public void close() {
        connection.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }
}
