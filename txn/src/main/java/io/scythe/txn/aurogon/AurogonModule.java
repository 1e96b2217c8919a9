package io.scythe.txn.aurogon;

import io.scythe.txn.AbortReason;
import io.scythe.txn.Protocol;
import io.vertx.core.Future;
import io.scythe.txn.spi.MemoryNodeContext;
import io.scythe.txn.spi.ProtocolModule;

import java.util.List;

/**
 * Aurogon (FAST'22) as a protocol module: multi-version timestamp ordering whose participants run on the memory nodes'
 * CPUs ({@link ParticipantService}), with pre-attached writes, adaptive read deferral and 2LClock. Variants for the
 * paper's baseline and its ablation (Fig. 11), in the order it adds techniques:
 * <ul>
 *   <li>{@code dst-to}: the paper's DST-TO, clock-driven MV T/O with every technique off and DST's chasing clock
 *       ({@link AurogonClock.Mode#DST});</li>
 *   <li>{@code aurogon-pre}: DST-TO with pre-attaching;</li>
 *   <li>{@code aurogon-2l}: then 2LClock in place of DST ({@link TwoLevelClock}, the parts built);</li>
 *   <li>{@code aurogon}: then adaptive read deferral: Aurogon.</li>
 * </ul>
 * And {@code dst-to-eager}: DST-TO installing each write when it is written, not at commit ({@link #DST_TO_EAGER});
 * {@code aurogon-farmclock}: Aurogon with FaRMv2's clock in place of 2LClock (§6.5's comparison,
 * {@link AurogonClock.Mode#FARM}); {@code aurogon-hostclock}: Aurogon on each node's raw host clock (Fig. 1(a)'s
 * offsets injected with {@code --clock-spread host=...} go uncorrected); {@code aurogon-base}: every technique off on the node's raw host clock (in the
 * simulator, perfect unless {@code --clock} skews it).
 * {@code aurogon:sps}: SPS mode (§4.4, {@link #AUROGON_SPS}). Not in the default lists ({@link #listed()}); memory-node failover runs in the simulator and on cluster nodes (2LClock variants). With {@code --replicas K} it keeps backups and resolves a dead coordinator's transactions through them. Values
 * longer than one RRPC bucket (TPC-C's rows) go in parts ({@link AurogonRpc}).
 */
public final class AurogonModule implements ProtocolModule {
    public static final Protocol DST_TO = variant("dst-to", false, false, AurogonClock.Mode.DST);
    /**
     * DST-TO sending each write's install (Fig. 5's PW) when the transaction writes it, right after the read it
     * depends on (Algorithm 1 lines 14-15), where {@code dst-to} installs every write at commit: the vulnerable
     * interval is then one round trip, not the rest of the transaction.
     */
    public static final Protocol DST_TO_EAGER = Protocol.of("dst-to-eager", (runtime, hint) -> new AurogonTxn(runtime,
        new AurogonTxn.Techniques("dst-to-eager", false, false, AurogonClock.Mode.DST, true, false)));
    public static final Protocol AUROGON_BASE = variant("aurogon-base", false, false, AurogonClock.Mode.HOST);
    public static final Protocol AUROGON_PRE = variant("aurogon-pre", true, false, AurogonClock.Mode.DST);
    public static final Protocol AUROGON_2L = variant("aurogon-2l", true, false, AurogonClock.Mode.TWO_LEVEL);
    public static final Protocol AUROGON = variant("aurogon", true, true, AurogonClock.Mode.TWO_LEVEL);
    public static final Protocol AUROGON_FARM_CLOCK = variant("aurogon-farmclock", true, true,
        AurogonClock.Mode.FARM);
    /** Aurogon on each node's raw host clock, unsynchronised: Fig. 1(a)'s T/O system under injected offsets. */
    public static final Protocol AUROGON_HOST_CLOCK = variant("aurogon-hostclock", true, true,
        AurogonClock.Mode.HOST);
    /** The option of {@code aurogon} naming its SPS mode: {@link #AUROGON_SPS}. */
    public static final String SPS_OPTION = "sps";
    /**
     * {@code aurogon:sps}: Aurogon with strong partition serializability (§4.4, optional): a read may not return a
     * version below a committed newer one, a write below a committed version is refused ({@link Participant#FLAG_SPS});
     * the commit is reported after every COMMIT acknowledgement, as in every variant here.
     */
    public static final Protocol AUROGON_SPS = variant(new AurogonTxn.Techniques("aurogon:" + SPS_OPTION, true, true,
        AurogonClock.Mode.TWO_LEVEL).withSps());

