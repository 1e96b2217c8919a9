package io.scythe.txn;

import io.scythe.fabric.Nic;
import io.scythe.rrpc.CnPeers;
import io.scythe.rrpc.RrpcOptions;
import io.scythe.txn.spi.ComputeNodeContext;
import io.scythe.txn.spi.PeerMessaging;
import io.scythe.txn.spi.ProtocolModule;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * How a host (the simulator, the embedded cluster) wires CN-to-CN messaging for a protocol module that asks for it
 * ({@code ProtocolModule#peerMessaging}), the same way in each: per compute node a {@link CnPeers} with an RRPC server
 * on each of its loops, numbered 1..n across the cluster (compute node {@code c}'s loop {@code l} is number
 * {@code c * loops + l + 1}), and before the first transaction every loop's ring to its paired loop of every other
 * node ({@link PeerMessaging#LOOP_PAIRS}) or to every loop of every node, its own included
 * ({@link PeerMessaging#EVERY_LOOP}).
 */
public final class ComputeNodePeers {
    private ComputeNodePeers() {
    }

    /**
     * The options of {@code module}'s peers in a run of {@code protocol} ({@link ProtocolModule#peerOptions} of these
     * defaults): the call bound also bounds opening rings over the event bus before the run, in wall-clock time: a
     * loaded machine opening a 9-CN cluster's loop pairs took more than the default second, and every loop pair's
     * (CNs x loops)^2 opens (2,304 at 16 CNs x 3 loops) more than 10 s.
     */
    public static RrpcOptions options(final ProtocolModule module, final Protocol protocol) {
        return module.peerOptions(CnPeers.defaultOptions().callTimeoutNs(TimeUnit.SECONDS.toNanos(
            module.peerMessaging(protocol) == PeerMessaging.EVERY_LOOP ? 60 : 10)));
    }

    /**
     * A compute node's peers on {@code nic}, with {@code loops} serving loops among {@code cns} nodes: rings for
     * exactly the loops that may call (any loop may name any other), as for the memory nodes' rings.
     */
    public static CnPeers open(final Vertx vertx, final Nic nic, final RrpcOptions options, final int cns,
                               final int loops) {
        return new CnPeers(vertx, nic, new RrpcOptions(options.toJson()).maxRings(cns * loops)
            .maxReplyRings(Math.max(1, loops * cns * loops)), loops, CnPeers.Directory.IDENTITY);
    }

    /** The number of loop {@code loop} of compute node {@code cn} among the cluster's loops (1..n). */
    public static int loopNumber(final int cn, final int loop, final int loopsPerCn) {
        return cn * loopsPerCn + loop + 1;
    }

    /**
     * What loop {@code number} (its index {@code loop} on its node) of the cluster whose nodes' peers are {@code all}
     * (in node order, read when a loop is named: it may still be filling) gives its runtime.
     */
    public static PeerLoops loop(final List<CnPeers> all, final CnPeers mine, final int number, final int loop,
                                 final int loopsPerCn) {
        return loop(cn -> all.get(cn).node(), mine, number, loop, loopsPerCn);
    }

    /** As above, the peer serving node {@code cn}'s loops named by {@code peer} (cluster nodes: its config name). */
    public static PeerLoops loop(final java.util.function.IntFunction<String> peer, final CnPeers mine,
                                 final int number, final int loop, final int loopsPerCn) {
        return new PeerLoops(mine, number, loop, n -> new PeerLoops.Address(peer.apply((n - 1) / loopsPerCn),
            (n - 1) % loopsPerCn));
    }

    /**
     * Opens the calling loop's rings (it is one of node {@code cn}'s serving loops) to the peers it may call, and its
     * channel to every other node: the paired loop's ring, or every loop's ({@code everyLoop}).
     */
    public static List<Future<?>> connectFrom(final List<CnPeers> all, final int cn, final int loopsPerCn,
                                              final boolean everyLoop) {
        final List<Future<?>> connected = new ArrayList<>();
        for (int d = 0; d < all.size(); d++) {
            if (d != cn) {
                connected.add(all.get(cn).connect(all.get(d).node()));
            }
            for (int m = 0; everyLoop && m < loopsPerCn; m++) {
                connected.add(all.get(cn).rocket(all.get(d).node(), m));
            }
        }
        return connected;
    }

    /** What a module's {@code startComputeNode} is given for node {@code index} of {@code names}. */
    public static ComputeNodeContext context(final int index, final List<String> names, final CnPeers peers,
                                             final Map<String, Object> shared) {
        return context(index, names, peers, shared, null, false);
    }

    /**
     * What a module's {@code startComputeNode} is given on a compute node in a process of its own (cluster nodes):
     * {@code recovered} takes each listener a module registers ({@code ComputeNodeContext#onPeerRecovered}); with
     * {@code null}, every node is in this process. {@code awaitsOwnRecovery}: earlier incarnations of this node are
     * still owed recovery.
     */
    public static ComputeNodeContext context(final int index, final List<String> names, final CnPeers peers,
                                             final Map<String, Object> shared,
                                             final java.util.function.Consumer<ComputeNodeContext.PeerRecovered>
                                                 recovered, final boolean awaitsOwnRecovery) {
        return context(index, names, peers, shared, recovered, null, awaitsOwnRecovery);
    }

    /**
     * As above; {@code released} takes each listener a module registers for the memory nodes' releases of dead
     * incarnations ({@code ComputeNodeContext#onPeerReleased}; null: the host tells none).
     */
    public static ComputeNodeContext context(final int index, final List<String> names, final CnPeers peers,
                                             final Map<String, Object> shared,
                                             final java.util.function.Consumer<ComputeNodeContext.PeerRecovered>
                                                 recovered,
                                             final java.util.function.Consumer<ComputeNodeContext.PeerReleased>
                                                 released, final boolean awaitsOwnRecovery) {
        return context(index, names, peers, shared, recovered, released, awaitsOwnRecovery, Map.of());
    }

    /**
     * As above; {@code earlier}: the earlier incarnations of this node it awaits (identity to id prefix,
     * {@code ComputeNodeContext#earlierIncarnations}).
     */
    public static ComputeNodeContext context(final int index, final List<String> names, final CnPeers peers,
                                             final Map<String, Object> shared,
                                             final java.util.function.Consumer<ComputeNodeContext.PeerRecovered>
                                                 recovered,
                                             final java.util.function.Consumer<ComputeNodeContext.PeerReleased>
                                                 released, final boolean awaitsOwnRecovery,
                                             final Map<String, Long> earlier) {
        return new ComputeNodeContext() {
            @Override
            public Map<String, Long> earlierIncarnations() {
                return earlier;
            }

            @Override
            public void onPeerReleased(final PeerReleased listener) {
                if (released != null) {
                    released.accept(listener);
                }
            }

            @Override
            public RecoveryRecord recoveryRecord() {
                return shared == null ? null : (RecoveryRecord) shared.get(RECOVERY_RECORD);
            }

            @Override
            public boolean awaitsOwnRecovery() {
                return awaitsOwnRecovery;
            }

            @Override
            public boolean separateProcesses() {
                return recovered != null;
            }

            @Override
            public void onPeerRecovered(final PeerRecovered listener) {
                if (recovered != null) {
                    recovered.accept(listener);
                }
            }

            @Override
            public Map<String, Object> shared() {
                return shared;
            }

            @Override
            public int index() {
                return index;
            }

            @Override
            public List<String> computeNodes() {
                return names;
            }

            @Override
            public CnPeers peers() {
                return peers;
            }
        };
    }
}
