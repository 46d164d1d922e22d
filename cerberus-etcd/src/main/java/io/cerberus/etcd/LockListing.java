package io.cerberus.etcd;

import io.cerberus.LockInfo;
import io.cerberus.spi.LockMode;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Reads holders and waiters out of the keys of locks, sorted by create revision. */
final class LockListing {
    private LockListing() {}

    /**
     * @param keys keys of one lock, ascending create revision
     * @return how many of the first keys hold the lock: the first, and the readers right after a
     *     first reader
     */
    static int holders(List<KeyValue> keys) {
        if (keys.isEmpty()) {
            return 0;
        }
        if (!LockKeys.modeOf(keys.get(0).getValue()).isShared()) {
            return 1;
        }
        int count = 0;
        while (count < keys.size()
                && LockKeys.modeOf(keys.get(count).getValue()).isShared()) {
            count++;
        }
        return count;
    }

    /**
     * @param keys every key of a namespace, ascending create revision
     * @param namespaceDirectory the namespace's directory
     * @param prefix the lock-name prefix wanted
     * @return one entry per hold
     */
    static List<LockInfo> list(List<KeyValue> keys, ByteSequence namespaceDirectory, String prefix) {
        Map<String, List<KeyValue>> byName = new LinkedHashMap<>();
        for (KeyValue key : keys) {
            Optional<String> name = LockKeys.nameOf(key.getKey(), namespaceDirectory);
            if (name.isPresent() && name.get().startsWith(prefix)) {
                byName.computeIfAbsent(name.get(), n -> new ArrayList<>()).add(key);
            }
        }
        List<LockInfo> infos = new ArrayList<>();
        byName.forEach((name, lockKeys) -> {
            int holders = holders(lockKeys);
            for (KeyValue hold : lockKeys.subList(0, holders)) {
                LockMode mode = LockKeys.modeOf(hold.getValue());
                infos.add(new LockInfo(
                        name,
                        mode.label(),
                        LockKeys.holderOf(hold.getValue()),
                        hold.getCreateRevision(),
                        Optional.empty(),
                        lockKeys.size() - holders));
            }
        });
        return infos;
    }
}
