package io.scythe.txn.lotus;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * TODO lotusins-return (helper lotusret): which slots an aborted attempt that posted WRITEs to them gives back to its
 * compute node's pool ({@link SlotPool#reusable}, {@link SlotPool#settleWritten}). Before, every such slot leaked.
 */
class SlotPoolTest {
    @Test
    void shouldGiveBackAWrittenSlotOnlyOnceItsWritesAreDoneItsRecordWithdrawnAndNoIndexSlotNamesIt() {
        final Future<Void> done = Future.succeededFuture();
        final Future<Void> failed = Future.failedFuture("in doubt");
        final Future<Void> pending = Promise.<Void>promise().future();
        assertThat(SlotPool.reusable(true, false, List.of(done, done))).as("every batch done").isTrue();
        assertThat(SlotPool.reusable(true, false, null)).as("nothing posted to its node").isTrue();
        assertThat(SlotPool.reusable(true, false, List.of(done, failed))).as("a batch failed (in doubt)").isFalse();
        assertThat(SlotPool.reusable(true, false, List.of(pending))).as("a batch in flight").isFalse();
        assertThat(SlotPool.reusable(true, true, List.of(done))).as("its index slot was posted").isFalse();
        assertThat(SlotPool.reusable(false, false, List.of(done))).as("its redo record not withdrawn").isFalse();

        final SlotPool pool = new SlotPool();
        pool.settleWritten("mn0/1", 4096, true);
        pool.settleWritten("mn0/1", 8192, false);
        assertThat(pool.returned()).isEqualTo(1);
        assertThat(pool.leaked()).isEqualTo(1);
    }
}
