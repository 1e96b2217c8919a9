package io.scythe.txn.farm;

import io.scythe.tso.PhysicalClockOracle;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.runtime.TimestampOracle;

/** FaRMv2-style timestamps per loop: its physical clock with the uncertainty wait, a runtime extension. */
final class PhysicalClock {
    private static final TxnRuntime.Key<TimestampOracle> KEY = new TxnRuntime.Key<>("farm-physical-clock");

    private PhysicalClock() {
    }

    /** {@code runtime}'s loop's clock (made on first use; its node id is the loop number of the id base). */
    static TimestampOracle of(final TxnRuntime runtime) {
        return runtime.extension(KEY, rt -> new PhysicalClockOracle(rt.timers(),
            PhysicalClockOracle.DEFAULT_UNCERTAINTY_NS, (int) ((rt.idBase() >>> 40) & 0xff)));
    }
}
