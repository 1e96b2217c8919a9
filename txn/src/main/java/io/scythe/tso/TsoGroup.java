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
 * <p>One group per event loop ({@link #TsoGroup(int, java.util.random.RandomGenerator, TsoSource...)}), or one per
 * compute node across its loops ({@link #perComputeNode}), as §4.5 (2) has it ("multiple threads within a CN ... form
 * a TSO group"): a request from any loop joins the CN's group, the loop whose request found no fetch in flight fetches
 * for all of them on its own connection, and each member gets its timestamp back on its own loop (a task posted
 * there). The group's state is then guarded by its monitor; member flows never run under it. The simulator forms one
 * per compute node by default ({@code scythe sim --tso-group}, where the measurement that chose it is); a cluster's
 * nodes ({@code ScytheNode}, {@code TsoLeaderVerticle}) still form one per loop.
 */
public final class TsoGroup implements TimestampOracle {
    private final TsoSource[] sources;
    private final java.util.random.RandomGenerator random;
    private final ArrayDeque<Promise<Long>> waiting = new ArrayDeque<>();
    /** Shared by a compute node's loops: where each waiting request came from (beside {@link #waiting}); else null. */
    private final ArrayDeque<Home> homes;
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
        this(false, maxGroup, random, sources);
    }

    /**
     * One group for every event loop of a compute node (§4.5 (2)): call {@link #next()} from any of them. Each
     * source must reach the service from whichever loop fetches (a per-loop connection looked up on the calling loop,
     * as {@code RrpcClient#rocket} does).
     */
    public static TsoGroup perComputeNode(final int maxGroup, final java.util.random.RandomGenerator random,
                                          final TsoSource... sources) {
        return new TsoGroup(true, maxGroup, random, sources);
    }

    private TsoGroup(final boolean shared, final int maxGroup, final java.util.random.RandomGenerator random,
                     final TsoSource... sources) {
        this.homes = shared ? new ArrayDeque<>() : null;
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
        final Group group;
        synchronized (this) {
            waiting.add(promise);
            if (homes != null) {
                homes.add(Home.of(context));
            }
            group = fetching ? null : take();
        }
        if (group != null) {
            fetchFrom(group, new boolean[sources.length], null);
        }
        return promise.future();
    }

    /** Groups a failed source sits out before it is tried again. */
    public static final int SKIP_AFTER_FAILURE = 64;

    /** The requests one fetch serves, and (shared by loops) where each came from. */
    private record Group(Promise<Long>[] members, Home[] homes) {
    }

    /**
     * Where a request of a group shared by loops came from: its loop's bridge (to tell whether it is the calling
     * one) and how to run a task there (the simulator's loop, or the request's Vert.x context).
     */
    private record Home(io.scythe.bridge.Bridge bridge, java.util.concurrent.Executor executor) {
        static Home of(final ContextInternal context) {
            final io.scythe.bridge.Bridge bridge = io.scythe.bridge.Bridge.currentOrNull();
            if (bridge != null && bridge.deferredExecutor() != null) {
                return new Home(bridge, bridge.deferredExecutor());
            }
            return new Home(bridge, context == null ? null : task -> context.runOnContext(v -> task.run()));
        }

        boolean current() {
            return executor == null || (bridge != null && bridge == io.scythe.bridge.Bridge.currentOrNull());
        }
    }

    /** Under the monitor: the next group off the queue; requests arriving from now on form the one after. */
    private Group take() {
        final int count = Math.min(waiting.size(), maxGroup);
        @SuppressWarnings("unchecked") final Promise<Long>[] members = new Promise[count];
        final Home[] from = homes == null ? null : new Home[count];
        for (int i = 0; i < count; i++) {
            members[i] = waiting.poll();
            if (from != null) {
                from[i] = homes.poll();
            }
        }
        fetching = true;
        groups++;
        return new Group(members, from);
    }

    /** Fetches the group from a source not {@code tried} yet; fails the members once all were. */
    private void fetchFrom(final Group group, final boolean[] tried, final Throwable lastFailure) {
        final int source;
        synchronized (this) {
            source = pick(tried);
        }
        if (source < 0) {
            final io.scythe.txn.AbortException unavailable = new io.scythe.txn.AbortException(
                io.scythe.txn.AbortReason.TSO_UNAVAILABLE, "no timestamp source answered (last: "
                + (lastFailure == null ? "none" : lastFailure.getMessage()) + ")");
            done(group, null, unavailable);
            return;
        }
        tried[source] = true;
        final int count = group.members.length;
        sources[source].fetch(count).onComplete(ar -> {
            if (ar.failed()) {
                synchronized (this) {
                    skipUntil[source] = groups + SKIP_AFTER_FAILURE;
                    failovers++;
                }
                fetchFrom(group, tried, ar.cause());
                return;
            }
            synchronized (this) {
                skipUntil[source] = 0;
            }
            done(group, ar.result(), null);
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

    private void done(final Group group, final Long first, final Throwable failure) {
        // Completing a member runs its flow, which may ask again at once: that request waits for the next group
        // (fetching stays true until every member has its timestamp, or its task to get it is posted).
        final Promise<Long>[] members = group.members;
        if (failure == null) {
            synchronized (this) {
                highWater = first + members.length - 1;
                handedOut += members.length;
            }
        }
        for (int i = 0; i < members.length; i++) {
            final Promise<Long> member = members[i];
            final Home home = group.homes == null ? null : group.homes[i];
            if (home == null || home.current()) {
                if (failure == null) {
                    member.complete(first + i);
                } else {
                    member.fail(failure);
                }
            } else { // on the member's own loop
                home.executor().execute(failure == null ? completing(member, first + i) : () -> member.fail(failure));
            }
        }
        final Group next;
        synchronized (this) {
            fetching = false;
            next = waiting.isEmpty() ? null : take();
        }
        if (next != null) {
            fetchFrom(next, new boolean[sources.length], null);
        }
    }

    private static Runnable completing(final Promise<Long> member, final long ts) {
        return () -> member.complete(ts);
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
