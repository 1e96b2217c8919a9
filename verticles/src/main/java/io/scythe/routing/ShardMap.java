package io.scythe.routing;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * Which compute node owns each shard (Lotus §4.2-4.3): a transaction's <em>routing key</em> (the record that places it:
 * SmallBank's account, TPC-C's home warehouse, TATP's subscriber, YCSB's first key) falls in shard
 * {@code key mod shards}, and the shard's owner is where a router sends it. Immutable: {@link #moved} returns the next
 * map, one epoch later, so a router that cached an older map is told so by the owner's refusal
 * ({@link WrongOwnerException} carries the refuser's epoch) and can fetch the newer one.
 *
 * <p>Starts round-robin: shard {@code s} on compute node {@code s mod nodes}. Every shard has exactly one owner in
 * every map. Who holds the current map is the caller's: an atomic reference in the embedded cluster and the
 * simulator, a Hazelcast map in cluster mode ({@code io.scythe.cluster.HazelcastShardMap}); when to move a shard
 * (resharding policy) is Lotus's, not this class's.
 */
public final class ShardMap {
    /** Lotus's 12 bits of shard number in a key. */
    public static final int DEFAULT_SHARDS = 4096;
    /** Owners are stored a byte each. */
    public static final int MAX_COMPUTE_NODES = 256;
    /** The epoch of a map nobody moved a shard of yet. */
    public static final long FIRST_EPOCH = 1;

    private final long epoch;
    private final List<String> nodes;
    /** Owner of shard s: an index into {@link #nodes}, unsigned. */
    private final byte[] owners;

    private ShardMap(final long epoch, final List<String> nodes, final byte[] owners) {
        if (nodes.isEmpty() || nodes.size() > MAX_COMPUTE_NODES) {
            throw new IllegalArgumentException("a shard map has 1 to " + MAX_COMPUTE_NODES + " compute nodes, not "
                + nodes.size());
        }
        if (owners.length < 1) {
            throw new IllegalArgumentException("shards=" + owners.length + " must be at least 1");
        }
        if (new java.util.HashSet<>(nodes).size() != nodes.size()) {
            throw new IllegalArgumentException("compute node names repeat: " + nodes);
        }
        for (final byte owner : owners) {
            if (Byte.toUnsignedInt(owner) >= nodes.size()) {
                throw new IllegalArgumentException("an owner " + Byte.toUnsignedInt(owner) + " is not one of the "
                    + nodes.size() + " compute nodes");
            }
        }
        this.epoch = epoch;
        this.nodes = List.copyOf(nodes);
        this.owners = owners;
    }

    /** {@code shards} shards over compute nodes {@code nodes} (in index order), round-robin. */
    public static ShardMap roundRobin(final int shards, final List<String> nodes) {
        if (shards < 1) {
            throw new IllegalArgumentException("shards=" + shards + " must be at least 1");
        }
        final byte[] owners = new byte[shards];
        for (int s = 0; s < shards; s++) {
            owners[s] = (byte) (s % Math.max(1, nodes.size()));
        }
        return new ShardMap(FIRST_EPOCH, nodes, owners);
    }

    public long epoch() {
        return epoch;
    }

    public int shards() {
        return owners.length;
    }

    public int computeNodes() {
        return nodes.size();
    }

    /** Compute node names, by index. */
    public List<String> nodes() {
        return nodes;
    }

    public String node(final int computeNode) {
        return nodes.get(computeNode);
    }

    /** The index of compute node {@code name}, or -1 when it owns nothing here. */
    public int indexOf(final String name) {
        return nodes.indexOf(name);
    }

    /** The shard of {@code routingKey}: its remainder by the shard count (never negative). */
    public int shardOf(final long routingKey) {
        return (int) Math.floorMod(routingKey, (long) owners.length);
    }

    public int ownerOf(final int shard) {
        return Byte.toUnsignedInt(owners[shard]);
    }

    public int ownerOfKey(final long routingKey) {
        return ownerOf(shardOf(routingKey));
    }

    /** How many shards each compute node owns, by index. */
    public int[] shardsPerNode() {
        final int[] count = new int[nodes.size()];
        for (final byte owner : owners) {
            count[Byte.toUnsignedInt(owner)]++;
        }
        return count;
    }

    /**
     * The map with {@code shard} owned by {@code toComputeNode}, one epoch later; this map itself when that node owns
     * it already (nothing moved, so no route went stale).
     */
    public ShardMap moved(final int shard, final int toComputeNode) {
        if (shard < 0 || shard >= owners.length) {
            throw new IllegalArgumentException("shard=" + shard + " is not within [0, " + owners.length + ")");
        }
        if (toComputeNode < 0 || toComputeNode >= nodes.size()) {
            throw new IllegalArgumentException("compute node " + toComputeNode + " is not within [0, " + nodes.size()
                + ")");
        }
        if (ownerOf(shard) == toComputeNode) {
            return this;
        }
        final byte[] next = owners.clone();
        next[shard] = (byte) toComputeNode;
        return new ShardMap(epoch + 1, nodes, next);
    }

    /** The newer of this map and {@code other} (by epoch; this one on a tie). */
    public ShardMap newer(final ShardMap other) {
        return other != null && other.epoch > epoch ? other : this;
    }

    /**
     * What compute node {@code computeNode} answers a transaction routed to it by {@code routingKey}: {@code null}
     * when it owns the key's shard, else the refusal that tells the router who does, as of this map's epoch.
     */
    public WrongOwnerException refusal(final int computeNode, final long routingKey) {
        final int shard = shardOf(routingKey);
        final int owner = ownerOf(shard);
        if (owner == computeNode) {
            return null;
        }
        return new WrongOwnerException(shard, owner < nodes.size() ? nodes.get(owner) : null,
            computeNode >= 0 && computeNode < nodes.size() ? nodes.get(computeNode) : "a compute node not in the map",
            epoch);
    }

    /** JSON text: {@code {"epoch": E, "nodes": [...], "owners": base64 of one byte per shard}}. */
    public String encode() {
        return new JsonObject().put("epoch", epoch).put("nodes", new JsonArray(new ArrayList<>(nodes)))
            .put("owners", Base64.getEncoder().encodeToString(owners)).encode();
    }

    /** The map {@link #encode} wrote; a malformed text fails with what is wrong. */
    public static ShardMap decode(final String text) {
        try {
            final JsonObject json = new JsonObject(text);
            final List<String> nodes = new ArrayList<>();
            for (final Object n : json.getJsonArray("nodes")) {
                nodes.add((String) n);
            }
            return new ShardMap(json.getLong("epoch"), nodes, Base64.getDecoder().decode(json.getString("owners")));
        } catch (final RuntimeException e) {
            throw new IllegalArgumentException("not a shard map: " + e.getMessage(), e);
        }
    }

    @Override
    public String toString() {
        return "ShardMap{epoch=" + epoch + ", shards=" + owners.length + ", nodes=" + nodes + "}";
    }
}
