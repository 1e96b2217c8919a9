package io.scythe.txn.rcc.calvin;

import io.scythe.bridge.Bridge;
import io.scythe.fabric.CompletionQueue;
import io.scythe.fabric.MemoryRegion;
import io.scythe.fabric.RemoteRegion;
import io.scythe.rrpc.CnPeers;
import io.scythe.txn.TxnRuntime;
import io.vertx.core.Future;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayDeque;

/**
 * CALVIN's one-sided messaging between compute nodes (RCC §4.6, the RDMA form): every node registers one region,
 * {@link #REGION}, with a ring of {@link #SLOTS} fixed slots of {@link #SLOT_BYTES} per sending node; a sender
 * one-sided WRITEs a message (a batch, forwarded records, writes, a done) into its next slot at the receiver, the
 * value followed by its notify word, in one WRITE, and the receiver's home loop notices it by polling the notify words
 * (a {@link Bridge.Poller}: no RPC handler, no reply). Loop-confined to the node's home loop.
 *
 * <p>A slot is {@code length u32 (of what follows up to the notify), type u32, payload, padding to 8, notify u64}: the
 * notify word is the message's sequence number from that sender (1, 2, ...), last in the WRITE, so a slot is complete
 * once its length is set and the word after it holds the sequence number expected next (a stale word from the slot's
 * earlier use holds an older number). The receiver consumes each sender's slots in order, clears the length and
 * notify words and publishes how many it consumed in the region's first words (a u64 per sender); a sender with
 * {@link #SLOTS} messages unconsumed READs that word (one-sided again) before it reuses a slot, retrying after
 * {@link #CREDIT_RETRY_NS} while the receiver is behind.
 */
final class CalvinInbox implements Bridge.Poller {
    static final String REGION = "rcc-calvin.inbox";
    /** Bytes of a slot: a 680-byte TPC-C customer row fits with its key and header. */
    static final int SLOT_BYTES = 2048;
    /** Slots per sending node. */
    static final int SLOTS = 64;
    /** How long a sender with no free slot at a receiver waits before it READs the receiver's count again. */
    static final long CREDIT_RETRY_NS = 1_000;
    /** Bytes of a slot's framing: length, type, notify, and up to 7 of padding. */
    private static final int FRAMING = 4 + 4 + 8 + 7;

    /** What a message received is given to: its sender, its type and payload. */
    interface Handler {
        void onMessage(int from, int type, CalvinWire.In payload);
    }

    private final CnPeers peers;
    private final java.util.List<String> names;
    private final int self;
    private final int nodes;
    /** This node's inbox, registered when a peer first asks where it is (the RPC form never registers it). */
    private MemoryRegion region;
    private AtomicBuffer memory;
    private final long slotsBase;
    /** Receiver side: messages consumed per sender. */
    private final long[] consumed;
    /** Sender side, per receiver: messages sent, the receiver's count last read, messages waiting for a slot. */
    private final long[] sent;
    private final long[] knownConsumed;
    private final boolean[] reading;
    private final ArrayDeque<Outgoing>[] queued;
    private final java.util.Map<Integer, Future<RemoteRegion>> remotes = new java.util.HashMap<>();
    private Handler handler;
    private TxnRuntime home;
    /** A message to or READ at a peer failed: (peer, why); the node judges whether the peer died. */
    private java.util.function.BiConsumer<Integer, String> giveUp;
    private boolean spin;
    /**
     * A spinning inbox slows to a poll every {@code idlePollNs} (the peers' option, 200 us by default) once that long
     * passed without a message: an idle cluster node's loop burnt 0.3-0.75 of a core polling its inbox (suitetime's
     * measure, issue 23), where the RPC server beside it already slowed so.
     */
    private io.scythe.bridge.IdlePolling idlePolling;
    /** WRITEs and credit READs posted and not completed: the loop keeps polling while there are any. */
    private int inFlight;
    private long received;
    private long writes;

    private record Outgoing(int type, DirectBuffer payload) {
    }

    @SuppressWarnings("unchecked")
    CalvinInbox(final CnPeers peers, final java.util.List<String> names, final int self) {
        this.peers = peers;
        this.names = names;
        this.self = self;
        this.nodes = names.size();
        this.slotsBase = slotsBase(nodes);
        peers.handle(DESCRIBE, this::onDescribe);
        this.consumed = new long[nodes];
        this.sent = new long[nodes];
        this.knownConsumed = new long[nodes];
        this.reading = new boolean[nodes];
        this.dropped = new boolean[nodes];
        this.rejoinedAt = new String[nodes];
        this.queued = new ArrayDeque[nodes];
        for (int i = 0; i < nodes; i++) {
            queued[i] = new ArrayDeque<>();
        }
    }

