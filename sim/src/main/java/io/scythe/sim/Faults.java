package io.scythe.sim;

import io.vertx.core.json.JsonObject;

import java.util.ArrayList;

/**
 * Faults injected into a simulated run, all drawn from the run's seed:
 * <ul>
 *   <li>{@code jitterNs}: every doorbell batch gets an extra one-way delay, uniform in [0, jitterNs), on its requests
 *       and responses. A queue pair keeps its order (RC), so this reorders verbs across queue pairs only.</li>
 *   <li>{@code crashCn} at {@code crashAtNs} (virtual, from the start): that CN's loops vanish with their state, its
 *       posted but unexecuted verbs die with its NIC. Several CNs may crash at that same time ({@link #crashCns}),
 *       each as one would, at least one CN surviving, or each at its own time ({@link #crash(int[], long[])}). Without {@code recover} the run reports what the crash left
 *       (locks held, the conserved quantity); with it ({@link CrashRecovery}) the crash is detected {@code detectNs}
 *       later and another CN recovers it with the cluster's recovery code, and the run checks the outcome.</li>
 *   <li>{@code crashMn} at {@code crashMnAtNs}: that memory node dies with its memory and its services' state (its
 *       loop stops, its NIC closes: verbs to it fail as on a fabric whose peer is gone, RRPC calls to it time out,
 *       {@link #MN_CALL_TIMEOUT_NS}); {@code detectNs} later the configuration removes it and promotes a backup of
 *       its partition ({@code MemoryNodeConfiguration#without}, what cluster mode's {@code MemoryNodeFailover}
 *       writes), after the protocol module's {@code promoted} step ran on the new primary. Needs {@code --replicas}
 *       and a protocol whose module handles it ({@code ProtocolModule#memoryNodeCrashRefusal}). With {@code crashCn}
 *       too (not with {@code recover}), both crash, each at its own time.</li>
 *   <li>{@code mnSlowFactor} from {@code mnSlowFromNs} to {@code mnSlowToNs}: memory nodes' CPU time per RPC is
 *       multiplied (MN-side RPC slowness: Takeout Lock, lookups).</li>
 *   <li>{@code verbFailRate} over {@code verbFailKinds}: each one-sided verb of those kinds that a CN's transaction
 *       channel posts to a memory node lands, but with that probability reports failure
 *       ({@link io.scythe.fabric.VerbFaultInjector}: status {@code TRANSPORT_RETRY_EXCEEDED}, and the verbs posted
 *       after it on that queue pair are flushed, not executed). RRPC messages and the TSO's FAAs are left alone.</li>
 *   <li>{@code partitioned} nodes from {@code partitionAtNs} for {@code partitionForNs}: a network partition cutting
 *       those nodes ({@code cnI}, {@code mnI}) off from every other, then healed. Every doorbell batch posted
 *       between the two sides in the window, one-sided and RRPC alike (replies too), both directions, is held on the
 *       way until the heal: a partition shorter than RC's transport retry budget, whose retries deliver what was
 *       posted once the link is up (in each queue pair's order), so no queue pair breaks. A longer one breaks queue
 *       pairs, and a broken RRPC ring is opened anew over the event bus, which the simulator runs only before virtual
 *       time starts: not modelled (the verb fault, {@code verbFailRate}, fails verbs instead). Calls get
 *       {@link #mnCallTimeoutNs}'s bound, so a window past it times calls out.</li>
 * </ul>
 */
public final class Faults {
    public static final int NO_CRASH = -1;
    /** Virtual time from a crash to its detection (the stand-in for the cluster's failure detector). */
    public static final long DEFAULT_DETECT_NS = 20_000;

    /**
     * In a run with a memory-node crash, how long a compute node's RRPC call may wait for its reply (a request the
     * dead node took is never answered): far above any answer a live node gives in the runs measured.
     */
    public static final long MN_CALL_TIMEOUT_NS = 1_000_000;

    /**
     * With a compute node crashing too, or a partition (a coordinator cut off looks silent), the bound is 4 ms: reads parked behind the dead coordinator's pending versions
     * wait its suspicion lease (Aurogon's is 1 ms) before they are answered, which a 1 ms bound would cut short.
     */
    public static final long MN_AND_CN_CALL_TIMEOUT_NS = 4_000_000;

    /** How long a compute node's RRPC call may wait for its reply in a run with a memory-node crash. */
    public long mnCallTimeoutNs() {
        return crashCns.length == 0 && partitioned.isEmpty() ? MN_CALL_TIMEOUT_NS : MN_AND_CN_CALL_TIMEOUT_NS;
    }

