package io.scythe.fabric;

import io.vertx.core.json.JsonObject;

import java.util.Set;
import java.util.TreeSet;

/**
 * How far one clock is from true time (the fabric's {@link Fabric#clock() clock}): {@code offsetNs} ahead of it when
 * the clock starts, and running {@code driftPpm} parts per million fast (negative: slow), so that {@code t} ns of true
 * time later it is {@code offsetNs + t * driftPpm / 1e6} ahead. Real nodes' clocks differ in both: NIC clocks kept by
 * PTP agree within ~100 ns, host clocks under NTP within about a millisecond, and an oscillator left alone drifts
 * tens of ppm ({@code conf/fabric/clocks.yaml} has the sources).
 */
public record ClockDeviation(long offsetNs, double driftPpm) {
    /** A perfect clock: it reads true time. */
    public static final ClockDeviation NONE = new ClockDeviation(0, 0);
    /** Largest offset accepted (an hour): far beyond any synchronised clock, small enough never to overflow. */
    public static final long MAX_OFFSET_NS = 3_600_000_000_000L;
    /** Largest drift accepted: twice the 500 ppm past which NTP declares a clock broken (ntpd's MAXFREQ). */
    public static final double MAX_DRIFT_PPM = 1000;

    private static final Set<String> KEYS = Set.of("offsetNs", "driftPpm");

    /** @throws IllegalArgumentException when the offset or drift is out of range (or the drift not finite) */
    public ClockDeviation {
        if (offsetNs < -MAX_OFFSET_NS || offsetNs > MAX_OFFSET_NS) {
            throw new IllegalArgumentException("clock offsetNs=" + offsetNs + " must be within +-" + MAX_OFFSET_NS);
        }
        if (!(Math.abs(driftPpm) <= MAX_DRIFT_PPM)) {
            throw new IllegalArgumentException("clock driftPpm=" + driftPpm + " must be within +-" + MAX_DRIFT_PPM);
        }
    }

    public boolean isNone() {
        return offsetNs == 0 && driftPpm == 0;
    }

    /** Reads {@code {"offsetNs", "driftPpm"}} (both optional, 0 by default); {@code what} names it in errors. */
    public static ClockDeviation fromJson(final JsonObject json, final String what) {
        final Set<String> unknown = new TreeSet<>(json.fieldNames());
        unknown.removeAll(KEYS);
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException("unknown keys " + unknown + " in " + what + "; known keys are "
                + new TreeSet<>(KEYS));
        }
        final Object offset = json.getValue("offsetNs", 0L);
        final Object drift = json.getValue("driftPpm", 0.0);
        if (!(offset instanceof Number) || ((Number) offset).doubleValue() != ((Number) offset).longValue()) {
            throw new IllegalArgumentException(what + ".offsetNs=" + offset + " must be an integer");
        }
        if (!(drift instanceof Number)) {
            throw new IllegalArgumentException(what + ".driftPpm=" + drift + " must be a number");
        }
        try {
            return new ClockDeviation(((Number) offset).longValue(), ((Number) drift).doubleValue());
        } catch (final IllegalArgumentException e) {
            throw new IllegalArgumentException(what + ": " + e.getMessage(), e);
        }
    }

    public JsonObject toJson() {
        return new JsonObject().put("offsetNs", offsetNs).put("driftPpm", driftPpm);
    }
}
