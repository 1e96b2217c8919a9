package io.scythe.sim;

import io.scythe.bench.workload.OltpSpec;
import io.scythe.storage.LogDb;
import io.vertx.core.json.JsonObject;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

/** A test's workload that is {@link #spec()} but for what it overrides (a planted lock, some draws replaced). */
interface DelegatingSpec extends OltpSpec {
    OltpSpec spec();

    @Override
    default String name() {
        return spec().name();
    }

    @Override
    default String quantity() {
        return spec().quantity();
    }

    @Override
    default JsonObject params() {
        return spec().params();
    }

    @Override
    default void load(final LogDb db, final int part, final int parts) {
        spec().load(db, part, parts);
    }

    @Override
    default io.scythe.txn.Placement placement() {
        return spec().placement();
    }

    @Override
    default Drawn draw(final SplittableRandom random) {
        return spec().draw(random);
    }

    @Override
    default Drawn draw(final SplittableRandom random, final int computeNode, final int loop) {
        return spec().draw(random, computeNode, loop);
    }

    @Override
    default long total(final List<LogDb> dbs) {
        return spec().total(dbs);
    }

    @Override
    default Map<String, List<String>> consistency(final List<LogDb> dbs) {
        return spec().consistency(dbs);
    }

    @Override
    default Set<String> writeSkewConditions() {
        return spec().writeSkewConditions();
    }

    @Override
    default boolean duplicateKeyIsAnOutcome() {
        return spec().duplicateKeyIsAnOutcome();
    }
}