    /** The largest payload a message carries. */
    static int maxPayload() {
        return SLOT_BYTES - FRAMING;
    }

    /** Sets the inbox up on the home loop: messages go to {@code handler}. */
    void start(final TxnRuntime runtime, final Handler messages,
               final java.util.function.BiConsumer<Integer, String> fatal) {
        this.home = runtime;
        this.handler = messages;
        this.giveUp = fatal;
    }

    /**
     * Registers the inbox and starts polling it, on the home loop, when a peer first asks where it is: a run of the
     * RPC form registers nothing more than before (512 KB for 4 nodes, zeroed once on the loop).
     */
    private void open() {
        if (region != null) {
            return;
        }
        region = peers.register(REGION, slotsBase + (long) nodes * SLOTS * SLOT_BYTES);
        memory = region.buffer();
        final Bridge bridge = Bridge.current();
        spin = !region.observesRemoteWrites(); // nothing wakes the loop on a peer's WRITE: keep polling
        idlePolling = new io.scythe.bridge.IdlePolling(peers.options().idlePollNs());
        idlePolling.expectWork(bridge.clock().nanoTime()); // the peer that asked where it is writes soon
        region.remoteWriteListener(bridge::wake);
        bridge.addPoller(this);
    }

    // ------------------------------------------------------------------------------------------------ sending

    /** Node {@code to} died: what waits for a slot there is dropped, and nothing more is sent to it. */
    void drop(final int to) {
        dropped[to] = true;
        queued[to].clear();
    }

    /** Sends {@code payload} as a message of {@code type} to node {@code to}, after what was sent to it before. */
    void send(final int to, final int type, final DirectBuffer payload) {
        if (to == self) {
            throw new IllegalArgumentException("CALVIN node " + self + " sends itself a message");
        }
        if (payload.capacity() > maxPayload()) {
            throw new IllegalArgumentException("CALVIN message of " + payload.capacity() + " bytes does not fit a "
                + "slot (" + maxPayload() + " bytes of payload)");
        }
        queued[to].add(new Outgoing(type, payload));
        pump(to);
    }

    private void pump(final int to) {
        while (!queued[to].isEmpty()) {
            if (sent[to] - knownConsumed[to] >= SLOTS) {
                readCredit(to);
                return;
            }
            final Outgoing m = queued[to].poll();
            final long seq = ++sent[to];
            final UnsafeBuffer slot = frame(seq, m.type(), m.payload());
            final long offset = slotOffset(slotsBase, self, seq);
            writes++;
            inFlight++;
            remote(to).compose(r -> peers.write(r, offset, slot, 0, slot.capacity())).onComplete(ar -> {
                inFlight--;
                if (ar.failed()) {
                    giveUp.accept(to, "CALVIN one-sided message 0x" + Integer.toHexString(m.type()) + " to "
                        + names.get(to) + " failed: " + ar.cause());
                }
            });
        }
    }

    /** READs how many of this node's messages {@code to} consumed, then sends what waits for a slot. */
    private void readCredit(final int to) {
        if (reading[to]) {
            return;
        }
        reading[to] = true;
        inFlight++;
        final UnsafeBuffer word = new UnsafeBuffer(new byte[8]);
        remote(to).compose(r -> peers.read(r, 8L * self, word, 0, 8)).onComplete(ar -> {
            reading[to] = false;
            inFlight--;
            if (ar.failed()) {
                giveUp.accept(to, "CALVIN credit READ at " + names.get(to) + " failed: " + ar.cause());
                return;
            }
            final long seen = word.getLong(0);
            if (seen > knownConsumed[to]) {
                knownConsumed[to] = seen;
                pump(to);
            } else {
                home.timers().after(CREDIT_RETRY_NS).onComplete(v -> pump(to));
            }
        });
    }

    /**
     * Where {@code to}'s inbox is: asked once, by {@link #DESCRIBE} (set-up, not on a message's path: the simulator's
     * peers have no event-bus directory to look regions up in), then cached.
     */
    Future<RemoteRegion> remote(final int to) {
        final Future<RemoteRegion> known = remotes.get(to);
        if (known != null) {
            return known;
        }
        if (describeAttempts == 1) { // in one process: asked once, a failure reported at once
            final Future<RemoteRegion> asked = describe(to);
            remotes.put(to, asked);
            asked.onFailure(e -> remotes.remove(to));
            return asked;
        }
        final io.vertx.core.Promise<RemoteRegion> found = io.vertx.core.Promise.promise();
        remotes.put(to, found.future());
        describe(to, found, describeAttempts);
        return found.future();
    }

