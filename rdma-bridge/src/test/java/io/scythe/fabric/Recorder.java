package io.scythe.fabric;

import java.util.ArrayList;
import java.util.List;

/** Records completions for assertions. */
public final class Recorder implements CompletionHandler {
    public record Entry(QueuePair qp, long wrId, Opcode opcode, WcStatus status, int byteLength) {
    }

    public final List<Entry> entries = new ArrayList<>();

    @Override
    public void onCompletion(final QueuePair qp, final long wrId, final Opcode opcode, final WcStatus status,
                             final int byteLength) {
        entries.add(new Entry(qp, wrId, opcode, status, byteLength));
    }

    List<Long> ids() {
        return entries.stream().map(Entry::wrId).toList();
    }

    List<WcStatus> statuses() {
        return entries.stream().map(Entry::status).toList();
    }

    Entry last() {
        return entries.get(entries.size() - 1);
    }

    void clear() {
        entries.clear();
    }
}
