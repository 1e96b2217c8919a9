package io.scythe.txn.selcc;

import io.scythe.txn.recovery.RecoveryRpc;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Cluster nodes (package doc "Cluster nodes"): the memory nodes' releases of dead compute-node incarnations this node
 * was told of ({@code ComputeNodeContext#onPeerReleased}: each memory node publishes one once its dead-node steps ran
 * there), by incarnation (its fabric identity: what its invalidations name as their client) and by transaction-id
 * prefix (what a CAS word names). The simulator's view ({@link SelccRecovery#cleared}, {@link SelccRecovery#buriedBy})
 * is the memory nodes' own; a cluster node learns it from these messages, per memory node, as soon as each step ran,
 * not only once the whole recovery is over ({@link SelccModule#recoveries}).
 *
 * <p>Exact per incarnation: a restarted node's new incarnation has another identity and another id prefix, so nothing
 * heard of the dead one is ever said of it (the participant numbers it reuses are not what is recorded). Bounded: the
 * latest {@link #KEPT} incarnations and prefixes (one per dead incarnation). Any thread.
 *
 * <p>The messages are at-most-once and the oldest are forgotten: what a node missed or forgot it asks of the host's
 * durable record of finished recoveries ({@code ComputeNodeContext#recoveryRecord}, {@link #buriedOrAsk},
 * {@link #releasedOrAsk}; package doc "When the news is missed"), whose yes stands for a release on every memory node.
 */
final class ReleasesHeard {
    /** Dead incarnations (and id prefixes) remembered at most. */
    static final int KEPT = 256;

    /** Incarnations released on at least one memory node: fenced on every memory node (recovery lists them first). */
    private final Map<String, Boolean> incarnations = bounded();
    /** Per id prefix, the memory nodes that released (buried the inserts of) its incarnation. */
    private final Map<Long, Set<String>> prefixes = bounded();
    /** Stands for every memory node among {@link #prefixes}' values: the host's record says the recovery finished. */
    static final String EVERY_MEMORY_NODE = "*";
    /** How often at most the host's record is asked about one incarnation or prefix ({@link #ask}). */
    static final long ASK_INTERVAL_NS = 1_000_000_000L;

    /** The host's record of finished recoveries, asked when news was missed or forgotten; null: none. */
    private final io.scythe.txn.spi.ComputeNodeContext.RecoveryRecord record;
    /** When the record was last asked about an incarnation (a String) or an id prefix (a Long). */
    private final Map<Object, Long> askedAtNs = bounded();
    private final java.util.function.LongSupplier clock;

    ReleasesHeard() {
        this(null, System::nanoTime);
    }

    /** Asks {@code record} (null: none) when news was missed, at most every {@link #ASK_INTERVAL_NS} of {@code clock}. */
    ReleasesHeard(final io.scythe.txn.spi.ComputeNodeContext.RecoveryRecord record,
                  final java.util.function.LongSupplier clock) {
        this.record = record;
        this.clock = clock;
    }

    private static <K, V> Map<K, V> bounded() {
        return new LinkedHashMap<>() {
            @Override
            protected boolean removeEldestEntry(final Map.Entry<K, V> eldest) {
                return size() > KEPT;
            }
        };
    }

    /** Memory node {@code memoryNode} released {@code incarnation} (transaction-id prefixes {@code idPrefixes}). */
    synchronized void heard(final String incarnation, final long[] idPrefixes, final String memoryNode) {
        incarnations.put(incarnation, Boolean.TRUE);
        for (final long p : idPrefixes) {
            prefixes.computeIfAbsent(p & RecoveryRpc.NODE_ID_MASK, k -> new HashSet<>()).add(memoryNode);
        }
    }

    /**
     * Whether some memory node released {@code incarnation} (null: unknown, false): it is dead and fenced on every
     * memory node (a recovery fences the incarnation on all of them, by LOG_LIST, before it releases it on any), its
     * records are rolled forward, and nothing it sent can land any more: a message of it is not served, and a handover
     * or downgrade to it that landed is taken back (that node's step may have run before it landed).
     */
    synchronized boolean released(final String incarnation) {
        return incarnation != null && incarnations.containsKey(incarnation);
    }

    /**
     * Whether memory node {@code memoryNode} released the incarnation that ran transaction {@code id} (a CAS word):
     * its dead-node step buried that incarnation's locked inserts there ({@link SelccRecovery#buryDead}), so a cached
     * copy still showing {@code id} is older than the burial.
     */
    synchronized boolean buriedOn(final String memoryNode, final long id) {
        final Set<String> nodes = prefixes.get(id & RecoveryRpc.NODE_ID_MASK);
        return nodes != null && (nodes.contains(memoryNode) || nodes.contains(EVERY_MEMORY_NODE));
    }

    /**
     * {@link #buriedOn}, and when it says no, asks the host's record ({@link #recordedRecovered}) whether the
     * incarnation of {@code id}'s prefix was recovered: the release message of {@code memoryNode} is at-most-once (one
     * event-bus message) and the latest {@link #KEPT} are kept, so a node that missed or forgot it would keep a copy
     * older than the burial for good. The answer comes later (a lookup on a worker): this call still says no, a call
     * after it knows. At most one question per prefix every {@link #ASK_INTERVAL_NS}: a CAS word of a live
     * incarnation's insert in flight asks too, and is answered no.
     */
    boolean buriedOrAsk(final String memoryNode, final long id) {
        if (buriedOn(memoryNode, id)) {
            return true;
        }
        final long prefix = id & RecoveryRpc.NODE_ID_MASK;
        if (ask(prefix)) {
            record.recoveredWithPrefix(prefix).onComplete(ar -> answered(prefix)).onSuccess(incarnation -> {
                if (incarnation != null) {
                    recordedRecovered(incarnation, prefix);
                }
            });
        }
        return false;
    }

    /**
     * {@link #released}, and when it says no, asks the host's record whether {@code incarnation}'s recovery
     * finished (as {@link #buriedOrAsk}; at most one question per incarnation every {@link #ASK_INTERVAL_NS}).
     */
    boolean releasedOrAsk(final String incarnation) {
        if (incarnation == null || released(incarnation)) {
            return incarnation != null;
        }
        if (ask(incarnation)) {
            record.recovered(incarnation).onComplete(ar -> answered(incarnation)).onSuccess(recovered -> {
                if (recovered) {
                    recordedRecovered(incarnation, null);
                }
            });
        }
        return false;
    }

    /** Questions to the record not answered yet, by key: one in flight per key (a slow record is not piled on). */
    private final Set<Object> inFlight = new HashSet<>();

    /**
     * Whether to ask the record about {@code key} now (there is one, no question about it is unanswered, and it was
     * not asked lately).
     */
    private synchronized boolean ask(final Object key) {
        if (record == null || inFlight.contains(key)) {
            return false;
        }
        final long now = clock.getAsLong();
        final Long last = askedAtNs.get(key);
        if (last != null && now - last < ASK_INTERVAL_NS) {
            return false;
        }
        askedAtNs.put(key, now);
        inFlight.add(key);
        return true;
    }

    /** The record answered (or failed) the question about {@code key}. */
    private synchronized void answered(final Object key) {
        inFlight.remove(key);
    }

    /** Questions to the record unanswered (tests). */
    synchronized int inFlight() {
        return inFlight.size();
    }

    /**
     * The host's record says the recovery of {@code incarnation} (id prefix {@code prefix}, null: not asked by it)
     * finished: every memory node released it, so it is released and its inserts buried on each.
     */
    synchronized void recordedRecovered(final String incarnation, final Long prefix) {
        incarnations.put(incarnation, Boolean.TRUE);
        if (prefix != null) {
            prefixes.computeIfAbsent(prefix & RecoveryRpc.NODE_ID_MASK, k -> new HashSet<>()).add(EVERY_MEMORY_NODE);
        }
    }

    /** How many incarnations are remembered (tests: the bound). */
    synchronized int size() {
        return incarnations.size();
    }
}
