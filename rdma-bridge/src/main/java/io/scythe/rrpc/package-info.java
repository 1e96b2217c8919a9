/**
 * RRPC (Scythe §4.6): two-sided messaging built from one-sided WRITEs, so that every fabric provider needs only
 * one-sided verbs plus a poller on the receiving side.
 *
 * <h2>Memory nodes</h2>
 * <ul>
 *   <li>{@link io.scythe.rrpc.RpcServer}: a node's inbox of rings in registered memory, one per (client node, event
 *       loop), polled by the bridge of one event loop (a memory node's "core"); handlers registered per RPC id
 *       ({@link io.scythe.rrpc.RpcServer#handle}) answer through an {@link io.scythe.rrpc.RpcResponder} inline, with a
 *       descriptor to READ, or zero-copy into the caller's buffer (Fig. 20).</li>
 *   <li>{@link io.scythe.rrpc.Rocket}: one loop's ring to one server. The calls of a round of the loop are packed into
 *       512-byte buckets ({@link io.scythe.rrpc.BucketLayout}, {@link io.scythe.rrpc.MessageLayout}: message
 *       batching) and the round's buckets leave as one doorbell batch of WRITEs (doorbell batching); replies come back
 *       the same way into the Rocket's reply ring. Credits travel in every bucket; a call that finds the ring full
 *       waits in a bounded backlog and past it fails with {@link io.scythe.rrpc.RpcException#BACK_PRESSURE}.</li>
 *   <li>{@link io.scythe.rrpc.RdmaStraws}: the RPC queue pairs to one node, shared by every loop's Rocket;
 *       {@link io.scythe.rrpc.RrpcClient} holds a node's Rockets, straws and per-loop one-sided channels.</li>
 * </ul>
 * Rings are opened over the Vert.x event bus (control traffic); data moves only by WRITEs. A call waits for its reply
 * unless the client has a bound ({@link io.scythe.rrpc.RrpcOptions#callTimeoutNs()}, none for memory-node clients).
 *
 * <h2>Compute nodes: CN-to-CN messaging</h2>
 * {@link io.scythe.rrpc.CnPeers} is the substrate Lotus's locks on compute nodes and SELCC's forwarding between caches
 * stand on, shared by every protocol and knowing none:
 * <ul>
 *   <li><b>Serving</b>: every event loop of a compute node runs its own {@code RpcServer} (endpoint {@code loopN}: its
 *       inbox {@code rrpc.inbox.loopN}, opened at {@code scythe.rrpc.NODE/loopN.open}), polled by that loop's bridge,
 *       no thread of its own. Handlers are registered per RPC id for every loop at once and run on the loop that
 *       received the call ({@link io.scythe.rrpc.CnPeers#loopIndex()}).</li>
 *   <li><b>Pairing</b>: {@code call(peer, rpcId, payload)} goes from loop {@code i} to loop {@code i} of the peer
 *       (Lotus's core-to-core pairing; {@code i mod n} when the peer serves {@code n} loops, which its directory at
 *       {@code scythe.peers.NODE.directory} tells once); {@code call(peer, loop, ...)} names a loop instead.</li>
 *   <li><b>Batching and back-pressure</b> are RRPC's: one Rocket per (calling loop, peer loop), so the calls a loop
 *       makes to one destination in a round share buckets and one doorbell.</li>
 *   <li><b>Timeouts</b>: every peer call has a deadline, {@code callTimeoutNs} after it was made (opening the ring
 *       included). The caller's bridge checks deadlines in its duty cycle, in call order (one bound per client, so
 *       deadlines come in that order); a call past it fails with {@link io.scythe.rrpc.RpcException#TIMED_OUT} and is
 *       forgotten, so a reply that comes later finds no call and is dropped: nothing completes twice.
 *       {@link io.scythe.rrpc.CnPeers#peerLeft} fails what is in flight to a peer at once (cluster mode calls it when
 *       the peer's member leaves or a newer epoch of it registers) and releases its rings.</li>
 *   <li><b>Reply rings</b> of peer clients are each a region of their own
 *       ({@link io.scythe.rrpc.RrpcClient#withRegionPerRing}): a ring given up is deregistered, so a peer that wakes
 *       and writes into it late is refused by the NIC, and the ring is reused safely.</li>
 *   <li><b>Memory</b>: {@link io.scythe.rrpc.CnPeers#register} registers and publishes a region of this compute node;
 *       a peer looks its descriptor (address, rkey) up by name and WRITEs or READs it one-sided over its loop's
 *       channel to this node ({@link io.scythe.rrpc.CnPeers#write}, {@link io.scythe.rrpc.CnPeers#read}).
 *       {@link io.scythe.rrpc.CnPeers#probe} checks both paths: a WRITE into the peer's {@code peers.probe} region and
 *       a built-in RPC that reads it back.</li>
 *   <li><b>Idle loops</b>: where a peer's WRITE wakes no loop (shm, real RDMA), a server polls; once it has taken no
 *       request for {@link io.scythe.rrpc.RrpcOptions#idlePollNs()} it polls only that often (a bridge timer,
 *       {@code Bridge.Poller#wakeAtNs}) instead of spinning its loop for peers that rarely call.</li>
 * </ul>
 * It runs on every provider (local, shm, tcp; disni compiles), in cluster mode ({@code ScytheNode}'s CN role finds
 * peers by name in the Hazelcast registry and connects lazily) and in the simulator ({@code Simulation.peers}: every
 * simulated CN loop serves and polls as a memory node's core does, rings opened before virtual time starts, bounds in
 * virtual time).
 */
package io.scythe.rrpc;
