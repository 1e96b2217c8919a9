package io.scythe.txn.lotus;

import io.scythe.rrpc.CnPeers;
import io.scythe.rrpc.RpcException;
import io.scythe.rrpc.RpcRequest;
import io.scythe.rrpc.RpcResponder;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.spi.ComputeNodeContext;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.lang.ref.WeakReference;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.LongAdder;

/**
 * One compute node's Lotus state: its lock table for the shards it owns, the shard owners as it knows them, and the
 * lock RPC handlers its peers call (run on the loop that receives them: Lotus has no RPC threads; loop {@code i} of
 * a peer calls loop {@code i} here). A key of a shard this node does not own is answered with
 * {@link LockRpc#OUT_OF_RANGE}.
 */
public final class LotusNode {
    /** Each loop's view of its node ({@link Loop}), a runtime extension set by the host. */
    static final TxnRuntime.Key<Loop> LOOP = new TxnRuntime.Key<>("lotus.loop");
    /**
     * The node of each CnPeers, for tests and end-of-run checks. Both weak: a node references its CnPeers, so a strong
     * value would keep every simulated cluster alive (the explorer runs hundreds).
     */
    private static final Map<CnPeers, WeakReference<LotusNode>> BY_PEERS = new WeakHashMap<>();

    private final int index;
    private final List<String> computeNodes;
    private final CnPeers peers;
    private final LockTable locks;
    private final CriticalFields fields;
    private volatile ShardOwners owners;
    /**
     * Keys one lock message carries at most: what fits one RRPC bucket ({@code RrpcOptions#maxPayload}). The paper
     * sends one message per destination; a transaction with more keys for one node than fit sends several (a
     * release of more keys than fit was refused whole, and its locks were left held).
     */
    private final int keysPerMessage;
    /** Locks taken or refused in this node's table for its own transactions (a CPU CAS, no message). */
    final LongAdder localAcquires = new LongAdder();
    /** Lock messages this node's transactions sent (one per destination and lock phase) and the keys in them. */
    final LongAdder acquireMessages = new LongAdder();
    final LongAdder acquireKeys = new LongAdder();
    /** Lock messages this node served for its peers. */
    final LongAdder served = new LongAdder();

    LotusNode(final ComputeNodeContext node, final ShardOwners owners, final LockTable locks,
              final CriticalFields fields) {
        this(node.index(), node.computeNodes(), node.peers(), owners, locks, fields);
    }

    /** @param peers its CN-to-CN messaging, whose lock handlers it registers; {@code null}: none (unit tests) */
    LotusNode(final int index, final List<String> computeNodes, final CnPeers peers, final ShardOwners owners,
              final LockTable locks, final CriticalFields fields) {
        this.index = index;
        this.computeNodes = List.copyOf(computeNodes);
        this.peers = peers;
        this.owners = owners;
        this.locks = locks;
        this.fields = fields;
        this.keysPerMessage = peers == null ? 0xffff
            : Math.max(1, Math.min(0xffff, (peers.options().maxPayload() - LockRpc.HEADER) / LockRpc.ENTRY));
        if (peers != null) {
            peers.handle(LockRpc.ACQUIRE, this::onAcquire).handle(LockRpc.RELEASE, this::onRelease);
            synchronized (BY_PEERS) {
                BY_PEERS.put(peers, new WeakReference<>(this));
            }
        }
    }

    /** The Lotus node served by {@code peers} (tests, end-of-run checks), or {@code null}. */
    public static LotusNode of(final CnPeers peers) {
        synchronized (BY_PEERS) {
            final WeakReference<LotusNode> node = BY_PEERS.get(peers);
            return node == null ? null : node.get();
        }
    }

    public int index() {
        return index;
    }

    public LockTable locks() {
        return locks;
    }

    /** Lock messages sent to peers, keys in them, local acquires, and lock messages served for peers. */
    public long[] counts() {
        return new long[] {acquireMessages.sum(), acquireKeys.sum(), localAcquires.sum(), served.sum()};
    }

    /**
     * What is wrong with this node's lock table once every transaction ended (a lock left held, a slot word that
     * disagrees with the lock state), or {@code null}: the simulator's end-of-run check.
     */
    public String endOfRunViolation() {
        final Map<Long, List<LockTable.Hold>> left = locks.held();
        if (!left.isEmpty()) {
            final Map.Entry<Long, List<LockTable.Hold>> first = left.entrySet().iterator().next();
            return left.size() + " lotus locks left held (first: key " + Long.toHexString(first.getKey()) + " by "
                + first.getValue() + ")";
        }
        return locks.checkInvariant();
    }

    ShardOwners owners() {
        return owners;
    }

    /** Installs a new shard mapping (resharding's last step; tests). */
    public void owners(final ShardOwners owners) {
        this.owners = owners;
    }

    CriticalFields fields() {
        return fields;
    }

    int keysPerMessage() {
        return keysPerMessage;
    }

    CnPeers peers() {
        return peers;
    }

    String name(final int cn) {
        return computeNodes.get(cn);
    }

    boolean owns(final long lotusKey) {
        return owners.ownerOfKey(lotusKey) == index;
    }

    /**
     * Locks {@code key} in this node's table for its own transaction {@code txn}; {@code null} when this node does not
     * serve the key's shard (the attempt aborts and its retry asks the owner it knows then).
     */
    LockTable.Result acquireLocal(final long key, final boolean write, final long txn) {
        return owns(key) ? locks.acquire(key, write, index, txn) : null;
    }

    private void onAcquire(final RpcRequest request, final RpcResponder responder) {
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        final int n = LockRpc.count(p, at, request.payloadLength());
        if (n < 0) {
            responder.fail(RpcException.FIRST_APPLICATION_CODE, "malformed lotus lock request of "
                + request.payloadLength() + " bytes");
            return;
        }
        served.increment();
        responder.reply(acquire(p, at, n), 0, n);
    }

    /**
     * Serves an acquire message of {@code n} keys: one result byte per key, {@link LockRpc#OUT_OF_RANGE} for a key
     * of a shard this node does not own (the requester aborts and its retry asks the owner it knows then).
     */
    UnsafeBuffer acquire(final DirectBuffer p, final int at, final int n) {
        final long txn = LockRpc.txn(p, at);
        final int from = LockRpc.cn(p, at);
        final UnsafeBuffer reply = new UnsafeBuffer(new byte[n]);
        for (int i = 0; i < n; i++) {
            final long key = LockRpc.key(p, at, i);
            // Algorithm 1 line 15 (a remote write lock invalidates the key's version-table cache entry): no VT cache
            // yet (issue 19).
            reply.putByte(i, owns(key) ? LockRpc.code(locks.acquire(key, LockRpc.write(p, at, i), from, txn))
                : LockRpc.OUT_OF_RANGE);
        }
        return reply;
    }

    private void onRelease(final RpcRequest request, final RpcResponder responder) {
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        final int n = LockRpc.count(p, at, request.payloadLength());
        if (n < 0) {
            responder.fail(RpcException.FIRST_APPLICATION_CODE, "malformed lotus unlock request of "
                + request.payloadLength() + " bytes");
            return;
        }
        served.increment();
        final long txn = LockRpc.txn(p, at);
        for (int i = 0; i < n; i++) {
            locks.release(LockRpc.key(p, at, i), txn); // a key it does not hold (any more): nothing happens
        }
        responder.reply();
    }

    /** One loop's view: its node, its index (the peer loop it calls), and how to defer a batch's flush. */
    record Loop(LotusNode node, int index, Executor deferred) {
    }
}
