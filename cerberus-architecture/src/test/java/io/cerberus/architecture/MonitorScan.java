package io.cerberus.architecture;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.ClassNode;
import org.objectweb.asm.tree.JumpInsnNode;
import org.objectweb.asm.tree.LineNumberNode;
import org.objectweb.asm.tree.LookupSwitchInsnNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.TableSwitchInsnNode;
import org.objectweb.asm.tree.TryCatchBlockNode;

/**
 * Finds, in one class file, the waits that hold a monitor: a call to {@code Object.wait} anywhere,
 * and a call to a blocking method (a round trip, a lock, a sleep, a future's result, a method
 * declared to throw {@code InterruptedException} or {@code SQLException}) while a monitor is held, in a {@code synchronized} method or between a {@code monitorenter} and its
 * {@code monitorexit}. A virtual thread blocked there keeps its carrier thread (Java 21 to 23), so
 * a library that waits so stalls every virtual thread of the application that needs a carrier.
 * Monitor depth is followed along the control flow, exception handlers included, so an early
 * {@code return} inside a block does not end the region for the code after it. Only direct calls
 * are seen: a helper that blocks without saying so in its signature is not followed.
 */
final class MonitorScan {
    /** Owners (internal names, a prefix ending in '/' for a package) whose every method may block. */
    private static final List<String> BLOCKING_OWNERS = List.of(
            "java/net/Socket",
            "java/nio/channels/",
            "io/cerberus/spi/LockEngine",
            "io/cerberus/spi/IdempotencyStore",
            "io/cerberus/spi/EngineProvider",
            "io/cerberus/internal/EngineRegistry",
            "io/lettuce/core/api/sync/",
            "org/apache/zookeeper/ZooKeeper",
            "org/apache/curator/framework/api/");
    /** Methods that wait for time, a lock, a signal or a result, on the JDK's owners of them. */
    private static final Set<String> WAITS = Set.of(
            "java/lang/Thread.sleep",
            "java/lang/Thread.join",
            "java/util/concurrent/locks/LockSupport.park",
            "java/util/concurrent/locks/LockSupport.parkNanos",
            "java/util/concurrent/locks/LockSupport.parkUntil",
            "java/util/concurrent/CountDownLatch.await",
            "java/util/concurrent/CyclicBarrier.await",
            "java/util/concurrent/Semaphore.acquire",
            "java/util/concurrent/Semaphore.acquireUninterruptibly",
            "java/util/concurrent/ExecutorService.awaitTermination",
            "java/util/concurrent/ExecutorService.invokeAll",
            "java/util/concurrent/ExecutorService.invokeAny");
    /** Owners whose {@code get} and {@code join} wait for a result. */
    private static final Set<String> FUTURES = Set.of(
            "java/util/concurrent/Future",
            "java/util/concurrent/CompletableFuture",
            "java/util/concurrent/FutureTask",
            "java/util/concurrent/ForkJoinTask",
            "io/lettuce/core/RedisFuture");

    /** Exceptions whose declaration says a method blocks: it waits (and can be interrupted), or it runs SQL. */
    private static final Set<String> BLOCKING_THROWS =
            Set.of("java/lang/InterruptedException", "java/sql/SQLException");

    private static final Map<String, Optional<ClassNode>> TYPES = new ConcurrentHashMap<>();

    private MonitorScan() {}

    /** @return one line per offending call: the class, method and source line, and what it calls */
    static List<String> offences(byte[] classFile) {
        ClassNode type = new ClassNode();
        new ClassReader(classFile).accept(type, ClassReader.SKIP_FRAMES);
        List<String> offences = new ArrayList<>();
        for (MethodNode method : type.methods) {
            int[] depth = monitorDepths(method);
            boolean synchronizedMethod = (method.access & Opcodes.ACC_SYNCHRONIZED) != 0;
            int line = 0;
            for (int i = 0; i < method.instructions.size(); i++) {
                AbstractInsnNode insn = method.instructions.get(i);
                if (insn instanceof LineNumberNode number) {
                    line = number.line;
                }
                if (!(insn instanceof MethodInsnNode call) || depth[i] < 0) {
                    continue;
                }
                String where = type.name.replace('/', '.') + "." + method.name + " (line " + line + ")";
                if (isObjectWait(call)) {
                    offences.add(where + " calls Object.wait: use a java.util.concurrent lock and its Condition");
                } else if ((synchronizedMethod || depth[i] > 0) && blocks(call)) {
                    offences.add(where + " calls " + call.owner.replace('/', '.') + "." + call.name
                            + " holding a monitor: use a java.util.concurrent lock around it");
                }
            }
        }
        return offences;
    }

    private static boolean isObjectWait(MethodInsnNode call) {
        return call.name.equals("wait")
                && (call.desc.equals("()V") || call.desc.equals("(J)V") || call.desc.equals("(JI)V"));
    }

