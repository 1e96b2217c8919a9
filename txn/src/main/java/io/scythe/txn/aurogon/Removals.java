package io.scythe.txn.aurogon;

import io.scythe.txn.TxnRuntime;
import io.vertx.core.Future;
import io.vertx.core.Promise;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A loop's calls in flight to memory nodes, failed when the configuration removes their node (it died): a request the
 * dead node took is never answered, and its queue pair reports nothing until something new is posted on it, so
 * without this a call waits out its timeout while its transaction's pending versions elsewhere block readers. Only
 * with a failover wait ({@link TxnRuntime#failoverWaitNs()}: the simulator's memory-node crash runs); polls the
 * catalog every {@link #POLL_NS} while a call is out.
 */
final class Removals {
    static final long POLL_NS = 2_000;
    private static final TxnRuntime.Key<Removals> KEY = new TxnRuntime.Key<>("aurogon-removals");

    private final TxnRuntime runtime;
    private final Map<String, List<Promise<?>>> out = new HashMap<>();
    private boolean polling;

    private Removals(final TxnRuntime runtime) {
        this.runtime = runtime;
    }

    /** {@code call} to {@code node}, failed at once when the configuration removes the node before it completes. */
    static <T> Future<T> watch(final TxnRuntime runtime, final String node, final Future<T> call) {
        if (runtime.failoverWaitNs() <= 0 || call.isComplete()) {
            return call;
        }
        return runtime.extension(KEY, Removals::new).add(node, call);
    }

    private <T> Future<T> add(final String node, final Future<T> call) {
        final Promise<T> promise = Promise.promise();
        final List<Promise<?>> calls = out.computeIfAbsent(node, n -> new ArrayList<>());
        calls.add(promise);
        call.onComplete(ar -> {
            calls.remove(promise);
            if (ar.succeeded()) {
                promise.tryComplete(ar.result());
            } else {
                promise.tryFail(ar.cause());
            }
        });
        if (!polling) {
            polling = true;
            poll();
        }
        return promise.future();
    }

    private void poll() {
        boolean any = false;
        for (final Map.Entry<String, List<Promise<?>>> e : out.entrySet()) {
            if (!e.getValue().isEmpty() && runtime.catalog().removed(e.getKey())) {
                final List<Promise<?>> failed = new ArrayList<>(e.getValue());
                e.getValue().clear();
                for (final Promise<?> p : failed) {
                    p.tryFail(new io.scythe.txn.AbortException(AurogonAborts.NODE_GONE, "memory node " + e.getKey()
                        + " was removed by the configuration (it died) with this call in flight"));
                }
            }
            any |= !e.getValue().isEmpty();
        }
        polling = any;
        if (any) {
            runtime.timers().after(POLL_NS).onComplete(done -> poll());
        }
    }
}