    /** What a dead compute node's release counts here: versions pending of its coordinators, now suspects. */
    static final String DEAD_COORDINATORS = "aurogonSuspects";

    private static Protocol variant(final String name, final boolean preattach, final boolean deferral,
                                    final AurogonClock.Mode clock) {
        return variant(new AurogonTxn.Techniques(name, preattach, deferral, clock));
    }

    private static Protocol variant(final AurogonTxn.Techniques techniques) {
        return Protocol.of(techniques.mode(), (runtime, hint) -> new AurogonTxn(runtime, techniques));
    }

    /**
     * How many suspect transactions recoveries in this process committed and rolled back through their backups
     * ({@link CoordinatorRecovery}): {@code [committed, rolled back, decided on a lost backup share]}.
     */
    public static long[] recoveries() {
        return CoordinatorRecovery.outcomes();
    }

    /** Heartbeats this process's loops left out because their memory node was removed ({@link Heartbeats}). */
    public static long heartbeatsSkipped() {
        return Heartbeats.skipped();
    }

    /**
     * The reading of {@code protocol}'s clock on {@code runtime}'s loop now (ns; what its next timestamp would pack,
     * before the per-loop increase), without probing or syncing: for comparing two loops' clocks against the same
     * reference as the paper measures 2LClock's error (§6.5: two clocks on one server, each synchronised to a third).
     * A clear error when that loop has taken no timestamp of that protocol's clock yet, or the protocol is not
     * Aurogon's.
     */
    public static long clockReadingNs(final io.scythe.txn.TxnRuntime runtime, final String protocol) {
        final AurogonClock.Mode mode = modeOf(protocol);
        final AurogonClock clock = AurogonClock.existing(runtime, mode);
        if (clock == null) {
            throw new IllegalStateException("this loop has no " + mode + " clock yet: it took no timestamp of "
                + protocol);
        }
        return clock.estimateNs();
    }

    /**
     * Where {@code runtime}'s 2LClock stands in its root failover (§5.3): {@code "<phase> <reference> <failovers>"}
     * (phase NORMAL, VIRTUAL or SMOOTHING; the reference node it probes now), or null when the loop has no 2LClock.
     */
    public static String twoLevelClockState(final io.scythe.txn.TxnRuntime runtime) {
        final AurogonClock clock = AurogonClock.existing(runtime, AurogonClock.Mode.TWO_LEVEL);
        return clock == null ? null : clock.twoLevelState();
    }

    private static AurogonClock.Mode modeOf(final String protocol) {
        switch (protocol) {
            case "dst-to":
            case "dst-to-eager":
            case "aurogon-pre":
                return AurogonClock.Mode.DST;
            case "aurogon-base":
            case "aurogon-hostclock":
                return AurogonClock.Mode.HOST;
            case "aurogon-2l":
            case "aurogon":
            case "aurogon:" + SPS_OPTION:
                return AurogonClock.Mode.TWO_LEVEL;
            case "aurogon-farmclock":
                return AurogonClock.Mode.FARM;
            default:
                throw new IllegalArgumentException("'" + protocol + "' is not one of Aurogon's protocols");
        }
    }

    @Override
    public String name() {
        return "aurogon";
    }

    @Override
    public List<Protocol> protocols() {
        return List.of(AUROGON, AUROGON_2L, AUROGON_PRE, AUROGON_BASE, DST_TO, DST_TO_EAGER, AUROGON_FARM_CLOCK,
            AUROGON_HOST_CLOCK, AUROGON_SPS);
    }

    @Override
    public boolean listed() {
        return false;
    }

