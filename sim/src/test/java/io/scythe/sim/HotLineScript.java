package io.scythe.sim;

import io.scythe.bench.workload.GclSpec;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.selcc.Gcl;
import io.vertx.core.Future;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One hot line of the GCL API, scripted for SELCC's coherence tests ({@code SelccNewSharerSimTest},
 * {@code SelccHotLineFairnessSimTest}): one client a compute node, the first {@code writers} participants write (XLock,
 * counter + 1, XUnlock, 5-20 us apart), the others read (SLock, read, hold 0-1 us, SUnlock, {@code readerMin}-
 * {@code readerMax} us apart). The checked reader flags a value below the writes completed before its SLock was
 * granted and a write completed while it held the latch; both roles record their longest lock wait.
 */
final class HotLineScript {
    private final int writers;
    private final int readerMinNs;
    private final int readerSpanNs;
    long completed;
    long reads;
    long maxWriteWaitNs;
    long maxReadWaitNs;
    final List<Long> written = new ArrayList<>();
    final List<String> stale = new ArrayList<>();

    HotLineScript(final int writers, final int readerMinNs, final int readerMaxNs) {
        this.writers = writers;
        this.readerMinNs = readerMinNs;
        this.readerSpanNs = readerMaxNs - readerMinNs;
    }

    Future<Long> step(final TxnRuntime runtime, final SplittableRandom random) {
        final long start = runtime.timers().nowNs();
        final int role = runtime.peerLoops().number() - 1;
        final Gcl gcl = Gcl.of("selcc", runtime);
        final long x = gcl.region().pointer(0, 1);
        final long pause = role < writers ? 5_000 + random.nextInt(15_000) : readerMinNs + random.nextInt(readerSpanNs);
        final Future<?> done = runtime.timers().after(1 + pause).compose(p -> role < writers
            ? write(runtime, gcl, x) : read(runtime, gcl, x, random.nextInt(1_000)));
        return done.map(v -> runtime.timers().nowNs() - start);
    }

    /** The checks every run of the script passes: no stale read, writes 1, 2, 3, ..., none lost at the memory node. */
    void assertCoherent(final GclSpec spec) {
        assertThat(stale).as("reads that missed a write completed before their SLock was granted").isEmpty();
        assertThat(written).as("values written, in order").hasSize((int) completed);
        for (int i = 0; i < written.size(); i++) {
            assertThat(written.get(i)).as("write " + i + " (each write sees every earlier one)").isEqualTo(i + 1L);
        }
        assertThat(spec.counted()).as("the memory nodes' counter after the run").isEqualTo(completed);
    }

    private Future<Void> write(final TxnRuntime runtime, final Gcl gcl, final long x) {
        final long asked = runtime.timers().nowNs();
        return gcl.xLock(x).compose(h -> {
            maxWriteWaitNs = Math.max(maxWriteWaitNs, runtime.timers().nowNs() - asked);
            final long v = h.data().getLong(GclSpec.COUNTER) + 1;
            h.data().putLong(GclSpec.COUNTER, v);
            h.written(GclSpec.COUNTER, 8);
            return gcl.unlockWritten(h).map(u -> {
                written.add(v);
                completed++;
                return null;
            });
        });
    }

    private Future<Void> read(final TxnRuntime runtime, final Gcl gcl, final long x, final long holdNs) {
        final long asked = runtime.timers().nowNs();
        return gcl.sLock(x).compose(h -> {
            maxReadWaitNs = Math.max(maxReadWaitNs, runtime.timers().nowNs() - asked);
            final long floor = completed;
            final long v = h.data().getLong(GclSpec.COUNTER);
            reads++;
            if (v < floor) {
                stale.add("participant " + runtime.peerLoops().number() + " read " + v + " after " + floor
                    + " writes completed");
            }
            return runtime.timers().after(1 + holdNs).map(t -> {
                if (completed != floor) { // a writer held the line Exclusive beside this Shared latch
                    stale.add("participant " + runtime.peerLoops().number() + " held the line Shared (value " + v
                        + ") while " + (completed - floor) + " writes completed");
                }
                gcl.unlock(h);
                return null;
            });
        });
    }
}
