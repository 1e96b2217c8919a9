/**
 * The deterministic simulator (issue 7): the unmodified protocol, storage, RRPC, Takeout Lock and TSO code in virtual
 * time, one seed deciding everything.
 *
 * <ul>
 *   <li>{@link io.scythe.sim.SimScheduler}: one priority queue of events ordered by (virtual time, a tie-break drawn
 *       from the seed and the loop, posting order); running an event moves the {@link io.scythe.sim.VirtualClock}.</li>
 *   <li>{@link io.scythe.sim.SimLoop}: a simulated core (a CN event loop, an MN's polling core, a TSO proxy) and the
 *       {@code ScheduledExecutorService} its {@link io.scythe.bridge.Bridge} runs on; it switches the thread's current
 *       bridge before each task and charges modelled CPU time after it ({@link io.scythe.sim.SimLoop.Cpu}).</li>
 *   <li>{@link io.scythe.sim.Simulation}: builds a cluster from the same classes {@code scythe bench} deploys (LogDb,
 *       RpcServer, TakeoutLockService, TsoService, TsoProxy, RrpcClient, TxnRuntime, Coordinator) on the local fabric
 *       whose clock is virtual, runs closed-loop clients, checks the invariants and reports the bench schema.</li>
 *   <li>{@link io.scythe.sim.Faults}: jitter per doorbell batch (through {@link io.scythe.fabric.DelayInjector}),
 *       CN crashes (one or several at one time; for Lotus a crashed CN can be restarted as a new incarnation,
 *       {@code --crash-restart-after}), an MN crash, MN-side RPC slowness; all drawn from the seed.</li>
 *   <li>{@link io.scythe.sim.Explorer}: the seed explorer. Histories are recorded through the one hook
 *       {@code scythe bench --history} uses, a {@link io.scythe.txn.HistoryRecorder} on every loop's
 *       {@code TxnRuntime} ({@link io.scythe.sim.Simulation#recorder}): a {@code HistoryCollector} builds the history
 *       in memory for {@code SerializabilityChecker} (cycles G0/G1c/G2, and impossibilities such as a version made
 *       twice or overwritten twice), a {@code HistoryWriter} writes the file {@code scythe check} reads.</li>
 *   <li>Micro workloads instead of transactions ({@link io.scythe.sim.Simulation#operation}):
 *       {@link io.scythe.sim.LockSim} (Fig. 27, Takeout Lock vs CAS lock) and {@link io.scythe.sim.CasSim} (Table 1,
 *       single CASes on one MN's host memory, the cost model's calibration check).</li>
 *   <li>Per-node clocks ({@link io.scythe.sim.SimOptions#clocks}): every simulated node's host and NIC clock is
 *       virtual time plus its own offset and drift ({@code FabricOptions.clocks}), read through the fabric SPI and
 *       {@code NodeClocks} (each CN loop's runtime gets its node's, {@code TxnRuntime#clocks}); a peer's NIC clock is
 *       a READ that executes at its modelled time. None by default; only the Aurogon protocols read them (their
 *       timestamps are CN host-clock readings), so they change no other protocol's run.</li>
 * </ul>
 *
 * <p>Seams the runtime gives the simulator (and nothing else): {@code Bridge.switchCurrent}, its deferred executor
 * (an RRPC round's end), {@code LoopTimers.on(bridge)}, {@code FabricOptions.clock/delayInjector}, a seeded
 * {@code TsoGroup}. What the simulator found nondeterministic and how it was pinned: node names key hash maps whose
 * order steers commits (fixed names), {@code TsoGroup}'s source choice (seeded), a thread-local cache in
 * {@code RrpcClient} (dropped after a run). Wall time is read only to report {@code wall_ms}.
 */
package io.scythe.sim;
