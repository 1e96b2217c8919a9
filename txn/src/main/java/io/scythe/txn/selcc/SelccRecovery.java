package io.scythe.txn.selcc;

import io.scythe.bridge.Doorbell;
import io.scythe.fabric.Fabric;
import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.txn.recovery.RedoRecordDescriptor;
import io.scythe.txn.spi.LockKind;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.WeakHashMap;

/**
 * Recovery of a dead SELCC compute node (issue 21; the paper is silent, package doc "Dead compute nodes"): the redo
 * record's lock kind ({@link #LOCK_KIND}), the participant directory that tells a memory node which participants
 * (latch-word bits) a dead node's loops were, and the memory node's dead-node step that clears them
 * ({@link #clearDead}).
 *
 * <p>A record's token for a line is {@code participant << 58 | version}: the participant holding the line Exclusive
 * and the version the commit installs. An entry still needs rolling forward while that participant holds the line
 * and the memory node's copy is older ({@link #LOCK_KIND}'s {@code heldBy}); the roll-forward WRITEs the value and
 * version and releases the Exclusive by FAA, as the commit's write-through and the participant's later release would.
 */
public final class SelccRecovery {
    private SelccRecovery() {
    }

    /** The redo record's lock kind word of SELCC's commits (unique in the registry). */
    public static final int LOCK_KIND_ID = 23;
    /** What the memory nodes' dead-node step reports ({@link #clearDead}). */
    public static final String COUNTED = "selccBits";

    private static final int VERSION_BITS = 64 - 6; // LatchWord's holder field is the top 6 bits
    private static final long VERSION_MASK = (1L << VERSION_BITS) - 1;

    /** The token of an entry: {@code participant} holds the line Exclusive while its commit installs {@code version}. */
    static long token(final int participant, final long version) {
        if ((version & ~VERSION_MASK) != 0) {
            throw new IllegalArgumentException("version " + version + " does not fit a SELCC redo token");
        }
        return (long) LatchWord.checkParticipant(participant) << VERSION_BITS | version;
    }

    /**
     * The token of a line {@code participant} holds Shared (sel-2pl: a read lock released with the commit's
     * write-back): never in a record (records name written lines), only when a live commit finishes from its own
     * record after a refused write-back ({@code RedoStep}); its version field all ones, which no version reaches.
     */
    static long sharedToken(final int participant) {
        return (long) LatchWord.checkParticipant(participant) << VERSION_BITS | VERSION_MASK;
    }

    private static boolean shared(final long token) {
        return versionOf(token) == VERSION_MASK;
    }

    static int participantOf(final long token) {
        return (int) (token >>> VERSION_BITS);
    }

    static long versionOf(final long token) {
        return token & VERSION_MASK;
    }

    /** SELCC's latch as the redo records and recovery know it ({@link LockKind}): 2PL's and OCC's commits. */
    public static final LockKind LOCK_KIND = new LatchKind(LOCK_KIND_ID, "selcc-latch", false);

    /** The redo record's lock kind word of {@code selcc-to}'s commits ({@link #TO_LOCK_KIND}). */
    public static final int TO_LOCK_KIND_ID = 24;

    /**
     * {@code selcc-to}'s latch as its redo records know it: {@link #LOCK_KIND}'s rules, but recovery finishes an entry
     * itself ({@link LockKind#finishesPrimary}): its commit also set {@code wts} (in the 16 bytes of protocol room after
     * the slot, {@code SelccTxn#TO_ROOM}) to its timestamp, which the record does not hold. Recovery WRITEs
     * {@code wts} = a timestamp it takes from the TSO counter now, at or past the dead commit's (taken before its
     * record): a later reader or writer with an older timestamp aborts as it would have (more may abort: none of them
     * saw the dead commit's timestamp). One doorbell: value and length (flags of a delete), {@code wts}, the version
     * last, then the release (which clears an inserted object's CAS word first).
     */
    public static final LockKind TO_LOCK_KIND = new LatchKind(TO_LOCK_KIND_ID, "selcc-to-latch", true);

    /** A SELCC latch word as a {@link LockKind}; {@code timestamps}: {@code selcc-to}'s, which also raises wts. */
    private record LatchKind(int id, String name, boolean timestamps) implements LockKind {
        @Override
        public boolean free(final DirectBuffer header) {
            return header.getLong(ObjectLayout.PROTOCOL_WORD_OFFSET) == LatchWord.FREE;
        }

