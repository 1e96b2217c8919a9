package io.scythe.txn.scythe;

import io.scythe.txn.AbortReason;

import java.util.List;

/** The abort reasons of the Takeout Lock's refusals, reported between the shared {@code validation} and
 * {@code duplicate-key}. */
public final class ScytheAborts {
    /** A COLD (OCC) lock request found the object hot: retried in HOT mode (TOCC). */
    public static final AbortReason HOT_OBJECT = AbortReason.define("hot-object", 300);
    /** The Takeout Lock refused it: an older timestamp than one queued. */
    public static final AbortReason TIMESTAMP_ORDER = AbortReason.define("timestamp-order", 400);
    /** The Takeout Lock refused it: more queued than the hot watermark. */
    public static final AbortReason QUEUE_FULL = AbortReason.define("queue-full", 500);

    static final List<AbortReason> ALL = List.of(HOT_OBJECT, TIMESTAMP_ORDER, QUEUE_FULL);

    private ScytheAborts() {
    }

    /** The reason of a Lock RPC refused with {@code status} ({@link TakeoutLock}). */
    static AbortReason ofRefusal(final int status) {
        switch (status) {
            case TakeoutLock.REFUSED_COLD:
                return HOT_OBJECT;
            case TakeoutLock.REFUSED_HOT:
                return QUEUE_FULL;
            default:
                return TIMESTAMP_ORDER;
        }
    }
}
