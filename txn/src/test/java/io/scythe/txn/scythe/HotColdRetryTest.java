package io.scythe.txn.scythe;

import io.scythe.hotspot.Watermarks;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The retry's mode: the paper's queue rule, and the second conflict abort on one object within the window. */
class HotColdRetryTest {
    private long now;
    private final HotColdRetry policy = new HotColdRetry(() -> Watermarks.DEFAULT, () -> now, null);

    private static AbortException locked(final String table, final long key, final long heat) {
        return new AbortException(AbortReason.LOCKED, heat, AbortException.objectOf(table, key), "test");
    }

    @Test
    void shouldRetryHotAfterTheSecondLockedAbortOnOneObject() {
        assertThat(policy.nextHint(false, locked("district", 3, 1))).as("first abort on district 3").isFalse();
        now += 50_000;
        assertThat(policy.nextHint(false, locked("district", 4, 1))).as("another object").isFalse();
        now += 50_000;
        assertThat(policy.nextHint(false, locked("district", 3, 2))).as("second abort on district 3").isTrue();
        now += 50_000;
        assertThat(policy.nextHint(false, locked("district", 4, 1))).as("second abort on district 4").isTrue();
    }

    @Test
    void shouldNotCountAbortsFurtherApartThanTheWindow() {
        assertThat(policy.nextHint(false, locked("warehouse", 1, 1))).isFalse();
        now += HotColdRetry.HOT_WINDOW_NS;
        assertThat(policy.nextHint(false, locked("warehouse", 1, 1))).as("the previous one is stale").isFalse();
        now += HotColdRetry.HOT_WINDOW_NS - 1;
        assertThat(policy.nextHint(false, locked("warehouse", 1, 1))).isTrue();
    }

    @Test
    void shouldKeepThePapersQueueRuleAndStayHot() {
        assertThat(policy.nextHint(false, locked("stock", 9, Watermarks.DEFAULT_COLD + 1))).as("above the cold "
            + "watermark at once").isTrue();
        assertThat(policy.nextHint(false, locked("stock", 10, Watermarks.DEFAULT_COLD))).isFalse();
        assertThat(policy.nextHint(true, new AbortException(ScytheAborts.TIMESTAMP_ORDER, 0, 0, "test"))).isTrue();
        assertThat(policy.nextHint(false, new AbortException(AbortReason.VALIDATION, 0, 0, "no object"))).isFalse();
        assertThat(policy.nextHint(false, new AbortException(AbortReason.VALIDATION, 0, 0, "no object"))).as(
            "no object, nothing to count").isFalse();
    }
}
