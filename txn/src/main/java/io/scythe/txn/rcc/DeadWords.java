package io.scythe.txn.rcc;

import io.scythe.storage.LogDb;
import io.scythe.storage.Table;
import io.scythe.txn.recovery.RecoveryRpc;
import org.agrona.concurrent.AtomicBuffer;

/**
 * A memory node's dead-node step for RCC's protocol word ({@link TupleFormat#TTS_OFFSET}; {@link RccModule}): after
 * recovery rolled the dead compute node's log records forward (releasing the words they name), frees every protocol
 * word the node still holds, which no record names (WAITDIE's read locks; the locks of an attempt that logged
 * nothing, which wrote nothing yet). What the word holds depends on the protocol, which the table's format names
 * ({@link RccModule#objectFormat}): WAITDIE's and MVCC's {@code tts} a timestamp, whose node slot
 * ({@link RccClock#nodeOf}) and incarnation ({@link RccClock#incarnationOfTimestamp}, the low 8 bits of the epoch) are
 * the dead incarnation's ({@link #deadTimestamp}: a restarted node keeps its slot under a new epoch, and its words are
 * not freed); SUNDIAL's lock a transaction id with the node's id prefix
 * ({@link RecoveryRpc#NODE_ID_MASK}). Tables of other protocols are left alone (SELCC keeps its latch there). The
 * CAS words (NOWAIT, OCC, every insert) are the CAS-word module's step's.
 */
final class DeadWords {
    private DeadWords() {
    }

    /** Frees the dead node's protocol words in every RCC table of {@code db}; returns how many. */
    static int free(final LogDb db, final long[] idPrefixes) {
        int freed = 0;
        for (final Table table : db.tables()) {
            final String protocol = table.format().name();
            final boolean timestamp = protocol.equals(RccModule.WAITDIE.base())
                || protocol.equals(RccModule.MVCC.base());
            if (!timestamp && !protocol.equals(RccModule.SUNDIAL.base())) {
                continue;
            }
            final AtomicBuffer m = table.objectMemory();
            final int slot = table.objectSlotBytes();
            for (int at = 0; at + slot <= m.capacity(); at += slot) {
                final int word = at + TupleFormat.TTS_OFFSET;
                final long held = m.getLongVolatile(word);
                if (held != 0 && (timestamp ? deadTimestamp(idPrefixes, held) : deadId(idPrefixes, held))
                    && m.compareAndSetLong(word, held, 0)) {
                    freed++;
                }
            }
        }
        return freed;
    }

    /**
     * Whether RCC timestamp {@code ts} is one of the id prefixes' incarnations ({@link RccClock#of}): its node slot is
     * the prefix's (bits 32-39) and its incarnation the low 8 bits of the prefix's epoch (bits 48-55).
     */
    static boolean deadTimestamp(final long[] idPrefixes, final long ts) {
        final int slot = RccClock.nodeOf(ts);
        final int incarnation = RccClock.incarnationOfTimestamp(ts);
        for (final long prefix : idPrefixes) {
            if ((int) ((prefix >>> 32) & 0xff) == slot && RccClock.incarnationOf(prefix) == incarnation) {
                return true;
            }
        }
        return false;
    }

    private static boolean deadId(final long[] idPrefixes, final long id) {
        for (final long prefix : idPrefixes) {
            if ((id & RecoveryRpc.NODE_ID_MASK) == (prefix & RecoveryRpc.NODE_ID_MASK)) {
                return true;
            }
        }
        return false;
    }
}
