package io.scythe.cluster;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The rules of a compute node's lease on the fabric (issue 23 §3; Lotus §6's lease-based membership, FaRM's leases):
 * sans-IO, times given in ns of one monotonic clock per side, so tests drive them without processes.
 *
 * <p><b>The word.</b> Each memory node registers a region {@value #REGION} of one 8-byte word per CN slot
 * ({@link #SLOTS}); a CN renews its lease by a one-sided WRITE of {@link #word word(epoch, seq)} into its slot on every
 * memory node it uses, every {@link Options#renewMs}, with {@code seq} counting up. The memory node reads the words
 * locally and times, on its own clock, how long each has not changed.
 *
 * <p><b>Expiry (memory node, {@link Watcher}).</b> A word that did not change for more than lease + grace since the
 * watcher first saw its current value has expired, judged only while the memory node sees a majority of the registered
 * members and its watcher ran within the expiry (else the silence starts afresh: {@link Watcher#rebase}): the memory node fences that incarnation, as when Hazelcast drops
 * its member. Once expired, the incarnation stays expired: a later change of its word (a renewer that was paused and
 * wakes) is refused; only a newer epoch in the slot (the CN restarted) is watched afresh. A word of an older epoch than
 * the one watched (a superseded incarnation's late write) is ignored.
 *
 * <p><b>Self-fence (compute node, {@link Holder}).</b> The CN's lease on a memory node runs until {@code sent + lease},
 * where {@code sent} is its clock read <em>before</em> it posted the last renewal that memory node acknowledged; when
 * it passes on any memory node the CN stops serving for good (it rejoins under a new epoch). A late acknowledgement
 * ({@code sent + lease} already past) extends nothing, so a renewer that was stalled between reading the clock and
 * posting gains no time. Why the CN's deadline comes first: the memory node first sees a value no earlier than it landed,
 * which is no earlier than its {@code sent}, and expires it only {@code lease + grace} after that; so the CN's deadline
 * comes at least {@code grace} before the memory node's. The grace is the safety margin for the two clocks' rates
 * (durations measured locally on each side, never compared across nodes) and for the CN's own stopping. The CN's
 * stopping is best effort ({@code LeaseRenewer} checks the deadline after each renewal round, which can take longer
 * than a period; coordinators do not consult it per commit), so safety rests on the fence: commits the CN still has in
 * flight, or starts while starved past its deadline, are covered by it: its queue pairs are revoked, nothing posted
 * later lands, and a verb already inside the memory node's memory is waited out (or its process killed) by the fence
 * barrier.
 */
final class FabricLease {
    /** The memory node's region of lease words. */
    static final String REGION = "scythe.lease";
    /** One word per CN slot (slots are 1 to 255, {@code ScytheNode}'s cluster-unique CN slot). */
    static final int SLOTS = 256;
    static final int WORD_BYTES = 8;
    static final long REGION_BYTES = (long) SLOTS * WORD_BYTES;
    private static final long SEQ_MASK = (1L << 48) - 1;

    private FabricLease() {
    }

    /**
     * A lease's timing.
     *
     * @param renewMs how often the CN writes its word (0: no fabric lease; Hazelcast membership alone detects)
     * @param leaseMs how long after a renewal was sent the CN may serve without a newer one acknowledged
     * @param graceMs how much longer than the lease a memory node waits before it fences (the safety margin)
     */
    record Options(long renewMs, long leaseMs, long graceMs) {
        /** What a cluster node runs with unless its config says otherwise. */
        static final Options DEFAULT = new Options(50, 750, 100);
        static final Options OFF = new Options(0, 0, 0);

        Options {
            if (renewMs < 0 || leaseMs < 0 || graceMs < 0) {
                throw new IllegalArgumentException("lease times must not be negative: renew " + renewMs + " ms, lease "
                    + leaseMs + " ms, grace " + graceMs + " ms");
            }
            if (renewMs > 0 && (leaseMs < 2 * renewMs || graceMs <= 0)) {
                throw new IllegalArgumentException("leaseMs (" + leaseMs + ") must be at least twice leaseRenewMs ("
                    + renewMs + ") and leaseGraceMs (" + graceMs + ") positive: a lease must outlast a late renewal, "
                    + "and a memory node must wait longer than the compute node serves");
            }
        }

        boolean on() {
            return renewMs > 0;
        }

        /** How long a memory node waits for a word to change before it fences: lease + grace. */
        long expiryMs() {
            return leaseMs + graceMs;
        }

        String describe() {
            return on() ? "fabric lease: renewed every " + renewMs + " ms, " + leaseMs + " ms, memory nodes fence "
                + "after " + expiryMs() + " ms without a renewal" : "no fabric lease (Hazelcast membership detects)";
        }
    }

    /** The lease word of incarnation {@code epoch}'s renewal {@code seq}: epoch in bits 48-63, seq below. */
    static long word(final long epoch, final long seq) {
        return ((epoch & 0xffff) << 48) | (seq & SEQ_MASK);
    }

    static long epochOf(final long word) {
        return word >>> 48;
    }

    /** Where slot {@code slot}'s word is in the region. */
    static int offset(final long slot) {
        if (slot <= 0 || slot >= SLOTS) {
            throw new IllegalArgumentException("CN slot " + slot + " outside 1.." + (SLOTS - 1));
        }
        return (int) slot * WORD_BYTES;
    }

    /**
     * A compute node's side: until when it holds its lease on each memory node it renews on. Confined to the renewer's
     * thread.
     */
    static final class Holder {
        private final long leaseNs;
        private final Map<String, Long> validUntilNs = new HashMap<>();
        private String lost;

        Holder(final Options options) {
            this.leaseNs = TimeUnit.MILLISECONDS.toNanos(options.leaseMs());
        }

        /**
         * Renews on exactly {@code memoryNodes} from now on: a memory node new to it gets a lease from {@code nowNs}
         * (no memory node watches a word it has not seen yet, so none can expire it earlier), one no longer listed is
         * dropped (failed over: it fences nothing any more).
         */
        void renewOn(final Set<String> memoryNodes, final long nowNs) {
            validUntilNs.keySet().retainAll(memoryNodes);
            for (final String mn : memoryNodes) {
                validUntilNs.putIfAbsent(mn, nowNs + leaseNs);
            }
        }

        /**
         * Memory node {@code mn} acknowledged the renewal whose clock was read at {@code sentNs} before posting;
         * {@code nowNs} is now.
         *
         * @return whether it extended the lease (a late acknowledgement, or one after the lease was lost, does not)
         */
        boolean acknowledged(final String mn, final long sentNs, final long nowNs) {
            final Long until = validUntilNs.get(mn);
            if (lost != null || until == null || until - nowNs <= 0 || sentNs + leaseNs - nowNs <= 0) {
                return false;
            }
            validUntilNs.put(mn, Math.max(until, sentNs + leaseNs));
            return true;
        }

        /**
         * Why the lease is lost at {@code nowNs} ({@code null} while held): it ran out on some memory node. Once lost
         * it stays lost.
         */
        String lapsed(final long nowNs) {
            if (lost == null) {
                for (final Map.Entry<String, Long> e : validUntilNs.entrySet()) {
                    if (e.getValue() - nowNs <= 0) {
                        lost = "its fabric lease on memory node " + e.getKey() + " ran out " + TimeUnit.NANOSECONDS
                            .toMillis(nowNs - e.getValue()) + " ms ago (no renewal acknowledged in time)";
                        break;
                    }
                }
            }
            return lost;
        }
    }

    /** An incarnation whose lease expired on a memory node: its slot, the low 16 bits of its epoch, how long silent. */
    record Expired(int slot, long epoch, long silentMs) {
    }

    /** A memory node's side: the words it watches and when each last changed. Confined to the watcher's thread. */
    static final class Watcher {
        private final long expiryNs;
        private final long[] words = new long[SLOTS];
        private final long[] seenNs = new long[SLOTS];
        private final boolean[] expired = new boolean[SLOTS];
        /** The words of the current {@link #scan}. */
        private final long[] scanned = new long[SLOTS];
        /** Whether the previous {@link #scan} could judge. */
        private boolean judgedLast = true;

        Watcher(final Options options) {
            this.expiryNs = TimeUnit.MILLISECONDS.toNanos(options.expiryMs());
        }

        /** Slot {@code slot}'s word read {@code word} at {@code nowNs}. */
        void observe(final int slot, final long word, final long nowNs) {
            if (word == 0 || word == words[slot]) {
                return;
            }
            final long known = words[slot];
            if (known != 0 && epochOf(word) < epochOf(known)) {
                return; // an older incarnation's late write: it was superseded (and fenced)
            }
            if (known != 0 && epochOf(word) == epochOf(known) && expired[slot]) {
                return; // renewed after it expired: refused, the incarnation stays expired
            }
            if (known == 0 || epochOf(word) != epochOf(known)) {
                expired[slot] = false; // a new incarnation in the slot: watched afresh
            }
            words[slot] = word;
            seenNs[slot] = nowNs;
        }

        /**
         * One look at every slot's word ({@code wordOf}), on the watcher's thread: returns the incarnations whose lease
         * expired, none when {@code canJudge} (asked after the look) says this node cannot judge now or could not at
         * the previous look (then every silence starts afresh: {@link #rebase}). A word read changed is stamped with
         * {@code clock} read after the whole look, no earlier than it landed (so the CN's deadline stays a grace
         * before this one); words are judged by the clock read before the look, when each was still unchanged: a
         * watcher descheduled in the middle of its look fences no CN that renewed meanwhile.
         */
        List<Expired> scan(final java.util.function.IntToLongFunction wordOf, final java.util.function.LongSupplier clock,
                           final java.util.function.BooleanSupplier canJudge) {
            final long beforeNs = clock.getAsLong();
            for (int s = 1; s < SLOTS; s++) {
                scanned[s] = wordOf.applyAsLong(s);
            }
            final long afterNs = clock.getAsLong();
            for (int s = 1; s < SLOTS; s++) {
                observe(s, scanned[s], afterNs);
            }
            final boolean judgedBefore = judgedLast;
            judgedLast = canJudge.getAsBoolean();
            if (!judgedLast || !judgedBefore) {
                rebase(afterNs);
                return List.of();
            }
            return expire(beforeNs);
        }

        /** The incarnations whose lease expired by {@code nowNs}, each reported once. */
        List<Expired> expire(final long nowNs) {
            List<Expired> out = List.of();
            for (int s = 1; s < SLOTS; s++) {
                if (words[s] != 0 && !expired[s] && nowNs - seenNs[s] > expiryNs) {
                    expired[s] = true;
                    if (out.isEmpty()) {
                        out = new ArrayList<>();
                    }
                    out.add(new Expired(s, epochOf(words[s]), TimeUnit.NANOSECONDS.toMillis(nowNs - seenNs[s])));
                }
            }
            return out;
        }

        /**
         * Starts every live incarnation's silence afresh at {@code nowNs}: for a watcher that could not judge the last
         * window (its own thread did not run for longer than the expiry, or its node saw no majority, so its CNs may
         * have renewed elsewhere or not at all through no fault of theirs). An expired one stays expired.
         */
        void rebase(final long nowNs) {
            for (int s = 1; s < SLOTS; s++) {
                if (words[s] != 0 && !expired[s]) {
                    seenNs[s] = nowNs;
                }
            }
        }

        /** Whether slot {@code slot}'s current incarnation expired. */
        boolean expired(final int slot) {
            return expired[slot];
        }
    }
}