        /**
         * The token's participant still holds the line Exclusive and the copy is older than the token's version (a
         * {@link #sharedToken}: its reader bit is still set).
         */
        @Override
        public boolean heldBy(final DirectBuffer header, final long token) {
            final long word = header.getLong(ObjectLayout.PROTOCOL_WORD_OFFSET);
            if (shared(token)) {
                return (LatchWord.readers(word) & LatchWord.bit(participantOf(token))) != 0;
            }
            final long version = header.getLong(ObjectLayout.VERSION_OFFSET) & ~ObjectLayout.VERSION_BUSY;
            return LatchWord.holder(word) == participantOf(token) && version < versionOf(token);
        }

        /**
         * Exclusive: the insert's CAS word cleared (an object the commit's INSERT created: the commit clears it before
         * or with the version, so an entry still held has it set or already 0; a line held Exclusive has no other
         * insert's word), then the FAA; Shared: the reader bit's FAA.
         */
        @Override
        public void release(final Doorbell batch, final long address, final int rkey, final long token) {
            if (shared(token)) {
                batch.fetchAndAdd(address + ObjectLayout.PROTOCOL_WORD_OFFSET, rkey,
                    LatchWord.unshare(participantOf(token)));
                return;
            }
            batch.write(address + ObjectLayout.CAS_LOCK_OFFSET, rkey, WordBuffer.of(0), 0, 8);
            batch.fetchAndAdd(address + ObjectLayout.PROTOCOL_WORD_OFFSET, rkey,
                LatchWord.unexclusive(participantOf(token)));
        }

        @Override
        public boolean finishesPrimary() {
            return timestamps;
        }

        /** {@link #TO_LOCK_KIND}'s roll-forward of one entry (its doc). */
        @Override
        public io.vertx.core.Future<Void> finishPrimary(final io.scythe.txn.TxnRuntime runtime,
                                                        final io.scythe.txn.Catalog.Partition partition,
                                                        final long pointer, final int op, final long token,
                                                        final long installedVersion, final DirectBuffer value,
                                                        final int valueLength) {
            if (!timestamps) {
                return io.vertx.core.Future.failedFuture(new UnsupportedOperationException(name + " finishes its "
                    + "entries with the shared writes"));
            }
            final long address = ObjectLayout.addressOf(pointer);
            final int rkey = partition.descriptor().objects().rkey();
            final int room = partition.descriptor().objectSlotBytes();
            return runtime.tso().next().compose(floor -> runtime.channel(partition.node()).compose(ch -> {
                final Doorbell batch = ch.doorbell();
                if ((op & RedoRecordDescriptor.OP_VALUE) != 0) {
                    batch.write(address + ObjectLayout.VALUE_OFFSET, rkey, value, 0, valueLength);
                    final UnsafeBuffer length = new UnsafeBuffer(new byte[4]);
                    length.putInt(0, valueLength);
                    batch.write(address + ObjectLayout.VALUE_LENGTH_OFFSET, rkey, length, 0, 4);
                }
                if ((op & (RedoRecordDescriptor.OP_DELETE | RedoRecordDescriptor.OP_REVIVE)) != 0) {
                    final UnsafeBuffer flags = new UnsafeBuffer(new byte[2]);
                    flags.putShort(0, (short) ((op & RedoRecordDescriptor.OP_DELETE) != 0
                        ? ObjectLayout.FLAG_DELETED : 0));
                    batch.write(address + ObjectLayout.FLAGS_OFFSET, rkey, flags, 0, 2);
                }
                // An inserted object's value is there (its INSERT wrote it); its CAS word is cleared by the release.
                batch.write(address + room + 8, rkey, WordBuffer.of(floor), 0, 8);
                batch.write(address + ObjectLayout.VERSION_OFFSET, rkey, WordBuffer.of(installedVersion), 0, 8);
                release(batch, address, rkey, token);
                return batch.post().mapEmpty();
            }));
        }
    }

    /**
     * Per fabric (one simulated or embedded cluster), each compute node's id prefix and its loops' participants. A
     * participant is named by one prefix at a time: a loop that joins with a number an earlier incarnation had takes
     * it over ({@link #joined}), so the map holds at most {@link LatchWord#MAX_PARTICIPANTS} participants.
     */
    private static final Map<Fabric, Map<Long, Set<Integer>>> DIRECTORY = new WeakHashMap<>();

