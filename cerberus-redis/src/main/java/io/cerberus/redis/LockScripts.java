package io.cerberus.redis;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The Lua scripts of the engine ({@code io/cerberus/redis/*.lua}, each prefixed with
 * {@code common.lua}, and the {@code fenced_*.lua} of {@link FencedRedis} also with {@code fenced.lua}), run with {@code EVALSHA}; a server that does not know a script yet (first
 * use, restart, {@code SCRIPT FLUSH}) answers {@code NOSCRIPT}, and the script is sent once with
 * {@code EVAL}, which also caches it. So every call is one round trip but the first.
 */
enum LockScripts {
    /** Take a lock, or queue for it and say how long to wait. */
    ACQUIRE("acquire.lua", ScriptOutputType.MULTI),
    /** Give a hold or a queue place up and announce it. */
    RELEASE("release.lua", ScriptOutputType.INTEGER),
    /** Free the hold with a given fence, whoever holds it (an operator's force release). */
    FORCE_RELEASE("force_release.lua", ScriptOutputType.INTEGER),
    /** Give an exclusive hold up to the next attempt of the same client. */
    HAND_OVER("hand_over.lua", ScriptOutputType.MULTI),
    /** Extend the leases of many holds. */
    RENEW("renew.lua", ScriptOutputType.MULTI),
    /** Whether anyone holds a lock. */
    IS_LOCKED("is_locked.lua", ScriptOutputType.INTEGER),
    /** Who holds a lock, for monitoring. */
    INSPECT("inspect.lua", ScriptOutputType.MULTI),
    /** Raise a namespace's epoch, never lowering it ({@link io.cerberus.spi.KeepsEpochs}). */
    RAISE_EPOCH("raise_epoch.lua", ScriptOutputType.VALUE),
    /** Claim an idempotency key, or read its record. */
    IDEM_CLAIM("idem_claim.lua", ScriptOutputType.MULTI),
    /** Extend an idempotency claim. */
    IDEM_RENEW("idem_renew.lua", ScriptOutputType.INTEGER),
    /** Store an idempotency result. */
    IDEM_COMPLETE("idem_complete.lua", ScriptOutputType.INTEGER),
    /** Give an idempotency claim up. */
    IDEM_RELEASE("idem_release.lua", ScriptOutputType.INTEGER),
    /** Write a string of fenced data ({@link FencedRedis}). */
    FENCED_SET("fenced_set.lua", ScriptOutputType.MULTI),
    /** Write fields of a fenced hash. */
    FENCED_HSET("fenced_hset.lua", ScriptOutputType.MULTI),
    /** Delete fenced data, keeping its fence. */
    FENCED_DEL("fenced_del.lua", ScriptOutputType.MULTI),
    /** Read a string of fenced data, recording the reader's fence. */
    FENCED_GET("fenced_get.lua", ScriptOutputType.MULTI),
    /** Read a field of a fenced hash, recording the reader's fence. */
    FENCED_HGET("fenced_hget.lua", ScriptOutputType.MULTI),
    /** {@link #ACQUIRE} for many calls at once ({@link ScriptBatches}). */
    ACQUIRE_BATCH("acquire.lua", LockKeys.COUNT, 6),
    /** {@link #RELEASE} for many calls at once ({@link ScriptBatches}). */
    RELEASE_BATCH("release.lua", LockKeys.COUNT, 3);

    /**
     * The loop of a batch script: runs {@code one} (a script's body made a function of its keys and
     * arguments) on each call's slice of {@code KEYS} and {@code ARGV}, in order, and answers a list of the
     * replies (a reply that is not a list is made one of one element); a call that fails answers
     * {@code {'error', message}} and the others go on, as if each had been sent alone.
     */
    private static final String BATCH_LOOP = """
            local function run_batch(one, keys_each, args_each)
              local out = {}
              for i = 0, #KEYS / keys_each - 1 do
                local ks, as = {}, {}
                for j = 1, keys_each do ks[j] = KEYS[i * keys_each + j] end
                for j = 1, args_each do as[j] = ARGV[i * args_each + j] end
                local ok, reply = pcall(one, ks, as)
                if not ok then
                  reply = {'error', type(reply) == 'table' and tostring(reply.err) or tostring(reply)}
                elseif type(reply) ~= 'table' then
                  reply = {reply}
                end
                out[i + 1] = reply
              end
              return out
            end
            """;

    private final String text;
    private final String sha;
    private final ScriptOutputType output;

    LockScripts(String file, ScriptOutputType output) {
        this.text =
                read("common.lua") + "\n" + (file.startsWith("fenced_") ? read("fenced.lua") + "\n" : "") + read(file);
        this.sha = sha1(text);
        this.output = output;
    }

    /** A batch script: {@code file}'s body run for each call of a batch, {@code keysEach} keys and {@code argsEach} arguments each. */
    LockScripts(String file, int keysEach, int argsEach) {
        this.text = read("common.lua") + "\nlocal function one(KEYS, ARGV)\n" + read(file) + "\nend\n" + BATCH_LOOP
                + "return run_batch(one, " + keysEach + ", " + argsEach + ")\n";
        this.sha = sha1(text);
        this.output = ScriptOutputType.MULTI;
    }

    /** @return the script that runs many calls of this one at once, or {@code null} if there is none */
    LockScripts batched() {
        return switch (this) {
            case ACQUIRE -> ACQUIRE_BATCH;
            case RELEASE -> RELEASE_BATCH;
            default -> null;
        };
    }

    /**
     * Decodes one call's part of a reply of this script's batch form ({@link #BATCH_LOOP}'s encoding).
     *
     * @param part the call's element of the batch's reply
     * @return the reply the call would have had alone
     * @throws RedisCommandExecutionException the call's own failure
     */
    Object replyOfOne(List<?> part) {
        if ("error".equals(part.get(0))) {
            throw new RedisCommandExecutionException(String.valueOf(part.get(1)));
        }
        return output == ScriptOutputType.MULTI ? part : part.get(0);
    }

    /**
     * Runs the script.
     *
     * @param commands the connection's asynchronous commands
     * @param keys the keys the script touches
     * @param args its arguments
     * @param <T> {@code List<Object>} for multi-bulk scripts, {@code Long} for integer ones, {@code String} for
     *     value ones
     * @return the reply, when it comes
     */
    <T> CompletableFuture<T> run(RedisScriptingAsyncCommands<String, String> commands, String[] keys, String... args) {
        CompletableFuture<T> first =
                commands.<T>evalsha(sha, output, keys, args).toCompletableFuture();
        return first.exceptionallyCompose(failure -> {
            Throwable cause =
                    failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
            if (cause instanceof RedisNoScriptException
                    || String.valueOf(cause.getMessage()).startsWith("NOSCRIPT")) {
                return commands.<T>eval(text, output, keys, args).toCompletableFuture();
            }
            return CompletableFuture.failedFuture(cause);
        });
    }

    /** @return the script's source, as sent to the server */
    String text() {
        return text;
    }

    private static String read(String file) {
        try (InputStream in = LockScripts.class.getResourceAsStream(file)) {
            if (in == null) {
                throw new IllegalStateException("script " + file + " is missing from the cerberus-redis jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("could not read script " + file, e);
        }
    }

    private static String sha1(String text) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required of every Java runtime", e);
        }
    }
}
