package io.scythe.txn.aurogon;

/**
 * 2LClock's piecewise mapping (§5.1, Fig. 6(a)) from one clock (x) to another (y), fed with pairs as they are
 * measured.
 * Time is cut into slices of {@code sliceNs} of x; when a slice is over (the first pair of a later slice arrives), its
 * pairs are filtered (those whose quality figure, the probe's duration or round trip, is more than twice the slice's
 * best plus {@code slackNs} are dropped: the paper's duration filter for CPU-NIC pairs and our stand-in for its SVM
 * filter of NIC-NIC probes), fitted by least squares, and the fitted line's value at the slice's midpoint is
 * {@code M_i}. The anticipated point {@code A_i} lies on the line through {@code M_{i-1}} and {@code M_i}, at the end
 * of the slice that follows the one just closed (the digest's inference: so that a mapping exists for the slice being
 * measured), and the mapping is the polyline through successive {@code A_i}: continuous across slice boundaries, with
 * the last segment extrapolated until the next point exists. Before two slices are fitted it is an offset (the last
 * pair's y - x). Loop-confined.
 *
 * <p><b>Bounds</b> (issue 20/23: the 1 ms error {@code AurogonModule.CLUSTER_2LCLOCK_ERROR_NS} that a memory node's
 * promotion floors reads with was assumed, not enforced). Every rate this mapping estimates (a slice's fitted slope,
 * the slope between two midpoints) is clamped to {@code 1 +- }{@link #MAX_RATE_ERROR}: two clocks each within the
 * fabric's {@code ClockDeviation.MAX_DRIFT_PPM} of true time run at most twice that apart, so a rate outside is
 * noise (a probe stalled at a slice's edge). Past the last segment's end the mapping goes on at that clamped rate
 * (not the segment's own slope, which also carries the correction of the previous segment's error), so its error
 * grows at most {@code 2 * MAX_RATE_ERROR} per nanosecond; {@link #synchronised} is false once {@code x} is more than
 * {@link #MAX_EXTRAPOLATION_NS} past both the segment's end and the newest pair (that bound keeps the growth under
 * {@link #EXTRAPOLATION_BUDGET_NS}). A newer pair than the segment (after an idle gap: probes ride on timestamp
 * requests) is served as an offset until slices are fitted again. Before any pair the mapping is the identity: the
 * two clocks' own distance, which the promotion's bound counts separately (the configured NIC clock spread).
 */
final class PiecewiseMapping {
    /**
     * Largest rate error between two clocks: each is within {@code ClockDeviation.MAX_DRIFT_PPM} (1000 ppm, twice
     * ntpd's MAXFREQ) of true time, the fabric refusing more, so their rates differ by at most twice that.
     */
    static final double MAX_RATE_ERROR = 2 * io.scythe.fabric.ClockDeviation.MAX_DRIFT_PPM / 1e6;
    /**
     * How much of 2LClock's error one mapping's extrapolation may add (a quarter of the 1 ms: two mappings, F1 and F2,
     * compose; the rest is the probes' round-trip asymmetry).
     */
    static final long EXTRAPOLATION_BUDGET_NS = 250_000;
    /**
     * Longest extrapolation served: {@link #EXTRAPOLATION_BUDGET_NS} / (2 {@link #MAX_RATE_ERROR}) (62.5 ms): the
     * true and the estimated rate both within {@code 1 +- MAX_RATE_ERROR}, the error grows at most twice that per ns.
     */
    static final long MAX_EXTRAPOLATION_NS = (long) (EXTRAPOLATION_BUDGET_NS / (2 * MAX_RATE_ERROR));

    private final long sliceNs;
    private final long slackNs;
    private static final int MAX_PAIRS = 256;
    private final long[] xs = new long[MAX_PAIRS];
    private final long[] ys = new long[MAX_PAIRS];
    private final long[] quality = new long[MAX_PAIRS];
    private int pairs;
    private long slice = Long.MIN_VALUE;
    private boolean haveMidpoint;
    private double midX;
    private double midY;
    /** The current segment, from (ax, ay) to (bx, by); none until two slices are fitted. */
    private boolean haveSegment;
    private double ax;
    private double ay;
    private double bx;
    private double by;
    /** The clamped rate of the last fit (slope between the last two midpoints): the extrapolation's past bx. */
    private double rate = 1.0;
    private boolean haveOffset;
    private long offset;
    /** The newest pair's x. */
    private long lastX;
    private long slicesFitted;
    private long dropped;

    PiecewiseMapping(final long sliceNs, final long slackNs) {
        if (sliceNs <= 0 || slackNs < 0) {
            throw new IllegalArgumentException("2LClock slices of " + sliceNs + " ns, slack " + slackNs + " ns");
        }
        this.sliceNs = sliceNs;
        this.slackNs = slackNs;
    }

