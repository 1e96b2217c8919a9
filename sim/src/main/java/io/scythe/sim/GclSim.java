package io.scythe.sim;

import io.scythe.bench.workload.GclSpec;

import java.util.IdentityHashMap;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * GAM's micro-benchmark in the simulator ({@code sim --workload gcl}; issue 21): {@link GclSpec}'s accesses as
 * {@link Simulation.Operation}s, each client (its random stream) keeping its last line for locality. The embedded
 * cluster runs the same accesses ({@code bench --workload gcl}).
 */
public final class GclSim {
    private GclSim() {
    }

    /**
     * The accesses of {@code cns} compute nodes of {@code loopsPerCn} loops on {@code spec}'s lines ({@link
     * GclSpec#accesses}); {@code kind} is the GCL layer ({@code selcc} or {@code sel}, {@link GclSpec#kind}).
     */
    public static Simulation.Operation accesses(final GclSpec spec, final String kind, final int cns,
                                                final int loopsPerCn, final int memoryNodes, final double readRatio,
                                                final double theta, final double sharing, final double locality,
                                                final long holdNs) {
        final GclSpec.Accesses accesses = spec.accesses(kind, cns, loopsPerCn, memoryNodes, readRatio, theta, sharing,
            locality, holdNs);
        final Map<SplittableRandom, GclSpec.Client> clients = new IdentityHashMap<>();
        return (runtime, random) -> accesses.next(clients.computeIfAbsent(random, r -> new GclSpec.Client()), runtime,
            random);
    }
}