    /** Registers the participant's RPCs; it holds nothing until an Aurogon request arrives. */
    @Override
    public void startMemoryNode(final MemoryNodeContext node) {
        final ParticipantService service = new ParticipantService(node.db(), Participant.Deferral.DEFAULT)
            .register(node.server());
        node.publish(ParticipantService.class, service);
        // A host's recovery of a dead compute node (cluster mode's recovery duty) tells the participant its
        // coordinators are dead, so §4.5's suspects do not wait on a silence a successor reusing the id never leaves.
        node.onDeadNode(MemoryNodeContext.Phase.BEFORE_INSERTS, DEAD_COORDINATORS,
            (dead, idPrefixes) -> service.coordinatorsDied(dead, idPrefixes));
        final io.scythe.fabric.Nic nic = node.db().nic();
        node.onPromotion(new MemoryNodeContext.Promotion() {
            @Override
            public String promote(final String protocol, final java.util.Set<Integer> tables) {
                if (!protocols().stream().anyMatch(p -> p.name().equals(protocol))) {
                    return null; // the cluster runs another module's protocol: this participant serves nothing
                }
                final String refused = clusterRefusal(protocol);
                if (refused != null) {
                    return refused;
                }
                final long bound;
                final long clockNs;
                try {
                    bound = clusterClockBoundNs(nic.fabric().options().clocks());
                    clockNs = nic.nicClockNs();
                } catch (final RuntimeException e) {
                    return "Aurogon's promotion of " + tables + " on " + nic.node() + " refused: " + e.getMessage();
                }
                final long floor;
                try {
                    floor = service.promoteOnCluster(tables, clockNs, bound);
                } catch (final RuntimeException e) {
                    // Checked before anything changed (ParticipantService#promote): nothing is half promoted.
                    return "Aurogon's promotion of " + tables + " on " + nic.node() + " failed: " + e;
                }
                System.out.println("Aurogon promoted copies " + tables + " on " + nic.node() + " with read floor "
                    + AurogonTimestamp.toString(floor) + " (NIC clock " + clockNs + " ns + bound " + bound + " ns)");
                return null;
            }

            @Override
            public void replacement(final String protocol) {
                service.replacement(replacementFloor(protocol, nic.node(), nic.nicClockNs(),
                    nic.fabric().options().clocks()));
            }

            @Override
            public void rejoined() {
                service.rejoined();
            }
        });
    }

    /**
     * The floor a replacement memory node process is born at: its NIC clock at start plus the clocks' bound, as a
     * promotion's read floor is (every timestamp its predecessor held was issued before that one died, before this
     * process started); a recovery's HOLDS of a timestamp at or below it that it holds nothing of answers NOT_HERE.
     * With drifting (unbounded) clocks there is no such floor: a replacement is refused, loudly, at its start (review,
     * stop 45: it was born at Long.MAX_VALUE, so every recovery touching it, of its own transactions too, took the
     * lost-share path for good, leaving them to coordinators or in doubt; a promotion is refused there already).
     * Only when the cluster runs one of Aurogon's {@code protocol}s, as {@link MemoryNodeContext.Promotion#promote}
     * decides: every module starts on a memory node whatever the compute nodes run, and a participant serving nothing
     * must not refuse another protocol's replacement (review of f0fa52f7); it is born at Long.MAX_VALUE, no bound
     * asked (it never answers a HOLDS).
     *
     * @throws IllegalStateException when the cluster runs Aurogon and the clocks give no bound
     */
    long replacementFloor(final String protocol, final String node, final long nicClockNs,
        final io.scythe.fabric.ClockOptions clocks) {
        if (protocols().stream().noneMatch(p -> p.name().equals(protocol))) {
            return Long.MAX_VALUE; // the cluster runs another module's protocol: this participant serves nothing
        }
        final long bound;
        try {
            bound = clusterClockBoundNs(clocks);
        } catch (final RuntimeException unbounded) {
            throw new IllegalStateException("Aurogon refuses replacement memory node " + node + ": "
                + unbounded.getMessage() + "; a replacement needs a clock bound to tell its predecessor's transactions "
                + "from later ones (run with bounded clocks: no NIC clock drift)", unbounded);
        }
        return ParticipantService.clusterFloor(nicClockNs, bound);
    }

