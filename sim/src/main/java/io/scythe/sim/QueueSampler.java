package io.scythe.sim;

import io.scythe.storage.LogDb;
import io.scythe.storage.Table;
import io.scythe.txn.scythe.TakeoutLockKind;
import io.vertx.core.json.JsonObject;
import org.agrona.collections.Long2LongHashMap;

import java.util.List;

/**
 * Samples every object's Takeout Lock queue ({@code lower - upper}: the transactions queued on it, Scythe Eq. 1) and
 * keeps each object's longest, to reproduce Table 2 (queue length against the Zipf factor).
 */
final class QueueSampler {
    private final Long2LongHashMap longest = new Long2LongHashMap(0);
    private long samples;
    private long queuedSum;
    private long objectSamples;

    void sample(final List<LogDb> dbs) {
        samples++;
        for (int n = 0; n < dbs.size(); n++) {
            for (final Table t : dbs.get(n).tables()) {
                // Slots with the room a protocol asked for (LogDb#objectRoom) too.
                final int slot = t.objectSlotBytes();
                final long tableId = ((long) n << 56) | ((long) t.describe().schema().id() << 40);
                for (long at = 0; at + slot <= t.objectMemory().capacity(); at += slot) {
                    final int o = (int) at;
                    final long queued = TakeoutLockKind.queued(t.objectMemory(), o);
                    objectSamples++;
                    if (queued > 0) {
                        queuedSum += queued;
                        final long id = tableId | (at / slot);
                        if (queued > longest.get(id)) {
                            longest.put(id, queued);
                        }
                    }
                }
            }
        }
    }

    JsonObject toJson() {
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
