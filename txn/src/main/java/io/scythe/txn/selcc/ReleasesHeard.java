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
 */
final class ReleasesHeard {
    /** Dead incarnations (and id prefixes) remembered at most. */
    static final int KEPT = 256;

    /** Incarnations released on at least one memory node: fenced on every memory node (recovery lists them first). */
    private final Map<String, Boolean> incarnations = bounded();
    /** Per id prefix, the memory nodes that released (buried the inserts of) its incarnation. */
    private final Map<Long, Set<String>> prefixes = bounded();

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
        return nodes != null && nodes.contains(memoryNode);
    }

    /** How many incarnations are remembered (tests: the bound). */
    synchronized int size() {
        return incarnations.size();
    }
}
