package io.scythe.bridge;

import java.util.Locale;

/**
 * What a {@link Bridge} does when a poll found nothing to do but verbs are still outstanding (after Agrona's idle
 * strategies, chosen by alias; none of them ever blocks the event loop).
 */
public enum IdlePolicy {
    /** Poll again at once until every verb has completed: lowest latency, one core busy. For benchmarks. */
    BUSY_SPIN("busy-spin"),
    /**
     * Poll again at once while the next modelled completion is within the spin window, otherwise sleep on an
     * event-loop timer until it is due. The default.
     */
    BACKOFF("backoff");

    /** Spin window of {@link #BACKOFF}: completions due sooner than this are busy-polled for. */
    public static final long DEFAULT_SPIN_WINDOW_NS = 50_000;

    private final String alias;

    IdlePolicy(final String alias) {
        this.alias = alias;
    }

    public String alias() {
        return alias;
    }

    public static IdlePolicy fromAlias(final String alias) {
        for (final IdlePolicy policy : values()) {
            if (policy.alias.equals(alias.toLowerCase(Locale.ROOT))) {
                return policy;
            }
        }
        throw new IllegalArgumentException("unknown idle policy '" + alias + "'; known: busy-spin, backoff");
    }
}
