package io.scythe.txn.spi;

import io.scythe.rrpc.CnPeers;
import io.scythe.txn.TxnRuntime;

import java.util.List;
import java.util.concurrent.Executor;

/**
 * What a protocol module's compute-node services start on ({@link ProtocolModule#startComputeNode}, for a module
 * whose {@link ProtocolModule#peerMessaging} is not NONE): the node's place among the compute nodes and its CN-to-CN
 * messaging. Given once per compute node, before its loops serve; each loop's runtime has its
 * {@code TxnRuntime#peerLoops} before the module's {@link LoopSetUp} equips it.
 */
public interface ComputeNodeContext {
    /** This compute node's index among {@link #computeNodes()}. */
    int index();

    /** Every compute node's name (what {@link CnPeers#call} takes), by index. */
    List<String> computeNodes();

    /** This node's CN-to-CN messaging (handlers may be added until its loops serve, and after). */
    CnPeers peers();

    /**
     * State the cluster's compute nodes share (one map per cluster, the same for every node of it): what stands for
     * services outside the nodes, such as a routing layer. The simulator puts {@code run.over} (a BooleanSupplier:
     * periodic tasks stop), {@code run.endChecks} (a {@code List<Map.Entry<Integer, Supplier<String>>>}: a module adds
     * a node's check of what it still holds once every transaction finished, by node index; a non-null answer is a
     * violation of the run) and, when it routes, {@code routing.shards} (its shard count), {@code
     * routing.moveShardEveryNs} (how often it moves shards at random, 0: never) and {@code routing.moved} (a
     * BiConsumer of shard and compute node a module that moves shards itself tells). The embedded cluster puts
     * {@code run.over}, {@code routing.shards}, {@code routing.moved} and {@code clock.wall} (true: its loops' timers
     * run on wall-clock time, which a loaded machine stalls). A host that has none fails
     * clearly.
     */
    default java.util.Map<String, Object> shared() {
        throw new UnsupportedOperationException("this host shares no state between its compute nodes");
    }

    /** How a module equips each loop of a compute node, once the loop's runtime exists. */
    @FunctionalInterface
    interface LoopSetUp {
        LoopSetUp NONE = (loop, runtime, deferred) -> { };

        /**
         * Equips loop {@code loop} (its index on the node), e.g. with a runtime extension; {@code deferred} runs a task
         * later on that loop, after what runs now (a batch's flush).
         */
        void startLoop(int loop, TxnRuntime runtime, Executor deferred);
    }
}
