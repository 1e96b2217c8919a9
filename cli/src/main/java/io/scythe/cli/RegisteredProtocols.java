package io.scythe.cli;

import io.scythe.txn.spi.ProtocolRegistry;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/** The protocol names the registry holds, for {@code --protocols} help ({@code ${COMPLETION-CANDIDATES}}). */
public final class RegisteredProtocols implements Iterable<String> {
    @Override
    public Iterator<String> iterator() {
        final List<String> names = new ArrayList<>(ProtocolRegistry.listedNames());
        for (final String unlisted : ProtocolRegistry.unlistedNames()) {
            names.add(unlisted + " (by name only)");
        }
        return names.iterator();
    }
}
