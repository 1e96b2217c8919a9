package io.scythe.sim;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A history check that needs no protocol knowledge: no two committed attempts may install the same version of one key
 * (two writers that both read version v and both installed their successor lost an update). Plugged into
 * {@link Simulation#recordCommits}; a full serializability checker (dependency cycles) plugs in the same way.
 */
public final class VersionChecker implements java.util.function.Consumer<CommittedTxn> {
    private final Map<String, Set<Long>> installed = new HashMap<>();
    private final List<String> violations = new ArrayList<>();
    private long checked;

    @Override
    public void accept(final CommittedTxn txn) {
        checked++;
        for (final CommittedTxn.Write w : txn.writes()) {
            final String key = w.table() + "/" + w.key();
            if (!installed.computeIfAbsent(key, k -> new HashSet<>()).add(txn.commitVersion())
                && violations.size() < 16) {
                violations.add("version " + txn.commitVersion() + " of " + key + " installed twice (lost update; "
                    + "second by commit #" + txn.sequence() + " at " + txn.finishedNs() + " ns)");
            }
        }
    }

    public List<String> violations() {
        return violations;
    }

    public long checked() {
        return checked;
    }
}
