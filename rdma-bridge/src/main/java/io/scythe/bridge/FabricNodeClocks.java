package io.scythe.bridge;

import io.scythe.fabric.Nic;
import io.scythe.fabric.QpOptions;
import io.vertx.core.Future;

import java.util.HashMap;
import java.util.Map;

/**
 * {@link NodeClocks} of a NIC for one loop: its host and NIC clocks read directly, remote NIC clocks read over
 * channels of its own, one per peer, connected on first use (a loop's protocol channels stay untouched).
 */
final class FabricNodeClocks implements NodeClocks {
    private final Nic nic;
    private final Bridge bridge;
    private final Map<String, Future<RdmaChannel>> channels = new HashMap<>();

    FabricNodeClocks(final Nic nic, final Bridge bridge) {
        this.nic = nic;
        this.bridge = bridge;
    }

    @Override
    public long hostNs() {
        return nic.hostClockNs();
    }

    @Override
    public long nicNs() {
        return nic.nicClockNs();
    }

    @Override
    public Future<NicClockReading> readRemoteNic(final String node) {
        if (Bridge.currentOrNull() != bridge) {
            throw new IllegalStateException("NodeClocks of node " + nic.node() + " belong to the loop of thread '"
                + bridge.thread().getName() + "' and its bridge: make one per loop (NodeClocks.onLoop)");
        }
        Future<RdmaChannel> channel = channels.get(node);
        if (channel == null || channel.failed()) {
            channel = RdmaChannel.connect(nic, node, new QpOptions());
            channels.put(node, channel); // a failed connect is tried again on the next read
        }
        final Future<RdmaChannel> used = channel;
        return used.compose(RdmaChannel::readNicClock).onFailure(e -> forget(node, used));
    }

    /** A read failed: the next one gets a new channel (a revoked or broken queue pair would fail it again). */
    private void forget(final String node, final Future<RdmaChannel> channel) {
        if (channels.get(node) == channel) {
            channels.remove(node);
            if (channel.succeeded()) {
                channel.result().close();
            }
        }
    }
}
