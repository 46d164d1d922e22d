package io.cerberus.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Waits for one key to be deleted: the predecessor of a waiting attempt. The watch starts at the
 * revision just after the read that found the predecessor, so a delete between that read and the
 * watch is still seen. Only this waiter is woken by that delete: no herd.
 */
final class PredecessorWatch {
    private PredecessorWatch() {
    }

    static void await(Watch watches, ByteSequence predecessor, long fromRevision, Duration max) throws InterruptedException {
        CountDownLatch changed = new CountDownLatch(1);
        WatchOption option = WatchOption.builder().withRevision(fromRevision).withNoPut(true).build();
        Watch.Watcher watcher = watches.watch(predecessor, option, Watch.listener(reply -> {
            for (WatchEvent event : reply.getEvents()) {
                if (event.getEventType() == WatchEvent.EventType.DELETE) {
                    changed.countDown();
                }
            }
        }, failure -> changed.countDown(), changed::countDown));
        try {
            changed.await(max.toNanos(), TimeUnit.NANOSECONDS);
        } finally {
            watcher.close();
        }
    }
}
