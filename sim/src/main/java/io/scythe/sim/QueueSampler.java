package io.scythe.sim;

import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.txn.scythe.TakeoutLockKind;
import io.vertx.core.json.JsonObject;
import org.agrona.collections.Long2LongHashMap;

import java.util.List;

/**
 * Samples every object's Takeout Lock queue ({@code lower - upper}: the transactions queued on it, Scythe Eq. 1) and
 * keeps each object's longest, to reproduce Table 2 (queue length against the Zipf factor). Table 2's access-rate
 * columns come from the same words: {@code lower} counts the tickets ever granted on an object, so its growth from
 * the first sample to the end is the object's lock grants in the measured window.
 */
final class QueueSampler {
    private final Long2LongHashMap longest = new Long2LongHashMap(0);
    /** Each object's queue summed over the samples (its mean queue is this over {@code samples}). */
    private final Long2LongHashMap queuedSumById = new Long2LongHashMap(0);
    /** Each object's {@code lower} at the first sample (the start of the measured window). */
    private final Long2LongHashMap lowerAtStart = new Long2LongHashMap(-1);
    private long samples;
    private long queuedSum;
    private long objectSamples;

    /** An object's header at {@code header} of {@code table}'s memory; {@code id} names it across memory nodes. */
    @FunctionalInterface
    private interface ObjectVisitor {
        void visit(Table table, int header, long id);
    }

    /** Every object slot of every table of every memory node (slots with a protocol's extra room too). */
    private static void forEachObject(final List<LogDb> dbs, final ObjectVisitor visitor) {
        for (int n = 0; n < dbs.size(); n++) {
            for (final Table t : dbs.get(n).tables()) {
                // Slots with the room a protocol asked for (LogDb#objectRoom) too.
                final int slot = t.objectSlotBytes();
                final long tableId = ((long) n << 56) | ((long) t.describe().schema().id() << 40);
                for (long at = 0; at + slot <= t.objectMemory().capacity(); at += slot) {
                    visitor.visit(t, (int) at, tableId | (at / slot));
                }
            }
        }
    }

    void sample(final List<LogDb> dbs) {
        samples++;
        forEachObject(dbs, (t, header, id) -> {
            if (samples == 1) {
                lowerAtStart.put(id, lower(t, header));
            }
            final long queued = TakeoutLockKind.queued(t.objectMemory(), header);
            objectSamples++;
            if (queued > 0) {
                queuedSum += queued;
                queuedSumById.put(id, queuedSumById.get(id) + queued);
                if (queued > longest.get(id)) {
                    longest.put(id, queued);
                }
            }
        });
    }

    private static long lower(final Table t, final int header) {
        return t.objectMemory().getLongVolatile(header + ObjectLayout.LOWER_OFFSET);
    }

    /** What was sampled, and the two objects with the most lock grants since the first sample ({@code dbs} now). */
    JsonObject toJson(final List<LogDb> dbs) {
        final long[] grants = new long[3]; // all, most, second most
        if (samples > 0) {
            forEachObject(dbs, (t, header, id) -> {
                // -1: a slot not there at the first sample
                final long g = lower(t, header) - Math.max(0, lowerAtStart.get(id));
                grants[0] += g;
                if (g > grants[1]) {
                    grants[2] = grants[1];
                    grants[1] = g;
                } else if (g > grants[2]) {
                    grants[2] = g;
                }
            });
        }
        final double all = Math.max(1, grants[0]);
        long mostQueued = 0;
        final Long2LongHashMap.ValueIterator sums = queuedSumById.values().iterator();
        while (sums.hasNext()) {
            mostQueued = Math.max(mostQueued, sums.nextValue());
        }
        return toJson().put("lock_grants", grants[0]).put("highest_grant_share", grants[1] / all)
            .put("second_highest_grant_share", grants[2] / all)
            .put("longest_mean_queue", samples == 0 ? 0.0 : (double) mostQueued / samples);
    }

    private JsonObject toJson() {
        long first = 0;
        long second = 0;
        long third = 0;
        final Long2LongHashMap.ValueIterator it = longest.values().iterator();
        while (it.hasNext()) {
            final long q = it.nextValue();
            if (q > first) {
                third = second;
                second = first;
                first = q;
            } else if (q > second) {
                third = second;
                second = q;
            } else if (q > third) {
                third = q;
            }
        }
        return new JsonObject().put("samples", samples).put("longest", first).put("second_longest", second)
            .put("others_at_most", third).put("objects_ever_queued", longest.size())
            .put("mean_queued_per_object", objectSamples == 0 ? 0.0 : (double) queuedSum / objectSamples);
    }
}