    private Future<RemoteRegion> describe(final int to) {
        final UnsafeBuffer none = new UnsafeBuffer(new byte[0]);
        return peers.call(address(to), 0, DESCRIBE, none, 0, 0).map(reply -> {
            final CalvinWire.In in = new CalvinWire.In(reply.payload(), 0, reply.length());
            final long address = in.u64();
            final long length = in.u64();
            final int rkey = in.u32();
            final io.scythe.fabric.MemoryKind kind = io.scythe.fabric.MemoryKind.values()[in.u8()];
            final String node = new String(in.bytes(), java.nio.charset.StandardCharsets.UTF_8);
            return new RemoteRegion(node, REGION, address, length, rkey, kind);
        });
    }

    /**
     * Asks {@code to} where its inbox is; a failed ask is asked again {@code attemptsLeft - 1} more times,
     * {@link #DESCRIBE_RETRY_NS} apart, while nothing was {@link #drop}ped for it (cluster nodes: a peer not started
     * yet, or its ring's opening timed out under load, answers a later ask; no message was sent, so none is lost).
     */
    private void describe(final int to, final io.vertx.core.Promise<RemoteRegion> found, final int attemptsLeft) {
        describe(to).onComplete(ar -> {
            if (ar.succeeded()) {
                found.complete(ar.result());
            } else if (attemptsLeft > 1 && !dropped[to]) {
                home.timers().after(DESCRIBE_RETRY_NS).onComplete(v -> describe(to, found, attemptsLeft - 1));
            } else {
                remotes.remove(to);
                found.fail(ar.cause());
            }
        });
    }

    /** How long apart a failed {@link #DESCRIBE} is asked again where {@link #patientDescribe} allows. */
    static final long DESCRIBE_RETRY_NS = 100_000_000;
    /** How many times a peer is asked where its inbox is before a failure is reported: 1 (at once) by default. */
    private int describeAttempts = 1;
    /** Peers {@link #drop}ped (told dead): not asked again. */
    private final boolean[] dropped;

    /**
     * Cluster nodes: a failed {@link #DESCRIBE} is asked again for up to {@code attempts} times (a peer process not
     * started yet, or one whose ring's opening timed out under load, is not dead); in one process (the simulator,
     * the embedded cluster) it fails at once, as before.
     */
    void patientDescribe(final int attempts) {
        describeAttempts = Math.max(1, attempts);
    }

    /** Set-up RPC: answers where this node's inbox is ({@code address u64, length u64, rkey u32, kind u8, node}). */
    static final int DESCRIBE = 0x5C0F;

    private void onDescribe(final io.scythe.rrpc.RpcRequest request, final io.scythe.rrpc.RpcResponder responder) {
        open();
        final RemoteRegion r = region.describe();
        responder.reply(new CalvinWire.Out().u64(r.address()).u64(r.length()).u32(r.rkey()).u8(r.kind().ordinal())
            .bytes(r.node().getBytes(java.nio.charset.StandardCharsets.UTF_8)).done());
    }

    // ------------------------------------------------------------------------------------------------ receiving

    @Override
    public int poll(final long nowNs) {
        int work = 0;
        for (int from = 0; from < nodes; from++) {
            if (from != self) {
                work += consume(memory, slotsBase, from, consumed, handler);
            }
        }
        received += work;
        idlePolling.polled(nowNs, work);
        return work;
    }

    /**
     * Restart (issue 18, step 3; answered with {@code CalvinWire#JOIN}): polls {@code from}'s ring dry, its old
     * incarnation's late words dropped undelivered (fenced by then), and answers how many of {@code from}'s messages
     * this node consumed in all; the new incarnation's numbers go on from there ({@link #continueAt}).
     */
    long drainDead(final int from) {
        if (memory != null) {
            consume(memory, slotsBase, from, consumed, null);
        }
        return consumed[from];
    }

    /**
     * Restart (issue 18, step 3; from {@code JOIN}'s answer): this node is a new incarnation, and {@code to} consumed {@code count}
     * of its old incarnation's messages ({@link #drainDead} there): its next message to {@code to} is number
     * {@code count + 1}, in the slot after the old one's last, so {@code to}'s ring reads on as if nobody had died.
     */
    void continueAt(final int to, final long count) {
        if (sent[to] != 0) {
            throw new IllegalStateException("CALVIN node " + self + " already sent " + sent[to] + " messages to "
                + names.get(to) + ": too late to continue its old incarnation's ring at " + count);
        }
        sent[to] = count;
        knownConsumed[to] = count;
    }

    /** Where node {@code to} is called: its rejoined incarnation's peer name once it rejoined, else its own. */
    String address(final int to) {
        final String rejoined = rejoinedAt[to];
        return rejoined != null ? rejoined : names.get(to);
    }

    /** Peer names of rejoined incarnations, by node ({@link #rejoined}); null: the node's own. */
    private final String[] rejoinedAt;

