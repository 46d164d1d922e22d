package io.cerberus.redis;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Sends the acquire and release scripts of many callers as one script call when they pile up (a
 * <em>script batch</em>): at most {@link #IN_FLIGHT} script calls are on the connection at a time, the
 * calls that come meanwhile queue, and when a reply comes the queued calls of each script go as one
 * call of its batch form ({@link LockScripts#batched}). A caller alone is sent at once, as before; under
 * load the server runs one script call for many locks, which costs it much less than one each.
 *
 * <p><b>Invariants.</b> Each call of a batch runs on the server as if sent alone, in queue order, each
 * atomically; one that fails (a key of the wrong type) fails that caller only. A queued call whose
 * caller has given up (its reply future is done: timed out) is never sent. Calls are sent while the lock
 * is held, so a call made after another was sent (a release after a timed-out acquire) reaches the server
 * after it. Every call sent completes (the connection's command timeout), which frees its place. On a
 * Cluster nothing is batched: one script may only touch one slot.
 */
final class ScriptBatches {
    /** Script calls on the connection at a time before callers queue for a batch. */
    static final int IN_FLIGHT = 8;
    /** Most calls sent in one batch. */
    static final int MOST = 64;

    private final RedisClusterAsyncCommands<String, String> commands;
    private final boolean batching;
    private final ReentrantLock lock = new ReentrantLock();
    private final ArrayDeque<Call> queued = new ArrayDeque<>();
    private int inFlight;

    private record Call(LockScripts script, String[] keys, String[] args, CompletableFuture<Object> reply) {}

    /**
     * @param commands the connection's asynchronous commands
     * @param batching false to send every call alone (a Cluster)
     */
    ScriptBatches(RedisClusterAsyncCommands<String, String> commands, boolean batching) {
        this.commands = commands;
        this.batching = batching;
    }

    /**
     * Runs a script that has a batch form, alone or in a batch.
     *
     * @param script {@link LockScripts#ACQUIRE} or {@link LockScripts#RELEASE}
     * @param keys its keys
     * @param args its arguments
     * @param <T> the script's reply type
     * @return the reply, when it comes; cancel it to give up a call not sent yet
     */
    @SuppressWarnings("unchecked")
    <T> CompletableFuture<T> run(LockScripts script, String[] keys, String... args) {
        if (!batching) {
            return script.run(commands, keys, args);
        }
        Call call = new Call(script, keys, args, new CompletableFuture<>());
        lock.lock();
        try {
            if (inFlight < IN_FLIGHT) {
                inFlight++;
                send(List.of(call));
            } else {
                queued.add(call);
            }
        } finally {
            lock.unlock();
        }
        return (CompletableFuture<T>) call.reply;
    }

    /** Sends calls of one script (while the lock is held), alone or as one batch, and frees the place when answered. */
    private void send(List<Call> calls) {
        if (calls.size() == 1) {
            Call call = calls.get(0);
            call.script.run(commands, call.keys, call.args).whenComplete((reply, failure) -> {
                if (failure == null) {
                    call.reply.complete(reply);
                } else {
                    call.reply.completeExceptionally(failure);
                }
                answered();
            });
            return;
        }
        LockScripts script = calls.get(0).script;
        List<String> keys = new ArrayList<>(calls.size() * LockKeys.COUNT);
        List<String> args = new ArrayList<>(calls.size() * calls.get(0).args.length);
        for (Call call : calls) {
            keys.addAll(List.of(call.keys));
            args.addAll(List.of(call.args));
        }
        script.batched()
                .<List<?>>run(commands, keys.toArray(String[]::new), args.toArray(String[]::new))
                .whenComplete((replies, failure) -> {
                    for (int i = 0; i < calls.size(); i++) {
                        CompletableFuture<Object> reply = calls.get(i).reply;
                        if (failure != null) {
                            reply.completeExceptionally(failure);
                        } else {
                            complete(script, reply, (List<?>) replies.get(i));
                        }
                    }
                    answered();
                });
    }

    /** Completes a call from its part of a batch's reply. */
    private static void complete(LockScripts script, CompletableFuture<Object> reply, List<?> part) {
        try {
            reply.complete(script.replyOfOne(part));
        } catch (RedisCommandExecutionException failure) {
            reply.completeExceptionally(failure);
        }
    }

    /** A call came back: send what queued meanwhile, up to {@link #MOST} calls, one batch per script. */
    private void answered() {
        lock.lock();
        try {
            inFlight--;
            while (inFlight < IN_FLIGHT && !queued.isEmpty()) {
                // one batch per script, in the order their first calls queued in
                Map<LockScripts, List<Call>> batches = new LinkedHashMap<>();
                for (int taken = 0; taken < MOST && !queued.isEmpty(); ) {
                    Call call = queued.poll();
                    if (!call.reply.isDone()) {
                        batches.computeIfAbsent(call.script, script -> new ArrayList<>())
                                .add(call);
                        taken++;
                    }
                }
                for (List<Call> calls : batches.values()) {
                    inFlight++;
                    send(calls);
                }
            }
        } finally {
            lock.unlock();
        }
    }
}
