package io.scythe.cluster;

import com.hazelcast.core.EntryEvent;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import com.hazelcast.map.listener.EntryAddedListener;
import com.hazelcast.map.listener.EntryUpdatedListener;
import io.scythe.txn.MemoryNodeConfiguration;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * The cluster's memory-node configuration (MN failover, FaRM's reconfiguration): entry {@value #KEY} of the Hazelcast
 * map {@value #MAP} holds the current {@link MemoryNodeConfiguration} (epoch, each partition's serving copies, the
 * memory nodes removed). When a memory node's lease expires (its Hazelcast member leaves: killed, or paused past
 * max-no-heartbeat) a compute node that sees a majority writes the next configuration, without it, by
 * compare-and-set: a backup of each partition it was primary of is promoted, and its backup copies stop being
 * written. Concurrent writers (every CN sees the member leave) take one epoch per removal: a writer that lost the race
 * finds the node removed already. Every CN applies each configuration it sees to its catalog
 * ({@link io.scythe.txn.Catalog#reconfigure}); a memory node that finds itself removed stops serving.
 *
 * <p>Map operations block: call them on a worker, never an event loop.
 */
final class MemoryNodeFailover {
    static final String MAP = "scythe.mnconfig";
    static final String KEY = "current";
    /**
     * Each memory node's table descriptors, published when it starts: a CN that starts after a memory node was
     * removed still needs where the removed node's tables were (its catalog's placement, what redo entries name).
     */
    static final String TABLES = "scythe.mntables";
    /**
     * Replacement memory-node processes asking to rejoin: key the node's name, value its pid and member (put by the
     * replacement once its tables are published; see {@link MemoryNodeRejoin}).
     */
    static final String REJOIN = "scythe.mnrejoin";

    private final HazelcastInstance hazelcast;
    private final IMap<String, String> entries;
    private final List<String> memoryNodes;
    private final int backups;
    /** The queue of {@link #watch}, once watching: {@link #stopRetrying} closes it. */
    private volatile InOrder watching;

    MemoryNodeFailover(final HazelcastInstance hazelcast, final List<String> memoryNodes, final int backups) {
        this.hazelcast = hazelcast;
        this.entries = hazelcast.getMap(MAP);
        this.memoryNodes = List.copyOf(memoryNodes);
        this.backups = backups;
    }

    /** The current configuration: the one written last, or the one the cluster starts with. */
    MemoryNodeConfiguration current() {
        final String value = entries.get(KEY);
        return value == null ? MemoryNodeConfiguration.initial(memoryNodes.size(), backups) : decode(value);
    }

    /**
     * Makes the configuration without memory node {@code mn} current (unless it is removed already) and returns it.
     *
     * @throws IllegalStateException when a partition would have no copy left (its data is lost)
     */
    MemoryNodeConfiguration remove(final String mn) {
        return change(mn, (now, node) -> now.without(node));
    }

    /**
     * Makes the configuration with removed memory node {@code mn} back as a rejoining backup current
     * ({@link MemoryNodeConfiguration#rejoin}) and returns it.
     *
     * @throws IllegalStateException when it is not removed
     */
    MemoryNodeConfiguration rejoin(final String mn) {
        return change(mn, (now, node) -> now.rejoin(node, backups));
    }

    /**
     * {@link #rejoin}, only if configuration epoch {@code seen} is still current (the one whose settlement its driver
     * waited for): a compare-and-set on the configuration, so a driver whose claim was taken over, or that looked
     * before a newer configuration, writes nothing. Returns the configuration it wrote, or {@code null} if the
     * current one is another.
     */
    MemoryNodeConfiguration rejoinIn(final String mn, final long seen) {
        return change(entries, initial(), indexOf(mn), seen, (now, node) -> now.rejoin(node, backups));
    }

    /** {@link #rejoined}, only if epoch {@code copiedIn} (the one its copy was made in) is still current; else null. */
    MemoryNodeConfiguration rejoinedIn(final String mn, final long copiedIn) {
        return change(entries, initial(), indexOf(mn), copiedIn, (now, node) -> now.rejoined(node));
    }

    /**
     * Makes the configuration with rejoining memory node {@code mn} a full copy current
     * ({@link MemoryNodeConfiguration#rejoined}; unchanged when it is not rejoining) and returns it.
     */
    MemoryNodeConfiguration rejoined(final String mn) {
        return change(mn, (now, node) -> now.rejoined(node));
    }

    /** The memory nodes by partition number. */
    List<String> names() {
        return memoryNodes;
    }

    /** The index of memory node {@code mn} (its partition number). */
    int indexOf(final String mn) {
        final int node = memoryNodes.indexOf(mn);
        if (node < 0) {
            throw new IllegalArgumentException("memory node " + mn + " is not one of " + memoryNodes);
        }
        return node;
    }

    /** Compare-and-set of {@code step} of the current configuration about {@code mn}, until it lands or changes nothing. */
    private MemoryNodeConfiguration change(final String mn,
            final java.util.function.BiFunction<MemoryNodeConfiguration, Integer, MemoryNodeConfiguration> step) {
        return change(entries, initial(), indexOf(mn), -1, step);
    }

    private MemoryNodeConfiguration initial() {
        return MemoryNodeConfiguration.initial(memoryNodes.size(), backups);
    }

    /**
     * Compare-and-set of {@code step} of the configuration in {@code entries} ({@code initial} while it holds none)
     * about memory node {@code node}, until it lands or changes nothing; with {@code expectedEpoch} not negative, only
     * while that epoch is current ({@code null} once another is).
     */
    static MemoryNodeConfiguration change(final java.util.concurrent.ConcurrentMap<String, String> entries,
            final MemoryNodeConfiguration initial, final int node, final long expectedEpoch,
            final java.util.function.BiFunction<MemoryNodeConfiguration, Integer, MemoryNodeConfiguration> step) {
        while (true) {
            final String value = entries.get(KEY);
            final MemoryNodeConfiguration now = value == null ? initial : decode(value);
            if (expectedEpoch >= 0 && now.epoch() != expectedEpoch) {
                return null;
            }
            final MemoryNodeConfiguration next = step.apply(now, node);
            if (next == now) {
                return now;
            }
            final String encoded = encode(next);
            if (value == null ? entries.putIfAbsent(KEY, encoded) == null : entries.replace(KEY, value, encoded)) {
                return next;
            }
        }
    }

    /**
     * Stops the retries of failed applies of {@link #watch} (the node closes or lost its lease: what it would apply
     * no longer matters, and the retries would run on until the process exits).
     */
    void stopRetrying() {
        final InOrder w = watching;
        if (w != null) {
            w.close();
        }
    }

    /**
     * Calls {@code apply} with every configuration written from now on, on a worker thread of {@code vertx}, one at a
     * time in the order Hazelcast tells them ({@link #inOrder}): never on a Hazelcast event thread, since applying one
     * may block (a rejoining node's published tables are an {@code IMap.get}). Then queues the configuration current
     * once the listener is registered behind them, through the same queue (review 41: applied on the caller's thread
     * it could run beside, and finish after, a newer one the watch applied), and returns when that one was applied: a
     * caller that needs its catalog current waits for it. A failure is logged to {@code log}, and the current
     * configuration is read and applied again a second later, then after 2, 4 ... 30 s until one is applied
     * ({@link InOrder}), until {@link #stopRetrying}.
     */
    Future<Void> watch(final io.vertx.core.Vertx vertx, final Consumer<MemoryNodeConfiguration> apply,
                       final Consumer<String> log) {
        final InOrder deliver = inOrder(vertx, apply, this::current, log, InOrder.RETRY_MS);
        watching = deliver;
        final class Listener implements EntryAddedListener<String, String>, EntryUpdatedListener<String, String> {
            @Override
            public void entryAdded(final EntryEvent<String, String> event) {
                deliver.accept(event.getValue());
            }

            @Override
            public void entryUpdated(final EntryEvent<String, String> event) {
                deliver.accept(event.getValue());
            }
        }
        entries.addEntryListener(new Listener(), true);
        return deliver.current();
    }

    /**
     * What {@link #watch} does with each encoded configuration: decoded and given to {@code apply} on a worker thread
     * of {@code vertx}, never the caller's, each only after the one before returned (ordered blocking tasks of one
     * context), so configurations are applied in the order they came.
     */
    static InOrder inOrder(final io.vertx.core.Vertx vertx, final Consumer<MemoryNodeConfiguration> apply,
                           final java.util.function.Supplier<MemoryNodeConfiguration> current,
                           final Consumer<String> log, final long retryMs) {
        return new InOrder(vertx, vertx.getOrCreateContext(), apply, current, log, retryMs);
    }

    /**
     * {@code apply} given only configurations newer than the last it applied (returned without throwing): an older
     * one, or the same again (a retry, the current one queued at start), is skipped. For a memory node (review 41,
     * second pass: an older configuration heard behind the current one, a "removed" after "back", made a healthy
     * replacement lose its lease); a CN's {@code Catalog#reconfigure} has this check of its own.
     */
    static Consumer<MemoryNodeConfiguration> newerOnly(final Consumer<MemoryNodeConfiguration> apply) {
        final java.util.concurrent.atomic.AtomicLong applied = new java.util.concurrent.atomic.AtomicLong(-1);
        return c -> {
            if (c.epoch() > applied.get()) {
                apply.accept(c);
                applied.accumulateAndGet(c.epoch(), Math::max);
            }
        };
    }

    /**
     * The ordered queue of configurations to apply ({@link #inOrder}). A failed apply is not thrown at the caller (a
     * Hazelcast event thread) nor dropped (review 41: on a memory node a failed removal handler never lost its lease):
     * it is logged, and {@code retryMs} later ({@link #RETRY_MS} for {@link #watch}) the current configuration is read
     * and queued (again, until one is applied). One retry is pending at a time, however many applies fail (review 41,
     * second pass: each failure started a chain of its own, never merged nor stopped); its delay doubles after each
     * failure up to {@link #MAX_RETRY_MS} and starts over once one is applied; none is scheduled once {@link #close}d.
     */
    static final class InOrder implements Consumer<String> {
        static final long RETRY_MS = 1_000;
        static final long MAX_RETRY_MS = 30_000;
        private final io.vertx.core.Vertx vertx;
        private final io.vertx.core.Context context;
        private final Consumer<MemoryNodeConfiguration> apply;
        private final java.util.function.Supplier<MemoryNodeConfiguration> current;
        private final Consumer<String> log;
        private final long retryMs;
        /** Set while a retry is scheduled: a failure meanwhile waits for it instead of scheduling another. */
        private final java.util.concurrent.atomic.AtomicBoolean retryPending =
            new java.util.concurrent.atomic.AtomicBoolean();
        /** The delay of the next retry: {@code retryMs}, doubled after each failure up to {@link #MAX_RETRY_MS}. */
        private final java.util.concurrent.atomic.AtomicLong nextRetryMs = new java.util.concurrent.atomic.AtomicLong();
        private volatile boolean closed;

        private InOrder(final io.vertx.core.Vertx vertx, final io.vertx.core.Context context,
                        final Consumer<MemoryNodeConfiguration> apply,
                        final java.util.function.Supplier<MemoryNodeConfiguration> current,
                        final Consumer<String> log, final long retryMs) {
            this.vertx = vertx;
            this.retryMs = retryMs;
            this.nextRetryMs.set(retryMs);
            this.context = context;
            this.apply = apply;
            this.current = current;
            this.log = log;
        }

        /** Queues encoded configuration {@code value}. */
        @Override
        public void accept(final String value) {
            run(() -> decode(value), "configuration " + value);
        }

        /**
         * Queues the configuration {@code current} gives when its turn comes; the future tells when it was applied. A
         * failure fails it, and is retried as any (a caller that does not wait for it still gets it applied).
         */
        Future<Void> current() {
            return run(current, "the current configuration");
        }

        /** Schedules no retry from now on (the node closes, or lost its lease); a pending one does nothing. */
        void close() {
            closed = true;
        }

        private Future<Void> run(final java.util.function.Supplier<MemoryNodeConfiguration> next, final String what) {
            return context.<Void>executeBlocking(() -> {
                apply.accept(next.get());
                nextRetryMs.set(retryMs);
                return null;
            }, true).onFailure(e -> {
                if (closed) {
                    log.accept("memory-node " + what + " not applied: " + e + "; closed: not retried");
                } else if (!retryPending.compareAndSet(false, true)) {
                    log.accept("memory-node " + what + " not applied: " + e + "; a retry is pending already");
                } else {
                    final long delay = nextRetryMs.getAndUpdate(d -> Math.min(d * 2, MAX_RETRY_MS));
                    log.accept("memory-node " + what + " not applied: " + e + "; applies the current one in " + delay
                        + " ms");
                    vertx.setTimer(delay, t -> {
                        retryPending.set(false);
                        if (!closed) {
                            run(current, "the current configuration");
                        }
                    });
                }
            });
        }
    }

    /**
     * Compute nodes that have nothing in flight from before an epoch: key {@code "<epoch>:<cn>"} (any value), put
     * by each CN once its commits of older epochs finished or gave up ({@code Catalog#inFlightBefore}).
     */
    static final String DRAINED = "scythe.mndrained";

    /**
     * Tells the cluster that compute node {@code cn} has no commit in flight from before {@code epoch}; with
     * {@link #drained(long, String, long)} its loops' largest clock reading then ({@code ProtocolModule#settlingClock},
     * 0 here, for protocols that keep none): the value is {@code {"ms": wall-clock ms, "clock": clock}}. Blocking.
     */
    void drained(final long epoch, final String cn) {
        drained(epoch, cn, 0);
    }

    /** {@link #drained(long, String)} with compute node {@code cn}'s clock reading {@code clock} (see above). */
    void drained(final long epoch, final String cn, final long clock) {
        hazelcast.<String, String>getMap(DRAINED).put(epoch + ":" + cn,
            new JsonObject().put("ms", System.currentTimeMillis()).put("clock", clock).encode());
    }

    /**
     * The promoted copies settled on their memory nodes ({@code ProtocolModule#clusterSettlesPromotedCopies}: RCC's
     * MVCC and SUNDIAL floor their rts): key {@code "<term>:<partition>"} ({@link #settlingKey}), value the clock the
     * memory node floored above.
     */
    static final String SETTLED_COPIES = "scythe.mnsettledcopies";

    /**
     * The key of {@value #SETTLED_COPIES} for partition {@code p}'s primary in configuration {@code c}: its term
     * ({@link MemoryNodeConfiguration#primarySince}) and the partition, so a copy promoted again later (its node died
     * too) is settled again.
     */
    static String settlingKey(final MemoryNodeConfiguration c, final int p) {
        return c.primarySince(p) + ":" + p;
    }

    /**
     * The largest clock of the drains in {@code drained} ({@value #DRAINED}'s entries) of epoch {@code since} or
     * later: what the settling of a copy promoted in epoch {@code since} floors above. Once the settlement of that
     * promotion waits for nothing ({@link #settlementWaitsFor(long, long)}), every live compute node's drain is among
     * them, each read after its node applied the promotion: from then on it sends the removed primary nothing, so
     * every timestamp a read there carried was issued at or below that reading. Values written before the clock was
     * kept (a bare number) count 0.
     */
    static long clockBound(final java.util.Map<String, String> drained, final long since) {
        long clock = 0;
        for (final java.util.Map.Entry<String, String> e : drained.entrySet()) {
            final int colon = e.getKey().indexOf(':');
            if (colon > 0 && Long.parseLong(e.getKey().substring(0, colon)) >= since
                && e.getValue().startsWith("{")) {
                clock = Math.max(clock, new JsonObject(e.getValue()).getLong("clock", 0L));
            }
        }
        return clock;
    }

    /** {@link #clockBound(java.util.Map, long)} of the cluster's drains. Blocking. */
    long clockBound(final long since) {
        return clockBound(hazelcast.<String, String>getMap(DRAINED), since);
    }

    /** Tells the cluster that the copies of {@code keys} ({@link #settlingKey}) were settled above {@code clock}. */
    void copiesSettled(final java.util.Collection<String> keys, final long clock) {
        final java.util.Map<String, String> all = new java.util.HashMap<>();
        keys.forEach(k -> all.put(k, String.valueOf(clock)));
        hazelcast.<String, String>getMap(SETTLED_COPIES).putAll(all);
    }

    /**
     * Each compute node's published bound on its clock ({@code txn.spi.ClockBound}, issue 18 R1): compute node name to
     * the largest bound it published, in its clock's units. Kept when the node dies (what the settling floors above
     * for it); a node's publications only raise it ({@link #publishClockBound}).
     */
    static final String CLOCK_BOUNDS = "scythe.cnclockbounds";

    /**
     * Publishes compute node {@code cn}'s bound {@code bound} (its commits carry no timestamp above it until it
     * publishes a larger one); a bound below the one the map holds (an earlier incarnation's, on another host's clock,
     * or a paused old incarnation's publication landing after its successor's) leaves it as it is: the entry only
     * rises, by compare-and-set (review of rcc18, W1: two incarnations of one name may both publish). Blocking; once
     * it returns the bound is durable.
     *
     * @return the bound the map holds for {@code cn} now
     */
    long publishClockBound(final String cn, final long bound) {
        // Not MapLockStep#raise: this returns the value it read, with no second read that could find none (review
        // of rcc20, #3).
        final com.hazelcast.map.IMap<String, Long> bounds = hazelcast.getMap(CLOCK_BOUNDS);
        while (true) {
            final Long before = bounds.get(cn);
            if (before != null && before >= bound) {
                return before;
            }
            if (before == null ? bounds.putIfAbsent(cn, bound) == null : bounds.replace(cn, before, bound)) {
                return bound;
            }
        }
    }

    /**
     * Compute nodes that may have served (TODO rcc-unbounded-cn closed, issue 18): compute node name to the epoch of
     * its latest incarnation that may serve RCC transactions. A positive record, written before the node's first
     * clock bound ({@link #mayServe}), so a compute node down with neither this entry nor a bound
     * ({@link #CLOCK_BOUNDS}) provably never served: the settling need not wait for it ({@link #downClocks}). One
     * with this entry and no bound did publish one that is lost: it is still waited for. conf/cluster.xml makes all its
     * backups synchronous (review of rcc20, #1: with asynchronous ones, a CN and the member holding the one synchronous
     * backup killed together could leave survivors with the registration and no record), and gives it the
     * higher-value merge (a merge keeps the entry of either side).
     */
    static final String SERVING = "scythe.cnserving";

    /**
     * Records that incarnation {@code epoch} of compute node {@code cn} may serve from now on ({@value #SERVING}; only
     * rises). Blocking; once it returns the record is on every replica of its partition (all backups synchronous,
     * unless a backup's acknowledgement timed out: Hazelcast then returns all the same). The node calls it
     * before it publishes its first clock bound, hence before any loop serves ({@code ScytheNode}).
     */
    void mayServe(final String cn, final long epoch) {
        MapLockStep.raise(hazelcast.<String, Long>getMap(SERVING), cn, epoch);
    }

    /**
     * What the settling of a promoted RCC MVCC copy floors above for the compute nodes whose member is not live (dead,
     * paused past failure detection, or not yet back), which left no drained clock: the largest bound any compute
     * node published ({@link #CLOCK_BOUNDS}) but the live registered ones (their drained clocks are exact), so also a
     * node that died and was deregistered since (review of rcc18, W2: its reads may have raised rts on the primary
     * that died now); the registered ones down that may have served ({@value #SERVING}) but whose bound is missing,
     * which the settling still waits for ({@code ScytheNode#settleCopiesWhenSettled}); and those down with neither
     * record, which never served. Blocking.
     */
    DownClocks downClocks() {
        final Set<java.util.UUID> live = new java.util.HashSet<>();
        hazelcast.getCluster().getMembers().forEach(m -> live.add(m.getUuid()));
        final java.util.Map<String, Long> bounds = hazelcast.<String, Long>getMap(CLOCK_BOUNDS);
        final java.util.Map<String, Long> serving = hazelcast.<String, Long>getMap(SERVING);
        final Set<String> unbounded = new TreeSet<>();
        final Set<String> neverServed = new TreeSet<>();
        final Set<String> down = new TreeSet<>();
        final Set<String> up = new java.util.HashSet<>();
        for (final java.util.Map.Entry<String, String> e : hazelcast.<String, String>getMap(ScytheNode.NODES)
            .entrySet()) {
            final JsonObject entry = new JsonObject(e.getValue());
            final String member = entry.getString("member");
            if (!NodeRole.CN.label().equals(entry.getString("role"))) {
                continue;
            }
            if (member != null && live.contains(java.util.UUID.fromString(member))) {
                up.add(e.getKey());
            } else {
                down.add(e.getKey());
                // rcc-unbounded-cn (issue 18): the bound's absence alone proves nothing (stop 57 review: an entry
                // lost with both replicas of its partition, or lowered by a merge). A node that may have served wrote
                // SERVING before its first bound (mayServe, then publishClockBound, then its loops serve: each call
                // blocking until its write is on the primary and the synchronous backup). So neither record: it never
                // served, nothing to floor for it; SERVING without a bound: a bound published and lost, waited for.
                if (!bounds.containsKey(e.getKey())) {
                    if (serving.containsKey(e.getKey())) {
                        unbounded.add(e.getKey());
                    } else {
                        neverServed.add(e.getKey());
                    }
                }
            }
        }
        long bound = 0;
        for (final java.util.Map.Entry<String, Long> e : bounds.entrySet()) {
            if (!up.contains(e.getKey())) {
                bound = Math.max(bound, e.getValue());
            }
        }
        return new DownClocks(bound, down, unbounded, neverServed);
    }

    /**
     * The compute nodes down ({@link #downClocks}), the largest clock bound they published, those of them that may have
     * served ({@value #SERVING}) but whose bound is missing, and those with neither record (they never served).
     */
    record DownClocks(long bound, Set<String> down, Set<String> unbounded, Set<String> neverServed) {
        /** Those that may have served with no bound, named, or null when none: what the settling still waits for. */
        String waitsFor() {
            return unbounded.isEmpty() ? null : String.join(", ", unbounded);
        }
    }

    /**
     * The promoted copies of {@code c} not yet settled on their memory nodes ({@link #copiesSettled}), named, or null
     * when none: every partition whose primary was promoted at some point ({@code primarySince > 0}). Blocking.
     */
    String copiesUnsettled(final MemoryNodeConfiguration c) {
        final Set<String> keys = new TreeSet<>();
        for (int p = 0; p < c.copies().size(); p++) {
            if (c.primarySince(p) > 0) {
                keys.add(settlingKey(c, p));
            }
        }
        if (keys.isEmpty()) {
            return null;
        }
        keys.removeAll(hazelcast.<String, String>getMap(SETTLED_COPIES).getAll(keys).keySet());
        return keys.isEmpty() ? null : "the settling of promoted copies " + keys + " (term:partition) on their memory "
            + "nodes";
    }

    /**
     * What the settlement of configuration {@code epoch} still waits for, or {@code null} when its commits in flight
     * are settled (FaRM: the promoted regions unblock once every in-flight transaction is resolved): every compute
     * node of the registry whose member is live drained ({@link #drained}); every one whose member left (it died, or
     * gave a commit up) recovered; no recovery owed. An incarnation whose recovery already succeeded
     * ({@value RecoveryDuty#RECOVERED}) is not waited for even if it is marked owed again: such a mark comes from a
     * stale read (see {@link RecoveryDuty}) and stands for nothing left to roll forward. Blocking.
     */
    String settlementWaitsFor(final long epoch) {
        return waitsFor(epoch, epoch, true);
    }

    /**
     * As {@link #settlementWaitsFor(long)}, a live compute node's drain of any epoch from {@code drainedSince} on
     * counting (a drain of a later epoch implies one of every earlier: nothing older is in flight). What a compute node
     * that starts after configuration {@code epoch} was made asks, {@code drainedSince} the epoch that promoted what it
     * finds promoted: the others settled that one (and drained it) when it was made, and none ever drains the later
     * epochs that promoted nothing (a rejoin's end): asking for those, it waited for good (a chaos run: a CN restarted
     * after two MN failovers and a rejoin kept two partitions blocked, "waits for cn1 to drain, cn2 to drain").
     */
    String settlementWaitsFor(final long epoch, final long drainedSince) {
        return waitsFor(epoch, drainedSince, true);
    }

    /**
     * What the drain of configuration {@code epoch} still waits for, or {@code null} when every compute node of the
     * registry whose member is live drained it ({@link #drained}: it applied the configuration, so it sends its
     * removed nodes nothing new). What a memory node waits for before a module's promotion of its copies (Aurogon's
     * read floor, {@code MemoryNodeContext.Promotion}). Blocking.
     */
    String drainWaitsFor(final long epoch) {
        return waitsFor(epoch, epoch, false);
    }

    /**
     * Whether a compute node that applied configuration {@code c} after {@code before} ({@code null}: {@code c} is its
     * first, {@code initial} the cluster's start) settles {@code c} ({@code ScytheNode#settle}), and from which epoch on
     * the other compute nodes' drains count for it: {@code -1} when it does not settle {@code c}.
     *
     * <p>It settles what {@code c} promoted (relative to {@code before}), the drains counting from the latest term among
     * them ({@link MemoryNodeConfiguration#primarySince}): the others drained that epoch when it was made, and none
     * drains a later one that promoted nothing (a rejoin's end, a removed backup); asking for those drains, it waited
     * for good. That is {@code c}'s own epoch for a promotion in {@code c}; an older one for a CN's first configuration
     * (it started after failovers: a chaos run had a CN restarted after two MN failovers and a rejoin keep two
     * partitions blocked, "waits for cn1 to drain, cn2 to drain") or after configurations it skipped. A rejoin (a
     * replacement back, a node starting or ending its rejoin) is settled at its own epoch, which every CN drains. A
     * configuration that promoted nothing while partitions are still blocked by an older one starts no settlement of
     * its own: the older one's, still running, unblocks them ({@code Catalog#settled}), and one of its own asked for
     * drains of an epoch the others, settled already, never make (it polled and said "not settled" for good).
     */
    static long settlementDrainedSince(final MemoryNodeConfiguration before, final MemoryNodeConfiguration c,
                                       final MemoryNodeConfiguration initial, final boolean back) {
        long since = -1;
        for (final int p : c.promotedSince(before == null ? initial : before)) {
            since = Math.max(since, c.primarySince(p));
        }
        if (since >= 0) {
            return since;
        }
        return back || before != null && !before.rejoining().containsAll(c.rejoining()) ? c.epoch() : -1;
    }

    /**
     * What a compute node does with configuration {@code epoch} it applied ({@link #settle}): it always
     * drains it (tells the cluster once its commits of older epochs finished, {@link #drained}); it settles it (unblocks
     * promoted partitions once the others drained too) only when {@code drainedSince >= 0}
     * ({@link #settlementDrainedSince}).
     */
    record Settlement(long epoch, long drainedSince) {
        boolean settles() {
            return drainedSince >= 0;
        }
    }

    /**
     * Where a settlement tells and asks about drains (the cluster's maps: {@link MemoryNodeFailover#drained},
     * {@link MemoryNodeFailover#settlementWaitsFor(long, long)}).
     */
    interface Drains {
        /** This compute node has no commit in flight from before {@code epoch}. Blocking. */
        void drained(long epoch);

        /** {@link MemoryNodeFailover#settlementWaitsFor(long, long)}: null once settled. Blocking. */
        String waitsFor(long epoch, long drainedSince);
    }

    /**
     * Settles {@code settlement} on a compute node (FaRM's recovery of promoted regions; {@code ScytheNode#settle}):
     * its promoted partitions stay blocked on this CN ({@code Catalog#blocked}) until this CN's commits of older
     * epochs finished or gave up (drained, told to the cluster), every other live CN drained too, and every CN that
     * died or gave a commit up was recovered. Polls every {@code pollMs} on {@code vertx}'s event loop, the blocking
     * calls on a worker; says every few seconds what it still waits for. A drain-only settlement
     * ({@link Settlement#settles} false) tells the cluster once this CN's commits of older epochs finished, and waits
     * for nothing else and never calls {@code Catalog#settled}: it blocked nothing, and a call would unblock the
     * partitions an older configuration's settlement, still running, keeps blocked. Stops when {@code stopped} says
     * so (the CN's lease lost) or a later configuration's settlement took over.
     */
    static void settle(final io.vertx.core.Vertx vertx, final io.scythe.txn.Catalog catalog, final Drains drains,
                       final java.util.function.BooleanSupplier stopped, final Consumer<String> log, final long pollMs,
                       final Settlement settlement) {
        final long epoch = settlement.epoch();
        final long startNs = System.nanoTime();
        final boolean[] drained = {false};
        final boolean[] asking = {false};
        final long[] lastSaidNs = {startNs};
        vertx.setPeriodic(pollMs, t -> {
            if (stopped.getAsBoolean() || catalog.epoch() > epoch && !catalog.settling()) {
                vertx.cancelTimer(t); // stopped, or a later configuration's settlement took over
                return;
            }
            if (asking[0]) {
                return;
            }
            final boolean drainNow = !drained[0] && catalog.inFlightBefore(epoch) == 0;
            if (!drained[0] && !drainNow) {
                return;
            }
            asking[0] = true;
            vertx.executeBlocking(() -> {
                if (drainNow) {
                    drains.drained(epoch);
                }
                return settlement.settles() ? drains.waitsFor(epoch, settlement.drainedSince()) : null;
            }, false).onComplete(ar -> {
                asking[0] = false;
                drained[0] |= drainNow && ar.succeeded();
                final long ms = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
                if (ar.succeeded() && ar.result() == null) {
                    vertx.cancelTimer(t);
                    if (settlement.settles() && catalog.settled(epoch)) {
                        log.accept("memory-node configuration epoch " + epoch + " settled " + ms + " ms after it was "
                            + "applied: the promoted partitions serve");
                    }
                } else if (System.nanoTime() - lastSaidNs[0] > java.util.concurrent.TimeUnit.SECONDS.toNanos(5)) {
                    lastSaidNs[0] = System.nanoTime();
                    log.accept("memory-node configuration epoch " + epoch + " not settled after " + ms + " ms: waits "
                        + "for " + (ar.succeeded() ? ar.result() : "the cluster's maps (" + ar.cause() + ")"));
                }
            });
        });
    }

    /**
     * {@link Settlement} of configuration {@code c} applied after {@code before} ({@link #settlementDrainedSince}).
     * Every applied epoch is drained, the ones that settle nothing too: a rejoin waits for the drains of the epoch that
     * removed the node (its step 1, {@code MemoryNodeRejoin#rejoinWhenSettled}) and of the epoch it copies in, exactly.
     * Before, a configuration that promoted nothing and started no rejoin (it removed a node that was primary of
     * nothing) was drained by no compute node, and a rejoin over it waited for good (chaos, stop 45: epoch 5 removed
     * mn0, a backup only, and mn0's replacement waited 120 s for "cn0, cn1, cn2 to drain (it drained epoch 4 last)").
     */
    static Settlement settlementOf(final MemoryNodeConfiguration before, final MemoryNodeConfiguration c,
                                   final MemoryNodeConfiguration initial, final boolean back) {
        return new Settlement(c.epoch(), settlementDrainedSince(before, c, initial, back));
    }

    /**
     * {@link #settlementWaitsFor}, or with {@code settling} false only its live compute nodes' drains; a drain counts
     * from epoch {@code drainedSince} on.
     */
    private String waitsFor(final long epoch, final long drainedSince, final boolean settling) {
        final Set<java.util.UUID> live = new java.util.HashSet<>();
        hazelcast.getCluster().getMembers().forEach(m -> live.add(m.getUuid()));
        final Set<String> drainedKeys = new java.util.HashSet<>(hazelcast.<String, String>getMap(DRAINED).keySet());
        // A drain: of this epoch exactly (a settlement from its own epoch); else of any from drainedSince (a CN's first
        // or skipping configuration) or, for a promotion, from this epoch on (a CN that applied a later configuration
        // applied this one's removal too, and its settlement of this one may have been taken over by the later one's).
        final boolean exact = settling && drainedSince >= epoch;
        final long from = Math.min(epoch, drainedSince);
        final Set<String> drainedLater = new java.util.HashSet<>();
        if (!exact) {
            for (final String key : drainedKeys) {
                final int colon = key.indexOf(':');
                if (colon > 0 && Long.parseLong(key.substring(0, colon)) >= from) {
                    drainedLater.add(key.substring(colon + 1));
                }
            }
        }
        final List<String> waiting = new ArrayList<>();
        for (final java.util.Map.Entry<String, String> e : hazelcast.<String, String>getMap(ScytheNode.NODES)
            .entrySet()) {
            final JsonObject entry = new JsonObject(e.getValue());
            if (!NodeRole.CN.label().equals(entry.getString("role"))) {
                continue;
            }
            final String member = entry.getString("member");
            final boolean up = member != null && live.contains(java.util.UUID.fromString(member));
            final boolean hasDrained = exact ? drainedKeys.contains(epoch + ":" + e.getKey())
                : drainedLater.contains(e.getKey());
            if (up ? !hasDrained : settling && !entry.getBoolean("recovered", false)
                && !RecoveryDuty.wasRecovered(hazelcast, RecoveryDuty.incarnation(e.getKey(),
                    entry.getLong("epoch", -1L)))) {
                waiting.add(e.getKey() + (up ? " to drain" : " to be recovered"));
            }
        }
        nameLatestDrains(waiting, drainedKeys);
        if (!settling) {
            return waiting.isEmpty() ? null : String.join(", ", waiting);
        }
        final Set<String> owed = new TreeSet<>(hazelcast.<String, String>getMap(RecoveryDuty.OWED).keySet());
        owed.removeAll(hazelcast.<String, String>getMap(RecoveryDuty.RECOVERED).getAll(owed).keySet());
        if (!owed.isEmpty()) {
            waiting.add("the recovery of " + owed);
        }
        return waiting.isEmpty() ? null : String.join(", ", waiting);
    }

    /**
     * Each "{@code cn} to drain" of {@code waiting} gets the latest epoch that compute node drained (a key
     * {@code epoch:cn} of {@code drainedKeys}), or that it drained none: whether it is late (its commits of older
     * epochs still in flight, {@code Catalog#inFlightBefore}) or never settles the epoch asked for (a chaos run said
     * only "waits for cn1 to drain, cn2 to drain", which fit both).
     */
    static void nameLatestDrains(final List<String> waiting, final java.util.Collection<String> drainedKeys) {
        if (waiting.stream().noneMatch(w -> w.endsWith(" to drain"))) {
            return;
        }
        final java.util.Map<String, Long> latest = new java.util.HashMap<>();
        for (final String key : drainedKeys) {
            final int colon = key.indexOf(':');
            if (colon > 0) {
                latest.merge(key.substring(colon + 1), Long.parseLong(key.substring(0, colon)), Math::max);
            }
        }
        waiting.replaceAll(w -> {
            if (!w.endsWith(" to drain")) {
                return w;
            }
            final Long epoch = latest.get(w.substring(0, w.length() - " to drain".length()));
            return w + (epoch == null ? " (it drained no epoch yet)" : " (it drained epoch " + epoch + " last)");
        });
    }

    /** The memory nodes {@code c} removed, by name. */
    List<String> removed(final MemoryNodeConfiguration c) {
        final List<String> names = new ArrayList<>();
        for (final int r : new TreeSet<>(c.removed())) {
            names.add(memoryNodes.get(r));
        }
        return names;
    }

    static String encode(final MemoryNodeConfiguration c) {
        final JsonArray copies = new JsonArray();
        for (final List<Integer> p : c.copies()) {
            copies.add(new JsonArray(new ArrayList<>(p)));
        }
        return new JsonObject().put("epoch", c.epoch()).put("copies", copies)
            .put("removed", new JsonArray(new ArrayList<>(new TreeSet<>(c.removed()))))
            .put("rejoining", new JsonArray(new ArrayList<>(new TreeSet<>(c.rejoining()))))
            .put("primarySince", new JsonArray(new ArrayList<>(c.primarySince()))).encode();
    }

    static MemoryNodeConfiguration decode(final String value) {
        final JsonObject json = new JsonObject(value);
        final List<List<Integer>> copies = new ArrayList<>();
        for (final Object p : json.getJsonArray("copies")) {
            final List<Integer> c = new ArrayList<>();
            for (final Object copy : (JsonArray) p) {
                c.add(((Number) copy).intValue());
            }
            copies.add(c);
        }
        final Set<Integer> removed = new TreeSet<>();
        for (final Object r : json.getJsonArray("removed")) {
            removed.add(((Number) r).intValue());
        }
        final Set<Integer> rejoining = new TreeSet<>();
        for (final Object r : json.getJsonArray("rejoining", new JsonArray())) {
            rejoining.add(((Number) r).intValue());
        }
        final JsonArray since = json.getJsonArray("primarySince");
        if (since == null) { // written before terms were kept: every primary's term from the start, as read then
            return new MemoryNodeConfiguration(json.getLong("epoch"), copies, removed, rejoining);
        }
        final List<Long> primarySince = new ArrayList<>(since.size());
        for (final Object s : since) {
            primarySince.add(((Number) s).longValue());
        }
        return new MemoryNodeConfiguration(json.getLong("epoch"), copies, removed, rejoining, primarySince);
    }

    /** Publishes memory node {@code node}'s tables ({@link #TABLES}). Blocking. */
    static void publishTables(final HazelcastInstance hazelcast, final String node,
                              final List<io.scythe.storage.TableDescriptor> tables) {
        final JsonArray all = new JsonArray();
        for (final io.scythe.storage.TableDescriptor d : tables) {
            final io.scythe.storage.TableSchema s = d.schema();
            all.add(new JsonObject().put("id", s.id()).put("name", s.name()).put("maxValueBytes", s.maxValueBytes())
                .put("fixedSize", s.fixedSize()).put("capacity", s.capacity()).put("index", s.index().name())
                .put("versionCapacity", s.versionCapacity()).put("readOnly", s.readOnly())
                .put("objects", region(d.objects())).put("indexRegion", region(d.index()))
                .put("versions", region(d.versions())).put("hashBuckets", d.hashBuckets()));
        }
        hazelcast.<String, String>getMap(TABLES).put(node, all.encode());
    }

    /** Memory node {@code node}'s tables as it published them, or null if it did not. Blocking. */
    static List<io.scythe.storage.TableDescriptor> publishedTables(final HazelcastInstance hazelcast,
                                                                   final String node) {
        final String value = hazelcast.<String, String>getMap(TABLES).get(node);
        if (value == null) {
            return null;
        }
        final List<io.scythe.storage.TableDescriptor> tables = new ArrayList<>();
        for (final Object o : new JsonArray(value)) {
            final JsonObject t = (JsonObject) o;
            tables.add(new io.scythe.storage.TableDescriptor(new io.scythe.storage.TableSchema(t.getInteger("id"),
                t.getString("name"), t.getInteger("maxValueBytes"), t.getBoolean("fixedSize"), t.getLong("capacity"),
                io.scythe.storage.IndexKind.valueOf(t.getString("index")), t.getLong("versionCapacity"),
                t.getBoolean("readOnly")), region(t.getJsonObject("objects")), region(t.getJsonObject("indexRegion")),
                region(t.getJsonObject("versions")), t.getInteger("hashBuckets")));
        }
        return tables;
    }

    private static JsonObject region(final io.scythe.fabric.RemoteRegion r) {
        return r == null ? null : new JsonObject().put("node", r.node()).put("name", r.name())
            .put("address", r.address()).put("length", r.length()).put("rkey", r.rkey()).put("kind", r.kind().name());
    }

    private static io.scythe.fabric.RemoteRegion region(final JsonObject r) {
        return r == null ? null : new io.scythe.fabric.RemoteRegion(r.getString("node"), r.getString("name"),
            r.getLong("address"), r.getLong("length"), r.getInteger("rkey"),
            io.scythe.fabric.MemoryKind.valueOf(r.getString("kind")));
    }
}
