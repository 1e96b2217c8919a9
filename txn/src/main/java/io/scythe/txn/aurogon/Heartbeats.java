package io.scythe.txn.aurogon;

import io.scythe.txn.TxnRuntime;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A coordinator loop's heartbeats (§4.5: "primaries detect [a coordinator failure] via periodic heartbeats"). A
 * memory node suspects a transaction's coordinator dead when it has not heard from that coordinator (its server and
 * loop ids) for {@link ParticipantService#ORPHAN_LEASE_NS}; before heartbeats it heard only the coordinator's own
 * requests, so a live coordinator whose transactions all waited longer than the lease elsewhere (reads parked behind
 * a crashed coordinator's pending versions until those became suspects) fell silent on the nodes holding its
 * pre-attached versions: another loop then resolved its live transaction through the backups as an orphan, and the
 * same writes were reported twice (by the coordinator and, in doubt, by the recovery). Now, while any transaction of
 * this loop is open (begun, not yet committed or aborted), every quarter lease the loop sends HEARTBEAT to every
 * memory node, so only a dead (or cut off) coordinator's transactions become suspects. The beats stop when the loop
 * has no open transaction and start again with the next one. Loop-confined (a {@link TxnRuntime} extension).
 */
final class Heartbeats {
    /** Four beats a lease: a live coordinator is heard well within every lease even when a beat is slow or lost. */
    static final long PERIOD_NS = ParticipantService.ORPHAN_LEASE_NS / 4;

    private static final TxnRuntime.Key<Heartbeats> KEY = new TxnRuntime.Key<>("aurogon-heartbeats");

    private final TxnRuntime runtime;
    private int open;
    private boolean beating;
    /** A timestamp of this loop's: the beat names the coordinator by its server and loop ids. */
    private long ts;
    /** Beats not sent, in this process, because their node was removed (tests). */
    private static final java.util.concurrent.atomic.AtomicLong SKIPPED = new java.util.concurrent.atomic.AtomicLong();

    /** Only with backups: without them no node suspects a coordinator ({@link Participant#orphans}). */
    private final boolean needed;

    private Heartbeats(final TxnRuntime runtime) {
        this.runtime = runtime;
        boolean backups = false;
        for (final io.scythe.txn.Catalog.Table t : runtime.catalog().tables()) {
            for (final io.scythe.txn.Catalog.Partition p : t.partitions()) {
                backups |= !p.backups().isEmpty();
            }
        }
        this.needed = backups;
    }

    static Heartbeats of(final TxnRuntime runtime) {
        return runtime.extension(KEY, Heartbeats::new);
    }

    /** How many beats loops of this process left out because their memory node was removed (it died). */
    static long skipped() {
        return SKIPPED.get();
    }

    /** A transaction at {@code timestamp} is open: beat until it and every other open one ended. */
    void begin(final long timestamp) {
        if (!needed) {
            return;
        }
        ts = timestamp;
        open++;
        if (!beating) {
            beating = true;
            runtime.timers().after(PERIOD_NS).onComplete(done -> beat());
        }
    }

    /** An open transaction ended (committed, aborted or in doubt). */
    void end() {
        if (!needed) {
            return;
        }
        if (open <= 0) {
            throw new IllegalStateException("Aurogon heartbeats: a transaction ended that was not open");
        }
        open--;
    }

    private void beat() {
        if (open == 0) {
            beating = false;
            return;
        }
        final UnsafeBuffer request = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
        request.putLong(AurogonRpc.TS_OFFSET, ts);
        for (final String node : CoordinatorRecovery.memoryNodes(runtime.catalog())) {
            // Fire and forget: a lost beat is made up by the next, a quarter lease later. A node the configuration
            // removed (it died) gets none: a beat to it would only wait out its call timeout or reopen a Rocket.
            if (runtime.catalog().removed(node)) {
                SKIPPED.incrementAndGet();
            } else {
                runtime.rocket(node).compose(rocket -> rocket.call(AurogonRpc.HEARTBEAT, request));
            }
        }
        runtime.timers().after(PERIOD_NS).onComplete(done -> beat());
    }
}
