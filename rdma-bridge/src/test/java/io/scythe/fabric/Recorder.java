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

    public List<Long> ids() {
        return entries.stream().map(Entry::wrId).toList();
    }

    public List<WcStatus> statuses() {
        return entries.stream().map(Entry::status).toList();
    }

    public Entry last() {
        return entries.get(entries.size() - 1);
    }

    public void clear() {
        entries.clear();
    }
}
