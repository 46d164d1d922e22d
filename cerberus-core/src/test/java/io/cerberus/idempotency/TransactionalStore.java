package io.cerberus.idempotency;

import io.cerberus.spi.IdempotencyRecord;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;

/**
 * A mem: store that completes records in a caller's transaction, as the JDBC store does, over
 * connections of its own {@link #dataSource()}: a completion written on a connection takes effect
 * when that connection commits, and is dropped when it rolls back or closes first. It answers false
 * when this token no longer owns an IN_PROGRESS record, or when {@link #blind} says the connection
 * cannot see the claim. A test may make the next commit or rollback fail
 * ({@link #failNextCommit}, {@link #failNextRollback}).
 */
class TransactionalStore extends HookedIdempotencyStore {
    /** Completions the connection would not see (its snapshot predates the claim, or another database). */
    volatile boolean blind;

    final AtomicReference<SQLException> failNextCommit = new AtomicReference<>();
    /** Thrown by the next rollback, after it dropped what the connection held (the database rolls back regardless). */
    final AtomicReference<SQLException> failNextRollback = new AtomicReference<>();

    final AtomicInteger commits = new AtomicInteger();
    final AtomicInteger rollbacks = new AtomicInteger();
    private final List<Tx> opened = new ArrayList<>();

    /** One connection: its auto-commit flag, its pending completions, whether it is closed. */
    final class Tx implements InvocationHandler {
        boolean autoCommit = true;
        boolean closed;
        final List<Runnable> pending = new ArrayList<>();

        @Override
        public Object invoke(Object proxy, Method method, Object[] args) throws SQLException {
            switch (method.getName()) {
                case "getAutoCommit":
                    return autoCommit;
                case "setAutoCommit":
                    autoCommit = (Boolean) args[0];
                    return null;
                case "commit":
                    SQLException failure = failNextCommit.getAndSet(null);
                    if (failure != null) {
                        throw failure;
                    }
                    commits.incrementAndGet();
                    pending.forEach(Runnable::run);
                    pending.clear();
                    return null;
                case "rollback":
                    rollbacks.incrementAndGet();
                    pending.clear();
                    SQLException rollbackFailure = failNextRollback.getAndSet(null);
                    if (rollbackFailure != null) {
                        throw rollbackFailure;
                    }
                    return null;
                case "close":
                    pending.clear(); // closed in a transaction: what was not committed is gone
                    closed = true;
                    return null;
                case "isClosed":
                    return closed;
                case "hashCode":
                    return System.identityHashCode(proxy);
                case "equals":
                    return proxy == args[0];
                case "toString":
                    return "test connection";
                default:
                    throw new UnsupportedOperationException(method.getName());
            }
        }
    }

    /** @return a data source whose every connection is a new one of {@link #connection()} */
    DataSource dataSource() {
        return (DataSource) Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                    if (!method.getName().equals("getConnection")) {
                        throw new UnsupportedOperationException(method.getName());
                    }
                    return connection();
                });
    }

    /** @return a new connection, in auto-commit mode like a pool's */
    Connection connection() {
        Tx tx = new Tx();
        synchronized (opened) {
            opened.add(tx);
        }
        return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class}, tx);
    }

    /** @return a new connection in a transaction (auto-commit off), as a caller hands one to the guard */
    Connection transaction() throws SQLException {
        Connection connection = connection();
        connection.setAutoCommit(false);
        return connection;
    }

    /** @return the connections handed out so far */
    List<Tx> opened() {
        synchronized (opened) {
            return List.copyOf(opened);
        }
    }

    @Override
    public boolean completesInTransactions() {
        return true;
    }

    @Override
    public boolean completeInTransaction(
            Connection connection, String id, String token, byte[] result, boolean failure, Duration retention)
            throws SQLException {
        if (connection.getAutoCommit()) {
            throw new SQLException("the completion must be in a transaction");
        }
        Optional<IdempotencyRecord> now = inner.read(id);
        if (blind
                || now.isEmpty()
                || now.get().completed()
                || !now.get().token().equals(token)) {
            return false;
        }
        ((Tx) Proxy.getInvocationHandler(connection))
                .pending.add(() -> inner.complete(id, token, result, failure, retention));
        return true;
    }
}
