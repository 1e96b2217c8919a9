package io.scythe.txn.rcc;

import io.scythe.storage.ObjectLayout;

import java.util.List;

/**
 * RCC's per-tuple metadata (Fig. 3), per protocol, as it sits in our object format: the 64-byte header of
 * {@link ObjectLayout} in front of the record (so one READ fetches metadata and record together, as RCC requires),
 * one 8-byte word per field. The header is shared by every registered module (its words are declared to the
 * registry), so each field is mapped onto a word no other protocol's lock uses while the protocol runs:
 *
 * <pre>
 *  protocol  Fig. 3 fields                      header words (offset)
 *  NOWAIT    lock                               lock = cas_lock (24), holding the owner's transaction id
 *  WAITDIE   tts                                tts = protocol word (48), holding the owner's RCC timestamp;
 *                                               cas_lock (24) only for an object being inserted
 *  OCC       lock, seq                          lock = cas_lock (24), seq = version (32)
 *  MVCC      tts, rts, record[0..3] (+ wts)     tts = protocol word (48); wts of the newest = version (32), its
 *                                               record = the value; rts and three older (wts, record) slots in
 *                                               the room after the value (mvcc.MvccTuple); cas_lock (24) only
 *                                               for an object being inserted
 *  SUNDIAL   lock, rts, wts                     lock = protocol word (48), holding the owner's transaction id;
 *                                               cas_lock (24) only for an object being inserted;
 *                                               wts = version (32); rts in the room after the value (8 B,
 *                                               where MVCC keeps its rts: the header's words are 0 unless held,
 *                                               which the end-of-run checks rely on)
 *  CALVIN    none                               locks in its nodes' lock managers (rcc.calvin)
 * </pre>
 * The lock words are 64 bits and a timestamp fits one, as in RCC. The shared version word (32) is every protocol's
 * record version (our history checker reads it); for OCC it is DrTM+H's {@code seq}.
 */
public record TupleFormat(String protocol, List<Field> fields) {
    /**
     * One metadata field and the header word that holds it ({@link #NOT_BUILT}: the protocol is not built;
     * {@link #IN_ROOM}: after the value, in the room the protocol asks for, see its tuple class).
     */
    public record Field(String name, int offset) {
    }

    public static final int TTS_OFFSET = ObjectLayout.PROTOCOL_WORD_OFFSET;
    public static final int NOT_BUILT = -1;
    public static final int IN_ROOM = -2;

    public static final TupleFormat NOWAIT = new TupleFormat("nowait",
        List.of(new Field("lock", ObjectLayout.CAS_LOCK_OFFSET)));
    public static final TupleFormat WAITDIE = new TupleFormat("waitdie", List.of(new Field("tts", TTS_OFFSET)));
    public static final TupleFormat OCC = new TupleFormat("occ", List.of(new Field("lock",
        ObjectLayout.CAS_LOCK_OFFSET), new Field("seq", ObjectLayout.VERSION_OFFSET)));
    public static final TupleFormat MVCC = new TupleFormat("mvcc", List.of(new Field("tts", TTS_OFFSET),
        new Field("wts[0]", ObjectLayout.VERSION_OFFSET), new Field("rts", IN_ROOM), new Field("wts[1..3]", IN_ROOM),
        new Field("record[1..3]", IN_ROOM)));
    public static final TupleFormat SUNDIAL = new TupleFormat("sundial", List.of(new Field("lock",
        TTS_OFFSET), new Field("rts", IN_ROOM), new Field("wts",
        ObjectLayout.VERSION_OFFSET)));
    public static final TupleFormat CALVIN = new TupleFormat("calvin", List.of());

    /** The header offset of field {@code name}. */
    public int offsetOf(final String name) {
        for (final Field f : fields) {
            if (f.name.equals(name)) {
                if (f.offset == IN_ROOM) {
                    throw new UnsupportedOperationException("RCC " + protocol + "'s field " + name + " lies after the "
                        + "value, in the object's room (io.scythe.txn.rcc.mvcc.MvccTuple), not in the header");
                }
                if (f.offset < 0) {
                    throw new UnsupportedOperationException("RCC " + protocol + "'s field " + name + " has no place "
                        + "in the object format yet: the protocol is not implemented (issue 18)");
                }
                return f.offset;
            }
        }
        throw new IllegalArgumentException("RCC " + protocol + " keeps no field " + name + " (Fig. 3: " + fields
            + ")");
    }
}
