package io.scythe.txn.selcc;

/**
 * The 8-byte global latch word at the start of every global cache line (SELCC Fig. 5): the latch and the ownership
 * directory in one word, changed only by RDMA CAS and FAA.
 *
 * <pre>
 *   63      58 57                                                    0
 *  +----------+-------------------------------------------------------+
 *  | X holder |  reader bitmap: bit (p - 1) set while participant p     |
 *  | (6 bits) |  holds Shared (58 bits)                                |
 *  +----------+-------------------------------------------------------+
 * </pre>
 *
 * Participants are numbered 1 to {@link #MAX_PARTICIPANTS}; 0 in the X field means "no exclusive holder", so the word
 * {@code 0} is "no cached copy anywhere" (the memory node holds the newest data). The X field is in the top bits so
 * that every signed delta the protocol adds with FAA (a handover {@code (A - B, 0)}, a release {@code (-B, 0)}, a
 * downgrade {@code (-B, bitA | bitB)}) wraps modulo 2^64 inside the field and can never borrow from, or carry into,
 * the bitmap: the arithmetic of the X field is modulo 64, the bitmap's is plain addition of bits that were clear.
 * Every method is pure (tested in {@code LatchWordTest}).
 */
public final class LatchWord {
    /** Reader bits: one per participant (SELCC's footnote 1: at most 58 compute nodes). */
    public static final int MAX_PARTICIPANTS = 58;
    public static final int X_SHIFT = 58;
    public static final long READERS_MASK = (1L << X_SHIFT) - 1;
    /** No copy anywhere. */
    public static final long FREE = 0;

    private LatchWord() {
    }

    /** Refuses a participant number outside 1..58 with a clear error. */
    public static int checkParticipant(final int participant) {
        if (participant < 1 || participant > MAX_PARTICIPANTS) {
            throw new IllegalArgumentException("participant=" + participant + ": SELCC latch words name at most "
                + MAX_PARTICIPANTS + " participants (6-bit X holder, 58-bit reader bitmap), numbered 1 to "
                + MAX_PARTICIPANTS);
        }
        return participant;
    }

    /** The exclusive holder of {@code word}, 0 when none. */
    public static int holder(final long word) {
        return (int) (word >>> X_SHIFT);
    }

    /** The reader bitmap of {@code word}. */
    public static long readers(final long word) {
        return word & READERS_MASK;
    }

    /** Participant {@code p}'s reader bit (its FAA delta to take Shared). */
    public static long bit(final int p) {
        return 1L << (checkParticipant(p) - 1);
    }

    /** The word in which {@code p} alone holds Exclusive (the CAS's desired value, FAA delta magnitude). */
    public static long exclusive(final int p) {
        return (long) checkParticipant(p) << X_SHIFT;
    }

    /** Whether {@code p}'s reader bit is set in {@code word}. */
    public static boolean reads(final long word, final int p) {
        return (word & bit(p)) != 0;
    }

    /** FAA delta that takes Shared for {@code p} (undone by {@link #unshare} when an X holder shows). */
    public static long share(final int p) {
        return bit(p);
    }

    /** FAA delta that drops {@code p}'s Shared. */
    public static long unshare(final int p) {
        return -bit(p);
    }

    /** FAA delta that releases {@code p}'s Exclusive (SELCC §5.2: by FAA, never CAS, so reader FAAs cannot fail it). */
    public static long unexclusive(final int p) {
        return -exclusive(p);
    }

    /** FAA delta of handover case 1: Exclusive passes from {@code from} to {@code to}, {@code (to - from, 0)}. */
    public static long handover(final int from, final int to) {
        return (long) (checkParticipant(to) - checkParticipant(from)) << X_SHIFT;
    }

    /**
     * FAA delta of handover case 2: {@code from} gives up Exclusive and both it and {@code reader} hold Shared,
     * {@code (-from, bit(from) | bit(reader))}.
     */
    public static long downgrade(final int from, final int reader) {
        if (from == reader) {
            throw new IllegalArgumentException("participant " + from + " cannot downgrade to itself as reader");
        }
        return downgradeAll(from, bit(reader));
    }

    /**
     * FAA delta of handover case 2 to several readers at once: {@code from} gives up Exclusive and it and every
     * participant of {@code readers} (a bitmap of {@link #bit}s, each clear in the word: they undid their Shared FAAs
     * before they asked) hold Shared, {@code (-from, bit(from) | readers)}. The one atomic that grants every reader
     * the holder remembered (issue 21, selread); {@link #downgrade(int, int)} is its one-reader case.
     */
    public static long downgradeAll(final int from, final long readers) {
        if (readers == 0 || (readers & ~READERS_MASK) != 0 || (readers & bit(from)) != 0) {
            throw new IllegalArgumentException("participant " + from + " cannot downgrade to readers "
                + toString(readers) + ": a non-empty bitmap without its own bit is needed");
        }
        return -exclusive(from) + bit(from) + readers;
    }

    /** Whether {@code previous} (what a Shared FAA returned) means the Shared was not taken: an X holder shows. */
    public static boolean shareFailed(final long previous) {
        return holder(previous) != 0;
    }

    /** The word an FAA of {@code delta} leaves over {@code word} (what the NIC computes). */
    public static long add(final long word, final long delta) {
        return word + delta;
    }

    /** The participants a failed acquire of {@code p} must invalidate: the X holder, else every other reader. */
    public static long targets(final long previous, final int p) {
        final int x = holder(previous);
        if (x != 0) {
            return bit(x);
        }
        return readers(previous) & ~bit(p);
    }

    /** {@code (x, bitmap)} as the paper writes it, e.g. {@code (3, {1,5})}. */
    public static String toString(final long word) {
        final StringBuilder s = new StringBuilder("(").append(holder(word)).append(", {");
        long r = readers(word);
        boolean first = true;
        while (r != 0) {
            final int b = Long.numberOfTrailingZeros(r);
            s.append(first ? "" : ",").append(b + 1);
            first = false;
            r &= r - 1;
        }
        return s.append("})").toString();
    }
}
