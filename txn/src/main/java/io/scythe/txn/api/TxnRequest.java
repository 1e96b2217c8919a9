package io.scythe.txn.api;

/**
 * A transaction request on the event bus: a stored procedure by name and its arguments (64-bit integers: keys,
 * amounts). Immutable; sent with the Kryo codec ({@code KryoCodec.register(eventBus, TxnRequest.class, ...)}).
 */
public record TxnRequest(String procedure, long[] args) {
}