    /**
     * How far above any memory node's NIC clock a 2LClock timestamp on a cluster node may be (its error, §5): half a
     * probe's round trip bounds a probe's offset error under an asymmetric path, and each slice's mapping is fitted
     * from its best probes; 1 ms is far above the round trips of a loaded host's shared-memory fabric (tens of
     * microseconds) and above the root failover's extrapolation over its virtual phase. The extrapolation's share
     * is enforced: rates clamped, at most {@code PiecewiseMapping.MAX_EXTRAPOLATION_NS} extrapolated (250 us per
     * mapping), past which the clock refuses a timestamp ({@code TwoLevelClock.Unsynchronised}). Taken by a
     * promotion's read floor ({@link #clusterClockBoundNs}).
     */
    static final long CLUSTER_2LCLOCK_ERROR_NS = 1_000_000;

    /**
     * The bound a cluster node's promotion adds to its own NIC clock for the read floor: {@link
     * #CLUSTER_2LCLOCK_ERROR_NS} plus the largest distance between two memory nodes' NIC clocks the configured clocks
     * allow ({@code clocks}, the fabric options every process is given alike: the width of the range holding the
     * default's offset and every node's own, each widened by the spread's offset). A CN's 2LClock maps onto one memory node's NIC
     * clock (its reference; after a root failover, the next: while it extrapolates the dead one's, that one's), so a
     * timestamp read before the promotion is at most this above the promoting node's NIC clock then.
     *
     * @throws IllegalStateException when any NIC clock is configured to drift, a shared drift too (each drifts from its
     *     own start, so their distance, and with it the bound, grows without end)
     */
    static long clusterClockBoundNs(final io.scythe.fabric.ClockOptions clocks) {
        final io.vertx.core.json.JsonObject json = clocks.toJson();
        final io.vertx.core.json.JsonObject nodes = json.getJsonObject("nodes", new io.vertx.core.json.JsonObject());
        // Every NIC clock lies in [lo, hi]: the default's offset +- the spread, and each override's (counted with the
        // spread too: an over-estimate at worst). The bound is the width of that range, overrides on both sides
        // included (mn1 +5 ms, mn2 -5 ms are 10 ms apart).
        final long s = Math.abs(clocks.nicSpread().offsetNs());
        long lo = clocks.nicDefault().offsetNs() - s;
        long hi = clocks.nicDefault().offsetNs() + s;
        // Any drift, a shared one too: each clock drifts from its own start, so equal ppm started apart part ways.
        boolean drifting = clocks.nicSpread().driftPpm() != 0 || clocks.nicDefault().driftPpm() != 0;
        for (final String node : nodes.fieldNames()) {
            final io.vertx.core.json.JsonObject nic = nodes.getJsonObject(node).getJsonObject("nic");
            if (nic != null) {
                final io.scythe.fabric.ClockDeviation d = io.scythe.fabric.ClockDeviation.fromJson(nic,
                    "clocks.nodes." + node + ".nic");
                lo = Math.min(lo, d.offsetNs() - s);
                hi = Math.max(hi, d.offsetNs() + s);
                drifting |= d.driftPpm() != 0;
            }
        }
        final long spread = hi - lo;
        if (drifting) {
            throw new IllegalStateException("the fabric's NIC clocks are configured to drift apart (clocks " + json
                + "): they are not synchronised, so no bound holds between the clock a promotion reads and the one "
                + "a compute node's 2LClock maps onto");
        }
        return CLUSTER_2LCLOCK_ERROR_NS + spread;
    }

    /**
     * A rejoining copy's re-replication writes each key by a COPY request ({@link AurogonRpc#COPY}): the new copy
     * applies the primary's newest committed version by the APPLY rule, never over a newer one (its commits lock no
     * header, so the one-sided image write could). Values longer than one RRPC bucket are not copied yet: refused,
     * the key's copy fails loudly (the rejoin stays rejoining).
     */
    @Override
    public io.scythe.txn.spi.ReplicaWrite replicaWrite(final Protocol protocol) {
        return protocols().contains(protocol) ? COPY : null;
    }

