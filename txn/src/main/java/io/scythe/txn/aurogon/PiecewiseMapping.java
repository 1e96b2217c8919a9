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
 */
final class PiecewiseMapping {
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
    private boolean haveOffset;
    private long offset;
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
        haveOffset = true;
        offset = y - x;
    }

    private void close() {
        long best = Long.MAX_VALUE;
        for (int i = 0; i < pairs; i++) {
            best = Math.min(best, quality[i]);
        }
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
        final double slope = n > 1 && variance > 1e-9 ? (n * sxy - sx * sy) / variance : 1.0;
        final double intercept = (sy - slope * sx) / n;
        final double half = sliceNs / 2.0;
        final double mx = base + half;
        final double my = base + intercept + slope * half;
        if (haveMidpoint && mx > midX) {
            final double k = (my - midY) / (mx - midX);
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
        return ay + (by - ay) * (x - ax) / (bx - ax);
    }

    /** {@code x} mapped (as a long: nanoseconds of the target clock). */
    long map(final long x) {
        if (haveSegment) {
            return Math.round(valueAt(x));
        }
        return haveOffset ? x + offset : x;
    }

    long slicesFitted() {
        return slicesFitted;
    }

    long dropped() {
        return dropped;
    }
}