    private static boolean blocks(MethodInsnNode call) {
        String owner = call.owner;
        String name = call.name;
        if (BLOCKING_OWNERS.stream()
                        .anyMatch(blocking ->
                                blocking.endsWith("/") ? owner.startsWith(blocking) : owner.equals(blocking))
                || WAITS.contains(owner + "." + name)) {
            return true;
        }
        boolean timed =
                call.desc.contains("Ljava/util/concurrent/TimeUnit;") || call.desc.contains("Ljava/time/Duration;");
        if (owner.startsWith("java/util/concurrent/locks/")) {
            return name.equals("lock")
                    || name.equals("lockInterruptibly")
                    || name.startsWith("await")
                    || name.equals("tryLock") && timed;
        }
        if (owner.endsWith("BlockingQueue") || owner.endsWith("BlockingDeque") || owner.endsWith("TransferQueue")) {
            return name.equals("take")
                    || name.equals("put")
                    || name.equals("transfer")
                    || (name.equals("poll") || name.equals("offer")) && timed;
        }
        return (name.equals("get") || name.equals("join")) && FUTURES.contains(owner)
                || throwsBlocking(owner, name, call.desc);
    }

    /** @return whether the method, as declared in {@code owner} or the nearest supertype that declares it, throws a blocking exception */
    private static boolean throwsBlocking(String owner, String name, String desc) {
        ClassNode type = type(owner).orElse(null);
        if (type == null) {
            return false;
        }
        for (MethodNode method : type.methods) {
            if (method.name.equals(name) && method.desc.equals(desc)) {
                return method.exceptions.stream().anyMatch(BLOCKING_THROWS::contains);
            }
        }
        List<String> supertypes = new ArrayList<>(type.interfaces);
        if (type.superName != null) {
            supertypes.add(0, type.superName);
        }
        return supertypes.stream().anyMatch(supertype -> throwsBlocking(supertype, name, desc));
    }

    /** @return the class file of a type on the class path (the JDK's included), read once */
    private static Optional<ClassNode> type(String name) {
        return TYPES.computeIfAbsent(name, n -> {
            try (InputStream in = ClassLoader.getSystemResourceAsStream(n + ".class")) {
                if (in == null) {
                    return Optional.empty();
                }
                ClassNode type = new ClassNode();
                new ClassReader(in).accept(type, ClassReader.SKIP_CODE);
                return Optional.of(type);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    /**
     * @return for each instruction, the number of monitors held when it runs (the largest over
     *     the paths that reach it), or -1 where no path reaches it
     */
    private static int[] monitorDepths(MethodNode method) {
        int size = method.instructions.size();
        int[] depth = new int[size];
        Arrays.fill(depth, -1);
        if (size == 0) {
            return depth;
        }
        Deque<int[]> work = new ArrayDeque<>();
        work.push(new int[] {0, 0});
        while (!work.isEmpty()) {
            int[] next = work.pop();
            int at = next[0];
            int held = Math.min(next[1], 8);
            if (at >= size || depth[at] >= held) {
                continue;
            }
            depth[at] = held;
            for (TryCatchBlockNode handler : method.tryCatchBlocks) {
                int start = method.instructions.indexOf(handler.start);
                int end = method.instructions.indexOf(handler.end);
                if (at >= start && at < end) {
                    work.push(new int[] {method.instructions.indexOf(handler.handler), held});
                }
            }
            AbstractInsnNode insn = method.instructions.get(at);
            int after = insn.getOpcode() == Opcodes.MONITORENTER
                    ? held + 1
                    : insn.getOpcode() == Opcodes.MONITOREXIT ? Math.max(0, held - 1) : held;
            if (insn instanceof JumpInsnNode jump) {
                work.push(new int[] {method.instructions.indexOf(jump.label), after});
                if (insn.getOpcode() == Opcodes.GOTO) {
                    continue;
                }
            } else if (insn instanceof TableSwitchInsnNode table) {
                work.push(new int[] {method.instructions.indexOf(table.dflt), after});
                table.labels.forEach(label -> work.push(new int[] {method.instructions.indexOf(label), after}));
                continue;
            } else if (insn instanceof LookupSwitchInsnNode lookup) {
                work.push(new int[] {method.instructions.indexOf(lookup.dflt), after});
                lookup.labels.forEach(label -> work.push(new int[] {method.instructions.indexOf(label), after}));
                continue;
            }
            int opcode = insn.getOpcode();
            if ((opcode >= Opcodes.IRETURN && opcode <= Opcodes.RETURN) || opcode == Opcodes.ATHROW) {
                continue;
            }
            work.push(new int[] {at + 1, after});
        }
        return depth;
    }
}
