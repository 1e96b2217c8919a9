package io.scythe.txn.api;

import io.scythe.codec.KryoCodec;
import io.vertx.core.eventbus.EventBus;

/**
 * The event-bus codecs of {@link TxnRequest} and {@link TxnReply}. Every Vert.x instance that sends or serves
 * requests registers them once, before its first request: {@code ScytheClient} and the coordinators do it
 * themselves; a plain event-bus client calls {@link #register} (registering again is harmless).
 */
public final class TxnCodecs {
    private TxnCodecs() {
    }

    /** Registers the request and reply codecs on {@code eventBus} (Kryo, with every type they carry). */
    public static void register(final EventBus eventBus) {
        KryoCodec.registerNested(TxnReply.wireTypes().toArray(Class<?>[]::new));
        KryoCodec.register(eventBus, TxnRequest.class, TxnReply.class);
    }
}
