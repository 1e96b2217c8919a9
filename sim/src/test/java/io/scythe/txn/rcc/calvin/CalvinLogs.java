package io.scythe.txn.rcc.calvin;

import io.scythe.txn.TxnRuntime;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Test access to a simulated CALVIN node's input log ({@link CalvinInputLog}) from the simulator's tests. */
public final class CalvinLogs {
    private CalvinLogs() {
    }

    /**
     * The node of {@code home} (its loop 0): per epoch it logged, its record's transaction ids, one list per
     * destination node in the order the record holds them; null when it opened no input log. Also checks that the
     * run did not wrap the region's ring (else older records may be gone: shorten the run), that every copy holds the
     * same records, as many as it wrote, each naming this node.
     */
    public static Map<Long, List<List<Long>>> logged(final TxnRuntime home) {
        final CalvinNode node = home.extensionOrNull(CalvinNode.LANE).node();
        final CalvinInputLog log = node.openedInputLog();
        if (log == null) {
            return null;
        }
        if (log.wrapped()) {
            throw new AssertionError("node " + node.index() + "'s input log wrapped round its region after "
                + log.records() + " records: shorten the run to check every record");
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
        final Map<Long, List<List<Long>>> ids = new HashMap<>();
        for (final CalvinInputLog.Entry e : primary) {
            if (e.from() != node.index()) {
                throw new AssertionError("node " + node.index() + "'s input log holds node " + e.from() + "'s batch");
            }
            final List<List<Long>> byNode = new ArrayList<>();
            e.byNode().forEach(decls -> byNode.add(decls.stream().map(CalvinWire.Decl::id).toList()));
            ids.put(e.epoch(), byNode);
        }
        return ids;
    }
}
