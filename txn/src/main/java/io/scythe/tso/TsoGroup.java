package io.scythe.tso;

import io.scythe.txn.runtime.TimestampOracle;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;

import java.util.ArrayDeque;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The TSO group of Scythe §4.5 (2), for the transaction flows of one event loop: the first request that finds no fetch
 * in flight is the leader and fetches; requests that arrive while a fetch is in flight queue; when it returns, they
 * form the next group, whose head fetches exactly as many timestamps as the group has members, with one FAA (or one
 * proxy call), and hands them out in arrival order.
 *
 * <p>A group never keeps timestamps for later: every timestamp is reserved after its request arrived, so one handed
 * out after another finished anywhere in the cluster is larger (a leftover reused later could break that).
 *
 * <p>Failover: when the chosen source fails (a proxy died, the service restarted), the same group is fetched again
 * from another source, and the failed one is left out of the choice for the next {@link #SKIP_AFTER_FAILURE} groups
 * (counted, not timed: the simulator's runs stay deterministic), then tried again. Only when every source failed for
 * this group do its members fail, with a {@code tso-unavailable} abort: the coordinator retries them after its
 * back-off. A failed fetch handed nothing out, so retrying it elsewhere keeps every timestamp unique.
 *
 * <p>Loop-confined: one group per event loop.
 */
public final class TsoGroup implements TimestampOracle {
    private final TsoSource[] sources;
    private final java.util.random.RandomGenerator random;
    private final ArrayDeque<Promise<Long>> waiting = new ArrayDeque<>();
    private final int maxGroup;
    /** Per source: the group count until which it is left out after a failure. */
    private final long[] skipUntil;
    private long failovers;
    private boolean fetching;
    private long groups;
    private long handedOut;
    private volatile long highWater;

    /**
     * @param sources where ranges come from; each group picks one at random (the paper's "randomly selects a TSO proxy
     *                or TSO service")
     * @param maxGroup the largest group one fetch serves
     */
    public TsoGroup(final int maxGroup, final TsoSource... sources) {
        this(maxGroup, null, sources);
    }

    /**
     * @param random picks a source per group; {@code null} for the thread's own ({@link ThreadLocalRandom}). The
     *               simulator passes a seeded one: a run must not depend on an unseeded random.
     */
    public TsoGroup(final int maxGroup, final java.util.random.RandomGenerator random, final TsoSource... sources) {
        this.random = random;
        if (sources.length == 0) {
            throw new IllegalArgumentException("a TSO group needs a source");
        }
        if (maxGroup < 1) {
            throw new IllegalArgumentException("maxGroup=" + maxGroup + " must be positive");
        }
        this.sources = sources.clone();
        this.skipUntil = new long[sources.length];
        this.maxGroup = maxGroup;
    }

    @Override
    public Future<Long> next() {
        final ContextInternal context = (ContextInternal) Vertx.currentContext();
        final Promise<Long> promise = context != null ? context.promise() : Promise.promise();
        waiting.add(promise);
        if (!fetching) {
            fetch();
        }
        return promise.future();
    }

    /** Groups a failed source sits out before it is tried again. */
    public static final int SKIP_AFTER_FAILURE = 64;

    private void fetch() {
        // The members are taken off the queue now: requests arriving from here on form the next group.
        final int count = Math.min(waiting.size(), maxGroup);
        @SuppressWarnings("unchecked") final Promise<Long>[] members = new Promise[count];
        for (int i = 0; i < count; i++) {
            members[i] = waiting.poll();
        }
        fetching = true;
        groups++;
        fetchFrom(members, new boolean[sources.length], null);
    }

    /** Fetches the group from a source not {@code tried} yet; fails the members once all were. */
    private void fetchFrom(final Promise<Long>[] members, final boolean[] tried, final Throwable lastFailure) {
        final int source = pick(tried);
        if (source < 0) {
            final io.scythe.txn.AbortException unavailable = new io.scythe.txn.AbortException(
                io.scythe.txn.AbortReason.TSO_UNAVAILABLE, "no timestamp source answered (last: "
                + (lastFailure == null ? "none" : lastFailure.getMessage()) + ")");
            done(members, null, unavailable);
            return;
        }
        tried[source] = true;
        final int count = members.length;
        sources[source].fetch(count).onComplete(ar -> {
            if (ar.failed()) {
                skipUntil[source] = groups + SKIP_AFTER_FAILURE;
                failovers++;
                fetchFrom(members, tried, ar.cause());
                return;
            }
            skipUntil[source] = 0;
            done(members, ar.result(), null);
        });
    }

    /** A source not tried for this group: at random among those not sitting out, else among the rest. */
    private int pick(final boolean[] tried) {
        int fresh = 0;
        int untried = 0;
        for (int i = 0; i < sources.length; i++) {
            if (!tried[i]) {
                untried++;
                if (skipUntil[i] <= groups) {
                    fresh++;
                }
            }
        }
        if (untried == 0) {
            return -1;
        }
        final boolean onlyFresh = fresh > 0;
        int n = (onlyFresh ? fresh : untried) == 1 ? 0
            : (random != null ? random : ThreadLocalRandom.current()).nextInt(onlyFresh ? fresh : untried);
        for (int i = 0; i < sources.length; i++) {
            if (!tried[i] && (!onlyFresh || skipUntil[i] <= groups) && n-- == 0) {
                return i;
            }
        }
        throw new IllegalStateException("unreachable");
    }

    private void done(final Promise<Long>[] members, final Long first, final Throwable failure) {
        // Completing a member runs its flow, which may ask again at once: that request waits for the next group
        // (fetching stays true until every member has its timestamp).
        if (failure == null) {
            highWater = first + members.length - 1;
            handedOut += members.length;
            for (int i = 0; i < members.length; i++) {
                members[i].complete(first + i);
            }
        } else {
            for (final Promise<Long> member : members) {
                member.fail(failure);
            }
        }
        fetching = false;
        if (!waiting.isEmpty()) {
            fetch();
        }
    }

    /** Fetches that failed and went to another source. */
    public long failovers() {
        return failovers;
    }

    @Override
    public String name() {
        return "tso-group";
    }

    /** Fetches made (one per group). */
    public long groups() {
        return groups;
    }

    public long handedOut() {
        return handedOut;
    }

    /** The largest timestamp this group handed out (0 if none). */
    public long highWater() {
        return highWater;
    }

    /** An oracle that fetches one timestamp per request from {@code source}: the baseline Fig. 28 compares with. */
    public static TimestampOracle perRequest(final TsoSource source) {
        return new TimestampOracle() {
            @Override
            public Future<Long> next() {
                return source.fetch(1);
            }

            @Override
            public String name() {
                return "faa-per-request";
            }
        };
    }
}
