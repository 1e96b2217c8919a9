package io.scythe.cluster;

import io.scythe.txn.api.TxnCodecs;
import io.scythe.txn.api.TxnReply;
import io.scythe.txn.api.TxnRequest;
import com.hazelcast.cluster.MembershipEvent;
import com.hazelcast.cluster.MembershipListener;
import com.hazelcast.core.HazelcastInstance;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * A client of a Scythe cluster from any Vert.x application that joined it: sends {@link TxnRequest}s to the
 * coordinators and says plainly what a reply means. A request that gets no reply in time, or an error the coordinator
 * could not settle, is {@link Outcome.Unknown}: it may have committed. It is never reported as aborted.
 *
 * <p>Where the cluster runs on Hazelcast (a Scythe cluster), the client balances the requests itself, round-robin over
 * the CNs whose members are in the cluster, each to that CN's own address ({@code scythe.txn.NODE}), and remembers which
 * CN runs what: when a CN's member leaves (killed, or hung past its lease, and then fenced) its requests end at once as
 * {@link Outcome.Unknown} instead of waiting out the timeout, and new ones go to the others. Otherwise (or while it
 * knows no CN) it sends to {@link TxnRequest#ADDRESS}, which the event bus balances.
 */
public final class ScytheClient implements AutoCloseable {
    public static final long DEFAULT_TIMEOUT_MS = 10_000;

    /** What happened to a transaction. */
    public sealed interface Outcome {
        /** Committed: its result and commit timestamp are in the reply. */
        record Committed(TxnReply reply) implements Outcome {
        }

        /** Aborted: it did not commit and never will (retry limit, or the procedure rolled back). */
        record Aborted(String reason) implements Outcome {
        }

        /**
         * Did not commit: refused before it ran (bad request: unknown procedure, wrong arguments; no coordinator to
         * take it), or failed before its point of no return (the procedure threw).
         */
        record Rejected(String reason) implements Outcome {
        }

        /** Sent, but whether it committed is not known (no reply in time, or the coordinator failed mid-commit). */
        record Unknown(String why) implements Outcome {
        }
    }

    private final Vertx vertx;
    private final boolean owned;
    private final DeliveryOptions delivery;
    /** Live CNs (name and Hazelcast member), or empty when the cluster does not say. */
    private volatile List<Cn> cns = List.of();
    private final AtomicInteger nextCn = new AtomicInteger();
    /** Requests in flight on each CN's member, ended as unknown when it leaves. */
    private final Map<UUID, Set<Promise<Outcome>>> inFlight = new ConcurrentHashMap<>();
    private HazelcastInstance hazelcast;
    private UUID membershipListener;
    private UUID registryListener;
    /** The node registry ({@value ClusterAccess#NODE_REGISTRY}) as its events told it: node name to entry. */
    private final Map<String, String> registry = new ConcurrentHashMap<>();

    private record Cn(String name, UUID member) {
    }

    /** A client on {@code vertx}, which must be a member of the cluster. */
    public ScytheClient(final Vertx vertx, final long timeoutMs) {
        this(vertx, timeoutMs, false);
    }

    private ScytheClient(final Vertx vertx, final long timeoutMs, final boolean owned) {
        this.vertx = vertx;
        this.owned = owned;
        this.delivery = new DeliveryOptions().setSendTimeout(timeoutMs);
        TxnCodecs.register(vertx.eventBus());
        try {
            hazelcast = ClusterAccess.hazelcast(vertx);
        } catch (final RuntimeException | NoClassDefFoundError notHazelcast) { // not clustered, or no Hazelcast here
            return; // the event bus balances
        }
        // Kept from events, never by scanning the map again: a scan waits on the partitions of a member that hangs,
        // which is exactly when the client needs its list.
        final com.hazelcast.map.IMap<String, String> nodes = hazelcast.getMap(ClusterAccess.NODE_REGISTRY);
        registryListener = nodes.addEntryListener(new RegistryChanges(), true);
        nodes.forEach((name, value) -> registry.put(name, value));
        membershipListener = hazelcast.getCluster().addMembershipListener(new MembershipListener() {
            @Override
            public void memberAdded(final MembershipEvent event) {
                recomputeCns();
            }

            @Override
            public void memberRemoved(final MembershipEvent event) {
                final UUID gone = event.getMember().getUuid();
                recomputeCns();
                final Set<Promise<Outcome>> lost = inFlight.remove(gone);
                if (lost != null) {
                    for (final Promise<Outcome> p : lost) {
                        p.tryComplete(new Outcome.Unknown("its coordinator's member left the cluster"));
                    }
                }
            }
        });
        recomputeCns();
    }

    private final class RegistryChanges implements com.hazelcast.map.listener.EntryAddedListener<String, String>,
        com.hazelcast.map.listener.EntryUpdatedListener<String, String> {
        @Override
        public void entryAdded(final com.hazelcast.core.EntryEvent<String, String> event) {
            registry.put(event.getKey(), event.getValue());
            recomputeCns();
        }

        @Override
        public void entryUpdated(final com.hazelcast.core.EntryEvent<String, String> event) {
            registry.put(event.getKey(), event.getValue());
            recomputeCns();
        }
    }

    /** The CNs of the registry whose members are in the cluster now (both known locally: no remote call). */
    private synchronized void recomputeCns() {
        if (!hazelcast.getLifecycleService().isRunning()) {
            return;
        }
        final Set<UUID> members = new java.util.HashSet<>();
        hazelcast.getCluster().getMembers().forEach(m -> members.add(m.getUuid()));
        final List<Cn> live = new java.util.ArrayList<>();
        for (final Map.Entry<String, String> e : registry.entrySet()) {
            final io.vertx.core.json.JsonObject entry = new io.vertx.core.json.JsonObject(e.getValue());
            final String member = entry.getString("member");
            if ("cn".equals(entry.getString("role")) && member != null
                && members.contains(UUID.fromString(member))) {
                live.add(new Cn(e.getKey(), UUID.fromString(member)));
            }
        }
        live.sort(java.util.Comparator.comparing(Cn::name));
        cns = List.copyOf(live);
    }

    /**
     * Joins the cluster {@code access} describes (its secret, members and address) as a client, a Hazelcast lite member
     * ({@link ClusterAccess#joinAsLiteMember()}: it owns no partition). Blocks (call it off the event loops) until
     * Vert.x has joined, then returns at once: {@link #computeNodes()} may still be empty.
     */
    public static ScytheClient join(final ClusterAccess access, final long timeoutMs) throws Exception {
        final Vertx vertx = access.joinPatiently(access::joinAsLiteMember, access.joinTimeoutMs(),
            line -> System.err.println("scythe client " + access.node() + ": " + line));
        return new ScytheClient(vertx, timeoutMs, true);
    }

    /**
     * Joins the cluster a {@code client.json} describes (written by {@code scythe cluster} into its directory; see
     * {@link ClusterAccess#ofClientJson(java.nio.file.Path)}). Each client takes ports of its own, so several processes
     * may join with one file. Fails, having left the cluster again, when no compute node is visible within
     * {@code timeoutMs}: a stale client.json (an earlier run's secret, or members that are gone) would otherwise "join"
     * a cluster of one and see every request rejected. {@code timeoutMs} is also each request's reply timeout.
     */
    public static ScytheClient join(final java.nio.file.Path clientJson, final long timeoutMs) throws Exception {
        final ClusterAccess access = ClusterAccess.ofClientJson(clientJson);
        final ScytheClient client = join(access, timeoutMs);
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (client.cns.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        if (client.cns.isEmpty()) {
            client.close();
            throw new IllegalStateException("joined cluster '" + access.cluster() + "' through " + access.members()
                + " but no compute node is visible after " + timeoutMs + " ms: is the cluster running, and is "
                + clientJson + " its current client.json? (one from an earlier run forms a cluster of its own)");
        }
        return client;
    }


    /** The compute nodes this client sees now (their names), in name order. */
    public List<String> computeNodes() {
        return cns.stream().map(Cn::name).toList();
    }

    public Vertx vertx() {
        return vertx;
    }

    /** Runs {@code procedure} on any CN. */
    public Future<Outcome> call(final String procedure, final long... args) {
        final List<Cn> live = cns;
        if (live.isEmpty()) {
            return callAt(TxnRequest.ADDRESS, procedure, args);
        }
        return tracked(live.get(Math.floorMod(nextCn.getAndIncrement(), live.size())), procedure, args, true);
    }

    /**
     * Runs {@code procedure} on compute node {@code node}. Tracked by the node's member as {@link #call} is: a node that
     * dies with the request ends it as unknown once its member leaves, not at the request timeout.
     */
    public Future<Outcome> callOn(final String node, final String procedure, final long... args) {
        for (final Cn cn : cns) {
            if (cn.name.equals(node)) {
                return tracked(cn, procedure, args, false);
            }
        }
        return callAt(TxnRequest.ADDRESS + "." + node, procedure, args);
    }

    /**
     * {@code procedure} sent to {@code cn}: its outcome, or unknown as soon as {@code cn}'s member leaves with it pending
     * (a reply arriving just as the member leaves may be reported unknown too: unknown never says it did not commit).
     * Not delivered (that CN is starting or gone: nothing ran) or its member gone before anything was sent, it is sent
     * anew: to any CN if {@code anyCn}, no longer tracked under {@code cn}'s member, else to {@code cn}'s address again.
     */
    private Future<Outcome> tracked(final Cn cn, final String procedure, final long[] args, final boolean anyCn) {
        final String address = TxnRequest.ADDRESS + "." + cn.name;
        final Supplier<Future<Outcome>> anew = () -> callAt(anyCn ? TxnRequest.ADDRESS : address, procedure, args);
        final Promise<Outcome> outcome = Promise.promise();
        final Set<Promise<Outcome>> mine = inFlight.computeIfAbsent(cn.member, m -> ConcurrentHashMap.newKeySet());
        mine.add(outcome);
        if (!cns.contains(cn)) { // it left meanwhile: nothing sent yet
            mine.remove(outcome);
            inFlight.remove(cn.member, Set.of());
            return anew.get();
        }
        vertx.eventBus().<TxnReply>request(address, new TxnRequest(procedure, args), delivery).onComplete(ar -> {
            mine.remove(outcome);
            if (anyCn && ar.failed() && ar.cause() instanceof ReplyException r
                && r.failureType() == ReplyFailure.NO_HANDLERS) {
                if (!outcome.future().isComplete()) { // already told unknown: not sent again
                    anew.get().onComplete(again -> outcome.tryComplete(again.result()));
                }
                return;
            }
            outcome.tryComplete(ar.succeeded() ? classify(ar.result().body()) : classify(ar.cause()));
        });
        return outcome.future();
    }

    private Future<Outcome> callAt(final String address, final String procedure, final long[] args) {
        return vertx.eventBus().<TxnReply>request(address, new TxnRequest(procedure, args), delivery)
            .map(message -> classify(message.body()))
            .recover(e -> Future.succeededFuture(classify(e)));
    }

    /** What {@code reply} means to a caller, by its status: a failure (nothing committed) is a rejection here. */
    static Outcome classify(final TxnReply reply) {
        return switch (reply.status()) {
            case COMMITTED -> new Outcome.Committed(reply);
            case ABORTED -> new Outcome.Aborted(reply.reason());
            case UNKNOWN -> new Outcome.Unknown(reply.reason());
            case REJECTED, FAILED -> new Outcome.Rejected(reply.reason());
        };
    }

    static Outcome classify(final Throwable failure) {
        if (failure instanceof ReplyException r && r.failureType() == ReplyFailure.NO_HANDLERS) {
            return new Outcome.Rejected("no coordinator is serving (" + r.getMessage() + ")");
        }
        // A timeout, a lost connection, a reply that cannot be read: the request may have run.
        return new Outcome.Unknown(failure.toString());
    }

    /** How long a client with its own Hazelcast instance tries to leave gracefully before it just leaves. */
    private static final long GRACEFUL_LEAVE_SECONDS = 10;

    /** Leaves the cluster. Blocks (up to twice {@link #GRACEFUL_LEAVE_SECONDS}): a caller's thread, not an event loop. */
    @Override
    public void close() throws Exception {
        // A Hazelcast instance of its own takes its listeners with it: removing them first is a cluster-wide
        // operation that, with members killed meanwhile, is retried against them for a minute (CI 88:
        // TsoFailoverProcessTest's client took ~100 s to close, ~65 s of it here).
        if (!owned && membershipListener != null && hazelcast.getLifecycleService().isRunning()) {
            hazelcast.getCluster().removeMembershipListener(membershipListener);
            hazelcast.getMap(ClusterAccess.NODE_REGISTRY).removeEntryListener(registryListener);
        }
        if (owned) {
            final Future<Void> closing = vertx.close();
            try {
                closing.await(GRACEFUL_LEAVE_SECONDS, TimeUnit.SECONDS);
            } catch (final java.util.concurrent.TimeoutException e) {
                // Leaving gracefully can hang on Hazelcast operations retried against members that died in the
                // meantime (a cluster in the middle of faults): leave without the handover. A client owns no data
                // the backups do not hold.
                if (hazelcast == null) {
                    throw e;
                }
                hazelcast.getLifecycleService().terminate();
                closing.await(30, TimeUnit.SECONDS);
            }
        }
    }
}
