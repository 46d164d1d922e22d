package io.cerberus.internal;

import io.cerberus.DistributedLock;
import io.cerberus.DistributedReadWriteLock;

/** The read and write views of one name. */
record ReadWriteView(DistributedLock readLock, DistributedLock writeLock) implements DistributedReadWriteLock {}
