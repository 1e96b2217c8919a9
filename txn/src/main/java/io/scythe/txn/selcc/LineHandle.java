package io.scythe.txn.selcc;

import io.scythe.storage.ObjectLayout;
import io.scythe.txn.Access;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.recovery.RedoLog;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * A latched line as its caller holds it, for both {@link Gcl} views: {@code L} is the view's record of the line (a
 * {@link LineCache.Frame} of the coherent cache, an entry of SEL's table of latched lines), whose image holds the copy
 * and whose dirty bounds a write widens ({@link #widen}).
 */
abstract class LineHandle<L> implements Gcl.Handle {
    private final long gaddr;
    private final L line;
    private final boolean exclusive;
    private final UnsafeBuffer data;
    private final UnsafeBuffer image;
    private boolean released;

    LineHandle(final long gaddr, final L line, final boolean exclusive, final UnsafeBuffer image,
               final int dataBytes) {
        this.gaddr = gaddr;
        this.line = line;
        this.exclusive = exclusive;
        this.data = new UnsafeBuffer(image, ObjectLayout.VALUE_OFFSET, dataBytes);
        this.image = image;
    }

    /**
     * {@link Gcl#logWrites} for both views: one redo record (the loop's {@code RedoLog}, lock kind {@link
     * SelccRecovery#LOCK_KIND_ID}, a transaction id of this loop) with an entry per line: its whole data, and the token
     * ({@code me}, the version after the memory node's, as the copy read it: held Exclusive since, so still the memory
     * node's). Once it is durable each copy's version is raised to its token's and {@code raised} marks its header for
     * the write-through, which lands the version after the data, so recovery skips a line whose write-through landed.
     * {@code held}: whether the view holds the handle's line Exclusive (else refused, nothing logged).
     */
    static Future<Runnable> logWrites(final TxnRuntime runtime, final GclRegion region, final int me,
                                      final List<Gcl.Handle> written, final Predicate<Gcl.Handle> held,
                                      final Consumer<Gcl.Handle> raised) {
        final RedoLog log = RedoLog.of(runtime);
        if (log == null || written.isEmpty()) {
            return Future.failedFuture(new IllegalStateException(log == null ? "no redo log on this loop: B-link "
                + "transactions log their writes only in recoverable runs (writesThrough())" : "nothing to log"));
        }
        final List<Access> entries = new ArrayList<>(written.size());
        for (final Gcl.Handle h : written) {
            if (!h.exclusive() || !held.test(h)) {
                return Future.failedFuture(new IllegalStateException("a redo entry for line "
                    + GlobalPointer.toString(h.gaddr()) + " not held Exclusive"));
            }
            final UnsafeBuffer image = ((LineHandle<?>) h).image;
            final Access a = new Access(GclRegion.TABLE, region.index(h.gaddr()), region.partition(h.gaddr()));
            a.pointer = ObjectLayout.pointer(region.address(h.gaddr()),
                image.getShort(ObjectLayout.INCARNATION_OFFSET) & 0xffff);
            a.dirty = true;
            a.newLength = region.dataBytes();
            a.newValue = new UnsafeBuffer(new byte[a.newLength]);
            a.newValue.putBytes(0, h.data(), 0, a.newLength);
            a.installedVersion = ObjectLayout.versionAfter(0, image.getLong(ObjectLayout.VERSION_OFFSET)
                & ~ObjectLayout.VERSION_BUSY);
            entries.add(a);
        }
        return log.append(runtime.nextTxnId(), 0, SelccRecovery.LOCK_KIND_ID, entries,
            a -> SelccRecovery.token(me, a.installedVersion)).map(appended -> {
                for (int i = 0; i < written.size(); i++) {
                    ((LineHandle<?>) written.get(i)).image.putLong(ObjectLayout.VERSION_OFFSET,
                        entries.get(i).installedVersion);
                    raised.accept(written.get(i));
                }
                return (Runnable) () -> log.release(appended);
            }).onFailure(e -> {
                if (e instanceof RedoLog.RecordInDoubtException) {
                    runtime.giveUp("a B-link transaction's redo record's WRITE failed and may have landed");
                }
            });
    }

    /** The view's record of the line. */
    final L line() {
        return line;
    }

    /** Widens {@code line}'s dirty bounds by the data range written. */
    abstract void widen(L line, int from, int length);

    @Override
    public final long gaddr() {
        return gaddr;
    }

    @Override
    public final UnsafeBuffer data() {
        return data;
    }

    @Override
    public final boolean exclusive() {
        return exclusive;
    }

    @Override
    public final void written(final int from, final int length) {
        if (!exclusive || released) {
            throw new IllegalStateException("a write to " + GlobalPointer.toString(gaddr) + " without its "
                + "exclusive latch");
        }
        widen(line, from, length);
    }

    /** The unlock: marks the handle released (a second unlock fails clearly) and gives the line back. */
    final L release() {
        if (released) {
            throw new IllegalStateException("line " + GlobalPointer.toString(gaddr) + " unlocked twice");
        }
        released = true;
        return line;
    }
}
