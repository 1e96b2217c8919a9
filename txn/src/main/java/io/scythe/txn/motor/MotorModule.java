package io.scythe.txn.motor;

import io.scythe.txn.Protocol;
import io.scythe.txn.ford.CasLockModule;
import io.scythe.txn.lotus.CvtProtocol;

import java.util.List;

/**
 * Motor (package doc) as a protocol module ({@code motor}, serializable; {@code motor-si}, snapshot isolation; each
 * taking {@code :versions=N} to keep N versions per record, default {@link MotorCvt#DEFAULT_VERSIONS} as in Lotus's evaluation, Motor's own SmallBank 3). Its lock is FORD's CAS
 * word ({@link CasLockModule}: the memory-node step and the end-of-run probe), its redo records' lock kind
 * {@link MotorLockKind} (recovery rolls a decided commit into the CVT too, and settles a promoted copy's CVT after a
 * memory node's failover). Cluster nodes run it (no compute-node peers: nothing of a dead node lives on the others; the
 * cluster's recovery duty rolls its redo records forward through that lock kind, as the embedded cluster does).
 */
public final class MotorModule extends CasLockModule {
    /** Motor with {@link MotorCvt#DEFAULT_VERSIONS} versions per record, serializable. */
    public static final Protocol MOTOR = motor("motor", MotorCvt.DEFAULT_VERSIONS, false);
    /**
     * The same under snapshot isolation ({@code motor-si}, named as Lotus's {@code lotus-si}): reads at T_start without
     * validation, first committer wins on written keys (package doc).
     */
    public static final Protocol MOTOR_SI = motor("motor-si", MotorCvt.DEFAULT_VERSIONS, true);

    private static Protocol motor(final String name, final int versions, final boolean si) {
        final String base = si ? "motor-si" : "motor";
        return new CvtProtocol(name, versions, si, (runtime, hint) -> new MotorTxn(runtime, versions, si),
            options -> configured(base, si, options));
    }

    private static Protocol configured(final String base, final boolean si, final String options) {
        final String o = options.trim();
        if (!o.startsWith("versions=")) {
            throw new IllegalArgumentException("protocol '" + base + "' takes versions=N (2 to 64), not '" + options
                + "'");
        }
        final int n;
        try {
            n = Integer.parseInt(o.substring("versions=".length()));
        } catch (final NumberFormatException e) {
            throw new IllegalArgumentException("protocol '" + base + "': versions=N needs a number, not '" + options
                + "'", e);
        }
        return motor(base + ":versions=" + n, n, si);
    }

    @Override
    public String name() {
        return "motor";
    }

    @Override
    public List<Protocol> protocols() {
        return List.of(MOTOR, MOTOR_SI);
    }

    /** Only asked for by name (a baseline, not one of the protocols every run compares). */
    @Override
    public boolean listed() {
        return false;
    }

    /** Its redo records' lock: FORD's CAS word whose roll-forward also writes the CVT ({@link MotorLockKind}). */
    @Override
    public List<io.scythe.txn.spi.LockKind> lockKinds() {
        return List.of(MotorLockKind.INSTANCE);
    }
}
