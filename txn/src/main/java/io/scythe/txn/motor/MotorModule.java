package io.scythe.txn.motor;

import io.scythe.txn.Protocol;
import io.scythe.txn.ford.CasLockModule;
import io.scythe.txn.lotus.CvtProtocol;

import java.util.List;

/**
 * Motor (package doc) as a protocol module ({@code motor}; {@code motor:versions=N} keeps N versions per record,
 * default {@link MotorCvt#DEFAULT_VERSIONS} as in Lotus's evaluation, Motor's own SmallBank 3). Its lock is FORD's CAS
 * word ({@link CasLockModule}: the memory-node step and the end-of-run probe), its redo records' lock kind
 * {@link MotorLockKind} (recovery rolls a decided commit into the CVT too, and settles a promoted copy's CVT after a
 * memory node's failover). Cluster nodes run it (no compute-node peers: nothing of a dead node lives on the others; the
 * cluster's recovery duty rolls its redo records forward through that lock kind, as the embedded cluster does).
 */
public final class MotorModule extends CasLockModule {
    /** Motor with {@link MotorCvt#DEFAULT_VERSIONS} versions per record. */
    public static final Protocol MOTOR = motor("motor", MotorCvt.DEFAULT_VERSIONS);

    private static Protocol motor(final String name, final int versions) {
        return new CvtProtocol(name, versions, false, (runtime, hint) -> new MotorTxn(runtime, versions),
            MotorModule::configured);
    }

    private static Protocol configured(final String options) {
        final String o = options.trim();
        if (!o.startsWith("versions=")) {
            throw new IllegalArgumentException("protocol 'motor' takes versions=N (2 to 64), not '" + options + "'");
        }
        final int n;
        try {
            n = Integer.parseInt(o.substring("versions=".length()));
        } catch (final NumberFormatException e) {
            throw new IllegalArgumentException("protocol 'motor': versions=N needs a number, not '" + options + "'",
                e);
        }
        return motor("motor:versions=" + n, n);
    }

    @Override
    public String name() {
        return "motor";
    }

    @Override
    public List<Protocol> protocols() {
        return List.of(MOTOR);
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
