package io.scythe.cluster;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The phases of a node's start, timed for its {@code started:} line (issue 23 section 3: where a restart's 30 s go),
 * and the start's stop as soon as it knows it must fail: at the end of each phase {@code abandon} is asked, and a
 * reason ends the start there (a CN whose epoch claim was lost, {@link EpochClaims}, ran its tables, TSO and
 * coordinators, seconds each under load, only to fail its last check).
 */
final class StartPhases {
    private final StringBuilder done = new StringBuilder();
    private final LongSupplier clockNs;
    private final Supplier<String> abandon;
    private long mark;

    /** Phases timed by {@code clockNs} from now; {@code abandon} says why the start must stop (null: go on). */
    StartPhases(final LongSupplier clockNs, final Supplier<String> abandon) {
        this.clockNs = clockNs;
        this.abandon = abandon;
        this.mark = clockNs.getAsLong();
    }

    /** Ends phase {@code name}; throws IllegalStateException with the reason when the start must stop. */
    void end(final String name) {
        final long now = clockNs.getAsLong();
        done.append(done.isEmpty() ? "" : ", ").append(name).append(' ')
            .append(TimeUnit.NANOSECONDS.toMillis(now - mark)).append(" ms");
        mark = now;
        final String why = abandon.get();
        if (why != null) {
            throw new IllegalStateException(why + " (found by the end of its start's " + name + " phase, after "
                + done + ")");
        }
    }

    /** The phases ended so far with their times, for the {@code started:} line. */
    @Override
    public String toString() {
        return done.toString();
    }
}