    private long jitterNs;
    private int crashMn = NO_CRASH;
    private long crashMnAtNs;
    /** The compute nodes crashing, in the order given (empty: none), each at its {@link #crashAtsNs} time. */
    private int[] crashCns = new int[0];
    /** The first crash's time (every crash's, unless {@link #crashAtsNs} staggers them). */
    private long crashAtNs;
    /** Each of {@link #crashCns}'s crash time, in its order (one list, {@code --crash-at a,b}); null: all at once. */
    private long[] crashAtsNs;
    private boolean recover;
    /** Virtual time from the crash to each crashed CN's restart as a new incarnation; -1: never restarted. */
    private long restartAfterNs = -1;
    private long detectNs = DEFAULT_DETECT_NS;
    private long detectStaggerNs;
    private double mnSlowFactor = 1;
    private long mnSlowFromNs;
    private long mnSlowToNs = Long.MAX_VALUE;
    private double verbFailRate;
    private java.util.Set<io.scythe.fabric.Opcode> verbFailKinds = ONE_SIDED;
    /** The nodes the partition cuts off from the others (empty: none). */
    private java.util.SortedSet<String> partitioned = java.util.Collections.emptySortedSet();
    private long partitionAtNs;
    private long partitionForNs;

    /** The verbs {@link #verbFail} may fail: every one-sided kind. */
    public static final java.util.Set<io.scythe.fabric.Opcode> ONE_SIDED = java.util.Collections.unmodifiableSet(
        java.util.EnumSet.of(io.scythe.fabric.Opcode.READ, io.scythe.fabric.Opcode.WRITE,
            io.scythe.fabric.Opcode.COMPARE_AND_SWAP, io.scythe.fabric.Opcode.FETCH_AND_ADD));

