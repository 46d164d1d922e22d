package io.cerberus.etcd;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.api.DeleteRangeRequest;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.MethodDescriptor;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts the copies of a plain delete that leave the client: those {@link EtcdRequests} resends
 * when a copy goes unanswered or fails as unavailable (where the copy may have reached a member),
 * and any jetcd resends on its own (after an expired auth token). A release deletes its key without a compare, so a copy applied late could delete a key
 * created later under the same name; a release that sent exactly one copy, and had it answered,
 * has no copy left anywhere, and only then may its key's number be used again ({@link KeySlots}).
 *
 * <p>Installed on the engine's jetcd client as a gRPC interceptor: each copy is a call of its own
 * through the channel, and its request names the key.
 */
final class DeleteCopyCounter implements ClientInterceptor {
    private static final String DELETE_RANGE = "etcdserverpb.KV/DeleteRange";

    private final Map<ByteString, AtomicInteger> counted = new ConcurrentHashMap<>();

    /** The count of one key's deletes, from {@link #watch} until {@link #stop}. */
    static final class Count {
        private final ByteString key;
        private final AtomicInteger copies = new AtomicInteger();

        private Count(ByteString key) {
            this.key = key;
        }

        /** @return how many copies of a delete of the key were sent since the watch began */
        int copies() {
            return copies.get();
        }
    }

    /** Starts counting the deletes of {@code key}; one release of a key at a time (numbers are exclusive). */
    Count watch(ByteSequence key) {
        Count count = new Count(ByteString.copyFrom(key.getBytes()));
        counted.put(count.key, count.copies);
        return count;
    }

    void stop(Count count) {
        counted.remove(count.key, count.copies);
    }

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        ClientCall<Q, R> call = next.newCall(method, options);
        if (!DELETE_RANGE.equals(method.getFullMethodName())) {
            return call;
        }
        return new ForwardingClientCall.SimpleForwardingClientCall<>(call) {
            @Override
            public void sendMessage(Q message) {
                if (message instanceof DeleteRangeRequest delete) {
                    AtomicInteger copies = counted.get(delete.getKey());
                    if (copies != null) {
                        copies.incrementAndGet();
                    }
                }
                super.sendMessage(message);
            }
        };
    }
}