    /** The COPY, and R1's PENDING question to the primary ({@link AurogonRpc#PENDING}). */
    private static final io.scythe.txn.spi.ReplicaWrite COPY = new io.scythe.txn.spi.ReplicaWrite() {
        @Override
        public Future<Void> write(final io.scythe.txn.TxnRuntime runtime, final io.scythe.txn.Catalog.Replica copy,
                                  final long key, final long version, final boolean deleted,
                                  final org.agrona.DirectBuffer value, final int length) {
            return copy(runtime, copy, key, version, deleted, value, length);
        }

        @Override
        public Future<Boolean> unsettled(final io.scythe.txn.TxnRuntime runtime,
                                         final io.scythe.txn.Catalog.Partition partition, final long key) {
            final org.agrona.concurrent.UnsafeBuffer request = new org.agrona.concurrent.UnsafeBuffer(
                new byte[AurogonRpc.HEADER_BYTES]);
            request.putInt(AurogonRpc.TABLE_OFFSET, partition.descriptor().schema().id());
            request.putLong(AurogonRpc.KEY_OFFSET, key);
            return io.scythe.txn.onesided.Reposts.untilAccepted(runtime.timers(), () -> Removals.call(runtime,
                partition.node(), AurogonRpc.PENDING, request)).compose(reply -> {
                final int status = reply.payload().getInt(0);
                return status == Participant.OK || status == AurogonRpc.PENDING_HELD
                    ? Future.succeededFuture(status == AurogonRpc.PENDING_HELD)
                    : Future.failedFuture(new IllegalStateException("Aurogon PENDING of key " + key + " on "
                    + partition.node() + " answered " + status));
            });
        }
    };

    private static Future<Void> copy(final io.scythe.txn.TxnRuntime runtime, final io.scythe.txn.Catalog.Replica copy,
                                     final long key, final long version, final boolean deleted,
                                     final org.agrona.DirectBuffer value, final int length) {
        return Removals.rocket(runtime, copy.node()).compose(rocket -> {
            final int bytes = deleted ? 0 : length;
            if (AurogonRpc.HEADER_BYTES + bytes > rocket.maxPayload()) {
                return Future.failedFuture(new IllegalStateException("Aurogon re-replication of key " + key + " of "
                    + copy.descriptor().schema().name() + ": a value of " + bytes + " bytes does not fit one COPY ("
                    + (rocket.maxPayload() - AurogonRpc.HEADER_BYTES) + "): copying in parts is not built"));
            }
            final org.agrona.concurrent.UnsafeBuffer request = new org.agrona.concurrent.UnsafeBuffer(
                new byte[AurogonRpc.HEADER_BYTES + bytes]);
            CoordinatorRecovery.fill(request, copy.descriptor().schema().id(), deleted ? AurogonRpc.DELETE : bytes, key,
                version);
            if (bytes > 0) {
                request.putBytes(AurogonRpc.HEADER_BYTES, value, 0, bytes);
            }
            // Reposted while refused for now (RRPC back-pressure), as a REPLICATE is (review, finding 7).
            return io.scythe.txn.onesided.Reposts.untilAccepted(runtime.timers(), () -> Removals.call(runtime,
                copy.node(), AurogonRpc.COPY, request)).compose(reply ->
                reply.payload().getInt(0) == Participant.OK ? Future.succeededFuture()
                    : Future.failedFuture(new IllegalStateException("Aurogon COPY of key " + key + " onto "
                    + copy.node() + " answered " + reply.payload().getInt(0))));
        });
    }

    /** Handled: {@link #promoted}, and coordinators that treat a removed node as gone ({@link AurogonTxn}). */
    @Override
    public String memoryNodeCrashRefusal(final Protocol protocol) {
        return null;
    }

    /**
     * Cluster nodes keep Aurogon's backups (REPLICATE before any COMMIT, APPLY after, {@link Backups}): they are what
     * §4.5's recovery of a dead coordinator's transactions decides from, and what makes a pending version a suspect
     * ({@link ParticipantService}: only a node holding backup tables suspects). Each backup converges on its
     * primary (the simulator compares them after every {@code --replicas} run).
     */
    @Override
    public boolean replicates() {
        return true;
    }

