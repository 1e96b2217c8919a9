package io.scythe.txn.ford;

import io.scythe.txn.Protocol;

import java.util.List;

/**
 * FORD's one-sided OCC with CAS locks as a protocol module ({@code ford-occ}); the CAS lock ({@link CasLock},
 * {@link CasLockKind}, {@link CasWords}) comes with {@link CasLockModule}, which FaRM's module shares.
 */
public final class FordModule extends CasLockModule {
    /**
     * FORD's one-sided OCC with CAS locks, whose clients do not retry an aborted transaction: FORD's worker
     * ({@code compute_pool/worker/worker.cc}, {@code RunSmallBank}/{@code RunTPCC}/..., the {@code #if 1} path its runs
     * use) counts the abort and draws a new transaction at once, with new keys and no back-off (its {@code #else} path,
     * which loops until a commit, also draws new keys: the {@code Tx*} functions pick them inside). Retrying the same
     * keys up to {@code --max-attempts} (as before issue 22's fordcollapse note) made ford-occ a model of no system:
     * clients gathered on the hottest lock words, whose failed CASes each hold the word (the cx5 conflict hold), and at
     * 128 clients, Zipf 0.99, SmallBank fell from 150 K txn/s in its first 5 ms to ~7 K/s.
     */
    public static final Protocol FORD_OCC = Protocol.of("ford-occ", (runtime, hint) -> new FordOccTxn(runtime), false);

    @Override
    public String name() {
        return "ford";
    }

    @Override
    public List<Protocol> protocols() {
        return List.of(FORD_OCC);
    }
}
