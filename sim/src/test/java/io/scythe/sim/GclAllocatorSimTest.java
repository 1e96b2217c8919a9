package io.scythe.sim;

import io.scythe.txn.selcc.Gcl;
import io.scythe.txn.selcc.GlobalPointer;
import io.vertx.core.Future;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Allocate/Free of global cache lines (SELCC Table 1) from several compute nodes at once, on SELCC and on SEL: a line
 * is never handed to two owners while allocated, an allocated line reads zero (fresh, or freed zeroed), a line freed
 * by one loop comes back to that loop, and a full region fails allocations with a clear error.
 */
class GclAllocatorSimTest extends SimVertxTest {
    /** The lines a client holds, by its random stream (one per client). */
    private static final class Owner {
        final List<Long> lines = new ArrayList<>();
    }

    @ParameterizedTest(name = "{0}, {1} lines per memory node")
    @CsvSource({
        "selcc-2pl, 4096",
        "sel-2pl, 4096",
        "selcc-2pl, 100",
    })
    void shouldNeverHandOneLineToTwoOwners(final String protocol, final long lines) throws Exception {
        final TreeSim.Spec spec = new TreeSim.Spec(1, 256, lines, 0.7);
        final Map<Long, SplittableRandom> live = new HashMap<>();
        final Map<SplittableRandom, Owner> owners = new IdentityHashMap<>();
        final List<String> wrong = new ArrayList<>();
        final long[] counts = new long[3];
        final String kind = TreeSim.kind(protocol);
        final Simulation.Operation op = (runtime, random) -> {
            final Owner o = owners.computeIfAbsent(random, r -> new Owner());
            final Gcl gcl = Gcl.of(kind, runtime);
            final long start = runtime.timers().nowNs();
            if (!o.lines.isEmpty() && random.nextInt(3) == 0) { // free one of its lines
                final long line = o.lines.remove(random.nextInt(o.lines.size()));
                return gcl.xLock(line).map(h -> {
                    live.remove(line);
                    gcl.free(h);
                    counts[1]++;
                    return runtime.timers().nowNs() - start;
                });
            }
            return gcl.allocate().compose(line -> {
                if (live.put(line, random) != null) {
                    wrong.add(GlobalPointer.toString(line) + " handed out twice");
                }
                o.lines.add(line);
                return gcl.xLock(line);
            }).map(h -> {
                for (int i = 0; i < h.data().capacity(); i += 8) {
                    if (h.data().getLong(i) != 0) {
                        wrong.add(GlobalPointer.toString(h.gaddr()) + " allocated with data at " + i);
                        break;
                    }
                }
                h.data().putLong(0, h.gaddr());
                h.written(0, 8);
                gcl.unlock(h);
                counts[0]++;
                return runtime.timers().nowNs() - start;
            }).recover(e -> {
                if (String.valueOf(e.getMessage()).contains("the GCL region is full")) {
                    counts[2]++;
                    return runtime.timers().after(1000).map(v -> runtime.timers().nowNs() - start);
                }
                return Future.failedFuture(e);
            });
        };
        final SimOptions options = new SimOptions().protocol(protocol).computeNodes(3).loopsPerComputeNode(2)
            .clientsPerComputeNode(4).memoryNodes(2).durationNs(1_000_000).seed(7);
        final SimResult result = new Simulation(options, spec).operation(op).run(vertx);
        assertThat(wrong).isEmpty();
        assertThat(result.invariantsOk()).as(result.run().toJson().encode()).isTrue();
        assertThat(counts[0]).as("allocations").isGreaterThan(100);
        assertThat(counts[1]).as("frees").isGreaterThan(30);
        if (lines < 1000) {
            assertThat(counts[2]).as("allocations refused by a full region").isPositive();
        }
        final TreeSim.Walk walk = spec.walk();
        assertThat(walk.latchesHeld()).as("latch words left set").isZero();
    }
}
