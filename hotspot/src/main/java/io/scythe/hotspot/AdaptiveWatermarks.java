package io.scythe.hotspot;

import org.agrona.collections.Long2LongHashMap;

/**
 * Per-object cold watermarks that follow observed aborts (Scythe §6 leaves thresholds tuned by hand as future work):
 * an object whose COLD transactions keep aborting on validation gets a lower cold watermark, so transactions on it
 * switch to TOCC earlier; one whose transactions commit gets its watermark back towards the configured one. Kept
 * per object in a bounded table (least recently adjusted objects are forgotten wholesale when it fills). Loop-confined.
 */
public final class AdaptiveWatermarks {
    private final Watermarks base;
    private final int capacity;
    private final Long2LongHashMap scores = new Long2LongHashMap(0);

    public AdaptiveWatermarks(final Watermarks base, final int capacity) {
        this.base = base;
        this.capacity = capacity;
    }

    /** The cold watermark to use for {@code object} now. */
    public int cold(final long object) {
        final long score = scores.get(object);
        // Every 2 net aborts lower the watermark by one, down to 0 (always TOCC).
        return (int) Math.max(0, base.cold() - score / 2);
    }

    /** A COLD transaction touching {@code object} aborted because of a conflict on it. */
    public void aborted(final long object) {
        if (scores.size() >= capacity && !scores.containsKey(object)) {
            scores.clear();
        }
        scores.put(object, Math.min(2L * base.cold(), scores.get(object) + 1));
    }

    /** A transaction touching {@code object} committed. */
    public void committed(final long object) {
        final long score = scores.get(object);
        if (score > 1) {
            scores.put(object, score - 1);
        } else if (score == 1) {
            scores.remove(object); // 0 is the table's missing value
        }
    }

    public Watermarks base() {
        return base;
    }
}
