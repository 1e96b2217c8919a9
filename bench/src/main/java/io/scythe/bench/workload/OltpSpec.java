package io.scythe.bench.workload;

import io.scythe.storage.LogDb;
import io.scythe.txn.Txn;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;

import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Function;

/**
 * A transactional workload the OLTP driver runs: how to load it, how to draw a transaction, and the quantity its
 * transactions conserve, which makes the invariant exact: after a run, {@link #total} counted on the memory nodes
 * equals its value before plus what the committed transactions returned.
 */
public interface OltpSpec {
    /**
     * A drawn transaction: its type (for per-type counts), its body, which returns its change of the quantity, its
     * routing key (the record that places it, whose shard's owner a router sends it to: SmallBank's first account,
     * TPC-C's home warehouse, TATP's subscriber, YCSB's first key, phantom's group, churn's counter) and whether it is
     * read-only (Lotus's hybrid routing sends those to any node).
     */
    record Drawn(String type, Function<Txn, Future<Long>> body, long routingKey, boolean readOnly) {
        /** A transaction without a routing key (a router sends it to a random node), not read-only. */
        public Drawn(final String type, final Function<Txn, Future<Long>> body) {
            this(type, body, io.scythe.routing.Router.NO_ROUTING_KEY, false);
        }

        /**
         * Its body as the coordinator runs it: each attempt of a read-only one declared so first
         * ({@code Txn#declareReadOnly}: Lotus's lock-free path; the other protocols ignore it).
         */
        public Function<Txn, Future<Long>> declaredBody() {
            if (!readOnly) {
                return body;
            }
            return txn -> {
                txn.declareReadOnly();
                return body.apply(txn);
            };
        }
    }

    String name();

    /** What the invariant counts, e.g. {@code money}. */
    String quantity();

    JsonObject params();

    /** Creates and fills this workload's tables on memory node {@code part} of {@code parts}. */
    void load(LogDb db, int part, int parts);

    /**
     * Where {@link #load} put each key: the catalog the transactions run on must place keys the same way. Every
     * workload but TPC-C homed by warehouse ({@code TpccSpec#placedByWarehouse}) keeps {@code key mod parts}.
     */
    default io.scythe.txn.Placement placement() {
        return io.scythe.txn.Placement.MOD;
    }

    /** The next transaction; routing keys and read-only flags come from the draws it makes anyway, never new ones. */
    Drawn draw(SplittableRandom random);

    /**
     * The next transaction of the client on compute node {@code computeNode} and global loop {@code loop} (the loop's
     * index over every compute node's loops): a workload that binds clients to data (TPC-C's home warehouse per server
     * or per loop) reads them; the others ignore them ({@link #draw(SplittableRandom)} by default).
     */
    default Drawn draw(final SplittableRandom random, final int computeNode, final int loop) {
        return draw(random);
    }

    /** The conserved quantity, counted directly on the memory nodes (after a run). */
    long total(List<LogDb> dbs);

    /**
     * The workload's own consistency conditions, checked on the memory nodes after a run: condition name -&gt; the
     * violations found (an empty list when it holds). None by default: the conserved quantity is the check.
     */
    default Map<String, List<String>> consistency(final List<LogDb> dbs) {
        return Map.of();
    }

    /**
     * The conditions that only serializability keeps, named as {@link #consistency} names them or as
     * {@link #quantity()} (when the conserved quantity counts their violations): write skew breaks them, which
     * snapshot isolation allows, so a protocol that promises snapshot isolation only
     * ({@code Protocol#snapshotIsolation}) is not judged on them. None by default.
     */
    default java.util.Set<String> writeSkewConditions() {
        return java.util.Set.of();
    }

    /**
     * Whether a commit refused on a duplicate key is one of this workload's expected outcomes (TATP's
     * InsertCallForwarding of a row that exists: the spec's "failed insert") rather than a transaction that gave up.
     * Such aborts are then counted like user rollbacks: completed, not aborted attempts.
     */
    default boolean duplicateKeyIsAnOutcome() {
        return false;
    }
}
