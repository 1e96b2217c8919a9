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
     * dies stops the whole cluster; survivors take over a dead node's epochs, decisions and (its successor) lock
     * queues only where the host tells them of the death and where its input log is (the simulator) (issue 18).
     */
    @Override
    public String clusterRefusal(final Protocol protocol) {
        return "a compute node that dies stops every epoch (each node waits for every node's batch); survivors read a "
            + "dead node's input log, and take over its lock queues, only in the simulator (cluster nodes neither tell "
            + "them of the death nor publish where the log is) (issue 18)";
    }

    /**
     * Where the host does not say which node crashes: refused with {@code log=off} (see the other overload); else
     * any compute node may crash (issue 18 parts 2-5).
     */
    @Override
    public String crashRefusal(final Protocol protocol) {
        return crashRefusal(protocol, 0, 2, 1);
    }

    /**
     * 4: in the explorer's 150 us a TPC-C transaction under CALVIN is rarely over (one client alone: p50 78 us, a
     * StockLevel 440 us; its 9 clients over 3 nodes: p50 387 us, as NewOrder and Payment by name are sequenced twice
     * (OLLP) and a transaction holds the warehouse and district locks across its executor's round trip, decision
     * record and write-back), so 100 crash seeds committed 15 (RPC: 8) in the window. At 600 us: 75 over 10 seeds.
     */
    @Override
    public int explorerTpccRunScale(final Protocol protocol) {
        return 4;
    }

    /**
     * With {@code log=off}: no input log says what the dead node's sequencer dispatched. Else none: survivors complete
     * a dead node's epochs from its input log, decide its transactions from its decision records (issue 18 parts 2-4),
     * and a dead owner's successor takes over its lock queues, the other survivors routing to it (part 5; one death per
     * run: a second one gives the run up, naming it).
     */
    @Override
    public String crashRefusal(final Protocol protocol, final int crashed, final int computeNodes,
                               final int partitions) {
        if (protocol instanceof CalvinProtocol c && !c.inputLog()) {
            return "with log=off no input log says what the dead node's sequencer dispatched, so survivors cannot "
                + "agree on its epochs (issue 18)";
        }
        return null;
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
