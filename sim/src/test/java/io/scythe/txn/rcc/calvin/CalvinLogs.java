package io.scythe.txn.rcc.calvin;

import io.scythe.txn.TxnRuntime;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Test access to a simulated CALVIN node's input log ({@link CalvinInputLog}) from the simulator's tests. */
public final class CalvinLogs {
    private CalvinLogs() {
    }

    /**
     * The node of {@code home} (its loop 0): per epoch it logged, how many transactions that epoch's record holds; null
     * when it opened no input log. Also checks that every copy holds the same records, as many as it wrote, each
     * naming this node.
     */
    public static Map<Long, Integer> batchSizes(final TxnRuntime home) {
        final CalvinNode node = home.extensionOrNull(CalvinNode.LANE).node();
        final CalvinInputLog log = node.openedInputLog();
        if (log == null) {
            return null;
        }
        final List<CalvinInputLog.Entry> primary = log.readBack(0);
        for (int c = 1; c < log.copies().size(); c++) {
            if (!log.readBack(c).equals(primary)) {
                throw new AssertionError("copy " + c + " of node " + node.index() + "'s input log differs");
            }
        }
        if (primary.size() != log.records()) {
            throw new AssertionError("node " + node.index() + " wrote " + log.records() + " input-log records, its "
                + "region holds " + primary.size());
        }
        final Map<Long, Integer> sizes = new HashMap<>();
        for (final CalvinInputLog.Entry e : primary) {
            if (e.from() != node.index()) {
                throw new AssertionError("node " + node.index() + "'s input log holds node " + e.from() + "'s batch");
            }
            final Set<Long> ids = new HashSet<>();
            e.byNode().forEach(decls -> decls.forEach(d -> ids.add(d.id())));
            sizes.put(e.epoch(), ids.size());
        }
        return sizes;
    }
}