    /**
     * The loop of ids {@code idBase} on {@code fabric} is participant {@code participant}. A number another prefix
     * held (an earlier, dead incarnation whose number is reused, as a restarted cluster node's loops are) is taken
     * over: the old prefix no longer names it (a later dead-node step of the old incarnation must not clear the bits
     * the new one sets) and every memory node forgets it was cleared ({@link #cleared}: the new holder of the number
     * holds latches again, and its invalidations are served). So the old incarnation must be recovered on every
     * memory node before its numbers are reused (a restarted node serves only after its own recovery).
     */
    static void joined(final Fabric fabric, final long idBase, final int participant) {
        final long prefix = idBase & io.scythe.txn.recovery.RecoveryRpc.NODE_ID_MASK;
        synchronized (DIRECTORY) {
            final Map<Long, Set<Integer>> nodes = DIRECTORY.computeIfAbsent(fabric, f -> new HashMap<>());
            boolean reused = false;
            for (final var it = nodes.entrySet().iterator(); it.hasNext(); ) {
                final Map.Entry<Long, Set<Integer>> e = it.next();
                if (e.getKey() != prefix && e.getValue().remove(participant)) {
                    reused = true;
                    if (e.getValue().isEmpty()) {
                        it.remove();
                    }
                }
            }
            nodes.computeIfAbsent(prefix, n -> new TreeSet<>()).add(participant);
            if (reused) { // the same loop joining again (a cache made late) keeps what was cleared: it may be dead
                forget(fabric, participant);
            }
        }
    }

    /**
     * Per fabric, per memory node (its fabric node name, the {@code node} of the lines it holds), the participants
     * whose bits that memory node's dead-node step cleared: they hold nothing there any more. Bounded: at most
     * {@link LatchWord#MAX_PARTICIPANTS} per memory node, a participant forgotten when its number is reused
     * ({@link #joined}).
     */
    private static final Map<Fabric, Map<String, Set<Integer>>> CLEARED = new WeakHashMap<>();

    /**
     * Whether {@code participant}'s bits were cleared by memory node {@code memoryNode}'s dead-node step on
     * {@code fabric}: it is dead and holds no latch of that node's lines, so an invalidation to it about one of them
     * is answered at once instead of waiting for its call bound, and a handover to it that lands later must be taken
     * back ({@code LineCache}). Another memory node's step may not have run yet: its lines may still name the
     * participant, and that step will clear them. In the simulator the memory nodes and compute nodes share this view,
     * as a cluster's membership would tell every compute node of a recovered one.
     */
    static boolean cleared(final Fabric fabric, final String memoryNode, final int participant) {
        synchronized (DIRECTORY) {
            return CLEARED.getOrDefault(fabric, Map.of()).getOrDefault(memoryNode, Set.of()).contains(participant);
        }
    }

    /**
     * Whether some memory node's dead-node step cleared {@code participant} on {@code fabric}: its compute node is
     * dead (an invalidation it sent is not served; its own loop's timers stop asking).
     */
    static boolean dead(final Fabric fabric, final int participant) {
        synchronized (DIRECTORY) {
            for (final Set<Integer> cleared : CLEARED.getOrDefault(fabric, Map.of()).values()) {
                if (cleared.contains(participant)) {
                    return true;
                }
            }
            return false;
        }
    }

    /**
     * Whether memory node {@code memoryNode}'s dead-node step ran for the compute node that ran transaction {@code id}
     * (a CAS word: its id prefix names the node, the directory its participants): the step buries that node's locked
     * inserts on {@code memoryNode} before it clears its bits ({@code SelccModule#startMemoryNode}), so a cached copy
     * still showing {@code id} in its CAS word is older than the burial. False for a prefix the directory does not
     * know (cluster nodes: their compute nodes never see the memory nodes' steps).
     */
    static boolean buriedBy(final Fabric fabric, final String memoryNode, final long id) {
        synchronized (DIRECTORY) {
            final Set<Integer> loops = DIRECTORY.getOrDefault(fabric, Map.of())
                .get(id & io.scythe.txn.recovery.RecoveryRpc.NODE_ID_MASK);
            if (loops == null) {
                return false;
            }
            for (final int p : loops) {
                if (cleared(fabric, memoryNode, p)) {
                    return true;
                }
            }
            return false;
        }
    }

    /** Memory node {@code memoryNode}'s step cleared {@code participants} on {@code fabric}. */
    static void markCleared(final Fabric fabric, final String memoryNode, final Set<Integer> participants) {
        synchronized (DIRECTORY) {
            CLEARED.computeIfAbsent(fabric, f -> new HashMap<>()).computeIfAbsent(memoryNode, n -> new TreeSet<>())
                .addAll(participants);
        }
    }

