package io.scythe.routing;

/** A compute node's check of a transaction routed to it by shard: does it own the routing key's shard now? */
@FunctionalInterface
public interface OwnershipCheck {
    /** {@code null} when this node owns {@code routingKey}'s shard, else the refusal naming the owner. */
    WrongOwnerException refusal(long routingKey);
}
