package io.scythe.cluster;

import java.util.Locale;

/**
 * What a node process does: hold data (MN), run transactions (CN), hold the timestamp counter (TSO), or serve the CNs'
 * timestamp fetches from that counter as a TSO proxy (PROXY, Scythe §4.5 (3)).
 */
public enum NodeRole {
    MN, CN, TSO, PROXY;

    public static NodeRole of(final String name) {
        try {
            return valueOf(name.toUpperCase(Locale.ROOT));
        } catch (final IllegalArgumentException | NullPointerException e) {
            throw new IllegalArgumentException("role '" + name + "' must be mn, cn, tso or proxy");
        }
    }

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
