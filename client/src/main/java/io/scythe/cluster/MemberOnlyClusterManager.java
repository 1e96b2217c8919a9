package io.scythe.cluster;

import com.hazelcast.cluster.MembershipEvent;
import com.hazelcast.config.Config;
import com.hazelcast.core.LifecycleEvent;
import com.hazelcast.multimap.MultiMap;
import io.vertx.core.Completable;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.spi.cluster.NodeInfo;
import io.vertx.core.spi.cluster.RegistrationInfo;
import io.vertx.core.spi.cluster.RegistrationListener;
import io.vertx.core.spi.cluster.RegistrationUpdateEvent;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import io.vertx.spi.cluster.hazelcast.impl.HazelcastRegistrationInfo;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.logging.Logger;

/**
 * Vert.x's Hazelcast cluster manager, routing event-bus messages only to nodes that are members of the cluster, and
 * failing at once (never at the reply timeout) a message whose node is gone.
 *
 * <p>Why: the event bus picks a node among the registrations of an address ({@code __vertx.subs}, a Hazelcast
 * MultiMap) and looks up that node's address ({@code __vertx.nodeInfo}). A dead node's registrations are removed once,
 * when its member leaves; but they can come back: killing and restarting a CN over and over, the registrations of an
 * incarnation killed two restarts earlier were in the map again right after the next restart (4 kill/restart rounds on
 * a loopback cluster, rounds 2 and 3; CI run 120's {@code CnKillProcessTest} failure), and nothing removes them again.
 * The event bus then sent every other request for {@code scythe.txn.cn0} to that node: the lookup fails ("Not a member
 * of the cluster"), Vert.x fails the message's write with an exception that is not a {@link ReplyException}, which
 * does not end the request, and the request waits out its whole reply timeout although it never left this process.
 *
 * <p>So here: (1) the registrations the event bus is given, read or pushed, are those of current members (and this
 * node's own); (2) a node that has no node info and is not a member fails the message with a {@link ReplyException}
 * ({@link ReplyFailure#NO_HANDLERS}), which Vert.x hands to the request at once: nothing was sent, so the caller may
 * send it again; (3) that node's leftover registrations are then removed from the map, cluster-wide (the
 * filter of (1) already keeps the event bus from picking it, so this runs when a node info lookup of a gone node is
 * asked for directly: the map stays small). Not ours alone: stale {@code __vertx.subs} entries of nodes that died
 * ungracefully, and entries brought back when a split cluster merges (the merge policy can put an address's entries back
 * from the merging side, the dead node's among them, after Vert.x removed them on the other side), are known upstream
 * (vert-x3/vertx-hazelcast#90 and #109, merges; vert-x3/vertx-ignite#141, ungraceful shutdowns, cleaned there by a
 * periodic scan); a CN killed and restarted on a loaded machine splits and merges views, which fits what we saw. Left (review, stop 40): a registration pushed here before this member
 * applied the join of its node would be filtered out until that address's registrations next change; a node joins,
 * then puts its node info, then registers its consumers, so its member event comes first in practice (not seen). Members are this member's view of the Hazelcast cluster; a registration is removed only when its node has
 * neither a member nor node info (a starting node puts its node info before it registers anything).
 */
final class MemberOnlyClusterManager extends HazelcastClusterManager {
    /** Vert.x's names for its node id attribute and its registration map (vertx-hazelcast's own constants). */
    static final String NODE_ID_ATTRIBUTE = "__vertx.nodeId";
    static final String SUBS = "__vertx.subs";

    private static final Logger LOG = Logger.getLogger(MemberOnlyClusterManager.class.getName());

    private volatile Vertx vertx;

    /** Node ids whose leftover registrations are being removed (one scan per node at a time). */
    private final Set<String> removing = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /**
     * Where Vert.x's handling of membership and lifecycle events runs: one thread, in the order Hazelcast delivered
     * them, never Hazelcast's own. vertx-hazelcast's {@code memberRemoved} (and {@code stateChanged} on MERGED) runs,
     * under the cluster manager's monitor, a scan of {@code __vertx.subs} over every partition, a scan of the node
     * infos, a put and a republication of this node's registrations: blocking calls that wait for the partition
     * table to settle. Run inline, they held the Hazelcast event thread that delivered the event (and, for MERGED,
     * Hazelcast's lifecycle lock: vert-x3/vertx-hazelcast#215, unchanged in 5.1.5) for as long as partitions were in
     * flux after a member left, so that every later event of its stripe (map entry events our listeners act on)
     * waited behind it. The events keep their order (one thread, first come first run); the thread goes after 10 s
     * idle, so a JVM with many cluster managers (tests) keeps none.
     */
    private final java.util.concurrent.ThreadPoolExecutor membershipEvents = new java.util.concurrent.ThreadPoolExecutor(
        1, 1, 10, java.util.concurrent.TimeUnit.SECONDS, new java.util.concurrent.LinkedBlockingQueue<>(), r -> {
            final Thread t = new Thread(r, "scythe-vertx-membership-events");
            t.setDaemon(true);
            return t;
        });