    void validate(final int computeNodes, final int memoryNodes) {
        if (jitterNs < 0) {
            throw new IllegalArgumentException("jitter=" + jitterNs + " ns must not be negative");
        }
        if (crashMn != NO_CRASH && (crashMn < 0 || crashMn >= memoryNodes)) {
            throw new IllegalArgumentException("crash-mn=" + crashMn + " must name one of the " + memoryNodes
                + " MNs (0-based)");
        }
        if (crashMn != NO_CRASH && crashMnAtNs < 0) {
            throw new IllegalArgumentException("crash-mn: at a time not negative");
        }
        if (crashMn != NO_CRASH && recover) {
            throw new IllegalArgumentException("crash-recover (redo-log recovery of a crashed CN) is not modelled with "
                + "a memory-node crash: crash-mn goes with crash-cn only for protocols that recover a coordinator "
                + "without it (aurogon's)");
        }
        final java.util.Set<Integer> seen = new java.util.TreeSet<>();
        for (final int crashCn : crashCns) {
            if (crashCn < 0 || crashCn >= computeNodes) {
                throw new IllegalArgumentException("crash-cn=" + crashCn + " must name one of the " + computeNodes
                    + " CNs (0-based)");
            }
            if (!seen.add(crashCn)) {
                throw new IllegalArgumentException("crash-cn names cn" + crashCn + " twice: each CN crashes once");
            }
        }
        if (crashCns.length > 1 && crashCns.length >= computeNodes) {
            throw new IllegalArgumentException("crash-cn crashes " + crashCns.length + " of the " + computeNodes
                + " CNs: at least one must survive");
        }
        if (crashAtNs < 0) {
            throw new IllegalArgumentException("crash-at must not be negative");
        }
        if (crashAtsNs != null) {
            for (int i = 1; i < crashAtsNs.length; i++) {
                if (crashAtsNs[i] <= crashAtsNs[i - 1]) {
                    throw new IllegalArgumentException("crash-at gives one time per --crash-cn, each later than the one "
                        + "before (" + crashAtsNs[i] + " ns for cn" + crashCns[i] + " is not after " + crashAtsNs[i - 1]
                        + " ns for cn" + crashCns[i - 1] + "); CNs crashing at one instant share one --crash-at time");
                }
            }
            if (crashMn != NO_CRASH) {
                throw new IllegalArgumentException("crash-at with one time per crashed CN is not modelled with a "
                    + "memory-node crash (crash-mn)");
            }
            if (restartAfterNs >= 0) {
                throw new IllegalArgumentException("crash-restart-after restarts CNs crashed at one instant: give one "
                    + "--crash-at time (restarting CNs crashed at different times is not built)");
            }
            if (detectStaggerNs > 0) {
                throw new IllegalArgumentException("crash-stagger staggers the detection of CNs crashed at one instant; "
                    + "with one --crash-at time per CN each death is detected its own detect time after it");
            }
        }
        if (recover && crashCns.length == 0) {
            throw new IllegalArgumentException("crash-recover recovers the CN --crash-cn names: give it");
        }
        if (recover && computeNodes < 2) {
            throw new IllegalArgumentException("crash-recover needs a live CN to recover the crashed one: --cns 2 or "
                + "more, not " + computeNodes);
        }
        if (restartAfterNs >= 0 && crashCns.length == 0) {
            throw new IllegalArgumentException("crash-restart-after restarts the CNs --crash-cn crashes: give it");
        }
        if (detectNs < 0) {
            throw new IllegalArgumentException("detect=" + detectNs + " ns must not be negative");
        }
        if (!(mnSlowFactor >= 1) || Double.isInfinite(mnSlowFactor)) {
            throw new IllegalArgumentException("mn-slow factor=" + mnSlowFactor + " must be a number >= 1");
        }
        if (!(verbFailRate >= 0 && verbFailRate <= 1)) {
            throw new IllegalArgumentException("verb-fail-rate=" + verbFailRate + " must be within [0, 1]");
        }
        if (!partitioned.isEmpty()) {
            for (final String node : partitioned) {
                final boolean cn = node.matches("cn[0-9]+");
                if (!cn && !node.matches("mn[0-9]+")
                    || Integer.parseInt(node.substring(2)) >= (cn ? computeNodes : memoryNodes)) {
                    throw new IllegalArgumentException("partition names '" + node + "': give nodes cnI (of the "
                        + computeNodes + " CNs) or mnI (of the " + memoryNodes + " MNs), 0-based, comma-separated");
                }
            }
            if (partitioned.size() == computeNodes + memoryNodes) {
                throw new IllegalArgumentException("partition cuts every node off: leave some on the other side");
            }
            if (partitionAtNs < 0 || partitionForNs <= 0) {
                throw new IllegalArgumentException("partition: at a time not negative (" + partitionAtNs
                    + " ns), for a time above 0 (" + partitionForNs + " ns)");
            }
        }
        if (verbFailKinds.isEmpty() || !ONE_SIDED.containsAll(verbFailKinds)) {
            throw new IllegalArgumentException("verb-fail-kinds=" + kindNames(verbFailKinds) + " must name some of "
                + kindNames(ONE_SIDED));
        }
    }

    /** The kinds' names as the command line spells them: read, write, cas, faa. */
    static java.util.List<String> kindNames(final java.util.Set<io.scythe.fabric.Opcode> kinds) {
        return kinds.stream().map(Faults::kindName).toList();
    }

