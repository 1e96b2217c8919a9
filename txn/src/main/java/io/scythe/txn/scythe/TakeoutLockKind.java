package io.scythe.txn.scythe;

import io.scythe.bridge.Doorbell;
import io.scythe.storage.ObjectLayout;
import io.scythe.txn.spi.LockKind;
import org.agrona.DirectBuffer;

/**
 * The Takeout Lock as recovery and the shared parts see it: held by the ticket {@code upper} serves, free when
 * {@code lower == upper} (nobody holds or queues), released by an FAA of 1 on {@code upper}.
 */
public final class TakeoutLockKind implements LockKind {
    /** The redo record's lock kind word of Scythe's commits: the token is the ticket. */
    public static final int ID = 1;
    public static final TakeoutLockKind INSTANCE = new TakeoutLockKind();

    private TakeoutLockKind() {
    }

    @Override
    public int id() {
        return ID;
    }

    @Override
    public String name() {
        return "takeout-ticket";
    }

    @Override
    public boolean free(final DirectBuffer header) {
        return header.getLong(ObjectLayout.LOWER_OFFSET) == header.getLong(ObjectLayout.UPPER_OFFSET);
    }

    @Override
    public boolean heldBy(final DirectBuffer header, final long token) {
        return header.getLong(ObjectLayout.UPPER_OFFSET) == token;
    }

    @Override
    public void release(final Doorbell batch, final long address, final int rkey, final long token) {
        batch.fetchAndAdd(address + ObjectLayout.UPPER_OFFSET, rkey, 1);
    }

    /** Tickets outstanding (held or queued) on the object at {@code header} of a memory node's {@code memory}. */
    public static long queued(final org.agrona.concurrent.AtomicBuffer memory, final int header) {
        return memory.getLongVolatile(header + ObjectLayout.LOWER_OFFSET)
            - memory.getLongVolatile(header + ObjectLayout.UPPER_OFFSET);
    }

    /**
     * Whether a writer may hold or wait for the lock of the object whose {@code header} (or image) was READ: something
     * is outstanding and {@code queued_ts}'s {@link TakeoutLock#READERS_ONLY} bit does not say it is readers only.
     * An optimistic read validated at commit (OCC's, and TOCC's reads it does not queue for) fails on this rather than
     * on anything queued (issue 22, helper sharedval: a read-only SmallBank Balance aborted on WriteCheck's shared
     * savings reads, which write nothing there).
     *
     * <p>Why a validation passing readers keeps serializability. A transaction T read version {@code v} of object x
     * optimistically; at its validation, after T holds the locks of everything it writes, one READ of x's header finds
     * version {@code v} and every ticket outstanding a reader's (the bit's invariant, {@link TakeoutLock#READERS_ONLY}),
     * at the instant {@code tau} the memory node's words were read. Every writer W of x holds an exclusive ticket of x
     * (OCC's commit lock, TOCC's queued read for update, an insert's ticket; a shared holder that writes aborts: no
     * upgrade) from before its validation until the FAA that releases it, which its doorbell orders after its WRITEs of
     * x's value and version. At {@code tau} no exclusive ticket is outstanding, so each W either released before
     * {@code tau}, its write visible then and, versions rising in install order, no later than {@code v}: T read it or
     * one after it (W before T, as with an empty queue); or takes its ticket after {@code tau}, its lock point after
     * T's validation, and T's read of x is ordered before W's write (T before W). Either way x gives T exactly the
     * edges an empty queue gives, the argument OCC's validation already rests on; the readers holding shared tickets
     * write nothing to x, so they add no edge on x at all (two reads never conflict).
     *
     * <p>A writer that queues between T's read and its validation: if it is still outstanding at {@code tau} its grant
     * cleared the bit and no later reader's grant or shared release set it again (both set it only where nothing is
     * outstanding or the run at the tail covers {@code upper}, and the run behind a writer does not until {@code upper}
     * passed the writer's ticket, which only its own FAA does, or recovery's skip of a dead node's cancelled ticket),
     * so the validation aborts as before; if it released before {@code tau} having written x (a reader's grant or release may have set the bit since), the version
     * changed and the validation aborts; if it released having written nothing to x, it is a reader of x and nothing
     * conflicts. The READ is one of the header: the words are read in address order ({@code queued_ts} at 16 before the
     * version at 32), so a bit seen set means every writer released earlier had its version written before the version
     * word was read (the simulator's READ is a snapshot; a torn READ on a NIC reads ascending addresses too).
     */
    public static boolean writerQueued(final DirectBuffer header) {
        return queued(header) != 0 && (header.getLong(ObjectLayout.QUEUED_TS_OFFSET) & TakeoutLock.READERS_ONLY) == 0;
    }

    /** Transactions queued on or holding the lock of the object whose {@code header} (or image) was READ. */
    public static long queued(final DirectBuffer header) {
        return header.getLong(ObjectLayout.LOWER_OFFSET) - header.getLong(ObjectLayout.UPPER_OFFSET);
    }
}
