package io.scythe.txn;

import io.vertx.core.json.JsonObject;

import java.util.function.BiFunction;

/**
 * A concurrency-control protocol: how an attempt begins, and how the coordinator picks the next attempt's hint. Names
 * are what {@code --protocols} takes; protocols come from modules, found in {@code io.scythe.txn.spi.ProtocolRegistry}.
 */
public interface Protocol {
    String name();

    /** A new attempt; {@code hint} is its {@link RetryPolicy}'s choice (Scythe: the last attempt met a hot object). */
    Txn begin(TxnRuntime runtime, boolean hint);

    /**
     * The retry policy of one coordinator on {@code runtime}, configured by {@code options} (the protocol's own keys,
     * e.g. Scythe's {@code adaptiveWatermarks}; unknown keys are ignored). Default: no hint.
     */
    default RetryPolicy retryPolicy(final TxnRuntime runtime, final JsonObject options) {
        return RetryPolicy.NO_HINT;
    }

    /**
     * This protocol configured by {@code options}, the part of a {@code --protocols} name after its first {@code :}
     * (e.g. {@code rcc-nowait:primitive=rpc}); its name is then the whole name. Default: it takes none.
     *
     * @throws IllegalArgumentException when it takes no options or {@code options} are not ones it knows
     */
    default Protocol configured(final String options) {
        throw new IllegalArgumentException("protocol '" + name() + "' takes no options (got '" + options + "')");
    }

    /**
     * The protocols this name stands for, to run one after the other: itself, or, for an enumerator (e.g.
     * {@code rcc-occ:hybrid=auto}, every hybrid code of RCC's OCC), each variant's name, so that a run can rank them.
     */
    default java.util.List<String> variants() {
        return java.util.List.of(name());
    }

    /**
     * Bytes every object of a table of {@code schema} needs beyond its header and value, for this protocol's own
     * per-object state (RCC's MVCC: its older versions), which memory nodes set aside in each slot when they create
     * the tables of a run of this protocol ({@code LogDb#objectRoom}). 0 by default: the object format of
     * {@code ObjectLayout} alone.
     */
    default int objectRoom(final io.scythe.storage.TableSchema schema) {
        return 0;
    }

    /**
     * Whether this protocol promises snapshot isolation only (Lotus's {@code lotus-si}): a checker then allows cycles
     * with two consecutive anti-dependencies (write skew) and nothing else. False by default: serializable.
     */
    default boolean snapshotIsolation() {
        return false;
    }

    /** A protocol named {@code name} whose attempts {@code begin} makes, with no hint. */
    static Protocol of(final String name, final BiFunction<TxnRuntime, Boolean, Txn> begin) {
        return new Protocol() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public Txn begin(final TxnRuntime runtime, final boolean hint) {
                return begin.apply(runtime, hint);
            }

            @Override
            public String toString() {
                return name;
            }
        };
    }
}
