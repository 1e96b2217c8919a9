package io.scythe.cluster;

import com.hazelcast.core.EntryEvent;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import com.hazelcast.map.listener.EntryAddedListener;
import com.hazelcast.map.listener.EntryUpdatedListener;
import io.scythe.txn.Catalog;
import io.scythe.txn.MemoryNodeConfiguration;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.recovery.ReReplicator;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;

import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A replacement memory-node process rejoining a running cluster (issue 23 section 2), driven by one compute node.
 *
 * <p>A memory node killed for good is failed over ({@link MemoryNodeFailover#remove}); a new process started under
 * its name (the refusal in {@code ScytheNode#register} lets it in once a configuration removed the old one) loads its
 * tables on new regions, publishes their descriptors ({@value MemoryNodeFailover#TABLES}) and asks to rejoin: entry
 * {@code name -> {pid, member}} of {@value MemoryNodeFailover#REJOIN}. Every compute node sees the entry; the one
 * whose claim ({@value #CLAIMS}, keyed {@code name:member} by the replacement's member) lands first drives the rejoin on a thread of its own:
 * <ol>
 *   <li>waits until the configuration removing the node (and any later one) is settled: every live CN drained it,
 *       every dead one recovered, no recovery owed ({@link MemoryNodeFailover#settlementWaitsFor}), so no redo record
 *       naming the old process's addresses is still to be rolled forward;</li>
 *   <li>writes the rejoin epoch ({@link MemoryNodeFailover#rejoin}: its copies back as the last backup of each
 *       partition, rejoining). Each CN applying it switches its catalog to the descriptors the replacement published
 *       ({@code Catalog#reconfigure(next, replacement)}: a redo region opened on the old process is opened anew) and
 *       writes the new copies from that epoch on;</li>
 *   <li>waits until every CN drained the rejoin epoch (commits decided before it do not write the new copy), then
 *       copies every key from the serving primaries ({@link ReReplicator}, on its recovery loop), again in the new
 *       epoch if a configuration change interrupts it;</li>
 *   <li>writes {@link MemoryNodeFailover#rejoined}: from then on the copies count as full and may be promoted.</li>
 * </ol>
 * Each step is bounded ({@value #STEP_MS} ms): one that does not finish is logged with what it waits for and the
 * rejoin stops there (the copies stay rejoining: written, never promoted).
 *
 * <p><b>The driver dying midway.</b> A claim names its driver: the CN and its Hazelcast member ({@code {cn, member}}).
 * When a member leaves, every CN looks at the requests again ({@link #start}'s membership listener): a claim whose
 * driver's member is no longer in the cluster is taken over by compare-and-set ({@link #claim}: one CN wins), and the
 * new driver resumes from the step reached, since every step is idempotent: it reads the current configuration
 * (removed: wait for the settlement, write the rejoin; rejoining: drain, copy again, which copy-then-verify makes
 * harmless; no longer rejoining: nothing to do). A CN starting later takes over such claims too (the requests it finds).
 */
final class MemoryNodeRejoin {
    /** Claims of the rejoins being driven: key {@code name:member}, value the driver, {@code {cn, member}}. */
    static final String CLAIMS = "scythe.mnrejoin.claims";
    /** Bound of each step. */
    static final long STEP_MS = 120_000;
    private static final long POLL_MS = 50;

    private final HazelcastInstance hazelcast;
    private final MemoryNodeFailover failover;
    private final String cn;
    private final String protocol;
    private final Catalog catalog;
    private final Context loop;
    private final TxnRuntime runtime;
    private final Consumer<String> log;
    /** Set once this CN lost its lease ({@link #stop}): its drivers stop before their next configuration write. */
    private volatile boolean stopped;

    MemoryNodeRejoin(final HazelcastInstance hazelcast, final MemoryNodeFailover failover, final String cn,
                     final String protocol, final Catalog catalog, final Context loop, final TxnRuntime runtime,
                     final Consumer<String> log) {
        this.hazelcast = hazelcast;
        this.failover = failover;
        this.cn = cn;
        this.protocol = protocol;
        this.catalog = catalog;
        this.loop = loop;
        this.runtime = runtime;
        this.log = log;
    }

    /**
     * Stops driving (this CN lost its lease, review 41: a CN removed by a pause whose claim another took over would
     * drive beside the new driver): each driver stops at its next wait or before its next configuration write, and
     * then gives its claim up ({@link #release}).
     */
    void stop() {
        stopped = true;
    }

    /** Watches the requests to rejoin, and takes up those already there. Blocking. */
    void start() {
        final IMap<String, String> requests = hazelcast.getMap(MemoryNodeFailover.REJOIN);
        final class Listener implements EntryAddedListener<String, String>, EntryUpdatedListener<String, String> {
            @Override
            public void entryAdded(final EntryEvent<String, String> event) {
                requested(event.getKey(), event.getValue());
            }

            @Override
            public void entryUpdated(final EntryEvent<String, String> event) {
                requested(event.getKey(), event.getValue());
            }
        }
        requests.addEntryListener(new Listener(), true);
        // A driver's member leaving: its claims are taken over (claim), each request looked at again.
        hazelcast.getCluster().addMembershipListener(new com.hazelcast.cluster.MembershipListener() {
            @Override
            public void memberAdded(final com.hazelcast.cluster.MembershipEvent event) {
            }

            @Override
            public void memberRemoved(final com.hazelcast.cluster.MembershipEvent event) {
                final Thread rescan = new Thread(() -> {
                    try {
                        requests.forEach(MemoryNodeRejoin.this::requested);
                    } catch (final RuntimeException e) {
                        log.accept("rejoin requests not looked at again after " + event.getMember() + " left: " + e);
                    }
                }, "scythe-mnrejoin-rescan");
                rescan.setDaemon(true);
                rescan.start(); // map operations block: off Hazelcast's event thread
            }
        });
        requests.forEach(this::requested);
    }

    /**
     * Claims the driving of rejoin {@code key} for {@code mine} (this CN's {@code {cn, member}}) in {@code claims}:
     * true when it was free, or held by a driver whose member is not in {@code liveMembers} (it died midway: taken
     * over by compare-and-set, so one claimer wins); false while a live driver, this CN included, holds it. A claim
     * written before drivers were named by member (a bare CN name) is left to its driver.
     */
    static boolean claim(final java.util.concurrent.ConcurrentMap<String, String> claims, final String key,
                         final String mine, final java.util.Set<String> liveMembers, final Consumer<String> log) {
        while (true) {
            final String held = claims.putIfAbsent(key, mine);
            if (held == null) {
                return true;
            }
            final String member = driverMember(held);
            if (member == null || liveMembers.contains(member)) {
                return false;
            }
            if (claims.replace(key, held, mine)) {
                log.accept("takes over the rejoin " + key + " from " + held + ", whose member left the cluster: "
                    + "resumes from the step it reached");
                return true;
            }
        }
    }

    /**
     * Throws unless the driver {@code mine} of rejoin {@code key} still drives it: it was not {@code stopped} (its CN
     * lost its lease), {@code claims} still names it, and the replacement's member ({@code replacement}, null when the
     * request names none) is in {@code liveMembers}.
     */
    static void stillDrives(final boolean stopped, final java.util.Map<String, String> claims, final String key,
                            final String mine, final java.util.Set<String> liveMembers, final String replacement) {
        if (stopped) {
            throw new IllegalStateException("this compute node lost its lease");
        }
        final String held = claims.get(key);
        if (!mine.equals(held)) {
            throw new IllegalStateException("its claim " + key + " is held by " + held + " now");
        }
        if (replacement != null && !liveMembers.contains(replacement)) {
            throw new IllegalStateException("the replacement's member " + replacement + " left the cluster");
        }
    }

    /**
     * Gives up claim {@code key} of a driver {@code mine} that stopped (its CN lost its lease, review 41 second pass:
     * kept, the claim passed on only once its member left): removed if it still names {@code mine}, so the next CN
     * that looks at the request (a new request, or any member leaving) claims it while this member lives on.
     */
    static void release(final java.util.concurrent.ConcurrentMap<String, String> claims, final String key,
                        final String mine, final Consumer<String> log) {
        try {
            if (claims.remove(key, mine)) {
                log.accept("gives up its claim on the rejoin " + key + " (stopped): another compute node takes it");
            }
        } catch (final RuntimeException e) {
            log.accept("claim on the rejoin " + key + " not given up: " + e + " (it passes on once this member "
                + "leaves)");
        }
    }

    /** A driver's steps ({@link #drive}), for {@link #driveClaimed}. */
    @FunctionalInterface
    interface Driving {
        void run() throws Exception;
    }

    /**
     * Runs {@code driving} under claim {@code key} held by {@code mine}, then gives the claim up ({@link #release})
     * when it failed in any way (a step that waited too long, the configuration changing after each copy, a lost
     * claim) or its CN {@code stopped}: so another compute node takes the rejoin while this member lives on (issue 23
     * review: before, only a stopped driver released it, and a driver that gave up kept the claim until its member
     * left). A rejoin driven to its end keeps the claim (the request is done).
     */
    static void driveClaimed(final java.util.concurrent.ConcurrentMap<String, String> claims, final String key,
                             final String mine, final java.util.function.BooleanSupplier stopped,
                             final Consumer<String> log, final Driving driving) throws Exception {
        boolean failed = true;
        try {
            driving.run();
            failed = false;
        } finally {
            if (failed || stopped.getAsBoolean()) {
                release(claims, key, mine, log);
            }
        }
    }

    /** The Hazelcast member named by claim {@code value}, or null when it names none (an older claim). */
    private static String driverMember(final String value) {
        try {
            return new JsonObject(value).getString("member");
        } catch (final RuntimeException notJson) {
            return null;
        }
    }

    private java.util.Set<String> liveMembers() {
        final java.util.Set<String> live = new java.util.HashSet<>();
        for (final com.hazelcast.cluster.Member m : hazelcast.getCluster().getMembers()) {
            live.add(m.getUuid().toString());
        }
        return live;
    }

    /** Memory node {@code mn}'s replacement asks to rejoin: claims the driving of it, and drives it if the claim lands. */
    private void requested(final String mn, final String value) {
        final JsonObject request = new JsonObject(value);
        final long pid = request.getLong("pid", -1L);
        // Keyed by the replacement's Hazelcast member (a fresh UUID per process): a later replacement of the same
        // node is claimed anew even when its pid repeats one before it (review, stop 40: PID 1 in a container).
        final String claim = mn + ":" + request.getString("member", "pid " + pid);
        final Thread driver = new Thread(() -> {
            try {
                final String replacement = request.getString("member");
                if (replacement != null && !liveMembers().contains(replacement)) {
                    return; // that replacement process is gone: nothing to rejoin (a newer one asks anew)
                }
                final String mine = new JsonObject().put("cn", cn)
                    .put("member", hazelcast.getCluster().getLocalMember().getUuid().toString()).encode();
                if (!claim(hazelcast.<String, String>getMap(CLAIMS), claim, mine, liveMembers(), log)) {
                    return; // a live CN drives it
                }
                driveClaimed(hazelcast.<String, String>getMap(CLAIMS), claim, mine, () -> stopped, log,
                    () -> drive(mn, pid, () -> stillDrives(stopped, hazelcast.<String, String>getMap(CLAIMS), claim,
                        mine, liveMembers(), replacement)));
            } catch (final Exception e) {
                log.accept("rejoin of memory node " + mn + " (pid " + pid + ") stopped: " + e.getMessage());
            }
        }, "scythe-mnrejoin-" + mn);
        driver.setDaemon(true);
        driver.start();
    }

    /**
     * Drives the rejoin of {@code mn}. {@code stillDrives} throws unless this CN still drives it: it holds its lease
     * and the claim, and the replacement's member is live. It is asked at each wait and right before each
     * configuration write (review 41: the replacement may die during the settlement wait, the claim may be taken
     * over from a paused driver), so nothing is written for a dead replacement or by a superseded driver. The check
     * and the write are not one atomic step, but each write is a compare-and-set on the configuration epoch the driver
     * checked ({@link MemoryNodeFailover#rejoinIn}, {@link MemoryNodeFailover#rejoinedIn}): of two drivers writing
     * the same step at once one lands, and none lands over a configuration it did not see.
     */
    private void drive(final String mn, final long pid, final Runnable stillDrives) throws Exception {
        final int node = failover.indexOf(mn);
        final long start = System.nanoTime();
        log.accept("drives the rejoin of memory node " + mn + " (replacement pid " + pid + ")");
        // 1. The removal settled (no record naming the old process's addresses left to roll forward).
        final MemoryNodeConfiguration c = rejoinWhenSettled(node, mn, new Configurations() {
            @Override
            public MemoryNodeConfiguration current() {
                return failover.current();
            }

            @Override
            public String settlementWaitsFor(final long epoch) {
                return failover.settlementWaitsFor(epoch);
            }

            @Override
            public MemoryNodeConfiguration rejoinIn(final long seen) {
                return failover.rejoinIn(mn, seen);
            }

            @Override
            public java.util.List<String> names() {
                return failover.names();
            }
        }, stillDrives, log, start);
        if (!c.rejoining().contains(node)) {
            log.accept("memory node " + mn + " is not rejoining in configuration epoch " + c.epoch() + ": nothing to do");
            return;
        }
        if (!ReReplicator.supported(protocol)) {
            throw new IllegalStateException("protocol " + protocol + " cannot re-replicate by copy-then-verify: "
                + mn + " stays rejoining (written, never promoted)");
        }
        // 2.-3. Every CN drained the commits of epochs before the one copied in, then the copy; again after a change.
        ReReplicator.Report report = null;
        long copiedIn = -1;
        MemoryNodeConfiguration full = null;
        for (int attempt = 0; full == null; attempt++) {
            final long epoch = failover.current().epoch();
            await("every compute node to apply and drain configuration epoch " + epoch, log, () -> {
                stillDrives.run();
                return catalog.epoch() < epoch ? "this CN to apply it" : failover.settlementWaitsFor(epoch);
            });
            final MemoryNodeConfiguration now = failover.current();
            if (!now.rejoining().contains(node)) {
                log.accept("memory node " + mn + " no longer rejoins (configuration epoch " + now.epoch() + "): stops");
                return;
            }
            try {
                report = onLoop(() -> catalog.epoch() != epoch ? Future.failedFuture(new IllegalStateException(
                    "configuration changed")) : new ReReplicator(runtime, protocol).copyOnto(mn, epoch));
                copiedIn = epoch;
            } catch (final Exception e) {
                if (attempt >= 5) {
                    throw e;
                }
                log.accept("re-replication of " + mn + " in epoch " + epoch + " did not finish (" + e.getMessage()
                    + "): again in the current configuration");
                continue;
            }
            stillDrives.run();
            // Full copies only while the epoch the copy was made in is current (compare-and-set): a configuration made
            // since, or a driver that took over meanwhile, makes this one copy again in the current epoch instead.
            full = failover.rejoinedIn(mn, copiedIn);
            if (full == null) {
                if (attempt >= 5) {
                    throw new IllegalStateException("the configuration kept changing after each copy of " + mn);
                }
                log.accept("configuration changed after the copy of " + mn + " in epoch " + copiedIn
                    + ": copies again in the current one");
                report = null;
            }
        }
        log.accept("memory node " + mn + " rejoined: " + report.keys() + " keys over " + report.copies()
            + " copies copied in " + TimeUnit.NANOSECONDS.toMillis(report.nanos()) + " ms (" + report.retries()
            + " copied again) in epoch " + copiedIn + "; configuration " + full.describe(failover.names())
            + " is current, " + ms(start) + " ms after its request");
    }

    /** The configurations a rejoin's first step reads and writes: {@link MemoryNodeFailover}'s, for {@link #drive}. */
    interface Configurations {
        /** {@link MemoryNodeFailover#current}. */
        MemoryNodeConfiguration current();

        /** {@link MemoryNodeFailover#settlementWaitsFor}. */
        String settlementWaitsFor(long epoch);

        /** {@link MemoryNodeFailover#rejoinIn} of the memory node rejoining. */
        MemoryNodeConfiguration rejoinIn(long seen);

        /** {@link MemoryNodeFailover#names}. */
        java.util.List<String> names();
    }

    /**
     * Step 1 of {@link #drive}: while memory node {@code node} ({@code mn}) is removed, waits until the current
     * configuration is settled, then writes the rejoin by compare-and-set on the epoch that wait found settled (a
     * configuration made between the wait and the write lets it land nothing, and it waits for that one's settlement
     * in turn: never a rejoin over an epoch nobody found settled). Returns the configuration it ends with: the rejoin
     * written, or the current one once {@code node} is not removed.
     */
    static MemoryNodeConfiguration rejoinWhenSettled(final int node, final String mn, final Configurations failover,
                                                     final Runnable stillDrives, final Consumer<String> log,
                                                     final long start) throws Exception {
        MemoryNodeConfiguration c = failover.current();
        while (c.removed().contains(node)) {
            final long removedIn = c.epoch();
            // The epoch the wait found settled (-1: the node no longer removed): the compare-and-set is on it, not on
            // a configuration read after the wait, which may be a newer one nobody found settled (issue 23 review).
            final long[] settled = {-1};
            await("configuration epoch " + removedIn + " (and later ones) to settle before " + mn + " rejoins", log,
                () -> {
                stillDrives.run();
                final MemoryNodeConfiguration now = failover.current();
                if (!now.removed().contains(node)) {
                    settled[0] = -1;
                    return null;
                }
                final String waits = failover.settlementWaitsFor(now.epoch());
                settled[0] = waits == null ? now.epoch() : -1;
                return waits;
            });
            c = failover.current();
            if (c.removed().contains(node)) {
                stillDrives.run();
                // Written only while the epoch just found settled is current (a compare-and-set on the configuration):
                // a driver taken over between its check and this write, or a configuration made meanwhile, lets it
                // land nothing; it then looks again (removed still: the new epoch's settlement first).
                final MemoryNodeConfiguration written = settled[0] < 0 ? null : failover.rejoinIn(settled[0]);
                if (written == null) {
                    log.accept("configuration changed before " + mn + "'s rejoin was written: looks again");
                    c = failover.current();
                    continue;
                }
                c = written;
                log.accept("memory node " + mn + " rejoins: configuration " + c.describe(failover.names())
                    + " is current (" + ms(start) + " ms after its request)");
            }
        }
        return c;
    }

    /** Waits until {@code waitsFor} says nothing (null), within {@link #STEP_MS}; says what it waits for every 5 s. */
    private static void await(final String what, final Consumer<String> log,
                              final java.util.concurrent.Callable<String> waitsFor) throws Exception {
        final long start = System.nanoTime();
        long said = start;
        while (true) {
            final String waiting = waitsFor.call();
            if (waiting == null) {
                return;
            }
            if (System.nanoTime() - start > TimeUnit.MILLISECONDS.toNanos(STEP_MS)) {
                throw new IllegalStateException("waited " + STEP_MS + " ms for " + what + "; still waits for " + waiting);
            }
            if (System.nanoTime() - said > TimeUnit.SECONDS.toNanos(5)) {
                said = System.nanoTime();
                log.accept("rejoin waits for " + what + ": " + waiting);
            }
            Thread.sleep(POLL_MS);
        }
    }

    /** The last {@link #onLoop} body's outcome: a body given up on at {@link #STEP_MS} may still be running. */
    private volatile Future<?> lastOnLoop;

    /**
     * Runs {@code body} on the recovery loop and waits for it, at most {@link #STEP_MS}. A body given up on before is
     * waited for first (review, stop 40: a copy that outlived its wait ran beside the next attempt's), and a body that
     * throws fails at once (it waited the whole step).
     */
    private <T> T onLoop(final java.util.function.Supplier<Future<T>> body) throws Exception {
        if (lastOnLoop != null && !lastOnLoop.isComplete()) {
            try {
                lastOnLoop.await(STEP_MS, TimeUnit.MILLISECONDS);
            } catch (final Exception ignored) {
                // its outcome was reported when it was given up on; only its end matters here
            }
            if (!lastOnLoop.isComplete()) {
                throw new IllegalStateException("the previous attempt is still running after " + STEP_MS + " ms");
            }
        }
        final Promise<T> done = Promise.promise();
        lastOnLoop = done.future();
        loop.runOnContext(v -> {
            try {
                body.get().onComplete(done);
            } catch (final RuntimeException e) {
                done.tryFail(e);
            }
        });
        return done.future().await(STEP_MS, TimeUnit.MILLISECONDS);
    }

    private static long ms(final long sinceNs) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sinceNs);
    }
}
