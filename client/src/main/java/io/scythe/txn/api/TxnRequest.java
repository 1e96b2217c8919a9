package io.scythe.txn.api;

/**
 * A transaction request on the event bus: a stored procedure by name and its arguments (64-bit integers: keys,
 * amounts). Immutable; sent to {@link #ADDRESS} (any compute node) or {@code ADDRESS + "." + NODE} (that one) with
 * the Kryo codec, which {@link TxnCodecs#register} registers.
 *
 * @param routingKey what a router sent it by (the shard of its first record, see {@code io.scythe.routing.ShardMap}):
 *                   a compute node that does not own that shard refuses it with a {@link TxnReply.Rejection#WRONG_OWNER} rejection;
 *                   {@link #NO_ROUTING_KEY} when it was not routed by shard (any node runs it)
 */
public record TxnRequest(String procedure, long[] args, long routingKey) {
    /** The event-bus address every compute node's coordinators serve (the event bus balances sends to it). */
    public static final String ADDRESS = "scythe.txn";

    /** The routing key of a request any compute node may run. */
    public static final long NO_ROUTING_KEY = Long.MIN_VALUE;

    /** A request not routed by shard. */
    public TxnRequest(final String procedure, final long[] args) {
        this(procedure, args, NO_ROUTING_KEY);
    }

    /** Whether it was routed by shard (so its receiver checks that it owns the shard). */
    public boolean routed() {
        return routingKey != NO_ROUTING_KEY;
    }
}
