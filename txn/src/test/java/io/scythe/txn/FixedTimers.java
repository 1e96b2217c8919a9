package io.scythe.txn;

import io.scythe.txn.runtime.Timers;
import io.vertx.core.Future;

/** A loop's clock whose time the test sets ({@code now}); nothing is ever scheduled on it. */
public final class FixedTimers implements Timers {
    public long now;

    @Override
    public long nowNs() {
        return now;
    }

    @Override
    public Future<Void> after(final long delayNs) {
        throw new UnsupportedOperationException();
    }
}
