package io.scythe.cluster;

import io.scythe.fabric.RemoteRegion;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A CN's memory nodes' lease regions ({@link FabricLease}: where each keeps its lease words), and those it renews on
 * now (the serving ones). Written by two threads: the CN's start (once, when it starts renewing) and the memory-node
 * configuration apply queue (a memory node back with new words, a configuration that removed some); each change is a
 * read-modify-write of both maps under this object's lock, so neither loses the other's (review, stop 41: a
 * replacement's new words read by the queue while the start had not set the regions yet were skipped, and the start
 * then set what it had read before). The renewer reads {@link #targets} without the lock.
 */
final class LeaseRegions {
    /** All of them, by memory node; null until {@link #start}. */
    private Map<String, RemoteRegion> all;
    private volatile Map<String, RemoteRegion> targets = Map.of();

    /**
     * Starts with the regions of {@code memoryNodes}: {@code where} reads one ({@code null}: it keeps none), and
     * {@code removedNow} says which memory nodes the configuration applied now removed (read under the lock, so that
     * a configuration applied meanwhile is either seen here or applied after). Blocks while {@code where} does.
     *
     * @throws IllegalStateException when a memory node that serves keeps no lease words
     */
    synchronized void start(final List<String> memoryNodes, final Function<String, RemoteRegion> where,
                            final Supplier<Collection<String>> removedNow) {
        final Collection<String> removed = removedNow.get();
        final Map<String, RemoteRegion> regions = new LinkedHashMap<>();
        for (final String mn : memoryNodes) {
            final RemoteRegion region = where.apply(mn);
            if (region == null) {
                if (removed.contains(mn)) {
                    continue;
                }
                throw new IllegalStateException("memory node " + mn + " keeps no lease words on the fabric, and this "
                    + "compute node's config asks for a fabric lease: give every node the same leaseRenewMs (0 turns "
                    + "the fabric lease off)");
            }
            regions.put(mn, region);
        }
        all = regions;
        serve(removed);
    }

    /**
     * A configuration was applied that brought {@code back} back (replacements with new words, read again through
     * {@code where}) and removes {@code removed}: renews on the others. Nothing before {@link #start} (which reads
     * every region itself). Blocks while {@code where} does.
     */
    synchronized void applied(final Collection<String> back, final Function<String, RemoteRegion> where,
                              final Collection<String> removed) {
        if (all == null) {
            return;
        }
        final Map<String, RemoteRegion> now = new LinkedHashMap<>(all);
        for (final String mn : back) {
            final RemoteRegion region = where.apply(mn);
            if (region != null) {
                now.put(mn, region);
            }
        }
        all = now;
        serve(removed);
    }

    private void serve(final Collection<String> removed) {
        final Map<String, RemoteRegion> serving = new LinkedHashMap<>(all);
        serving.keySet().removeAll(removed);
        targets = Map.copyOf(serving);
    }

    /** The regions it renews on now. Any thread, no lock. */
    Map<String, RemoteRegion> targets() {
        return targets;
    }
}
