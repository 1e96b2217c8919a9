package io.scythe.txn.selcc;

import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.txn.TxnRuntime;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Samples SELCC's latch-word invariants ({@link LineCache#sampleInvariants}) over the caches of the loops seen so far,
 * reading each word from the memory nodes' object memory (tests in the simulator, one thread: a sample is one moment).
 */
public final class LatchInvariants {
    private final Map<TxnRuntime, LineCache> caches = new IdentityHashMap<>();
    private final List<LineCache> order = new ArrayList<>();
    private final List<String> violations = new ArrayList<>();
    private long samples;
    private long frames;
    private long words;

    /**
     * Plants a bug in every cache of the JVM (on) or removes it (off): an eviction of a Modified frame forgets its
     * release FAA ({@link LineCache#plantedLeakOnEviction}). Tests that turn it on turn it off after.
     */
    public static void plantLeakOnEviction(final boolean on) {
        LineCache.plantedLeakOnEviction = on;
    }

    /** Includes {@code runtime}'s loop's cache (made if it has none yet). */
    public void saw(final TxnRuntime runtime) {
        caches.computeIfAbsent(runtime, r -> {
            final LineCache c = LineCache.of(r);
            order.add(c);
            return c;
        });
    }

    /**
     * Checks every frame of the caches seen against the words {@code dbs} hold now, and every GCL line's word of
     * {@code dbs} ({@link GclRegion#TABLE}, the header line excepted) against the caches it names.
     */
    public void sample(final List<LogDb> dbs) {
        final LineCache.Sampled s = LineCache.sampleInvariants(order, lines(dbs), line -> word(dbs, line));
        samples++;
        frames += s.frames();
        words += s.words();
        for (final String v : s.violations()) {
            if (violations.size() < 10) {
                violations.add("sample " + samples + ": " + v);
            }
        }
    }

    public long samples() {
        return samples;
    }

    /** Frames checked over all samples (settled M or S frames). */
    public long frames() {
        return frames;
    }

    /** Latch words checked over all samples (the reverse direction: the participants each names). */
    public long words() {
        return words;
    }

    public List<String> violations() {
        return violations;
    }

    private static List<LineCache.Line> lines(final List<LogDb> dbs) {
        final List<LineCache.Line> lines = new ArrayList<>();
        for (final LogDb db : dbs) {
            final Table t = db.table(GclRegion.TABLE);
            for (long i = GclRegion.HEADER_LINE + 1; t != null && i < t.schema().capacity(); i++) {
                lines.add(new LineCache.Line(db.nic().node(), t.objectBaseAddress() + GclRegion.lineOffset(t, i)));
            }
        }
        return lines;
    }

    private static long word(final List<LogDb> dbs, final LineCache.Line line) {
        for (final LogDb db : dbs) {
            if (!db.nic().node().equals(line.node())) {
                continue;
            }
            for (final Table t : db.tables()) {
                final long offset = line.address() - t.objectBaseAddress();
                if (offset >= 0 && offset < t.objectMemory().capacity()) {
                    return t.objectMemory().getLongVolatile((int) offset + ObjectLayout.PROTOCOL_WORD_OFFSET);
                }
            }
        }
        throw new IllegalStateException("no memory node object holds line " + line);
    }
}
