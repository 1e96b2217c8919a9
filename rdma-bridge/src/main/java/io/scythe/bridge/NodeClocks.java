package io.scythe.bridge;

import io.scythe.fabric.Nic;
import io.vertx.core.Future;

/**
 * The clocks a protocol on one event loop may read, handed to it by its runtime as {@code Timers} are (never
 * {@code System.nanoTime}, so the same code runs in the simulator's virtual time):
 * <ul>
 *   <li>{@link #hostNs()}: the node's host clock, what its CPUs read: cheap, and as far from true time as the node's
 *       host clock is (NTP-grade by default in a cluster, configured per node: {@code FabricOptions#clocks}). What a
 *       FaRMv2-style timestamp with an uncertainty wait reads.</li>
 *   <li>{@link #nicNs()}: the node's NIC clock, the clock its completions are timestamped in.</li>
 *   <li>{@link #readRemoteNic(String)}: another node's NIC clock, read one-sided over the fabric like a READ (and
 *       paying what a READ pays), bracketed by this NIC's clock at post and at completion: what Aurogon's 2LClock
 *       builds its NIC-to-NIC mapping from.</li>
 * </ul>
 * One instance per event loop, used on that loop only; its Futures complete there.
 */
public interface NodeClocks {
    /** The node's host clock now. */
    long hostNs();

    /** The node's NIC clock now. */
    long nicNs();

    /**
     * Reads {@code node}'s NIC clock one-sided. Connects to {@code node} on first use (from this loop's bridge).
     * Fails as a READ fails, or when the provider has no NIC clocks (disni).
     */
    Future<NicClockReading> readRemoteNic(String node);

    /** The clocks of {@code nic}'s node, for the calling event loop (it must run a {@link Bridge}). */
    static NodeClocks onLoop(final Nic nic) {
        return new FabricNodeClocks(nic, Bridge.current());
    }
}
