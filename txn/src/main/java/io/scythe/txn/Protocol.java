package io.scythe.txn;

import io.scythe.txn.farm.FarmOccTxn;
import io.scythe.txn.ford.FordOccTxn;
import io.scythe.txn.scythe.ScytheTxn;
import io.scythe.txn.unsafe.UnsafeTxn;

import java.util.List;
import java.util.function.BiFunction;

/** A concurrency-control protocol: how an attempt begins. Names are what {@code --protocols} takes. */
public interface Protocol {
    String name();

    /** A new attempt; {@code hot} is the coordinator's hint that the last attempt met a hot object. */
    Txn begin(TxnRuntime runtime, boolean hot);

    /** Scythe: OCC until an attempt meets a hot object, then TOCC (§4.2). */
    Protocol SCYTHE = of("scythe", ScytheTxn::new);

    /** FORD's one-sided OCC with CAS locks. */
    Protocol FORD_OCC = of("ford-occ", (runtime, hot) -> new FordOccTxn(runtime));

    /** FaRMv2-style OCC: unlocked reads, locks at commit, physical-clock timestamps with the uncertainty wait. */
    Protocol FARM_OCC = of("farm-occ", (runtime, hot) -> new FarmOccTxn(runtime));

    /** Scythe with OCC only (never switches): to measure what TOCC adds. */
    Protocol SCYTHE_OCC_ONLY = of("scythe-occ", (runtime, hot) -> new ScytheTxn(runtime, false));

    /**
     * UNSAFE: no locking, no validation. Exists only to show that the history checker catches real anomalies; it
     * loses updates under contention. In no default list ({@link #ALL}); only asked for by name.
     */
    Protocol UNSAFE = of("unsafe", (runtime, hot) -> new UnsafeTxn(runtime));

    /** A protocol named {@code name} whose attempts {@code begin} makes. */
    static Protocol of(final String name, final BiFunction<TxnRuntime, Boolean, Txn> begin) {
        return new Protocol() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public Txn begin(final TxnRuntime runtime, final boolean hot) {
                return begin.apply(runtime, hot);
            }
        };
    }

    /** The real protocols. */
    List<Protocol> ALL = List.of(SCYTHE, FORD_OCC, FARM_OCC, SCYTHE_OCC_ONLY);

    /** @throws UnknownKeyException for a name no protocol has */
    static Protocol named(final String name) {
        if (UNSAFE.name().equals(name)) {
            return UNSAFE;
        }
        for (final Protocol p : ALL) {
            if (p.name().equals(name)) {
                return p;
            }
        }
        throw new UnknownKeyException("unknown protocol '" + name + "'; available: "
            + ALL.stream().map(Protocol::name).toList() + " (and 'unsafe', which only tests the history checker)");
    }
}
