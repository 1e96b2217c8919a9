package io.scythe.txn.selcc;

import io.scythe.storage.ObjectLayout;
import org.agrona.concurrent.UnsafeBuffer;

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
    private boolean released;

    LineHandle(final long gaddr, final L line, final boolean exclusive, final UnsafeBuffer image,
               final int dataBytes) {
        this.gaddr = gaddr;
        this.line = line;
        this.exclusive = exclusive;
        this.data = new UnsafeBuffer(image, ObjectLayout.VALUE_OFFSET, dataBytes);
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
