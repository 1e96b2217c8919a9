package io.scythe.txn.rcc.calvin;

import io.scythe.txn.rcc.calvin.CalvinWire.Write;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * An active participant's executors' writes as they come, in chunks ({@link CalvinWire#WRITE}), by transaction id,
 * until a transaction's are whole; and the transactions whose writes no longer come from their executor because it
 * died ({@link #close}): their decision records say what to write (issue 18 part 4), so a chunk of them polled or
 * handled after the take-over (it landed before the fence, or waited in a request ring) is dropped, whole or not,
 * rather than opening an assembly nothing completes or being applied beside the decision. Loop-confined; sans-IO.
 */
final class WriteChunks {
    /** A transaction's writes, whole: what to write, and the answer to each chunk (null: written). */
    record Whole(List<Write> writes, List<Consumer<Throwable>> acks) {
    }

    private static final class Partial {
        final List<Write> writes = new ArrayList<>();
        final List<Consumer<Throwable>> acks = new ArrayList<>(1);
    }

    private final Map<Long, Partial> partial = new HashMap<>();
    /** Transactions whose executor died, taken over here: their chunks are dropped. */
    private final Set<Long> closed = new HashSet<>();

    /**
     * One chunk of transaction {@code id}'s writes ({@code total} writes in all), answered by {@code ack} once all are
     * written: the whole once this chunk completes them, else null (more to come, or {@linkplain #closed dropped}).
     */
    Whole offer(final long id, final int total, final List<Write> writes, final Consumer<Throwable> ack) {
        if (closed.contains(id)) {
            return null;
        }
        final Partial p = partial.computeIfAbsent(id, k -> new Partial());
        p.writes.addAll(writes);
        p.acks.add(ack);
        if (p.writes.size() < total) {
            return null; // more chunks to come: every chunk is answered once all are written
        }
        partial.remove(id);
        return new Whole(p.writes, p.acks);
    }

    /** Whether transaction {@code id}'s executor died: its chunks are dropped ({@link #close}). */
    boolean closed(final long id) {
        return closed.contains(id);
    }

    /**
     * Transaction {@code id}'s executor died and this node took it over: what came of its writes is dropped (its
     * decision record has them whole), and so is every later chunk of it.
     */
    void close(final long id) {
        partial.remove(id);
        closed.add(id);
    }

    /** Transactions with some chunks here and not all (0 when quiet). */
    int partial() {
        return partial.size();
    }
}
