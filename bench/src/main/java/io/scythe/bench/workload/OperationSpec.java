package io.scythe.bench.workload;

import io.scythe.storage.LogDb;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A workload run as operations, not transactions (the simulator's B-link tree, the GCL micro-benchmark of the
 * simulator and the bench): it draws none, has no quantity to conserve, and keeps its memory nodes for end-of-run checks.
 */
public abstract class OperationSpec implements OltpSpec {
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
