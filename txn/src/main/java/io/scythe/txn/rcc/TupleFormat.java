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
 *  MVCC      tts, rts, record[0..3] (+ wts)     not built: needs storage.mv's multi-version objects (issue 18)
 *  SUNDIAL   lock, rts, wts                     not built (issue 18)
 *  CALVIN    none                               not built (issue 18)
 * </pre>
 * The lock words are 64 bits and a timestamp fits one, as in RCC. The shared version word (32) is every protocol's
 * record version (our history checker reads it); for OCC it is DrTM+H's {@code seq}.
 */
public record TupleFormat(String protocol, List<Field> fields) {
    /** One metadata field and the header word that holds it (-1: not placed, the protocol is not built). */
    public record Field(String name, int offset) {
    }

    public static final int TTS_OFFSET = ObjectLayout.PROTOCOL_WORD_OFFSET;

    public static final TupleFormat NOWAIT = new TupleFormat("nowait",
        List.of(new Field("lock", ObjectLayout.CAS_LOCK_OFFSET)));
    public static final TupleFormat WAITDIE = new TupleFormat("waitdie", List.of(new Field("tts", TTS_OFFSET)));
    public static final TupleFormat OCC = new TupleFormat("occ", List.of(new Field("lock",
        ObjectLayout.CAS_LOCK_OFFSET), new Field("seq", ObjectLayout.VERSION_OFFSET)));
    public static final TupleFormat MVCC = new TupleFormat("mvcc", List.of(new Field("tts", -1),
        new Field("rts", -1), new Field("wts[0..3]", -1), new Field("record[0..3]", -1)));
    public static final TupleFormat SUNDIAL = new TupleFormat("sundial", List.of(new Field("lock", -1),
        new Field("rts", -1), new Field("wts", -1)));
    public static final TupleFormat CALVIN = new TupleFormat("calvin", List.of());

    /** The header offset of field {@code name}. */
    public int offsetOf(final String name) {
        for (final Field f : fields) {
            if (f.name.equals(name)) {
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
