package io.scythe.txn.lotus;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The lock RPCs between compute nodes (lotus.md §2.1): one message carries all of one transaction's requests for one
 * compute node. Request: {@code txn u64, cn u16, count u16}, then per key {@code lotusKey u64, write u8}. An acquire's
 * reply is one result byte per key ({@link #code}); a release's is empty (releases are idempotent: the lock state
 * ignores a key its transaction does not hold).
 */
final class LockRpc {
    static final int ACQUIRE = 0x4c01;
    static final int RELEASE = 0x4c02;
    /** A shard handed over (its one entry's key is the shard number). */
    static final int HANDOFF = 0x4c03;
    /** Transactions to abort (the entries' keys are their ids): a handoff's holders. */
    static final int DOOM = 0x4c04;
    /** A rejoined node asks a survivor to hand the listed shards back to it (each by the handoff order). */
    static final int GIVE_BACK = 0x4c05;
    static final int HEADER = 12;
    static final int ENTRY = 9;
    /** The result byte of a key whose shard the asked node does not own. */
    static final byte OUT_OF_RANGE = 5;

    private LockRpc() {
    }

    /** A request of {@code n} keys. */
    static UnsafeBuffer request(final long txn, final int cn, final long[] keys, final boolean[] write, final int n) {
        if (n > 0xffff) {
            throw new IllegalArgumentException(n + " keys in one lock message: at most 65535");
        }
        final UnsafeBuffer b = new UnsafeBuffer(new byte[HEADER + n * ENTRY]);
        b.putLong(0, txn);
        b.putShort(8, (short) cn);
        b.putShort(10, (short) n);
        for (int i = 0; i < n; i++) {
            b.putLong(HEADER + i * ENTRY, keys[i]);
            b.putByte(HEADER + i * ENTRY + 8, (byte) (write != null && write[i] ? 1 : 0));
        }
        return b;
    }

    static long txn(final DirectBuffer b, final int at) {
        return b.getLong(at);
    }

    static int cn(final DirectBuffer b, final int at) {
        return b.getShort(at + 8) & 0xffff;
    }

    /** The number of keys, checked against the message's length. */
    static int count(final DirectBuffer b, final int at, final int length) {
        if (length < HEADER) {
            return -1;
        }
        final int n = b.getShort(at + 10) & 0xffff;
        return length == HEADER + n * ENTRY ? n : -1;
    }

    static long key(final DirectBuffer b, final int at, final int i) {
        return b.getLong(at + HEADER + i * ENTRY);
    }

    static boolean write(final DirectBuffer b, final int at, final int i) {
        return b.getByte(at + HEADER + i * ENTRY + 8) != 0;
    }

    /** A lock table result as its reply byte. */
    static byte code(final LockTable.Result r) {
        return (byte) r.ordinal();
    }

    /** A reply byte as a result, or {@code null} for {@link #OUT_OF_RANGE}. */
    static LockTable.Result result(final byte code) {
        if (code == OUT_OF_RANGE) {
            return null;
        }
        final LockTable.Result[] all = LockTable.Result.values();
        if (code < 0 || code >= all.length) {
            throw new IllegalStateException("lock reply byte " + code + " is no result");
        }
        return all[code];
    }
}
