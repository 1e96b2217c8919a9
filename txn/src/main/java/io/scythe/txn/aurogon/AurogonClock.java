package io.scythe.txn.aurogon;

import io.scythe.bridge.NodeClocks;
import io.scythe.txn.TxnRuntime;

/**
 * One loop's Aurogon timestamps ({@link AurogonTimestamp}): a clock reading packed with the server and loop ids of
 * the runtime's id base, strictly increasing per loop. The reading is the node's host clock
 * ({@link NodeClocks#hostNs()}, with the offset and drift the simulator's {@code --clock} gives the node; the loop's
 * timers when the runtime has no clocks), in one of two modes:
 * <ul>
 *   <li>{@link Mode#HOST}: the host clock as the node has it.</li>
 *   <li>{@link Mode#TWO_LEVEL}: {@link TwoLevelClock}, the host clock mapped onto the local NIC's and that onto the
 *       reference NIC's (the NIC of the first memory node by name), what Aurogon runs on.</li>
 *   <li>{@link Mode#DST}: DST-TO's clock as the Aurogon paper describes DST (§6.1-6.2; DST's own paper is not in
 *       our library): a chasing clock that every participant's answer pulls forward to the largest timestamp that
 *       participant has seen, without allowing for the one-way delay of that timestamp and without correcting
 *       frequency drift (only forward jumps).</li>
 *   <li>{@link Mode#FARM}: FaRMv2's clock as the Aurogon paper compares it (§6.5, its uncertainty wait removed): the
 *       host clock synchronised to the reference node's host clock by RPCs its CPU answers (AurogonRpc.CLOCK):
 *       {@code offset = T_master + rtt/2 - T_recv} from the sample with the shortest round trip of the last
 *       {@value #FARM_WINDOW}; no NIC timestamps, no drift correction between syncs. Syncs ride on timestamp
 *       requests like 2LClock's probes.</li>
 * </ul>
 * A runtime extension, one per mode.
 */
final class AurogonClock {
    /** Where the clock reading comes from. */
    enum Mode { HOST, DST, TWO_LEVEL, FARM }

    /** 2LClock's settings: probe at most every 20 us of host time, slices of 200 us, alpha 0.5 (symmetric). */
    static final long PROBE_INTERVAL_NS = 20_000;
    static final long SLICE_NS = 200_000;
    static final double ALPHA = 0.5;
    /** 2LClock's root failover (§5.3), scaled to the simulator's runs: virtual phase at least two slices, smoothing. */
    static final long VIRTUAL_NS = 2 * SLICE_NS;
    static final long SMOOTH_NS = SLICE_NS;

    private static final TxnRuntime.Key<AurogonClock> HOST_KEY = new TxnRuntime.Key<>("aurogon-clock");
    private static final TxnRuntime.Key<AurogonClock> DST_KEY = new TxnRuntime.Key<>("aurogon-dst-clock");
    private static final TxnRuntime.Key<AurogonClock> TWO_LEVEL_KEY = new TxnRuntime.Key<>("aurogon-2lclock");
    private static final TxnRuntime.Key<AurogonClock> FARM_KEY = new TxnRuntime.Key<>("aurogon-farm-clock");
    /** FaRMv2-clock: syncs kept, the shortest round trip's offset used. */
    static final int FARM_WINDOW = 16;
    private final long[] farmRtt = new long[FARM_WINDOW];
    private final long[] farmOffset = new long[FARM_WINDOW];
    private int farmSamples;
    private boolean farmSyncing;
    /** When the last sync started (host clock); meaningful once {@link #farmSynced} is set. */
    private long farmLastSync;
    /** Whether a sync was ever started ({@code host - Long.MIN_VALUE} overflows, so no sentinel time serves). */
    private boolean farmSynced;
    private long farmOffsetNs;

    private final TxnRuntime runtime;
    private final Mode mode;
    private final int server;
    private final int loop;
    private long last;
    /** DST (and a floor, {@link #floor}): how far ahead of the host clock this clock is pulled (never negative). */
    private long aheadNs;
    private final TwoLevelClock twoLevel;

    private AurogonClock(final TxnRuntime runtime, final Mode mode) {
        this.runtime = runtime;
        this.mode = mode;
        // §4.1's server and thread ids: the CN slot and loop (RecoveryRpc.NODE_ID_MASK), or as the runtime was named
        this.server = runtime.serverId();
        this.loop = runtime.loopId();
        if (mode == Mode.TWO_LEVEL) {
            if (runtime.clocks() == null) {
                throw new IllegalStateException("Aurogon's 2LClock needs the node's clocks on this loop "
                    + "(TxnRuntime#clocks): the runtime was built without them");
            }
            this.twoLevel = new TwoLevelClock(runtime.clocks(), reference(runtime, null), ALPHA, PROBE_INTERVAL_NS,
                SLICE_NS).failover(new TwoLevelClock.Successor() {
                    @Override
                    public boolean removed(final String node) {
                        return runtime.catalog().removed(node);
                    }

                    @Override
                    public String after(final String dead) {
                        return reference(runtime, dead);
                    }
                }, VIRTUAL_NS, SMOOTH_NS);
        } else {
            this.twoLevel = null;
        }
    }

