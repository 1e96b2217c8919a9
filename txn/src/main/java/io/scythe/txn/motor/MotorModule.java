package io.scythe.txn.motor;

import io.scythe.txn.Protocol;
import io.scythe.txn.ford.CasLockModule;
import io.scythe.txn.lotus.CvtProtocol;

import java.util.List;

/**
 * Motor (package doc) as a protocol module ({@code motor}; {@code motor:versions=N} keeps N versions per record,
 * default {@link MotorCvt#DEFAULT_VERSIONS} as in Lotus's evaluation, Motor's own SmallBank 3). Its lock is FORD's CAS
 * word ({@link CasLockModule}: the lock kind, the memory-node step and the end-of-run probe).
 */
public final class MotorModule extends CasLockModule {
    /** Motor with {@link MotorCvt#DEFAULT_VERSIONS} versions per record. */
    public static final Protocol MOTOR = motor("motor", MotorCvt.DEFAULT_VERSIONS);

    static final String CRASH_REFUSAL = "motor does not recover a crashed compute node yet (issue 19): the shared "
        + "recovery rolls its redo records forward into the home only, not into its CVT cells, so a reader below the "
        + "recovered version would miss it";

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

    /** Only asked for by name until its crash recovery exists (issue 19). */
    @Override
    public boolean listed() {
        return false;
    }

    @Override
    public String crashRefusal(final Protocol protocol) {
        return CRASH_REFUSAL;
    }

    @Override
    public String clusterRefusal(final Protocol protocol) {
        return CRASH_REFUSAL + "; cluster nodes can die, so they do not run it";
    }
}
