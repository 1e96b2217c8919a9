package io.scythe.node;

import io.scythe.fabric.RemoteRegion;
import io.scythe.hotspot.Watermarks;
import io.scythe.rrpc.RrpcClient;
import io.scythe.tso.DirectTsoSource;
import io.scythe.tso.TsoGroup;
import io.scythe.txn.Catalog;
import io.scythe.txn.Coordinator;
import io.scythe.txn.Protocol;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.api.Procedures;
import io.scythe.txn.api.TxnReply;
import io.scythe.txn.runtime.LoopTimers;
import io.vertx.core.Context;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Deploys a compute node's coordinators: one {@link CoordinatorVerticle} per event loop, each with its own
 * {@link TxnRuntime} (RRPC client shared by the node, a TSO group fetching from the TSO counter directly over the
 * loop's one-sided channel). Used by the embedded cluster and by a CN process alike.
 *
 * @param idBase the high bits of every transaction id of this CN (bits 40-47 are added per loop, see
 *               {@link TxnRuntime}); distinct per CN and incarnation
 */
public record CoordinatorDeployment(Catalog catalog, RrpcClient rrpc, RemoteRegion tsoCounter, String tsoNode,
                                    Protocol protocol, int maxAttempts, Watermarks watermarks,
                                    io.vertx.core.json.JsonObject protocolOptions,
                                    Procedures procedures, long idBase, Consumer<TxnReply> observer,
                                    java.util.function.Supplier<io.scythe.txn.runtime.TimestampOracle> oracles) {

    /** Each loop's timestamps from a TSO group over one source: the counter {@code tsoCounter}, by FAA. */
    public CoordinatorDeployment(final Catalog catalog, final RrpcClient rrpc, final RemoteRegion tsoCounter,
                                 final String tsoNode, final Protocol protocol, final int maxAttempts,
                                 final Watermarks watermarks, final io.vertx.core.json.JsonObject protocolOptions,
                                 final Procedures procedures,
                                 final long idBase, final Consumer<TxnReply> observer) {
        this(catalog, rrpc, tsoCounter, tsoNode, protocol, maxAttempts, watermarks, protocolOptions, procedures, idBase,
            observer, null);
    }

    /** Called once per loop, on that loop, with the coordinator it made. */
    @FunctionalInterface
    public interface Created {
        void accept(Coordinator coordinator);
    }

    /**
     * Deploys on each of {@code loops}, at {@code addresses} (each instance consumes every address).
     *
     * @return the deployment ids, in loop order
     */
    public Future<List<String>> deploy(final Vertx vertx, final List<Context> loops, final List<String> addresses,
                                       final Created created) {
        return deploy(vertx, loops, addresses, created, null);
    }

    /**
     * As {@link #deploy(Vertx, List, List, Created)}, each instance refusing requests routed by a shard this node does
     * not own ({@code ownership}; {@code null}: none refused).
     */
    public Future<List<String>> deploy(final Vertx vertx, final List<Context> loops, final List<String> addresses,
                                       final Created created, final io.scythe.routing.OwnershipCheck ownership) {
        if (loops.size() > 0xff) {
            return Future.failedFuture(new IllegalArgumentException("at most 255 event loops per compute node"));
        }
        final java.util.concurrent.atomic.AtomicInteger loopIds = new java.util.concurrent.atomic.AtomicInteger();
        // One loop after the other, each deployed until it lands on its loop: Vert.x gives a deployment the next event
        // loop round-robin, whatever context it is deployed from, so "deployed from loop i" alone proves nothing (two
        // coordinators could share a loop and leave another without one whenever something else makes a context
        // meanwhile). The instance checks its loop before it makes its coordinator.
        Future<List<String>> chain = Future.succeededFuture(new ArrayList<>());
        for (int i = 0; i < loops.size(); i++) {
            final int index = i;
            final Context loop = loops.get(i);
            chain = chain.compose(ids -> placed(vertx, loop, index, addresses, created, ownership, loopIds,
                PLACEMENT_ATTEMPTS_PER_LOOP * loops.size()).map(id -> {
                    ids.add(id);
                    return ids;
                }));
        }
        return chain;
    }

    /** Deployments one coordinator may take to land on its loop: round-robin needs at most one per loop when nothing
     * else makes contexts; with others making them, each try still lands right about one time in loops. */
    static final int PLACEMENT_ATTEMPTS_PER_LOOP = 16;

    private Future<String> placed(final Vertx vertx, final Context loop, final int index, final List<String> addresses,
                                  final Created created, final io.scythe.routing.OwnershipCheck ownership,
                                  final java.util.concurrent.atomic.AtomicInteger loopIds, final int attemptsLeft) {
        final CoordinatorVerticle verticle = new CoordinatorVerticle(() -> {
            final TxnRuntime runtime = new TxnRuntime(catalog, rrpc, LoopTimers.current(), oracles != null
                ? oracles.get() : new TsoGroup(1024, new DirectTsoSource(tsoCounter, () -> rrpc.oneSided(tsoNode))),
                // Added, not or-ed: a peer module's compute node's base numbers its loops on from its own (bits 40-47).
                watermarks, idBase + ((long) loopIds.incrementAndGet() << 40));
            runtime.clocks(io.scythe.bridge.NodeClocks.onLoop(rrpc.nic())); // on this loop: its bridge is current
            final Coordinator c = new Coordinator(runtime, protocol, maxAttempts, protocolOptions);
            created.accept(c);
            return c;
        }, procedures, addresses, observer, ownership).placedOn(loop);
        return vertx.deployVerticle(verticle, new DeploymentOptions()).recover(failure -> {
            if (!(failure instanceof CoordinatorVerticle.MisplacedException)) {
                return Future.failedFuture(failure);
            }
            if (attemptsLeft <= 1) {
                return Future.failedFuture(new IllegalStateException("the coordinator of event loop " + index
                    + " did not land on it in " + PLACEMENT_ATTEMPTS_PER_LOOP + " deployments per loop (Vert.x "
                    + "places deployments round-robin; something keeps creating contexts meanwhile)"));
            }
            return placed(vertx, loop, index, addresses, created, ownership, loopIds, attemptsLeft - 1);
        });
    }
}