    MemberOnlyClusterManager(final Config config) {
        super(config);
        membershipEvents.allowCoreThreadTimeOut(true);
    }

    @Override
    public void memberAdded(final MembershipEvent event) {
        membershipEvents.execute(() -> super.memberAdded(event));
    }

    @Override
    public void memberRemoved(final MembershipEvent event) {
        membershipEvents.execute(() -> super.memberRemoved(event));
    }

    @Override
    public void stateChanged(final LifecycleEvent event) {
        membershipEvents.execute(() -> super.stateChanged(event));
    }

    @Override
    public void init(final Vertx vertx) {
        super.init(vertx);
        this.vertx = vertx;
    }

    /** The Vert.x node ids of the current members, and this node's. */
    private Set<String> memberNodeIds() {
        final Set<String> ids = new HashSet<>(getNodes());
        ids.add(getNodeId());
        return ids;
    }

    /** {@code registrations} of current members (and this node's, local ones included). */
    private List<RegistrationInfo> ofMembers(final List<RegistrationInfo> registrations) {
        if (registrations == null || registrations.isEmpty()) {
            return registrations;
        }
        final Set<String> members = memberNodeIds();
        return registrations.stream().allMatch(r -> members.contains(r.nodeId())) ? registrations
            : registrations.stream().filter(r -> members.contains(r.nodeId())).toList();
    }

    @Override
    public void getRegistrations(final String address, final Completable<List<RegistrationInfo>> promise) {
        super.getRegistrations(address, (registrations, failure) -> promise.complete(
            failure == null ? ofMembers(registrations) : null, failure));
    }

    @Override
    public void registrationListener(final RegistrationListener listener) {
        super.registrationListener(new RegistrationListener() {
            @Override
            public void registrationsUpdated(final RegistrationUpdateEvent event) {
                listener.registrationsUpdated(new RegistrationUpdateEvent(event.address(),
                    ofMembers(event.registrations())));
            }

            @Override
            public void registrationsLost() {
                listener.registrationsLost();
            }

            @Override
            public boolean wantsUpdatesFor(final String address) {
                return listener.wantsUpdatesFor(address);
            }
        });
    }

    @Override
    public void getNodeInfo(final String nodeId, final Completable<NodeInfo> promise) {
        super.getNodeInfo(nodeId, (info, failure) -> {
            if (failure == null || memberNodeIds().contains(nodeId)) {
                promise.complete(info, failure);
                return;
            }
            // Gone: fail the message at once, then remove what it left in the map (off the event loop: a
            // cluster-wide scan; one at a time per node: review, stop 40, it scanned before failing each message).
            promise.fail(new ReplyException(ReplyFailure.NO_HANDLERS, "event-bus node " + nodeId
                + " is not a member of the cluster (a registration that outlived its node): nothing was sent"));
            if (removing.add(nodeId)) {
                vertx.executeBlocking(() -> removeRegistrationsOf(nodeId), false)
                    .onComplete(removed -> removing.remove(nodeId));
            }
        });
    }

    /** Removes {@code nodeId}'s registrations from the map, unless it has node info again; returns how many. */
    private int removeRegistrationsOf(final String nodeId) {
        if (getHazelcastInstance().getMap("__vertx.nodeInfo").containsKey(nodeId)) {
            return 0;
        }
        final MultiMap<String, HazelcastRegistrationInfo> subs = getHazelcastInstance().getMultiMap(SUBS);
        int removed = 0;
        final Set<String> addresses = new HashSet<>();
        for (final Map.Entry<String, HazelcastRegistrationInfo> e : subs.entrySet()) {
            if (nodeId.equals(e.getValue().unwrap().nodeId()) && subs.remove(e.getKey(), e.getValue())) {
                removed++;
                addresses.add(e.getKey());
            }
        }
        if (removed > 0) {
            LOG.warning("removed " + removed + " event-bus registration(s) of node " + nodeId
                + ", which is not a member of the cluster, from " + addresses);
        }
        return removed;
    }
}
