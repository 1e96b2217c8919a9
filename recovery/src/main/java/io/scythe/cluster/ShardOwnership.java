package io.scythe.cluster;

import com.hazelcast.cluster.Member;
import com.hazelcast.cluster.MembershipEvent;
import com.hazelcast.cluster.MembershipListener;
import com.hazelcast.core.EntryEvent;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import com.hazelcast.map.listener.EntryAddedListener;
import com.hazelcast.map.listener.EntryUpdatedListener;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * The shard-ownership map ({@value ScytheNode#SHARDS}): for every CN that ever registered, which live CN has the
 * recovery duty for its logs. Kept by the oldest member, recomputed whenever members come or go or a CN registers:
 * a live CN's logs go to the next live CN in name order (itself when alone); a dead CN's to a live CN chosen by its
 * place among all CNs, so the duty spreads. Entries are JSON: {@code {"owner": "cn1", "ownerEpoch": 3, "live": false}};
 * with no live CN the entry says {@code "owner": null}. Only entries that change are written (each write wakes every
 * CN's {@link RecoveryDuty}). A dead CN not yet recovered is owed recovery ({@link RecoveryDuty#owe}) here too, in
 * case nobody else saw its member leave.
 */
public final class ShardOwnership {
    private final Vertx vertx;
    private final HazelcastInstance hazelcast;
    private UUID membershipListener;
    private UUID entryListener;

    public ShardOwnership(final Vertx vertx, final HazelcastInstance hazelcast) {
        this.vertx = vertx;
        this.hazelcast = hazelcast;
    }

    public void start() {
        membershipListener = hazelcast.getCluster().addMembershipListener(new MembershipListener() {
            @Override
            public void memberAdded(final MembershipEvent event) {
                rebalanceLater();
            }

            @Override
            public void memberRemoved(final MembershipEvent event) {
                rebalanceLater();
            }
        });
        final IMap<String, String> nodes = hazelcast.getMap(ScytheNode.NODES);
        entryListener = nodes.addEntryListener(new Changes(), false);
        rebalanceLater();
    }

    private final class Changes implements EntryAddedListener<String, String>, EntryUpdatedListener<String, String> {
        @Override
        public void entryAdded(final EntryEvent<String, String> event) {
            rebalanceLater();
        }

        @Override
        public void entryUpdated(final EntryEvent<String, String> event) {
            rebalanceLater();
        }
    }

    private void rebalanceLater() {
        // Map operations block: off Hazelcast's event threads and off the event loops.
        vertx.executeBlocking(() -> {
            rebalance();
            return null;
        }, false);
    }

    /**
     * Whether {@code live} holds more than half of the {@code registered} nodes' members: only such a view may judge a
     * node dead. A member cut off in a minority partition sees the others leave although they run on.
     */
    static boolean isMajority(final java.util.Collection<UUID> registered, final Set<UUID> live) {
        return 2 * registered.stream().filter(live::contains).count() > registered.size();
    }

    /** Recomputes and writes the map if this member is the oldest; returns what it wrote (empty otherwise). */
    public synchronized Map<String, JsonObject> rebalance() {
        if (!hazelcast.getLifecycleService().isRunning()) {
            return Map.of();
        }
        final Set<Member> members = hazelcast.getCluster().getMembers();
        if (members.isEmpty() || !members.iterator().next().localMember()) {
            return Map.of();
        }
        final Set<UUID> live = members.stream().map(Member::getUuid).collect(Collectors.toSet());
        final IMap<String, String> nodes = hazelcast.getMap(ScytheNode.NODES);
        final Map<String, JsonObject> cns = new TreeMap<>();
        final List<UUID> registered = new ArrayList<>();
        for (final Map.Entry<String, String> e : nodes.entrySet()) {
            final JsonObject entry = new JsonObject(e.getValue());
            if (entry.getString("member") != null) {
                registered.add(UUID.fromString(entry.getString("member")));
            }
            if (NodeRole.CN.label().equals(entry.getString("role"))) {
                cns.put(e.getKey(), entry);
            }
        }
        // A master cut off in a minority sees live CNs as gone: it owes nobody (ScytheNode#seesMajority).
        final boolean majority = isMajority(registered, live);
        final Map<String, JsonObject> assignment = assign(cns, live);
        final IMap<String, String> shards = hazelcast.getMap(ScytheNode.SHARDS);
        final Map<String, String> before = shards.getAll(assignment.keySet());
        assignment.forEach((cn, owner) -> {
            if (!owner.encode().equals(before.get(cn))) {
                shards.put(cn, owner.encode());
            }
            if (!owner.getBoolean("live") && majority) {
                RecoveryDuty.owe(hazelcast, cn, cns.get(cn), "its member is not in the cluster");
            }
        });
        return assignment;
    }

    /** The assignment for registered CNs {@code cns} (name to registry entry) when {@code live} members run. */
    static Map<String, JsonObject> assign(final Map<String, JsonObject> cns, final Set<UUID> live) {
        final List<String> all = new ArrayList<>(new TreeMap<>(cns).keySet());
        final List<String> alive = new ArrayList<>();
        for (final String cn : all) {
            if (live.contains(UUID.fromString(cns.get(cn).getString("member")))) {
                alive.add(cn);
            }
        }
        final Map<String, JsonObject> out = new TreeMap<>();
        for (int i = 0; i < all.size(); i++) {
            final String cn = all.get(i);
            final boolean isLive = alive.contains(cn);
            final String owner;
            if (alive.isEmpty()) {
                owner = null;
            } else if (isLive) {
                owner = alive.get((alive.indexOf(cn) + 1) % alive.size());
            } else {
                owner = alive.get(i % alive.size());
            }
            out.put(cn, new JsonObject().put("owner", owner)
                .put("ownerEpoch", owner == null ? null : cns.get(owner).getLong("epoch"))
                .put("epoch", cns.get(cn).getLong("epoch")).put("live", isLive));
        }
        return out;
    }

    public void stop() {
        try {
            if (hazelcast.getLifecycleService().isRunning()) {
                if (membershipListener != null) {
                    hazelcast.getCluster().removeMembershipListener(membershipListener);
                }
                if (entryListener != null) {
                    hazelcast.getMap(ScytheNode.NODES).removeEntryListener(entryListener);
                }
            }
        } catch (final RuntimeException shuttingDown) {
            // the member is leaving anyway
        }
    }
}
