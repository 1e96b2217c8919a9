package io.scythe.txn.runtime;

import io.vertx.core.Future;

/**
 * Hands out transaction timestamps. Every implementation gives timestamps that are unique across the cluster and
 * respect real time: a timestamp handed out after another was handed out (anywhere) is larger.
 */
public interface TimestampOracle {
    /** The next timestamp; call on an event loop. */
    Future<Long> next();

    /** A short name for reports. */
    String name();
}