    /**
     * Cluster nodes promote through {@link MemoryNodeContext.Promotion} (registered in {@link #startMemoryNode}): once
     * every live compute node applied the configuration, the promoted node floors its copies' reads at its NIC clock
     * plus {@link #clusterClockBoundNs} and adopts the transactions its backup held (see the package doc). That bound
     * holds for 2LClock ({@code aurogon}, {@code aurogon-2l}) only: DST's chase, the raw host clocks and FaRMv2's
     * clock are not bounded against the memory nodes' NIC clocks, so those protocols are refused.
     */
    @Override
    public String clusterMemoryNodeFailoverRefusal(final Protocol protocol) {
        return clusterRefusal(protocol.name());
    }

    private String clusterRefusal(final String protocol) {
        final boolean mine = protocols().stream().anyMatch(p -> p.name().equals(protocol));
        return mine && modeOf(protocol) != AurogonClock.Mode.TWO_LEVEL ? "a cluster node's promotion floors reads at "
            + "its NIC clock plus 2LClock's error bound, and " + protocol + "'s clock (" + modeOf(protocol) + ") has "
            + "no such bound: use aurogon or aurogon-2l" : null;
    }

    /** Pending versions and held replications on {@code db} ({@link ParticipantService#unsettled}, racy). */
    @Override
    public long unsettledState(final io.scythe.storage.LogDb db) {
        final ParticipantService service = ParticipantService.of(db);
        return service == null ? 0 : service.unsettled();
    }

    /** The pending versions on {@code db} ({@link Participant#pendingDescribed}): which record a stuck run left. */
    @Override
    public java.util.List<String> unsettledDescribed(final io.scythe.storage.LogDb db, final int max) {
        final ParticipantService service = ParticipantService.of(db);
        if (service == null) {
            return java.util.List.of();
        }
        return service.participant().pendingDescribed(max, id -> {
            final io.scythe.storage.Table t = db.table(id);
            return t == null ? "table " + id : t.schema().name();
        });
    }

    /**
     * A coordinator and a memory node dying together: recovered with 2 or more backups a partition only. With one,
     * the dead node can hold the only backup copy of a transaction whose dead coordinator's commit reached a primary
     * (its pre-attached versions elsewhere then have no value anywhere, or it is suspected nowhere and never
     * reported); §4.5 assumes f+1 copies survive (f = 1 here: two failures need two backups). See the package doc.
     */
    @Override
    public String combinedCrashRefusal(final Protocol protocol, final int replicas) {
        return replicas >= 2 ? null : "with --replicas " + replicas + " a memory node dying with a coordinator can take "
            + "the only backup copy of a transaction whose commit reached a primary; §4.5 assumes f+1 copies survive "
            + "two failures: give --replicas 2 or more";
    }

    /**
     * A dead coordinator's transactions are resolved through the backups (§4.5, {@link CoordinatorRecovery}), not by
     * the shared recovery: that frees locks and rolls a redo log forward, and Aurogon has neither (a pending version
     * is decided by what its backups hold). One backup a partition, as {@code AurogonRecoverySimTest} runs it.
     */
    @Override
    public OwnCrashRecovery ownCrashRecovery(final Protocol protocol) {
        return protocols().contains(protocol) ? new OwnCrashRecovery(1, false) : null;
    }

    /**
     * The first memory node (by name: {@code mn0}) is the clock reference of 2LClock and FaRMv2's clock
     * ({@link AurogonClock}): 2LClock fails over to the next ({@link TwoLevelClock}, §5.3's virtual, correction and
     * smoothing phases); FaRMv2's clock has no failover here (its master's death is not modelled, issue 20).
     */
    @Override
    public String memoryNodeCrashRefusal(final Protocol protocol, final int memoryNode) {
        final AurogonClock.Mode mode = memoryNode == 0 && protocols().contains(protocol) ? modeOf(protocol.name())
            : null;
        if (mode == AurogonClock.Mode.FARM) {
            return "memory node 0 is the " + mode + " clock reference of " + protocol.name() + " (the first memory "
                + "node by name), and FaRMv2's clock does not fail over (issue 20): crash another memory node, or "
                + "use 2LClock (aurogon), which does";
        }
        return memoryNodeCrashRefusal(protocol);
    }

