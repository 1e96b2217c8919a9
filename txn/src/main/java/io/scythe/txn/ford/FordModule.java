package io.scythe.txn.ford;

import io.scythe.txn.Protocol;

import java.util.List;

/**
 * FORD's one-sided OCC with CAS locks as a protocol module ({@code ford-occ}); the CAS lock ({@link CasLock},
 * {@link CasLockKind}, {@link CasWords}) comes with {@link CasLockModule}, which FaRM's module shares.
 */
public final class FordModule extends CasLockModule {
    /**
     * FORD's one-sided OCC with CAS locks. Whether its clients retry an aborted transaction is the harness's rule, the
     * same for every protocol ({@link io.scythe.txn.OnAbort}): FORD's own worker draws a new transaction after an
     * abort ({@code --on-abort new}); Scythe's paper measured every system retrying to commit ({@code retry}, the
     * default). Before issue 22's harness22 note this protocol alone had one attempt per transaction (fordcollapse),
     * so that a comparison with scythe set two rules against each other.
     */
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
