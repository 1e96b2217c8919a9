package io.scythe.txn.rcc.calvin;

import io.scythe.txn.Protocol;
import io.scythe.txn.spi.ComputeNodeContext;
import io.scythe.txn.spi.ProtocolModule;

import java.util.List;

/**
 * RCC's CALVIN as its own module ({@code rcc-calvin}): CALVIN keeps no per-tuple metadata (Fig. 3) and needs its
 * compute nodes wired to each other, so it is apart from {@link io.scythe.txn.rcc.RccModule}'s five shared-everything
 * protocols. Each compute node gets a {@link CalvinNode}. Asked for by name only; in the simulator and the embedded
 * cluster ({@code scythe bench}), which wire compute-node peers; cluster nodes refuse it at start.
 */
public final class CalvinModule implements ProtocolModule {
    public static final CalvinProtocol CALVIN = CalvinProtocol.base();
    /**
     * OLLP's restart: a record a transaction's reconnaissance read had changed when its sequenced run got its locks
     * (nothing written; retried, reconnoitred again).
     */
    public static final io.scythe.txn.AbortReason OLLP_RESTART = io.scythe.txn.AbortReason.define("ollp-restart",
        950);

    @Override
    public String name() {
        return "rcc-calvin";
    }

    @Override
    public List<Protocol> protocols() {
        return List.of(CALVIN);
    }

    @Override
    public boolean listed() {
        return false;
    }

    @Override
    public io.scythe.txn.spi.PeerMessaging peerMessaging(final io.scythe.txn.Protocol protocol) {
        return io.scythe.txn.spi.PeerMessaging.LOOP_PAIRS; // sequencers and schedulers talk loop i to loop i
    }

    /**
     * Not on cluster nodes yet: every node waits for every other node's batch of each epoch, so a compute node that
     * dies stops the whole cluster, and no recovery of its sequencer's epochs or of the locks its scheduler granted is
     * built (issue 18).
     */
    @Override
    public String clusterRefusal(final Protocol protocol) {
        return "a compute node that dies stops every epoch (each node waits for every node's batch), and no recovery "
            + "of a dead node's sequencer and scheduler is built (issue 18: its input log is written, nothing reads it "
            + "yet)";
    }

    /** Nor in the simulator, for the same reason: a crash would stall every epoch rather than test recovery. */
    @Override
    public String crashRefusal(final Protocol protocol) {
        return clusterRefusal(protocol);
    }

    @Override
    public ComputeNodeContext.LoopSetUp startComputeNode(final ComputeNodeContext context) {
        final CalvinNode node = new CalvinNode(context);
        return node::startLoop;
    }

    @Override
    public List<io.scythe.txn.AbortReason> abortReasons() {
        return List.of(OLLP_RESTART);
    }

    @Override
    public List<String> configKeys() {
        return List.of("primitive=onesided|rpc, epoch=<n>ns|us|ms (default 10us) and log=on|off (the input log "
            + "under --redo-log; default on), after 'rcc-calvin:', joined by '+'");
    }
}
