package io.scythe.tso;

import io.vertx.core.Future;

/** Where a TSO group gets ranges of timestamps from: the service's counter directly, or a proxy. */
public interface TsoSource {
    /** Reserves {@code count} consecutive timestamps; the Future holds the first. */
    Future<Long> fetch(int count);

    String name();
}