    static String kindName(final io.scythe.fabric.Opcode kind) {
        switch (kind) {
            case COMPARE_AND_SWAP:
                return "cas";
            case FETCH_AND_ADD:
                return "faa";
            default:
                return kind.name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** The one-sided verb kind named {@code name} (read, write, cas, faa). */
    public static io.scythe.fabric.Opcode kindNamed(final String name) {
        for (final io.scythe.fabric.Opcode kind : ONE_SIDED) {
            if (kindName(kind).equalsIgnoreCase(name.trim())) {
                return kind;
            }
        }
        throw new IllegalArgumentException("unknown verb kind '" + name + "'; known: " + kindNames(ONE_SIDED));
    }

    public JsonObject toJson() {
        final JsonObject json = new JsonObject().put("jitter_ns", jitterNs);
        if (crashCns.length > 0) {
            // One node as before (the explorer's crash runs report byte-identically); several as a list.
            json.put("crash_cn", crashCns.length == 1 ? (Object) crashCns[0] : crashCnList())
                .put("crash_at_ns", crashAtNs);
            if (staggered()) {
                json.put("crash_ats_ns", new io.vertx.core.json.JsonArray(java.util.Arrays.stream(crashAtsNs).boxed()
                    .toList()));
            }
            if (recover) {
                json.put("crash_recover", true).put("detect_ns", detectNs);
            }
            if (restartAfterNs >= 0) {
                json.put("crash_restart_after_ns", restartAfterNs);
            }
        }
        if (crashMn != NO_CRASH) {
            json.put("crash_mn", crashMn).put("crash_mn_at_ns", crashMnAtNs).put("detect_ns", detectNs);
        }
        if (mnSlowFactor != 1) {
            json.put("mn_slow_factor", mnSlowFactor).put("mn_slow_from_ns", mnSlowFromNs)
                .put("mn_slow_to_ns", mnSlowToNs);
        }
        if (verbFailRate > 0) {
            json.put("verb_fail_rate", verbFailRate).put("verb_fail_kinds",
                new io.vertx.core.json.JsonArray(kindNames(verbFailKinds)));
        }
        if (!partitioned.isEmpty()) {
            json.put("partition", new io.vertx.core.json.JsonArray(new ArrayList<>(partitioned)))
                .put("partition_at_ns", partitionAtNs).put("partition_for_ns", partitionForNs);
        }
        return json;
    }

    /**
     * Nodes {@code nodes} ({@code cnI}, {@code mnI}) cut off from every other from {@code atNs} (virtual, from the
     * start) for {@code forNs}, then healed.
     */
    public Faults partition(final java.util.Collection<String> nodes, final long atNs, final long forNs) {
        this.partitioned = java.util.Collections.unmodifiableSortedSet(new java.util.TreeSet<>(nodes));
        this.partitionAtNs = atNs;
        this.partitionForNs = forNs;
        return this;
    }

    /** The nodes the partition cuts off (empty: no partition). */
    public java.util.SortedSet<String> partitioned() {
        return partitioned;
    }

    public long partitionAtNs() {
        return partitionAtNs;
    }

    public long partitionForNs() {
        return partitionForNs;
    }

    /**
     * Whether a verb between nodes {@code a} and {@code b} taking effect {@code sinceStartNs} after the start crosses
     * the partition while it holds.
     */
    public boolean cut(final String a, final String b, final long sinceStartNs) {
        return !partitioned.isEmpty() && partitioned.contains(a) != partitioned.contains(b)
            && sinceStartNs - partitionAtNs >= 0 && sinceStartNs - (partitionAtNs + partitionForNs) < 0;
    }

    public long jitterNs() {
        return jitterNs;
    }

    public Faults jitterNs(final long jitterNs) {
        this.jitterNs = jitterNs;
        return this;
    }

    public int crashMn() {
        return crashMn;
    }

    public long crashMnAtNs() {
        return crashMnAtNs;
    }

    /** Memory node {@code memoryNode} dies at {@code atNs} (virtual, from the start); a backup is promoted. */
    public Faults crashMemoryNode(final int memoryNode, final long atNs) {
        this.crashMn = memoryNode;
        this.crashMnAtNs = atNs;
        return this;
    }

    /** As {@link #crashMemoryNode(int, long)}, the configuration removing the node {@code detectNs} after. */
    public Faults crashMemoryNode(final int memoryNode, final long atNs, final long detectNs) {
        this.detectNs = detectNs;
        return crashMemoryNode(memoryNode, atNs);
    }

    /** The first compute node crashing ({@link #crashCns}), or {@link #NO_CRASH}. */
    public int crashCn() {
        return crashCns.length == 0 ? NO_CRASH : crashCns[0];
    }

    /** Every compute node crashing at {@link #crashAtNs}, in the order given (empty: none). */
    public int[] crashCns() {
        return crashCns.clone();
    }

    /** Whether compute node {@code cn} is one of those crashing. */
    public boolean crashes(final int cn) {
        for (final int c : crashCns) {
            if (c == cn) {
                return true;
            }
        }
        return false;
    }

    private io.vertx.core.json.JsonArray crashCnList() {
        final io.vertx.core.json.JsonArray list = new io.vertx.core.json.JsonArray();
        for (final int c : crashCns) {
            list.add(c);
        }
        return list;
    }

    /** The first compute node crash's time (every one's unless {@link #staggered}). */
    public long crashAtNs() {
        return crashAtNs;
    }

    /** When compute node {@code crashCns()[i]} crashes (virtual, from the start). */
    public long crashAtNs(final int i) {
        return crashAtsNs == null ? crashAtNs : crashAtsNs[i];
    }

    /** Whether the crashed compute nodes crash at different times ({@link #crash(int[], long[])}). */
    public boolean staggered() {
        return crashAtsNs != null && crashAtsNs.length > 1;
    }

    public Faults crash(final int computeNode, final long atNs) {
        this.crashCns = computeNode == NO_CRASH ? new int[0] : new int[] {computeNode};
        this.crashAtNs = atNs;
        this.crashAtsNs = null;
        return this;
    }

    /** Compute nodes {@code computeNodes} crash together at {@code atNs} (Lotus Fig. 15: three at once). */
    public Faults crash(final int[] computeNodes, final long atNs) {
        this.crashCns = computeNodes.clone();
        this.crashAtNs = atNs;
        this.crashAtsNs = null;
        return this;
    }

    /**
     * Compute node {@code computeNodes[i]} crashes at {@code atsNs[i]}, each later than the one before (checked by
     * {@code validate}): the later ones die while the earlier ones' deaths are detected, recovered or taken over.
     * One time is every node's. Fails when the counts differ otherwise.
     */
    public Faults crash(final int[] computeNodes, final long[] atsNs) {
        if (atsNs.length == 1) {
            return crash(computeNodes, atsNs[0]);
        }
        if (computeNodes.length != atsNs.length) {
            throw new IllegalArgumentException("crash-at gives " + atsNs.length + " times for " + computeNodes.length
                + " crashed CNs (--crash-cn): give one time for all, or one per CN in the same order");
        }
        this.crashCns = computeNodes.clone();
        this.crashAtNs = atsNs[0];
        this.crashAtsNs = atsNs.clone();
        return this;
    }

    /** Whether a crashed CN is recovered (by another CN, in virtual time). */
    public boolean recover() {
        return recover;
    }

    /** Recovers the crashed CN ({@code true}), {@code detectNs} after its crash. */
    public Faults recover(final boolean recover, final long detectNs) {
        this.recover = recover;
        this.detectNs = detectNs;
        return this;
    }

    /**
     * Each crashed compute node is restarted {@code afterNs} after its crash (-1: never): a new incarnation with
     * empty state, which its protocol module lets serve only once its old incarnation is recovered
     * ({@code ProtocolModule#restartRefusal}); its clients resume on it.
     */
    public Faults restartAfter(final long afterNs) {
        this.restartAfterNs = afterNs;
        return this;
    }

    /** Virtual time from the crash to each crashed CN's restart, or -1: never restarted. */
    public long restartAfterNs() {
        return restartAfterNs;
    }

    /** Virtual time from the crash to its detection. */
    public long detectNs() {
        return detectNs;
    }

    /**
     * With several CNs crashing at one time: the {@code i}-th named is detected {@code i * staggerNs} later than the
     * first (default 0: all together). Only detection is staggered: the crashes stay simultaneous, and each death is
     * told when its own recovery ends, so the news comes about a recovery's length apart, order not guaranteed.
     * Fails on a negative stagger.
     */
    public Faults detectStagger(final long staggerNs) {
        if (staggerNs < 0) {
            throw new IllegalArgumentException("detect stagger " + staggerNs + " ns must not be negative");
        }
        this.detectStaggerNs = staggerNs;
        return this;
    }

    public long detectStaggerNs() {
        return detectStaggerNs;
    }

    public double mnSlowFactor() {
        return mnSlowFactor;
    }

    public long mnSlowFromNs() {
        return mnSlowFromNs;
    }

    /** The end of the memory nodes' slowness ({@code Long.MAX_VALUE}: the run's end). */
    public long mnSlowToNs() {
        return mnSlowToNs;
    }

    public Faults mnSlow(final double factor, final long fromNs, final long toNs) {
        this.mnSlowFactor = factor;
        this.mnSlowFromNs = fromNs;
        this.mnSlowToNs = toNs;
        return this;
    }

    boolean mnSlowAt(final long sinceStartNs) {
        return mnSlowFactor != 1 && sinceStartNs >= mnSlowFromNs && sinceStartNs < mnSlowToNs;
    }

    /** Probability that a one-sided verb of {@link #verbFailKinds} lands but reports failure (0: never). */
    public double verbFailRate() {
        return verbFailRate;
    }

    public java.util.Set<io.scythe.fabric.Opcode> verbFailKinds() {
        return verbFailKinds;
    }

    /** Each one-sided verb of {@code kinds} lands but reports failure with probability {@code rate}. */
    public Faults verbFail(final double rate, final java.util.Set<io.scythe.fabric.Opcode> kinds) {
        this.verbFailRate = rate;
        this.verbFailKinds = kinds.isEmpty() ? java.util.Set.of()
            : java.util.Collections.unmodifiableSet(java.util.EnumSet.copyOf(kinds));
        return this;
    }
}