    /** {@code participant} holds latches again on {@code fabric} (its number reused): no memory node cleared it. */
    private static void forget(final Fabric fabric, final int participant) {
        final Map<String, Set<Integer>> nodes = CLEARED.get(fabric);
        if (nodes != null) {
            nodes.values().removeIf(cleared -> cleared.remove(participant) && cleared.isEmpty());
        }
    }

    /** How many (memory node, participant) pairs {@code fabric} remembers as cleared (tests: the bound). */
    static int clearedEntries(final Fabric fabric) {
        synchronized (DIRECTORY) {
            return CLEARED.getOrDefault(fabric, Map.of()).values().stream().mapToInt(Set::size).sum();
        }
    }

    /** Per compute node's peer messaging, the dead peers it was told of ({@link #firstToSeeLeft}). */
    private static final Map<io.scythe.rrpc.CnPeers, Set<String>> LEFT = new WeakHashMap<>();

    /** Whether {@code peer} (a recovered compute node) is news to {@code peers}: its first caller tells it. */
    static boolean firstToSeeLeft(final io.scythe.rrpc.CnPeers peers, final String peer) {
        synchronized (DIRECTORY) {
            return LEFT.computeIfAbsent(peers, p -> new java.util.HashSet<>()).add(peer);
        }
    }

    /** The participants of the compute nodes {@code idPrefixes} name on {@code fabric} (empty: none known). */
    static Set<Integer> participants(final Fabric fabric, final long[] idPrefixes) {
        return participants(fabric, idPrefixes, NO_HOST_NUMBERS);
    }

    /** No loop numbers from the host ({@code MemoryNodeContext#loopNumbers} where it knows none). */
    static final java.util.function.LongFunction<int[]> NO_HOST_NUMBERS = prefix -> new int[0];

    /**
     * As above; a prefix the directory does not know (a compute node in another process: cluster nodes, whose memory
     * nodes never see its loops join) takes the loop numbers the host gives it ({@code hostNumbers}, the memory node's
     * {@code MemoryNodeContext#loopNumbers}), which are the participants ({@link Participants#of}: a cluster's loops
     * are their peer-loop numbers).
     */
    static Set<Integer> participants(final Fabric fabric, final long[] idPrefixes,
                                     final java.util.function.LongFunction<int[]> hostNumbers) {
        final Set<Integer> found = new TreeSet<>();
        synchronized (DIRECTORY) {
            final Map<Long, Set<Integer>> nodes = DIRECTORY.getOrDefault(fabric, Map.of());
            for (final long prefix : idPrefixes) {
                final Set<Integer> known = nodes.get(prefix & io.scythe.txn.recovery.RecoveryRpc.NODE_ID_MASK);
                if (known != null) {
                    found.addAll(known);
                    continue;
                }
                for (final int number : hostNumbers.apply(prefix & io.scythe.txn.recovery.RecoveryRpc.NODE_ID_MASK)) {
                    found.add(LatchWord.checkParticipant(number));
                }
            }
        }
        return found;
    }

    /**
     * The memory node's dead-node step (after the roll-forward of the dead node's records): in every table of
     * SELCC's format, the GCL region (the B-link tree's lines) included, each latch word loses the dead
     * participants' reader bits and, when one of them is its Exclusive holder, the holder field; by CAS, retried (live
     * participants' FAAs land meanwhile). Returns how many words it changed.
     */
    static int clearDead(final LogDb db, final long[] idPrefixes) {
        return clearDead(db, idPrefixes, NO_HOST_NUMBERS);
    }

    /** As above, a prefix of a compute node in another process numbered by the host ({@code hostNumbers}). */
    static int clearDead(final LogDb db, final long[] idPrefixes,
                         final java.util.function.LongFunction<int[]> hostNumbers) {
        final Set<Integer> dead = participants(db.nic().fabric(), idPrefixes, hostNumbers);
        if (dead.isEmpty()) {
            return 0;
        }
        final int changed = clearDead(db, dead);
        markCleared(db.nic().fabric(), db.nic().node(), dead);
        return changed;
    }

    /** What the memory nodes' burial of a dead node's locked inserts reports ({@link #buryDead}). */
    public static final String BURIED = "selccInsertsBuried";