    /**
     * The paper's promotion (§4.5: coordinators pick a new primary from the backups by consensus): the live
     * coordinators give the largest timestamp they issued, the read floor of the promoted copies
     * ({@link ParticipantService#promote}).
     */
    @Override
    public void promoted(final io.scythe.storage.LogDb node, final java.util.Set<Integer> tables,
                         final List<io.scythe.txn.TxnRuntime> coordinators) {
        final ParticipantService service = ParticipantService.of(node);
        if (service == null) {
            throw new IllegalStateException("memory node " + node.nic().node() + " runs no Aurogon participant");
        }
        long floor = 0;
        for (final io.scythe.txn.TxnRuntime runtime : coordinators) {
            for (final AurogonClock.Mode mode : AurogonClock.Mode.values()) {
                final AurogonClock clock = AurogonClock.existing(runtime, mode);
                floor = clock == null ? floor : Math.max(floor, clock.last());
            }
        }
        service.promote(tables, floor);
    }

    /**
     * Fig. 11's statistics over the run's memory nodes: reads served, how many were deferred (§4.2) and for how long
     * (mean and largest deferral, us), reads parked on a pending version, installs and refused installs (the write
     * failure rate the deferral adapts to); with backups, the deletedAt entries kept and REPLICATEs refused below
     * their pruning horizon (attempts aborted after waiting on a suspect left in doubt are the aborts' {@code in-doubt}).
     * Null when no node ran Aurogon.
     */
    @Override
    public io.vertx.core.json.JsonObject runStats(final List<io.scythe.storage.LogDb> memoryNodes) {
        long reads = 0;
        long deferred = 0;
        long deferredNs = 0;
        long maxDeferredNs = 0;
        long parked = 0;
        long installs = 0;
        long refused = 0;
        long lateNs = 0;
        long byRts = 0;
        long maxLateNs = 0;
        long deletedAt = 0;
        long stale = 0;
        long spsStaleReads = 0;
        long spsRefusedWrites = 0;
        boolean any = false;
        for (final io.scythe.storage.LogDb db : memoryNodes) {
            final ParticipantService service = ParticipantService.of(db);
            if (service == null) {
                continue;
            }
            any = true;
            final Participant p = service.participant();
            reads += p.reads();
            deferred += p.deferredReads();
            deferredNs += p.deferredNs();
            maxDeferredNs = Math.max(maxDeferredNs, p.maxDeferredNs());
            parked += p.blockedReads();
            installs += p.installs();
            refused += p.refusedInstalls();
            lateNs += p.refusedLateNs();
            byRts += p.refusedByRts();
            maxLateNs = Math.max(maxLateNs, p.maxRefusedLateNs());
            deletedAt += service.deletedAtEntries();
            stale += service.staleReplications();
            spsStaleReads += p.spsRefusals()[0];
            spsRefusedWrites += p.spsRefusals()[1];
        }
        if (!any) {
            return null;
        }
        return new io.vertx.core.json.JsonObject().put("reads", reads).put("deferred_reads", deferred)
            .put("deferred_share", round(reads == 0 ? 0 : (double) deferred / reads))
            .put("mean_deferral_us", round(deferred == 0 ? 0 : deferredNs / 1e3 / deferred))
            .put("max_deferral_us", round(maxDeferredNs / 1e3)).put("parked_reads", parked)
            .put("installs", installs).put("refused_installs", refused)
            .put("write_failure_rate", round(installs + refused == 0 ? 0 : (double) refused / (installs + refused)))
            .put("mean_refused_late_us", round(byRts == 0 ? 0 : lateNs / 1e3 / byRts))
            .put("max_refused_late_us", round(maxLateNs / 1e3))
            .put("deleted_at_entries", deletedAt).put("stale_replications", stale)
            .put("sps_stale_reads", spsStaleReads).put("sps_refused_writes", spsRefusedWrites);
    }

    private static double round(final double x) {
        return Math.round(x * 1000) / 1000.0;
    }

    @Override
    public List<AbortReason> abortReasons() {
        return AurogonAborts.ALL;
    }
}
