package io.scythe.txn.aurogon;

import io.scythe.txn.TxnRuntime;
import io.vertx.core.Future;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;

/**
 * A coordinator loop's heartbeats (§4.5: "primaries detect [a coordinator failure] via periodic heartbeats"). A
 * memory node suspects a transaction's coordinator dead when it has not heard from that coordinator (its server and
 * loop ids) for {@link ParticipantService#ORPHAN_LEASE_NS}; before heartbeats it heard only the coordinator's own
 * requests, so a live coordinator whose transactions all waited longer than the lease elsewhere (reads parked behind
 * a crashed coordinator's pending versions until those became suspects) fell silent on the nodes holding its
 * pre-attached versions: another loop then resolved its live transaction through the backups as an orphan, and the
 * same writes were reported twice (by the coordinator and, in doubt, by the recovery). Now, while any transaction of
 * this loop is open (begun, not yet committed or aborted), every quarter lease the loop sends HEARTBEAT to every
 * memory node, so only a dead (or cut off) coordinator's transactions become suspects. A beat's answer carries the
 * node's orphan hint (resolved as any reply's, {@link CoordinatorRecovery#hinted}) and says whether the node still
 * watches undecided state ({@link AurogonRpc#WATCHING}: a pending version or held replication that may yet become a
 * suspect, or is one). The beats stop only after a round sent with no transaction open found no node watching, and
 * start again with the next transaction. Before, they stopped with the last open transaction, and a coordinator that
 * died once the live ones had gone idle (the explorer's 150 us runs: a crash after the primaries' COMMITs, before
 * the backups' APPLY) left its held replication undecided for good: nobody talked to the node after its lease, so no
 * reply named the suspect; its commit was never reported (a read of a version no committed transaction made, money
 * not conserved, a backup differing from its primary). Loop-confined (a {@link TxnRuntime} extension).
 */
final class Heartbeats {
    /** Four beats a lease: a live coordinator is heard well within every lease even when a beat is slow or lost. */
    static final long PERIOD_NS = ParticipantService.ORPHAN_LEASE_NS / 4;

    private static final TxnRuntime.Key<Heartbeats> KEY = new TxnRuntime.Key<>("aurogon-heartbeats");

    private final TxnRuntime runtime;
    private int open;
    private boolean beating;
    /** The last round, sent with no transaction open, found every node done watching (or removed). */
    private boolean quiet;
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

    /**
     * The timestamps of this loop's open transactions (begun, not yet ended): their smallest is the low-water every
     * REPLICATE carries ({@link Backups}). A later attempt's timestamp is larger than every earlier one of the loop
     * (its clock is monotonic), so the low-water never goes down.
     */
    private final java.util.TreeSet<Long> openTs = new java.util.TreeSet<>();

    /**
     * Timestamps of this loop's ended transactions that some backup has not answered yet: an abort whose DISCARD, or a
     * commit whose APPLY, got no answer there (retried in the background, {@link AurogonTxn}), or a commit left in
     * doubt (its loop gave up): the low-water stays at or below each until it is {@link #unstick unstuck}, so a
     * backup that never saw one never forgets decisions past it ({@link Backups}: it would answer FORGOTTEN for a
     * timestamp another backup still holds undecided).
     */
    private final java.util.TreeSet<Long> stuck = new java.util.TreeSet<>();

    /**
     * At most this many stuck timestamps: past it the loop gives up ({@link TxnRuntime#giveUp}), so it begins no more
     * transactions and the decisions backups keep for it (pinned at or above its low-water) stop growing. A stuck
     * timestamp waits for a backup that does not answer; every later attempt's REPLICATE there fails too, so a live
     * loop rarely has more than the attempts it had in flight.
     */
    static final int MAX_STUCK = 1024;

    /** {@link AurogonTxn#DECIDE_AGAIN_LIMIT} for this loop (tests lower it: each try waits a period). */
    int decideAgainLimit = AurogonTxn.DECIDE_AGAIN_LIMIT;