    /**
     * The memory node's step before it abandons a dead node's locked inserts (after the roll-forward, which cleared
     * the CAS words of the inserts the dead node decided): in every table of SELCC's format but the GCL region, each
     * object whose CAS word is a transaction id of the dead node (an insert it created and never committed) is buried
     * in place as its abort would have: a tombstone (flags DELETED, length 0, version + 1), then the CAS word
     * cleared. Not the memory node's ABANDON, which would let reclamation free the slot: survivors may still latch it
     * through pointers they hold (an FAA on a slot freed and reused lands in another object's latch word, whose
     * undo then borrows from it: a phantom seed under {@code sel-2pl} left a word of -2). Returns how many it buried.
     */
    static int buryDead(final LogDb db, final long[] idPrefixes,
                        final java.util.function.LongFunction<int[]> hostNumbers) {
        if (participants(db.nic().fabric(), idPrefixes, hostNumbers).isEmpty()) {
            return 0; // not a SELCC compute node (another protocol's run)
        }
        return bury(db, burial(idPrefixes));
    }

    /** {@link #buryDead}'s walk: {@code step} on the CAS word of every object of SELCC's tables but the GCL region. */
    static int bury(final LogDb db, final io.scythe.txn.recovery.DeadNodeWords.SlotRewrite step) {
        return io.scythe.txn.recovery.DeadNodeWords.rewriteSlots(db, ObjectLayout.CAS_LOCK_OFFSET, table ->
            !"selcc".equals(table.format().name()) || GclRegion.TABLE.equals(table.schema().name()) ? null : step);
    }

    /**
     * The CAS word of an object {@link #buryDead} is burying: held by the step (no transaction id: its node bits
     * name no node), so the tombstone is written only over a slot whose word the step won, once (its CAS retried
     * against a word that changed meanwhile writes nothing); survivors see a locked insert, as before.
     */
    static final long BURYING = -1L;

    /**
     * {@link #buryDead}'s step on one object: a CAS word of the dead node (id prefixes {@code idPrefixes}) is claimed
     * ({@link #BURYING}), then the tombstone (flags DELETED, length 0, version + 1, under VERSION_BUSY), then the
     * word is cleared.
     */
    static io.scythe.txn.recovery.DeadNodeWords.SlotRewrite burial(final long[] idPrefixes) {
        return new io.scythe.txn.recovery.DeadNodeWords.SlotRewrite() {
            @Override
            public long claim(final long word) {
                return word == 0 || word == BURYING || !io.scythe.txn.recovery.DeadNodeWords.ownedBy(idPrefixes, word)
                    ? word : BURYING;
            }

            @Override
            public long rewrite(final AtomicBuffer m, final int at, final long word, final long claimed) {
                final long version = m.getLongVolatile(at + ObjectLayout.VERSION_OFFSET) & ~ObjectLayout.VERSION_BUSY;
                m.putLongVolatile(at + ObjectLayout.VERSION_OFFSET, version | ObjectLayout.VERSION_BUSY);
                m.putInt(at + ObjectLayout.VALUE_LENGTH_OFFSET, 0);
                m.putShort(at + ObjectLayout.FLAGS_OFFSET, (short) ObjectLayout.FLAG_DELETED);
                m.putLongVolatile(at + ObjectLayout.VERSION_OFFSET, version + 1);
                return 0;
            }
        };
    }

    private static int clearDead(final LogDb db, final Set<Integer> dead) {
        long bits = 0;
        for (final int p : dead) {
            bits |= LatchWord.bit(p);
        }
        final long deadBits = bits;
        return io.scythe.txn.recovery.DeadNodeWords.rewrite(db, ObjectLayout.PROTOCOL_WORD_OFFSET, table ->
            !"selcc".equals(table.format().name()) ? null : word -> cleared(word, dead, deadBits)); // GCL lines too
    }

    /** Whether {@code word} names {@code participant}: its Exclusive holder or one of its readers. */
    static boolean names(final long word, final int participant) {
        return LatchWord.holder(word) == participant || LatchWord.reads(word, participant);
    }

    /** {@code word} without {@code participant}'s reader bit and, when it is the holder, the holder field. */
    static long without(final long word, final int participant) {
        return cleared(word, Set.of(participant), LatchWord.bit(participant));
    }

    /** {@code word} without the participants {@code dead} (their bits {@code deadBits}). */
    static long cleared(final long word, final Set<Integer> dead, final long deadBits) {
        final long readers = LatchWord.readers(word) & ~deadBits;
        final int holder = LatchWord.holder(word);
        return (holder == 0 || dead.contains(holder) ? 0 : LatchWord.exclusive(holder)) | readers;
    }
}
