package io.scythe.cluster;

import java.util.Locale;

/** What a node process does: hold data (MN), run transactions (CN), or hold the timestamp counter (TSO). */
public enum NodeRole {
    MN, CN, TSO;

    public static NodeRole of(final String name) {
        try {
            return valueOf(name.toUpperCase(Locale.ROOT));
        } catch (final IllegalArgumentException | NullPointerException e) {
            throw new IllegalArgumentException("role '" + name + "' must be mn, cn or tso");
        }
    }

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
