package io.scythe.txn.rcc;

import io.scythe.storage.LogDb;
import io.scythe.txn.recovery.DeadNodeWords;
import io.scythe.txn.recovery.RecoveryRpc;

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
        return DeadNodeWords.free(db, TupleFormat.TTS_OFFSET, table -> {
            final String protocol = table.format().name();
            if (protocol.equals(RccModule.WAITDIE.base()) || protocol.equals(RccModule.MVCC.base())) {
                return ts -> deadTimestamp(idPrefixes, ts);
            }
            return protocol.equals(RccModule.SUNDIAL.base()) ? id -> DeadNodeWords.ownedBy(idPrefixes, id) : null;
        });
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
}