    /**
     * The oldest timestamp of this loop's still open or stuck transactions ({@code own}, open itself, at most): every
     * transaction of this loop below it committed and had its APPLYs answered, or rolled back and had its DISCARDs
     * answered.
     */
    long lowWater(final long own) {
        final long low = openTs.isEmpty() ? own : Math.min(own, openTs.first());
        return stuck.isEmpty() ? low : Math.min(low, stuck.first());
    }

    /**
     * The open transaction at {@code timestamp} ended, but a backup has not answered its decision: it stays under the
     * low-water until {@link #unstick}.
     */
    void stick(final long timestamp) {
        end(timestamp);
        if (!needed) {
            return;
        }
        stuck.add(timestamp);
        if (stuck.size() > MAX_STUCK) {
            runtime.giveUp("Aurogon: " + stuck.size() + " transactions of this loop wait for a backup's answer to "
                + "their decision (the oldest " + AurogonTimestamp.toString(stuck.first()) + "), more than "
                + MAX_STUCK);
        }
    }

    /** Every backup answered the decision of the transaction at {@code timestamp}: the low-water may pass it. */
    void unstick(final long timestamp) {
        stuck.remove(timestamp);
    }

    /** How many ended transactions wait for a backup's answer ({@link #stick}; tests). */
    int stuck() {
        return stuck.size();
    }

    /** A transaction at {@code timestamp} is open: beat until it and every other open one ended. */
    void begin(final long timestamp) {
        if (!needed) {
            return;
        }
        openTs.add(timestamp);
        ts = timestamp;
        open++;
        quiet = false;
        if (!beating) {
            beating = true;
            runtime.timers().after(PERIOD_NS).onComplete(done -> beat());
        }
    }

    /** The open transaction at {@code timestamp} ended (committed, aborted or in doubt). */
    void end(final long timestamp) {
        if (!needed) {
            return;
        }
        if (open <= 0 || !openTs.remove(timestamp)) {
            throw new IllegalStateException("Aurogon heartbeats: a transaction ended that was not open");
        }
        open--;
    }

    private void beat() {
        if (open == 0 && quiet) {
            beating = false;
            return;
        }
        final UnsafeBuffer request = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
        request.putLong(AurogonRpc.TS_OFFSET, ts);
        final List<Future<Boolean>> watching = new ArrayList<>();
        for (final String node : CoordinatorRecovery.memoryNodes(runtime.catalog())) {
            // A lost beat is made up by the next, a quarter lease later (and counts as watching). A node the
            // configuration removed (it died) gets none: a beat to it would only wait out its call timeout or reopen
            // a Rocket.
            if (runtime.catalog().removed(node)) {
                SKIPPED.incrementAndGet();
            } else {
                watching.add(runtime.rocket(node).compose(rocket -> rocket.call(AurogonRpc.HEARTBEAT, request))
                    .map(reply -> answered(node, reply.payload())).otherwise(true));
            }
        }
        final boolean idle = open == 0;
        Future.all(watching).onComplete(round -> {
            boolean any = false;
            for (final Future<Boolean> w : watching) {
                any |= w.result();
            }
            if (idle && open == 0) {
                quiet = !any;
            }
        });
        runtime.timers().after(PERIOD_NS).onComplete(done -> beat());
    }

    /** A beat's answer from {@code node}: resolves the suspect it names; whether the node still watches. */
    private boolean answered(final String node, final DirectBuffer p) {
        if (p.capacity() < AurogonRpc.STATUS_REPLY_BYTES) {
            return true;
        }
        final long hint = p.getLong(AurogonRpc.STATUS_HINT_OFFSET);
        if (hint != 0) {
            CoordinatorRecovery.hinted(runtime, hint, node);
        }
        return hint != 0 || p.getInt(0) == AurogonRpc.WATCHING;
    }
}