    /**
     * The reference NIC's node: the first, by name, of the nodes holding a partition of any table, except
     * {@code dead} and nodes the configuration removed (2LClock's root failover: the next root).
     */
    private static String reference(final TxnRuntime runtime, final String dead) {
        String first = null;
        for (final io.scythe.txn.Catalog.Table t : runtime.catalog().tables()) {
            for (final io.scythe.txn.Catalog.Partition p : t.partitions()) {
                if ((first == null || p.node().compareTo(first) < 0) && !p.node().equals(dead)
                    && !runtime.catalog().removed(p.node())) {
                    first = p.node();
                }
            }
        }
        if (first == null && dead != null) {
            return null;
        }
        if (first == null) {
            throw new IllegalStateException("Aurogon's 2LClock found no memory node in the catalog to take as its "
                + "reference clock");
        }
        return first;
    }

    static AurogonClock of(final TxnRuntime runtime, final Mode mode) {
        return runtime.extension(mode == Mode.DST ? DST_KEY : mode == Mode.TWO_LEVEL ? TWO_LEVEL_KEY
            : mode == Mode.FARM ? FARM_KEY : HOST_KEY, rt -> new AurogonClock(rt, mode));
    }

    private long hostNs() {
        final NodeClocks clocks = runtime.clocks();
        return clocks != null ? clocks.hostNs() : runtime.timers().nowNs();
    }

    long next() {
        final long reading = twoLevel != null ? twoLevel.now() : mode == Mode.FARM ? farmNow() : hostNs() + aheadNs;
        last = AurogonTimestamp.next(last, reading, server, loop);
        return last;
    }

    /**
     * The clock reading {@link #next()} would pack now, without packing it, probing or syncing: what a comparison of
     * two clocks reads (§6.5).
     */
    long estimateNs() {
        return twoLevel != null ? twoLevel.estimate() : mode == Mode.FARM ? hostNs() + farmOffsetNs
            : hostNs() + aheadNs;
    }

    /** This loop's clock of {@code mode}, or {@code null} when no timestamp of that mode was taken on it yet. */
    static AurogonClock existing(final TxnRuntime runtime, final Mode mode) {
        return runtime.extensionOrNull(mode == Mode.DST ? DST_KEY : mode == Mode.TWO_LEVEL ? TWO_LEVEL_KEY
            : mode == Mode.FARM ? FARM_KEY : HOST_KEY);
    }

    private long farmNow() {
        final long host = hostNs();
        if (!farmSyncing && (!farmSynced || host - farmLastSync >= PROBE_INTERVAL_NS)) {
            farmSync(host);
        }
        return host + farmOffsetNs;
    }

    private void farmSync(final long host) {
        farmSyncing = true;
        farmSynced = true;
        farmLastSync = host;
        final String master = reference(runtime, null);
        final org.agrona.concurrent.UnsafeBuffer request = new org.agrona.concurrent.UnsafeBuffer(
            new byte[AurogonRpc.HEADER_BYTES]);
        final long sent = hostNs();
        Removals.call(runtime, master, AurogonRpc.CLOCK, request).onComplete(ar -> {
            farmSyncing = false;
            if (ar.failed()) {
                return;
            }
            final long received = hostNs();
            final long rtt = received - sent;
            final int slot = farmSamples++ % FARM_WINDOW;
            farmRtt[slot] = rtt;
            farmOffset[slot] = ar.result().payload().getLong(8) + rtt / 2 - received;
            int best = 0;
            for (int i = 1; i < Math.min(farmSamples, FARM_WINDOW); i++) {
                best = farmRtt[i] < farmRtt[best] ? i : best;
            }
            farmOffsetNs = farmOffset[best];
        });
    }

    /** 2LClock's failover state ({@link AurogonModule#twoLevelClockState}); null for the other modes. */
    String twoLevelState() {
        return twoLevel == null ? null : twoLevel.phase() + " " + twoLevel.reference() + " " + twoLevel.failovers();
    }

    /** The last timestamp this clock issued (0: none yet), or a floor above it ({@link #floor}: another's timestamp). */
    long last() {
        return last;
    }

    /**
     * The next timestamp is above {@code ts}, whatever the mode: a backup refused a REPLICATE as below the deletes it
     * forgot ({@code Backups#STALE}); without it a clock lagging that far (host clocks spread by more than the pruning
     * lag) was refused for good. Timestamps stay unique (this server's and loop's bits), only ahead of the reading.
     */
    void floor(final long ts) {
        last = Math.max(last, ts);
        if (twoLevel == null && mode != Mode.FARM) {
            // An offset, as DST's chase: the clock then keeps real time's pace above the floor (flooring only last
            // advanced it 1 ns a timestamp, pinned near the floor until refused again: review, stop 39). 2LClock and
            // FaRM's clock are synchronized: a lag past the pruning lag does not arise there, last suffices.
            aheadNs = Math.max(aheadNs, AurogonTimestamp.clockNs(ts) - hostNs());
        }
    }

    /** A participant answered having seen {@code seenTs}: DST chases it; the host clock ignores it. */
    void observe(final long seenTs) {
        if (mode == Mode.DST && seenTs > 0) {
            aheadNs = Math.max(aheadNs, AurogonTimestamp.clockNs(seenTs) - hostNs());
        }
    }

    /** How far ahead of its host clock the chase has pulled this clock (0 for {@link Mode#HOST}). */
    long aheadNs() {
        return aheadNs;
    }
}
