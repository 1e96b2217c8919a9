package io.scythe.txn.scythe;

import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.OneMemoryNode;
import io.scythe.txn.TxnRuntime;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/** Scythe's rules between transactions, one scenario at a time on one loop: TOCC order, Fig. 17, the heat switch. */
class ScytheTxnTest {
    private static final String T = "accounts";
    private OneMemoryNode node;
    private Table table;

    @BeforeEach
    void setUp() throws Exception {
        node = new OneMemoryNode(T, 16);
        table = node.table;
    }

    @AfterEach
    void tearDown() throws Exception {
        node.close();
    }

    private <R> R on(final Function<TxnRuntime, Future<R>> body) throws Exception {
        return node.on(body);
    }

    private static UnsafeBuffer money(final long v) {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[8]);
        b.putLong(0, v);
        return b;
    }

    /** The reason an attempt's future failed with, or "ok". */
    private static Future<String> outcome(final Future<?> f) {
        return f.transform(ar -> Future.succeededFuture(ar.succeeded() ? "ok"
            : ar.cause() instanceof AbortException a ? a.reason().label() : ar.cause().toString()));
    }

    private long queued(final long key) {
        final int at = table.offsetOf(table.lookup(key));
        return table.objectMemory().getLongVolatile(at + ObjectLayout.LOWER_OFFSET)
            - table.objectMemory().getLongVolatile(at + ObjectLayout.UPPER_OFFSET);
    }

    @Test
    void shouldAbortAToccTransactionThatMeetsAYoungerOneInTimestampOrder() throws Exception {
        final List<String> result = on(rt -> {
            final ScytheTxn older = new ScytheTxn(rt, true);
            final ScytheTxn younger = new ScytheTxn(rt, true);
            // older takes its timestamp (and key 1) first; younger then holds key 2; older asks for key 2.
            return older.read(T, 1).compose(a -> younger.read(T, 2)).compose(b -> outcome(older.read(T, 2)))
                .compose(o -> older.abort().compose(v -> younger.commit()).map(ts -> List.of(o)));
        });
        assertThat(result).containsExactly(ScytheAborts.TIMESTAMP_ORDER.label());
        assertThat(queued(1)).isZero();
        assertThat(queued(2)).isZero();
    }

    @Test
    void shouldAbortAnOccReadOfAnObjectAToccTransactionHolds() throws Exception {
        // Fig. 17 case 1: TOCC queues on A first; OCC's read of A aborts at once, without waiting for validation.
        final String result = on(rt -> {
            final ScytheTxn tocc = new ScytheTxn(rt, true);
            final ScytheTxn occ = new ScytheTxn(rt, false);
            return tocc.read(T, 3).compose(a -> outcome(occ.read(T, 3)))
                .compose(o -> tocc.commit().map(ts -> o));
        });
        assertThat(result).isEqualTo(AbortReason.LOCKED.label());
    }

    @Test
    void shouldFailOccValidationWhenAToccTransactionUpdatedWhatItRead() throws Exception {
        // Fig. 17 cases 2-3: OCC read A and B unlocked; TOCC then locks and writes A; OCC's commit must fail.
        final List<String> result = on(rt -> {
            final ScytheTxn occ = new ScytheTxn(rt, false);
            final ScytheTxn tocc = new ScytheTxn(rt, true);
            return occ.read(T, 4).compose(a -> occ.read(T, 5)).compose(b -> {
                occ.write(T, 5, money(1), 0, 8);
                return tocc.read(T, 4);
            }).compose(a -> {
                tocc.write(T, 4, money(a.getLong(0) + 1), 0, 8);
                return tocc.commit();
            }).compose(ts -> outcome(occ.commit())).map(List::of);
        });
        assertThat(result).containsExactly(AbortReason.VALIDATION.label());
        final int at = table.offsetOf(table.lookup(4));
        assertThat(table.objectMemory().getLong(at + ObjectLayout.VALUE_OFFSET)).isEqualTo(101);
        final int b = table.offsetOf(table.lookup(5));
        assertThat(table.objectMemory().getLong(b + ObjectLayout.VALUE_OFFSET)).as("the aborted write").isEqualTo(100);
        assertThat(queued(4) + queued(5)).isZero();
    }

    @Test
    void shouldRefuseAColdLockAboveTheColdWatermarkSoTheRetryGoesHot() throws Exception {
        final List<String> result = on(rt -> {
            final ScytheTxn occ = new ScytheTxn(rt, false);
            return occ.read(T, 6).compose(value -> {
                // Four TOCC transactions queue on key 6: one holds it, three wait.
                final ScytheTxn holder = new ScytheTxn(rt, true);
                return holder.read(T, 6).compose(held -> {
                    final List<Future<Long>> waiting = new ArrayList<>();
                    for (int i = 0; i < 3; i++) {
                        final ScytheTxn t = new ScytheTxn(rt, true);
                        waiting.add(t.read(T, 6).compose(v -> t.commit()));
                    }
                    return untilQueued(rt, 6, 4, 2_000).compose(v -> {
                        occ.write(T, 6, money(0), 0, 8);
                        final Future<Long> commit = occ.commit();
                        return commit.transform(ar -> {
                            final AbortException abort = (AbortException) ar.cause();
                            final String seen = abort.reason().label() + " heat " + abort.heat();
                            return holder.commit().compose(ts -> Future.all(waiting)).map(all -> List.of(seen));
                        });
                    });
                });
            });
        });
        assertThat(result).containsExactly(ScytheAborts.HOT_OBJECT.label() + " heat 4");
        assertThat(queued(6)).isZero();
        final int at = table.offsetOf(table.lookup(6));
        assertThat(table.objectMemory().getLong(at + ObjectLayout.VALUE_OFFSET)).as("nobody wrote it").isEqualTo(100);
    }

    /** Waits (polling every 20 us, at most {@code tries} times) until {@code count} are queued on {@code key}. */
    private Future<Void> untilQueued(final TxnRuntime rt, final long key, final long count, final int tries) {
        if (queued(key) >= count || tries == 0) {
            return Future.succeededFuture();
        }
        return rt.timers().after(20_000).compose(v -> untilQueued(rt, key, count, tries - 1));
    }
}
