package io.scythe.sim;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Seeds the long explorer runs (10,000 seeds per protocol and workload) once found failing, replayed with every
 * invariant and the history checker on. Each failed on the code before its fix; the simulator is deterministic, so
 * each replays exactly that run while the code around it is unchanged, and stays a contended run of its workload
 * after that.
 */
class RegressionSeedsTest extends SimVertxTest {
    @ParameterizedTest(name = "{0} {1} seed {2}")
    @CsvSource({
        // A lock CAS of farm-occ landed on a slot reclamation had just freed; the memory node reused the slot for an
        // insert and locked it; the attempt saw the wrong incarnation and released with a WRITE of 0, freeing the
        // inserter's lock: a reader then committed a read of the uncommitted insert (G1a). Fixed by releasing such a
        // word only by a CAS from the attempt's id (CasLockTxn#unlockIfOurs).
        "PHANTOM, farm-occ, 423",
    })
    void shouldReplayAFormerlyFailingSeedCleanly(final Explorer.Workload workload, final String protocol,
                                                 final long seed) throws Exception {
        final Explorer.Outcome o = Explorer.check(vertx, workload, Explorer.options(protocol, seed));
        assertThat(o.failure()).as(String.valueOf(o.failure())).isNull();
        assertThat(o.history().transactions()).isPositive();
    }
}
