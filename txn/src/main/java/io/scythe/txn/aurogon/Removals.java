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
 * with a failover wait ({@link TxnRuntime#failoverWaitNs()}: the simulator's memory-node crash runs, 2.02 ms, and every
 * cluster compute node, 6 s); polls the catalog while a call is out every thousandth of that wait, within
 * [{@link #MIN_POLL_NS}, {@link #MAX_POLL_NS}] (2 us in the simulator's runs, 6 ms on a cluster node: not a 2 us poll
 * of a cluster catalog per call out), through {@link TxnRuntime#removalPollNs} as TxnRuntime#removedBy's own poll
 * (a hundredth there).
 */
final class Removals {
    static final long MIN_POLL_NS = TxnRuntime.MIN_REMOVAL_POLL_NS;
    static final long MAX_POLL_NS = TxnRuntime.MAX_REMOVAL_POLL_NS;
    private static final TxnRuntime.Key<Removals> KEY = new TxnRuntime.Key<>("aurogon-removals");

    private final TxnRuntime runtime;
    private final Map<String, List<Promise<?>>> out = new HashMap<>();
    private boolean polling;

    private Removals(final TxnRuntime runtime) {
        this.runtime = runtime;
    }

    /**
     * This loop's Rocket to {@code node} for a coordinator's request, its failure {@link AurogonAborts#NODE_GONE} when
     * the node died ({@link #gone}): once a call to the dead node broke the cached Rocket, the next lookup opens a new
     * one, which fails (the simulator's fabric: the node is no longer attached) or waits out its open timeout (a
     * cluster's event bus; failed here at the removal, as {@link #watch} fails a call).
     */
    static Future<io.scythe.rrpc.Rocket> rocket(final TxnRuntime runtime, final String node) {
        return watch(runtime, node, runtime.rocket(node)).recover(e -> gone(runtime, node, e));
    }

    /**
     * One request to {@code node} under the removal watch: failed at once ({@link AurogonAborts#NODE_GONE}) when the
     * configuration removes the node while it is out, and an unanswered failure becomes node-gone when the node is
     * removed within the failover wait ({@link #gone}). Every call of this package to a memory node goes through here
     * (coordinator requests, recoveries, FaRMv2-clock's CLOCK) except the fire-and-forget heartbeats.
     */
    static Future<io.scythe.rrpc.RpcReply> call(final TxnRuntime runtime, final String node, final int rpc,
                                                 final org.agrona.concurrent.UnsafeBuffer request) {
        return watch(runtime, node, runtime.rocket(node).compose(rocket -> rocket.call(rpc, request)))
            .recover(e -> gone(runtime, node, e));
    }

    /**
     * A request to {@code node} failed (its queue pair broke, no reply came within the call timeout, or no Rocket
     * opened): when the memory-node configuration removes the node, now or within the runtime's failover wait, it died
     * with what it held of the attempt, and the failure becomes {@link AurogonAborts#NODE_GONE}; else it stands. Only
     * for failures without an answer: an answer says the node lives.
     *
     * <p>A call timed out that the node {@link io.scythe.rrpc.RpcException#taken() took} (it answered a later call
     * since: it read this one and lived on) is judged at once, by whether the node is removed now: the request is
     * held at a live node (a READ parked behind a pending version), and the failover wait (8.02 ms in the simulator's
     * memory-node crash runs) held the attempt's own pending versions there that long after its call's 4 ms bound.
     * Issue 20 (rrpcheal, seed 44 of the tpcc crash explorer with a cut memory node): each attempt's pre-attaching
     * READ parked on the one before's pending version, answered only at that one's rollback 12 ms after its send,
     * timed out in turn, and left its own version pending 8 ms more: a convoy of timeouts that never drained. A node
     * dying after it took the request is seen by the next call (the rollback or resend the failure leads to).
     */
    static <T> Future<T> gone(final TxnRuntime runtime, final String node, final Throwable e) {
        if (AurogonTxn.gone(e)) { // a watched call failed at the removal: said already
            return Future.failedFuture(e);
        }
        final Future<Boolean> removal = e instanceof io.scythe.rrpc.RpcException r && r.taken()
            ? Future.succeededFuture(runtime.catalog().removed(node)) : runtime.removedWithin(List.of(node));
        return removal.transform(removed -> Future.failedFuture(
            removed.succeeded() && removed.result() ? new io.scythe.txn.AbortException(AurogonAborts.NODE_GONE,
                "memory node " + node + " was removed by the configuration (it died): " + e) : e));
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

    /** How often the catalog is polled while a call is out, for a failover wait of {@code failoverWaitNs}. */
    static long pollNs(final long failoverWaitNs) {
        return TxnRuntime.removalPollNs(failoverWaitNs, 1_000);
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
            runtime.timers().after(pollNs(runtime.failoverWaitNs())).onComplete(done -> poll());
        }
    }
}
