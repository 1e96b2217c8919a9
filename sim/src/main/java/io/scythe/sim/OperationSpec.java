package io.scythe.sim;

import io.scythe.bench.workload.OltpSpec;
import io.scythe.storage.LogDb;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A workload the simulator runs as {@link Simulation.Operation}s, not transactions (the B-link tree's, the GCL
 * micro-benchmark's): it draws none, has no quantity to conserve, and keeps its memory nodes for end-of-run checks.
 */
abstract class OperationSpec implements OltpSpec {
    /** The memory nodes, by partition, as {@link #load} met them. */
    protected final List<LogDb> dbs = new ArrayList<>();

    /** Keeps memory node {@code db} of partition {@code part} (loads may run on several threads). */
    protected final void keep(final LogDb db, final int part) {
        synchronized (dbs) {
            while (dbs.size() <= part) {
                dbs.add(null);
            }
            dbs.set(part, db);
        }
    }

    /** What one operation is, for the refusal to draw a transaction. */
    protected abstract String operations();

    @Override
    public String quantity() {
        return "none";
    }

    @Override
    public Drawn draw(final SplittableRandom random) {
        throw new UnsupportedOperationException("the " + name() + " workload runs " + operations()
            + ", not transactions");
    }

    @Override
    public long total(final List<LogDb> ignored) {
        return 0;
    }
}
