package io.scythe.txn.ford;

import io.scythe.txn.Protocol;

import java.util.List;

/**
 * FORD's one-sided OCC with CAS locks as a protocol module ({@code ford-occ}); the CAS lock ({@link CasLock},
 * {@link CasLockKind}, {@link CasWords}) comes with {@link CasLockModule}, which FaRM's module shares.
 */
public final class FordModule extends CasLockModule {
    /** FORD's one-sided OCC with CAS locks. */
    public static final Protocol FORD_OCC = Protocol.of("ford-occ", (runtime, hint) -> new FordOccTxn(runtime));

    @Override
    public String name() {
        return "ford";
    }

    @Override
    public List<Protocol> protocols() {
        return List.of(FORD_OCC);
    }
}