    /**
     * Restart (issue 18): node {@code to}'s new incarnation, at peer name {@code name}, rejoined: this node's ring
     * there is a new one (its inbox is a new region, nothing of it consumed yet), so the count of messages sent to
     * it and the count it last read start again at 0, what waited for the old incarnation's slots is gone with it,
     * and where its inbox is is asked again (at {@code name}). Called once the old incarnation's ring here was
     * drained ({@link #drainDead}).
     */
    void rejoined(final int to, final String name) {
        if (!dropped[to]) {
            throw new IllegalStateException("CALVIN node " + self + ": " + names.get(to) + " rejoins, but its old "
                + "incarnation was not dropped here");
        }
        dropped[to] = false;
        queued[to].clear();
        sent[to] = 0;
        knownConsumed[to] = 0;
        remotes.remove(to);
        rejoinedAt[to] = name;
    }

    /** Messages sent to {@code to} so far, and its count of consumed last read (tests). */
    long[] sentTo(final int to) {
        return new long[] {sent[to], knownConsumed[to]};
    }

    // ------------------------------------------------------------------------------------------------ the ring

    /** Where message number {@code seq} from {@code from} goes in a receiver's region. */
    static long slotOffset(final long slotsBase, final int from, final long seq) {
        return slotsBase + ((long) from * SLOTS + (seq - 1) % SLOTS) * SLOT_BYTES;
    }

    /** The one WRITE of message number {@code seq}: length, type, payload, padding to 8, notify word last. */
    static UnsafeBuffer frame(final long seq, final int type, final DirectBuffer payload) {
        final int body = 4 + payload.capacity();
        final int notifyAt = align(4 + body, 8);
        final UnsafeBuffer slot = new UnsafeBuffer(new byte[notifyAt + 8]);
        slot.putInt(0, body);
        slot.putInt(4, type);
        slot.putBytes(8, payload, 0, payload.capacity());
        slot.putLong(notifyAt, seq);
        return slot;
    }

    /**
     * Consumes {@code from}'s complete messages in {@code memory}, in order from number {@code consumed[from] + 1}:
     * each one's length and notify words cleared, the count published in the region's first words (the sender READs
     * it before it reuses a slot), then given to {@code sink} ({@code null}: dropped). Answers how many it consumed.
     */
    static int consume(final AtomicBuffer memory, final long slotsBase, final int from, final long[] consumed,
                       final Handler sink) {
        int work = 0;
        for (;;) {
            final long seq = consumed[from] + 1;
            final int at = (int) slotOffset(slotsBase, from, seq);
            final int body = memory.getIntVolatile(at);
            if (body < 4 || body > SLOT_BYTES - FRAMING + 4) {
                return work; // nothing there yet (or the length not landed)
            }
            final int notifyAt = at + align(4 + body, 8);
            if (memory.getLongVolatile(notifyAt) != seq) {
                return work; // the notify word has not landed
            }
            final int type = memory.getInt(at + 4);
            final UnsafeBuffer payload = new UnsafeBuffer(new byte[body - 4]);
            memory.getBytes(at + 8, payload, 0, body - 4);
            memory.putLong(notifyAt, 0);
            memory.putIntVolatile(at, 0);
            consumed[from] = seq;
            memory.putLongVolatile(8 * from, seq); // the sender READs it before it reuses a slot
            work++;
            if (sink != null) {
                sink.onMessage(from, type, new CalvinWire.In(payload, 0, payload.capacity()));
            }
        }
    }

    /** Bytes before the first slot of a region for {@code nodes} senders: their consumed counts, aligned. */
    static long slotsBase(final int nodes) {
        return align(8L * nodes, 64);
    }

    /**
     * Busy while a WRITE or READ of it is in flight, as an RPC client is while a call is (its verbs execute at their
     * modelled time only when the loop polls then: a loop asleep on a timer until that time wakes late, by the timer's
     * granularity, which made the one-sided form slower than RPC in the embedded bench), or, when nothing wakes the
     * loop on a peer's WRITE, until it has been idle a while ({@link #idlePolling}: then polled every {@code
     * idlePollNs}, {@link #wakeAtNs}).
     */
    @Override
    public boolean busy() {
        return inFlight > 0 || idlePolling.busy(spin);
    }

    @Override
    public long wakeAtNs() {
        return inFlight > 0 ? CompletionQueue.NO_EVENT : idlePolling.wakeAtNs(spin);
    }

    /** Messages received and WRITEs posted so far, for tests. */
    long received() {
        return received;
    }

    long writes() {
        return writes;
    }

    /** Messages waiting for a slot at some receiver (0 when quiet). */
    int backlog() {
        int n = 0;
        for (final ArrayDeque<Outgoing> q : queued) {
            n += q.size();
        }
        return n;
    }

    private static int align(final long n, final int to) {
        return (int) ((n + to - 1) / to * to);
    }
}