    /** A measured pair: {@code x} maps to {@code y}, measured with uncertainty figure {@code q} (lower is better). */
    void add(final long x, final long y, final long q) {
        final long s = Math.floorDiv(x, sliceNs);
        if (s != slice) {
            if (pairs > 0 && s > slice) {
                close();
            }
            if (s > slice || pairs == 0) {
                slice = s;
                pairs = 0;
            }
        }
        if (s == slice && pairs < MAX_PAIRS) {
            xs[pairs] = x;
            ys[pairs] = y;
            quality[pairs] = q;
            pairs++;
        }
        // The offset (what is served after an idle gap, before slices are fitted again) takes one pair unfiltered:
        // only one as good as the last closed slice's filter would keep (issue 20 review: a stalled probe's pair,
        // its round trip many times the usual, was served as the offset). Refused, the mapping stays as stale as it
        // was, and the next reading probes again.
        if (lastSliceBest == Long.MAX_VALUE || q <= 2 * lastSliceBest + slackNs) {
            haveOffset = true;
            offset = y - x;
            lastX = x;
        } else {
            offsetsRefused++;
        }
    }

    /** The best quality figure of the last closed slice (none yet: {@code Long.MAX_VALUE}). */
    private long lastSliceBest = Long.MAX_VALUE;
    private long offsetsRefused;

    /** Pairs not taken as the offset for being far worse than the last slice's best (tests, reports). */
    long offsetsRefused() {
        return offsetsRefused;
    }

    /** {@code r} within {@code 1 +- MAX_RATE_ERROR}. */
    static double clampRate(final double r) {
        return Math.max(1 - MAX_RATE_ERROR, Math.min(1 + MAX_RATE_ERROR, r));
    }

    private void close() {
        long best = Long.MAX_VALUE;
        for (int i = 0; i < pairs; i++) {
            best = Math.min(best, quality[i]);
        }
        lastSliceBest = best;
        final long limit = 2 * best + slackNs;
        final double base = (double) slice * sliceNs;
        double n = 0;
        double sx = 0;
        double sy = 0;
        double sxx = 0;
        double sxy = 0;
        for (int i = 0; i < pairs; i++) {
            if (quality[i] > limit) {
                dropped++;
                continue;
            }
            final double x = xs[i] - base; // relative to the slice: keeps the sums' precision
            final double y = ys[i] - base;
            n++;
            sx += x;
            sy += y;
            sxx += x * x;
            sxy += x * y;
        }
        if (n == 0) {
            return;
        }
        final double variance = n * sxx - sx * sx;
        final double slope = clampRate(n > 1 && variance > 1e-9 ? (n * sxy - sx * sy) / variance : 1.0);
        final double intercept = (sy - slope * sx) / n;
        final double half = sliceNs / 2.0;
        final double mx = base + half;
        final double my = base + intercept + slope * half;
        if (haveMidpoint && mx > midX) {
            final double k = clampRate((my - midY) / (mx - midX));
            rate = k;
            final double nextEnd = (double) (slice + 2) * sliceNs;
            final double anticipated = my + k * (nextEnd - mx);
            if (haveSegment) {
                final double startX = Math.min(bx, (double) (slice + 1) * sliceNs);
                ay = valueAt(startX);
                ax = startX;
            } else {
                ax = (double) (slice + 1) * sliceNs;
                ay = my + k * (ax - mx);
            }
            bx = nextEnd;
            by = anticipated;
            haveSegment = bx > ax;
        }
        haveMidpoint = true;
        midX = mx;
        midY = my;
        slicesFitted++;
    }

    private double valueAt(final double x) {
        return x <= bx ? ay + (by - ay) * (x - ax) / (bx - ax) : by + rate * (x - bx);
    }

    /**
     * {@code x} mapped (as a long: nanoseconds of the target clock): on the polyline, past its end at the last
     * clamped rate; by the newest pair's offset when that pair is newer than the polyline's extrapolation bound.
     */
    long map(final long x) {
        if (haveSegment && (x - bx <= MAX_EXTRAPOLATION_NS || x - lastX > MAX_EXTRAPOLATION_NS)) {
            return Math.round(valueAt(x));
        }
        return haveOffset ? x + offset : x;
    }

    /**
     * Whether {@link #map}{@code (x)} is within the extrapolation bound: the polyline's end or the newest pair at
     * most {@link #MAX_EXTRAPOLATION_NS} before {@code x}. True before any pair (the identity: see the class doc).
     */
    boolean synchronised(final long x) {
        return !haveOffset || haveSegment && x - bx <= MAX_EXTRAPOLATION_NS || x - lastX <= MAX_EXTRAPOLATION_NS;
    }

    /** How far past both the polyline's end and the newest pair {@code x} lies (0 when within either). */
    long staleNs(final long x) {
        if (!haveOffset) {
            return 0;
        }
        final long sinceLast = x - lastX;
        return Math.max(0, haveSegment ? Math.min(sinceLast, (long) (x - bx)) : sinceLast);
    }

    long slicesFitted() {
        return slicesFitted;
    }

    long dropped() {
        return dropped;
    }
}
