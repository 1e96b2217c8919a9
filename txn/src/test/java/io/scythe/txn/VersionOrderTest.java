package io.scythe.txn;

import io.scythe.storage.ObjectLayout;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.List;
import java.util.Queue;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An object's versions strictly increase in the order they are installed, whatever path installs them: no commit
 * installs the version it overwrote, so a reader that validates an unchanged version read the newest value.
 */
class VersionOrderTest extends OnRowsNode {

    /** Hands out the timestamps it was given, in order: the interleaving of a trace, replayed. */
    private static io.scythe.txn.runtime.TimestampOracle scripted(final long... timestamps) {
        final Queue<Long> next = new ArrayDeque<>();
        for (final long ts : timestamps) {
            next.add(ts);
        }
        return new io.scythe.txn.runtime.TimestampOracle() {
            @Override
            public Future<Long> next() {
                final Long ts = next.poll();
                return ts == null ? Future.failedFuture(new IllegalStateException("script used up"))
                    : Future.succeededFuture(ts);
            }

            @Override
            public String name() {
                return "scripted";
            }
        };
    }

    private static UnsafeBuffer value(final long v) {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[8]);
        b.putLong(0, v);
        return b;
    }

    /**
     * The trace of the review: a delete at ts 50, a blind insert (ts 10) revives the key (the memory node's version
     * 51) and installs 52; a transaction with timestamp 52 then writes over version 52. Installing its timestamp
     * alone, it wrote version 52 again, and a reader U that had read version 52 before that write validated against
     * an unchanged version and committed its read-modify-write on the stale value: one increment lost.
     */
    @Test
    void shouldNeverInstallTheVersionItOverwroteSoAStaleReaderFailsValidation() throws Exception {
        // Timestamps in the order the attempts fetch them: D and I at commit, then T and U at commit too (an OCC
        // attempt fetches at its first readForUpdate or at commit, not at a plain read), so T gets 52 and U 60.
        final List<Object> seen = node.on(scripted(50, 10, 52, 60), rt -> {
            final Txn d = io.scythe.txn.spi.ProtocolRegistry.protocol("scythe").begin(rt, false);
            return d.read(T, 3).compose(v -> {
                d.delete(T, 3);
                return d.commit();
            }).compose(x -> {
                final Txn i = io.scythe.txn.spi.ProtocolRegistry.protocol("scythe").begin(rt, false);
                i.insert(T, 3, value(100), 0, 8);
                return i.commit();
            }).compose(x -> {
                final Txn u = io.scythe.txn.spi.ProtocolRegistry.protocol("scythe").begin(rt, false);
                return u.read(T, 3).compose(uRead -> {
                    final long afterInsert = node.versionOf(3);
                    final Txn t = io.scythe.txn.spi.ProtocolRegistry.protocol("scythe").begin(rt, false);
                    return t.read(T, 3).compose(tRead -> {
                        t.write(T, 3, value(tRead.getLong(0) + 1), 0, 8);
                        return t.commit();
                    }).compose(tCommitted -> {
                        u.write(T, 3, value(uRead.getLong(0) + 1), 0, 8);
                        return u.commit().transform(ar -> Future.succeededFuture(List.<Object>of(afterInsert,
                            node.versionOf(3), ar.succeeded() ? "committed"
                                : ((AbortException) ar.cause()).reason().label(), node.valueOf(3))));
                    });
                });
            });
        });
        // The insert installed 52 (above the revive's 51); T, with timestamp 52, installed 53, not 52 again.
        assertThat(seen.get(0)).isEqualTo(52L);
        assertThat(seen.get(1)).isEqualTo(53L);
        assertThat(seen.get(2)).as("U read version 52, which T overwrote").isEqualTo(AbortReason.VALIDATION.label());
        assertThat(seen.get(3)).isEqualTo(101L);
    }

    @Test
    void shouldRaiseTheVersionAboveTheOneUnderTheLock() {
        assertThat(ObjectLayout.versionAfter(60, 52)).isEqualTo(60);
        assertThat(ObjectLayout.versionAfter(52, 52)).isEqualTo(53);
        assertThat(ObjectLayout.versionAfter(10, 52)).isEqualTo(53);
    }
}
