package io.scythe.routing;

import io.vertx.core.VertxException;

/**
 * A compute node refused a transaction routed to it by a shard it does not own: nothing of it ran, so the router
 * sends it again to {@link #owner()}, after learning the map of {@link #epoch()} if its own is older (Lotus §4.1: "a
 * CN asked about a key outside its range returns an error, and the requester retries with the latest mapping"). An
 * expected outcome of a moved shard, so no stack trace.
 */
public final class WrongOwnerException extends VertxException {
    /** How the reason of a refusal begins, in messages and in a {@code TxnReply}. */
    public static final String PREFIX = "wrong owner";

    private final int shard;
    private final String owner;
    private final long epoch;

    public WrongOwnerException(final int shard, final String owner, final String refusedBy, final long epoch) {
        super(PREFIX + ", epoch " + epoch + ": shard " + shard + " is owned by " + owner + ", not by " + refusedBy,
            true);
        this.shard = shard;
        this.owner = owner;
        this.epoch = epoch;
    }

    public int shard() {
        return shard;
    }

    /** The owner's name in the refuser's map. */
    public String owner() {
        return owner;
    }

    /** The epoch of the refuser's map. */
    public long epoch() {
        return epoch;
    }
}
