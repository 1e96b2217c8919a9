package io.scythe.txn.rcc.calvin;

import java.util.Set;

/**
 * Issue 18 part 5's rules for taking over a dead partition owner, sans-IO and NOT wired yet (a node owning a
 * partition may still not crash: {@link CalvinModule#crashRefusal}): which survivor takes the dead node's partitions
 * over, and whether a write decided for one of them is already installed there, read under the new owner's lock.
 * What the wiring still needs is in the package doc.
 */
final class Takeover {
    private Takeover() {
    }

    /**
     * The survivor that takes over node {@code dead}'s partitions among {@code nodes} nodes of which {@code deadNodes}
     * died ({@code dead} among them or not): the first live node after it in index order, wrapping. A function of the
     * dead set only, so every survivor that knows the same deaths names the same node, and a successor that dies in
     * turn hands them on to the next (its own partitions with them).
     */
    static int successor(final int dead, final Set<Integer> deadNodes, final int nodes) {
        if (dead < 0 || dead >= nodes) {
            throw new IllegalArgumentException("CALVIN node " + dead + " of " + nodes);
        }
        for (int step = 1; step < nodes; step++) {
            final int next = (dead + step) % nodes;
            if (next != dead && !deadNodes.contains(next)) {
                return next;
            }
        }
        throw new IllegalStateException("CALVIN node " + dead + " died with no live node to take its partitions over");
    }

    /**
     * Whether a write a transaction decided at commit timestamp {@code commitTs} (its order timestamp,
     * {@link CalvinProtocol#orderTs}) is installed already in the record read under the lock at {@code version}: the
     * dead owner may have written it (or part of its doorbells) before it died. A write installs
     * {@code max(commitTs, version + 1)} ({@link io.scythe.storage.ObjectLayout#versionAfter}); under CALVIN a key's
     * writes are installed in the total order, whose timestamps increase and lie above every loaded version, so every
     * version installed before this write lies below {@code commitTs} and this write's, or any later one's, at or above
     * it (a tombstone included). A key never created reads as version 0: not installed. Fails on a negative version.
     */
    static boolean installed(final long version, final long commitTs) {
        if (version < 0 || commitTs <= 0) {
            throw new IllegalArgumentException("CALVIN version " + version + " at commit " + commitTs);
        }
        return version >= commitTs;
    }
}
