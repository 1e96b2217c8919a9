package io.scythe.txn.rcc.calvin;

import io.scythe.rrpc.CnPeers;
import io.scythe.rrpc.RpcException;
import io.scythe.rrpc.RpcRequest;
import io.scythe.rrpc.RpcResponder;
import io.scythe.storage.ObjectLayout;
import io.scythe.txn.AbortException;
import io.scythe.txn.Access;
import io.scythe.txn.AbortReason;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.UnknownKeyException;
import io.scythe.txn.onesided.ReadSet;
import io.scythe.txn.rcc.calvin.CalvinWire.Decl;
import io.scythe.txn.rcc.calvin.CalvinWire.Key;
import io.scythe.txn.rcc.calvin.CalvinWire.Record;
import io.scythe.txn.rcc.calvin.CalvinWire.Write;
import io.scythe.txn.spi.ComputeNodeContext;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;

/**
 * One compute node of CALVIN (RCC §4.6): its sequencer, its deterministic scheduler and lock manager, and the
 * dispatch and forwarding between nodes. It all runs on the node's home loop (loop 0), as Calvin's sequencer and
 * scheduler threads; the node's other loops hand their transactions to it and get their records back through their
 * loops' executors.
 *
 * <p>Data is partitioned among the compute nodes: a key belongs to the node {@code partition mod nodes} (its memory
 * node's partition index), which locks it and is the only one to read or write it (over its own one-sided verbs to
 * the memory node, the stand-in for Calvin's local storage). Per epoch the node dispatches to every node the
 * transactions of its batch that touch that node's keys ({@link CalvinWire#BATCH}, one batched RPC per node and
 * epoch, empty when none). Each node grants locks in the total order; once a transaction holds its locks at a node,
 * the node reads its records there and forwards them to the transaction's executor ({@link CalvinWire#FORWARD}); a
 * passive participant (nothing written there) then releases at once, an active one holds its locks until the
 * executor sends the values to write ({@link CalvinWire#WRITE}), writes them and releases. Loop-confined to the home
 * loop unless said otherwise.
 */
final class CalvinNode {
    /** Per-loop state: its runtime and executor, and the node. */
    record Lane(CalvinNode node, int loop, TxnRuntime runtime, Executor executor) {
    }

    static final TxnRuntime.Key<Lane> LANE = new TxnRuntime.Key<>("rcc-calvin.lane");

    private final CnPeers peers;
    private final int index;
    private final List<String> names;
    private final int nodes;
    /**
     * Cluster nodes (each node a process, {@link ComputeNodeContext#separateProcesses}): the death word is the host's
     * {@link ComputeNodeContext#onPeerRecovered}, a dead node's input log is found on the memory nodes by its
     * incarnation's name, and a restarted node joins once the host tells it its old incarnation is recovered
     * ({@link #ownRecovered}).
     */
    private final boolean separateProcesses;
    private TxnRuntime home;
    private Executor homeExecutor;
    private long epochNs = CalvinProtocol.DEFAULT_EPOCH_NS;
    private final Epochs<List<Decl>> epochs;
    private List<CalvinTxn> pending = new ArrayList<>();
    /** Transactions this node executes, by id, from submission until finished. */
    private final Map<Long, CalvinTxn> executing = new HashMap<>();
    /**
     * A scheduler: the lock queues of one node's partitions and the transactions holding locks there. Each node runs
     * its own ({@link #mine}); a survivor taking over a dead owner's partitions runs a second one for them
     * ({@link #adopted}, issue 18 part 5), rebuilt from the total order ({@link Takeover#input}).
     */
    private static final class Sched {
        /** The node whose partitions it schedules. */
        final int home;
        /** Transactions participating here and holding (or queued for) locks, by id. */
        final Map<Long, Part> parts = new HashMap<>();
        final CalvinLocks<Key, Part> locks = new CalvinLocks<>();

        Sched(final int home) {
            this.home = home;
        }
    }

    private final Sched mine;
    /** Transactions this node participates in and that hold locks here, by id ({@link #mine}'s). */
    private final Map<Long, Part> parts;
    private final CalvinLocks<Key, Part> locks;
    /** The scheduler of a dead owner's partitions this node took over (issue 18 part 5), or null. */
    private Sched adopted;
    /**
     * Decls for a dying owner dispatched while its log is read, at their places in the order: its successor schedules
     * them, in order, once it is taken over (this node's own, or another survivor's contribution, {@link #route}).
     */
    private final Map<Integer, List<Takeover.Pending>> heldForTakeover = new HashMap<>();
    /**
     * A dead owner whose partitions another survivor took over ({@link #routedTo}, its successor): this node routes
     * its part of each later epoch there, in its batch ({@link CalvinWire#routedMarker}), and sends there the writes
     * for it (issue 18 part 5, more than 2 nodes); -1: none.
     */
    private int routedHome = -1;
    private int routedTo = -1;
    /**
     * At a dead owner's successor: the dead owner's part of other sequencers' (and this one's) epochs routed here, by
     * the order of its first transaction ({@link CalvinProtocol#orderTs} of the epoch, the sender and 0), for the
     * scheduler taking them over, which queues them in the total order once its epoch is complete here.
     */
    private final java.util.TreeMap<Long, List<Decl>> routed = new java.util.TreeMap<>();
    /** The dead owner {@link #routed} holds parts of (-1: none yet). */
    private int routedFor = -1;
    /** Survivors' contributions to the rebuilt input of the dead owner taken over here, by survivor ({@link #route}). */
    private final Map<Integer, List<CalvinWire.Owed>> owedIn = new HashMap<>();
    /** Contributions partly received, by survivor: their chunks in order. */
    private final Map<Integer, List<List<CalvinWire.Owed>>> owedChunks = new HashMap<>();
    /** The dead owner contributions came for (-1: none yet). */
    private int owedFor = -1;
    /** The survivors whose contributions the take-over here waits for, once it began (null before). */
    private java.util.Set<Integer> owedFrom;
    /** This node's own executors' parts at the dead owner, when the take-over began, by id (its contribution). */
    private Map<Long, Sent> ownOwed = Map.of();
    /** The rebuilt input not queued yet (in order; null until every contribution is here). */
    private java.util.ArrayDeque<Part> rebuilt;
    /** Writes for the dead owner's partitions that came before their part was queued here, by transaction id. */
    private final Map<Long, Part> earlyWrites = new HashMap<>();
    /** Writes for the dead owner's partitions taken over here, in several chunks ({@link CalvinWire#TAKEN_WRITE}). */
    private final WriteChunks takenWriting = new WriteChunks();
    /**
     * What this node's executors sent each live participant and wait for still, by node then transaction id: a
     * participant's part is over once its records came back (passive) or its writes were acknowledged (active). When
     * an owner dies, its successor rebuilds its queues from these (issue 18 part 5 (2)) and gets the writes sent to it
     * again (3).
     */
    private final Map<Integer, Map<Long, Sent>> sent = new HashMap<>();

    /** One transaction's part at one live participant, as its executor sees it. */
    private static final class Sent {
        final long orderTs;
        /** What the participant was dispatched (null: not known here, an OLLP first run renamed since). */
        final Decl decl;
        /** Keys whose records did not come back yet. */
        final java.util.Set<Key> missing;
        /** Its writes there, once sent (null before), at {@link #commitTs}; {@link #done} once acknowledged. */
        List<Write> writes;
        long commitTs;
        io.vertx.core.Promise<Void> done;
        /** Chunks sent and not acknowledged. */
        int left;
        Throwable failure;

        Sent(final long orderTs, final Decl decl) {
            this(orderTs, decl, new java.util.HashSet<>(decl == null ? List.of() : decl.keys()));
        }

        Sent(final long orderTs, final Decl decl, final java.util.Set<Key> missing) {
            this.orderTs = orderTs;
            this.decl = decl;
            this.missing = missing;
        }

        boolean active() {
            return decl == null || decl.exclusive().contains(Boolean.TRUE);
        }

        /** The same part tracked anew (its writes about to be sent again): a late answer to this one is not counted. */
        Sent again() {
            final Sent s = new Sent(orderTs, decl, missing);
            s.writes = writes;
            s.commitTs = commitTs;
            s.done = done;
            return s;
        }
    }
    private long dispatched;
    /** Batches that came in several chunks, by epoch * nodes + sender, until every chunk is here. */
    private final Map<Long, List<List<Decl>>> chunked = new HashMap<>();
    /** Writes that came in several chunks, by transaction id, until all are here; a dead executor's dropped. */
    private final WriteChunks writing = new WriteChunks();

    /** The one-sided form's messaging: WRITEs into per-peer slots, noticed by polling. */
    private final CalvinInbox inbox;
    /**
     * The form this node sends in: the form of the transactions it sequences, or of the messages it receives (a node
     * with no clients catches up in the form its peers use); the RPC form until it knows.
     */
    private boolean rpc = true;
    /**
     * Whether this node writes its batches to its input log before dispatching them ({@link CalvinInputLog}): the
     * form of its transactions says so ({@code log=on}, the default) and its home loop keeps a redo log.
     */
    private boolean logging;
    /** Whether a transaction was sequenced here without the input log (log=off): a death cannot be taken over. */
    private boolean unlogged;
    private CalvinInputLog inputLog;
    /** The epochs' input-log WRITEs and dispatches, in epoch order. */
    private final LogChain logged;
    /** Order timestamp to transaction id of every transaction this node ordered, when a test asks (else null). */
    private Map<Long, Long> ordered;
    /** Windows opened or closed so far: a window's timer that finds it changed was closed early. */
    private long windows;
    /** What the compute nodes share (null: a host that shares nothing): the input logs' whereabouts, the hooks. */
    private Map<String, Object> shared;
    /** Batch and decision records read from dead nodes' input logs, for a cluster node's health. */
    private long deadLogRecords;
    /** Nodes that died and whose epochs and transactions this node took over ({@link #peerDied}). */
    private final java.util.Set<Integer> deadNodes = new java.util.TreeSet<>();
    /**
     * Restart (issue 18): dead nodes whose new incarnation rejoined here ({@link #onJoin}), each with this node's rejoin
     * floor: a transaction of such a node of an epoch at or below it is its old incarnation's (decided from its log),
     * one above it the new one's; a message of it consumed after the join is the new one's (the old one's ring was
     * drained then, its RPC calls come under the old peer name, {@link #fromDead}).
     */
    private final Map<Integer, Long> rejoined = new HashMap<>();
    /**
     * Restart: what {@link #onJoin} answered each rejoined node ({floor, consumed}) and the caller it answered, so
     * that a JOIN asked again (its answer lost) gets the same answer: the joiner sends nothing before every answer is
     * in, so the count of its messages consumed here has not moved.
     */
    private final Map<Integer, long[]> joinAnswers = new HashMap<>();
    private final Map<Integer, String> joinedFrom = new HashMap<>();
    /** This node is a restarted incarnation not in the total order yet: it sequences nothing until {@link #join}. */
    private boolean joining;
    /** Nodes whose death this node is taking over (reading their logs): nothing more is sent to them. */
    private final java.util.Set<Integer> dying = new java.util.TreeSet<>();
    /** The decisions of dead nodes' transactions, from their input logs, by transaction id. */
    private final Map<Long, CalvinInputLog.Decision> deadDecisions = new HashMap<>();
    /**
     * How long a failed message to a peer may wait for the peer's death to be known before the node gives up: a
     * message to a node that crashed fails before the failure detector and its recovery say so.
     */
    static final long DEATH_GRACE_NS = 5_000_000;
    /**
     * {@link #DEATH_GRACE_NS} on cluster nodes, where a death is told after the member leaves (seconds), it is fenced
     * on every memory node and its redo records are settled (chaos: recovered about 5 s after a SIGKILL, more under
     * load); every epoch waits meanwhile.
     */
    static final long CLUSTER_DEATH_GRACE_NS = 120_000_000_000L;
    /**
     * Cluster nodes: how many times a peer is asked where its inbox is ({@link CalvinInbox#DESCRIBE_RETRY_NS} apart,
     * each ask waiting for the ring to open) before the failure counts: a peer process starting, or loaded.
     */
    static final int DESCRIBE_ATTEMPTS = 600;

    /**
     * The input-log WRITEs of this node's epochs, each epoch dispatched once its WRITE and every earlier epoch's are
     * durable. The first failure gives up once and ends the chain: the epochs chained on it fail with it, and no
     * later one is taken (each would wait for ever and give up again). Loop-confined; sans-IO.
     */
    static final class LogChain {
        private final java.util.function.Consumer<String> giveUp;
        private Future<Void> tail = Future.succeededFuture();
        /** Epochs taken and not dispatched yet: their WRITE (or an earlier epoch's) is not durable. */
        private int waiting;
        private Throwable failure;

        LogChain(final java.util.function.Consumer<String> giveUp) {
            this.giveUp = giveUp;
        }

        /** Whether no epoch waits: one with nothing to log may be dispatched at once. */
        boolean idle() {
            return failure == null && tail.succeeded();
        }

        boolean failed() {
            return failure != null;
        }

        int waiting() {
            return waiting;
        }

        /**
         * Runs {@code dispatch} of {@code epoch} once {@code written} and every earlier epoch's WRITE are durable;
         * false (nothing taken, or it failed at once) when the chain has failed.
         */
        boolean then(final long epoch, final Future<Void> written, final Runnable dispatch) {
            if (failure != null) {
                return false;
            }
            waiting++;
            tail = tail.compose(v -> written).map(v -> {
                waiting--;
                dispatch.run();
                return (Void) null;
            });
            tail.onFailure(x -> {
                if (failure == null) { // the later epochs chained on it fail with it: give up once
                    failure = x;
                    giveUp.accept("CALVIN input log WRITE of epoch " + epoch + " failed: " + x);
                }
            });
            return failure == null;
        }
    }

    // ------------------------------------------------------------------------------------------------ a death

    /**
     * Node {@code dead} died and is fenced on every memory node (the host's word, on the home loop: the simulator's
     * {@code run.peerDied}, after its recovery): this node reads its input log (issue 18 part 3), completes its epochs
     * from it as every survivor does ({@link Epochs#nodeDied}), and decides its transactions here from its decision
     * records (part 4). A node that owned keys (locks and reads a partition) is taken over by its successor
     * ({@link Takeover#successor}), which runs a second scheduler for its partitions ({@link #adopt}), the other
     * survivors routing to it ({@link #route}) (part 5). One death per run: a node dying while another's death is
     * taken over, or after an owner's, gives the run up naming that.
     */
    private void peerDied(final int dead) {
        peerDied(dead, null);
    }

    /**
     * {@link #peerDied(int)} of incarnation {@code incarnation} (cluster nodes: its input log is found on the memory
     * nodes by that name), or null: in this process (its log in the shared map).
     */
    @SuppressWarnings("unchecked")
    private void peerDied(final int dead, final String incarnation) {
        if (rejoined.containsKey(dead)) {
            home.giveUp("CALVIN node " + names.get(dead) + " died again after its new incarnation rejoined: the "
                + "take-over of a rejoined incarnation is not built (issue 18)");
            return;
        }
        if (dead == index || deadNodes.contains(dead) || dying.contains(dead)) {
            return;
        }
        final String refused = Takeover.secondDeathRefusal(dead, gone(), owners(), nodes);
        if (refused != null) {
            home.giveUp("CALVIN node " + names.get(dead) + " died after " + gone() + " and is not taken over: "
                + refused);
            return;
        }
        dying.add(dead);
        inbox.drop(dead);
        final Object logs = shared == null ? null : shared.get("calvin.inputLogs");
        final CalvinInputLog log = logs == null ? null : ((Map<Integer, CalvinInputLog>) logs).get(dead);
        final Future<CalvinInputLog.Scan> read = incarnation != null
            ? CalvinInputLog.readDead(home, CalvinInputLog.copiesOf(home.catalog(), dead), incarnation)
            : log == null ? Future.succeededFuture(CalvinInputLog.Scan.EMPTY) : CalvinInputLog.readDead(home, log);
        read.onComplete(ar -> {
                if (ar.failed()) {
                    home.giveUp("CALVIN node " + names.get(index) + " could not read the input log of dead node "
                        + names.get(dead) + ": " + ar.cause());
                } else {
                    takeOver(dead, ar.result());
                }
            });
    }

    /**
     * Whether {@code p}'s executor {@code node} is an incarnation this node took over: dead, and either not rejoined or
     * {@code p} of an epoch at or below the floor this node gave its new incarnation (above it only the new one
     * sequences: its catch-up batches are empty, {@link Epochs#joinAt}).
     */
    private boolean oldIncarnation(final int node, final Part p) {
        if (!deadNodes.contains(node)) {
            return false;
        }
        final Long floor = rejoined.get(node);
        final long epoch = p.epoch >= 0 ? p.epoch : p.orderTs != 0 ? CalvinProtocol.epochOf(p.orderTs) : -1;
        return floor == null || epoch <= floor;
    }

    // ------------------------------------------------------------------------------------------------ a restart

    /** How long apart a restarted incarnation asks a live node again to let it in ({@link CalvinWire#JOIN_NOT_YET}). */
    static final long JOIN_RETRY_NS = 20_000;
    /** How many times it asks each live node before it gives the run up (10 ms of virtual time). */
    static final int JOIN_ATTEMPTS = 500;
    /**
     * Cluster nodes: 100 ms apart, for up to {@link #CLUSTER_JOIN_ATTEMPTS} times (2 minutes, {@link
     * #CLUSTER_DEATH_GRACE_NS}): a survivor is told of the old incarnation's recovery about when the joiner is, then
     * reads its input log and rebuilds what it owned, seconds on a loaded machine.
     */
    static final long CLUSTER_JOIN_RETRY_NS = 100_000_000;
    static final int CLUSTER_JOIN_ATTEMPTS = 1_200;

    /** Guards {@link #ownRecoveryTold} against the home loop's start ({@link #startLoop}). */
    private final Object joinGate = new Object();
    /** A restarted incarnation may join: its earlier incarnations are recovered (guarded by {@link #joinGate}). */
    private boolean ownRecoveryTold;
    /** {@link #join} was started (home loop). */
    private boolean joinStarted;

    /**
     * Cluster nodes: the host tells this restarted incarnation that every earlier one of it is recovered (fenced on
     * every memory node, its redo records settled; the survivors are told it too and take it over): only now may it
     * ask to rejoin, as the simulator starts a restarted node only after its old incarnation's recovery. Any thread;
     * told before the home loop is set up, it joins once that is ({@link #startLoop}).
     */
    private String ownRecovered(final String incarnation) {
        final Executor home;
        synchronized (joinGate) {
            ownRecoveryTold = true;
            home = homeExecutor;
        }
        if (home != null) {
            home.execute(this::joinOnce);
        }
        return "CALVIN node " + names.get(index) + ": " + incarnation + " recovered, asks every live node to let its "
            + "new incarnation in";
    }

    /** {@link #join}, once (home loop). */
    private void joinOnce() {
        if (!joinStarted) {
            joinStarted = true;
            join();
        }
    }

    /**
     * Restart (issue 18): this node is a new incarnation. It asks every live node to let it in ({@link CalvinWire#JOIN},
     * asked again while that node has not taken its old incarnation over), then enters the total order at the epoch
     * the answers fix ({@link #joined}). Home loop.
     */
    private void join() {
        final long[] floors = new long[nodes];
        final long[] consumed = new long[nodes];
        final boolean[] overRpc = new boolean[1];
        final List<Future<Void>> asked = new ArrayList<>();
        for (int i = 0; i < nodes; i++) {
            if (i != index) {
                final io.vertx.core.Promise<Void> answered = io.vertx.core.Promise.promise();
                askJoin(i, separateProcesses ? CLUSTER_JOIN_ATTEMPTS : JOIN_ATTEMPTS, floors, consumed, overRpc,
                    answered);
                asked.add(answered.future());
            }
        }
        Future.all(asked).onComplete(ar -> {
            if (ar.failed()) {
                home.giveUp("CALVIN node " + names.get(index) + " restarted and could not rejoin the total order: "
                    + ar.cause().getMessage());
            } else {
                joined(floors, consumed, overRpc[0]);
            }
        });
    }

    private void askJoin(final int i, final int attemptsLeft, final long[] floors, final long[] consumed,
                         final boolean[] overRpc, final io.vertx.core.Promise<Void> answered) {
        final UnsafeBuffer me = new CalvinWire.Out().u16(index).done();
        peers.call(names.get(i), 0, CalvinWire.JOIN, me, 0, me.capacity()).onComplete(ar -> {
            if (ar.succeeded() && shared != null && shared.get(CalvinModule.LOSE_JOIN_ANSWERS)
                instanceof java.util.concurrent.atomic.AtomicInteger lose && lose.getAndDecrement() > 0) {
                // a test's lost answer: asked again, as a call timed out is
                home.timers().after(JOIN_RETRY_NS).onComplete(v -> askJoin(i, attemptsLeft - 1, floors, consumed,
                    overRpc, answered));
            } else if (ar.succeeded()) {
                final CalvinWire.In in = new CalvinWire.In(ar.result().payload(), 0, ar.result().length());
                floors[i] = in.u64();
                consumed[i] = in.u64();
                overRpc[0] |= in.u8() != 0;
                answered.complete();
            } else if (attemptsLeft > 1 && askJoinAgain(ar.cause())) {
                home.timers().after(separateProcesses ? CLUSTER_JOIN_RETRY_NS : JOIN_RETRY_NS).onComplete(v ->
                    askJoin(i, attemptsLeft - 1, floors, consumed, overRpc, answered));
            } else {
                answered.fail(names.get(i) + " answered JOIN with: " + ar.cause().getMessage());
            }
        });
    }

    /**
     * Whether a failed {@link CalvinWire#JOIN} is asked again: the node asked has not taken the old incarnation over
     * yet, or the call (or its answer) was lost: timed out, disconnected, pushed back, or on cluster nodes not yet
     * routable to a peer just restarted. {@link #onJoin} answers a repeated JOIN of one incarnation as it did the
     * first, so asking again is safe. A refusal ({@link Epochs#rejoinFloor}'s) is not asked again.
     */
    private static boolean askJoinAgain(final Throwable cause) {
        if (String.valueOf(cause.getMessage()).contains(CalvinWire.JOIN_NOT_YET)) {
            return true;
        }
        return cause instanceof RpcException r && r.code() < RpcException.FIRST_APPLICATION_CODE
            && r.code() != RpcException.UNKNOWN_RPC && r.code() != RpcException.MALFORMED
            && r.code() != RpcException.TOO_LARGE;
    }

    /**
     * Every live node let this new incarnation in ({@code floors}, {@code consumed} by node; {@code overRpc}: the form
     * they run): its rings there go on where its old incarnation's stopped, its old partitions stay with their
     * successor (its parts for them routed there, as every survivor routes them), its first epoch is one above the
     * largest floor, each node gets its empty batches above that node's floor before it, and its clients' transactions
     * are sequenced from then on.
     */
    @SuppressWarnings("unchecked")
    private void joined(final long[] floors, final long[] consumed, final boolean overRpc) {
        for (int i = 0; i < nodes; i++) {
            if (i != index) {
                inbox.continueAt(i, consumed[i]);
            }
        }
        rpc = overRpc;
        if (partitionsOf(index) != null) {
            routedHome = index;
            routedTo = Takeover.successor(index, java.util.Set.of(index), nodes);
        }
        final long[] range = epochs.joinAt(index, floors);
        for (long e = range[0]; e <= range[1]; e++) {
            for (int j = 0; j < nodes; j++) {
                if (j != index && epochs.sendsTo(j, e)) {
                    for (final UnsafeBuffer chunk : CalvinWire.batch(e, index, epochs.completed(), List.of(),
                        maxPayload())) {
                        send(j, CalvinWire.BATCH, chunk);
                    }
                }
            }
        }
        joining = false;
        if (shared != null) { // a test's view: the epoch each restarted node entered the total order at
            ((Map<Integer, Long>) shared.computeIfAbsent(CalvinModule.JOINED_AT, k -> new java.util.concurrent.ConcurrentHashMap<
                Integer, Long>())).put(index, epochs.joinedAt());
        }
        if (epochs.behind()) {
            closeWindow();
        } else {
            maybeOpenWindow();
            schedule();
        }
    }

    @SuppressWarnings("unchecked")
    private void scheduledAt(final long id, final long place) {
        if (shared != null && shared.get(CalvinModule.SCHEDULED_AT) instanceof Map<?, ?> map) {
            ((Map<Long, java.util.Set<Long>>) map).computeIfAbsent(id, k -> java.util.concurrent.ConcurrentHashMap
                .newKeySet()).add(place);
        }
    }

    /**
     * A dead node's new incarnation asks to rejoin ({@link CalvinWire#JOIN}): once this node took its old incarnation
     * over, it answers its rejoin floor ({@link Epochs#rejoinFloor}), drains the old incarnation's inbox ring and
     * answers how many of its messages it consumed, and from now on sends to the new incarnation's peer name on a new
     * ring. Home loop.
     */
    private void onJoin(final RpcRequest request, final RpcResponder responder) {
        final int from = CalvinWire.In.of(request).u16();
        if (from < 0 || from >= nodes || from == index) {
            responder.fail(RpcException.FIRST_APPLICATION_CODE, "CALVIN JOIN from node " + from + " of " + nodes
                + " at " + names.get(index));
            return;
        }
        if (!deadNodes.contains(from)) {
            responder.fail(RpcException.FIRST_APPLICATION_CODE, names.get(from) + "'s old incarnation is "
                + CalvinWire.JOIN_NOT_YET + " (" + names.get(index) + ")");
            return;
        }
        final long[] answered = joinAnswers.get(from);
        if (answered != null) { // asked again (its answer lost): the same answer, if from the same incarnation
            if (!request.client().equals(joinedFrom.get(from))) {
                responder.fail(RpcException.FIRST_APPLICATION_CODE, "CALVIN JOIN of " + names.get(from) + " from "
                    + request.client() + ": " + joinedFrom.get(from) + " rejoined already; a second rejoin of one node "
                    + "is not built (issue 18)");
                return;
            }
            responder.reply(new CalvinWire.Out().u64(answered[0]).u64(answered[1]).u8(rpc ? 1 : 0).done());
            return;
        }
        final long floor;
        try {
            floor = epochs.rejoinFloor(from);
        } catch (final RuntimeException e) {
            responder.fail(RpcException.FIRST_APPLICATION_CODE, e.getMessage());
            return;
        }
        final long consumed = inbox.drainDead(from);
        // The simulator's new incarnation has a peer name of its own (the caller's); a cluster node's is its configured
        // name, which the host's directory maps to its newest incarnation (the caller's name is its fabric identity).
        inbox.rejoined(from, separateProcesses ? names.get(from) : request.client());
        rejoined.put(from, floor);
        joinAnswers.put(from, new long[] {floor, consumed});
        joinedFrom.put(from, request.client());
        responder.reply(new CalvinWire.Out().u64(floor).u64(consumed).u8(rpc ? 1 : 0).done());
    }

    /** The nodes that died or are dying (their logs read or being read). */
    private java.util.Set<Integer> gone() {
        final java.util.Set<Integer> gone = new java.util.TreeSet<>(deadNodes);
        gone.addAll(dying);
        return gone;
    }

    /** The nodes owning a partition ({@link #partitionsOf}). */
    private java.util.Set<Integer> owners() {
        final java.util.Set<Integer> owners = new java.util.TreeSet<>();
        for (int n = 0; n < nodes; n++) {
            if (partitionsOf(n) != null) {
                owners.add(n);
            }
        }
        return owners;
    }

    /** The partitions {@code node} owns (a key's owner is its partition's index modulo the nodes), or null: none. */
    private String partitionsOf(final int node) {
        for (final io.scythe.txn.Catalog.Table t : home.catalog().tables()) {
            if (node < t.partitions().size()) {
                return "partition " + node + " of " + t.name();
            }
        }
        return null;
    }

    /** What {@code dead}'s log holds, read: its epochs completed here, its transactions decided here. */
    @SuppressWarnings("unchecked")
    private void takeOver(final int dead, final CalvinInputLog.Scan log) {
        deadLogRecords += log.batches().size() + log.decisions().size();
        dying.remove(dead);
        deadNodes.add(dead);
        chunked.keySet().removeIf(k -> Math.floorMod(k, (long) nodes) == dead); // the log has its batches whole
        final java.util.TreeMap<Long, List<Decl>> mine = new java.util.TreeMap<>();
        for (final CalvinInputLog.Entry e : log.batches().values()) {
            if (e.from() == dead) {
                mine.put(e.epoch(), e.byNode().get(index));
            }
        }
        try {
            epochs.nodeDied(dead, mine, List.of());
        } catch (final RuntimeException e) {
            home.giveUp("CALVIN node " + names.get(index) + " cannot take over dead node " + names.get(dead) + "'s "
                + "epochs: " + e.getMessage());
            return;
        }
        final Object committed = shared == null ? null : shared.get("run.recoveredCommit");
        for (final CalvinInputLog.Decision d : log.decisions().values()) {
            if (d.from() == dead) {
                deadDecisions.put(d.id(), d);
                if (committed instanceof java.util.function.LongConsumer c) {
                    c.accept(d.id()); // committed: every participant applies it (or did)
                }
            }
        }
        for (final Part p : List.copyOf(parts.values())) {
            if (p.decl.origin() == dead) {
                writing.close(p.decl.id()); // its writes partly received, or late: the decision has them whole
                if (p.active && p.readDone && !p.writing) {
                    decideDead(p);
                }
            }
        }
        final boolean afterRebuild = adopted != null && rebuilt != null; // checked once the frontier caught up
        if (adopted != null) {
            executorDiedDuringTakeover(dead, log);
        }
        if (partitionsOf(dead) != null) {
            if (Takeover.successor(dead, gone(), nodes) == index) {
                adopt(dead);
            } else {
                route(dead);
            }
        }
        if (epochs.behind()) {
            closeWindow();
        } else {
            schedule();
        }
        if (afterRebuild) {
            deadDecidedAfterRebuild(dead, log); // after schedule(): the epochs the log just completed are counted
        }
    }

    /**
     * At a dead owner's successor, node {@code dead}, which only executed (an owner's death after the take-over is
     * refused, {@link Takeover#secondDeathRefusal}), died too, its log read ({@code log}): its parts in the scheduler
     * taken over here are decided from its decision records as a dead executor's are in this node's own; its
     * contribution, if it did not come, is waited for no more (its transactions there are its decided ones, in
     * {@link #deadDecisions} before {@link #rebuild}). With crashes at different times ({@code sim --crash-cn 0,2
     * --crash-at T,T+60us}, 3 nodes over 2 memory nodes) a node dies after it contributed and this runs with its
     * rebuilt parts in place ({@link CalvinModule#DIED_AFTER_REBUILD} counts it; {@code CalvinSimTest
     * #shouldTakeOverADeadOwnerWhenANodeThatContributedDiesAfterTheRebuild}).
     * <p>Once rebuilt, a decided transaction of {@code dead} writing the dead owner's partitions is known here (queued,
     * rebuilt or routed) or of an epoch this node completed: {@link #deadDecidedAfterRebuild} checks it loudly, in
     * {@link #takeOver} once the epochs the log read completes are scheduled. A "route from its log" step that queued
     * such a decision stood here; no run reached it and it is removed (argument there).
     */
    private void executorDiedDuringTakeover(final int dead, final CalvinInputLog.Scan log) {
        if (rebuilt != null && shared != null) { // the run's count of deaths told after a take-over's rebuild
            ((java.util.concurrent.atomic.AtomicLong) shared.computeIfAbsent(CalvinModule.DIED_AFTER_REBUILD,
                k -> new java.util.concurrent.atomic.AtomicLong())).incrementAndGet();
        }
        for (final Part p : List.copyOf(adopted.parts.values())) {
            if (p.decl.origin() == dead && p.active && p.readDone && !p.writing) {
                decideDead(p);
            }
        }
        owedChunks.remove(dead);
        if (owedFrom != null && !owedIn.containsKey(dead)) {
            owedFrom.remove(dead);
        }
        for (final CalvinInputLog.Decision d : log.decisions().values()) {
            if (d.from() == dead) {
                takenWriting.close(d.id()); // its resent writes partly received: the decision has them whole
            }
        }
        rebuild(); // nothing once rebuilt: then takeOver checks its decisions (deadDecidedAfterRebuild)
    }

    /**
     * Checks that every decided transaction of executor {@code dead} (its log {@code log}, read after this node rebuilt the
     * dead owner's take-over) that writes the dead owner's partitions is known here (queued in the taken-over
     * scheduler, rebuilt or routed) or of an epoch complete here (queued and over); else a violation of the run ({@code
     * run.violations}: a sweep counts the seed failed, whatever becomes of this node) and the run is given up. Runs
     * after {@link #schedule}, so the frontier counts the epochs the log just read completes.
     * <p>Unreachable, so no "route from its log" step queues such a decision here (issue 18 part 5; one stood here,
     * ran in no run nor sweep, and was removed). Every key a CALVIN transaction writes it also reads ({@code
     * readForUpdate}: declared keys), and its executor logs a decision only once every record is in. For a write at the
     * dead owner's partitions that record came from their scheduler:
     * <ul>
     *   <li>(i) served here, by the scheduler taken over: only a transaction queued there, rebuilt (known) or routed
     *       and queued once its epoch is complete here; so its epoch is complete here, below the frontier (epochs
     *       complete in order and never go back), or it is still queued or routed (known);</li>
     *   <li>(ii-a) served by the dead owner, {@code dead} not having seen every write there acknowledged when it
     *       contributed: the transaction was in its contribution ({@code sent} keeps a part until its writes are
     *       acknowledged), so it is rebuilt here (known);</li>
     *   <li>(ii-b) served by the dead owner, every write there acknowledged before {@code dead} contributed: the
     *       owner's scheduler had the transaction's epoch E complete, so every live sequencer had sent its batch of E
     *       (one dispatch loop sends it to every node) before the owner died, so before its own contribution
     *       ({@link CalvinWire#OWED}, sent once it hears of the death), on the same in-order channel to this node
     *       ({@link CalvinInbox}'s per-sender sequence; {@code RpcServer#drain} per ring, in order); the dead
     *       sequencers' batches of E come from their logs, read before this node takes over. This check runs only
     *       after this node rebuilt, which needs every live survivor's contribution, so E was complete here before the
     *       rebuild: below the frontier, whatever the delays (unbounded jitter, {@code --crash-detect 0us}, {@code
     *       --mn-slow}, staggered crashes).</li>
     * </ul>
     * Firing says that ordering argument failed (a bug), so it is loud.
     */
    @SuppressWarnings("unchecked")
    private void deadDecidedAfterRebuild(final int dead, final CalvinInputLog.Scan log) {
        final boolean forced = shared != null && Boolean.TRUE.equals(shared.get(CalvinModule.FORCE_DEAD_DECIDED_CHECK));
        final java.util.Set<Long> known = new java.util.HashSet<>();
        if (!forced) {
            known.addAll(adopted.parts.keySet());
            routed.values().forEach(l -> l.forEach(d -> known.add(d.id())));
            rebuilt.forEach(p -> known.add(p.decl.id()));
        }
        final long frontier = forced ? Long.MIN_VALUE : CalvinProtocol.orderTs(epochs.completed() + 1, 0, 0);
        for (final CalvinInputLog.Decision d : log.decisions().values()) {
            if (d.from() == dead && !known.contains(d.id()) && d.commitTs() >= frontier
                && Takeover.decided(adopted.home, d) != null) {
                final String why = "CALVIN node " + names.get(index) + " read dead node " + names.get(dead) + "'s "
                    + "decided transaction " + Long.toHexString(d.id()) + ", writing " + names.get(adopted.home)
                    + "'s partitions taken over here, neither known here nor of an epoch complete here: unreachable, "
                    + "no step routes it (issue 18 part 5, CalvinNode#deadDecidedAfterRebuild)";
                if (shared != null && shared.get("run.violations") instanceof List<?> violations) {
                    ((List<String>) violations).add(why); // a violation, not only a loop given up (a tally)
                }
                home.giveUp(why);
                return;
            }
        }
    }

    /**
     * {@code p}, an active participant of a dead node's transaction, holds its locks and read its records: it writes
     * what the transaction's decision record gives this node, or, with none, releases (its executor logs the
     * decision before it sends any write, so none was applied anywhere).
     */
    private void decideDead(final Part p) {
        final CalvinInputLog.Decision d = deadDecisions.get(p.decl.id());
        if (d == null) {
            release(p);
            return;
        }
        applyWrites(p.sched, p.decl.id(), d.commitTs(), d.writes().getOrDefault(p.sched.home, List.of()))
            .onFailure(e -> home.giveUp(
            "CALVIN node " + names.get(index) + " could not apply dead node " + names.get(p.decl.origin()) + "'s "
                + "decided transaction " + Long.toHexString(p.decl.id()) + ": " + e));
    }

    /**
     * Issue 18 part 5: this node, the dead owner {@code dead}'s successor, runs a second scheduler for its partitions
     * ({@link #adopted}). Its input in the total order: first what the dead owner had not finished
     * ({@link Takeover#input}: what every live survivor's executors still wait for from it, this node's own and each
     * other survivor's contribution ({@link CalvinWire#OWED}, {@link #route}), the decls dispatched it while its log was
     * read among them, and the dead executors' decisions writing there), once every live survivor's contribution is
     * here; then every later part of it, each sequencer's routed here with its batch ({@link #dispatch}), each epoch
     * queued once it is complete here and after every rebuilt transaction before it ({@link #feedAdopted}). Writes the
     * executors sent it and saw no acknowledgement of go to the rebuilt parts (this node's directly, other survivors'
     * by {@link CalvinWire#TAKEN_WRITE}), which apply only what is not installed ({@link Takeover#installed}).
     */
    private void adopt(final int dead) {
        if (owedFor >= 0 && owedFor != dead || routedFor >= 0 && routedFor != dead) {
            home.giveUp("CALVIN node " + names.get(index) + " takes over " + names.get(dead) + " but got parts for "
                + names.get(Math.max(owedFor, routedFor)) + "'s take-over (issue 18 part 5)");
            return;
        }
        adopted = new Sched(dead);
        owedFor = dead;
        routedFor = dead;
        final Map<Long, Sent> owed = sent.getOrDefault(dead, Map.of());
        final List<CalvinWire.Owed> own = new ArrayList<>();
        for (final Map.Entry<Long, Sent> e : owed.entrySet()) {
            if (e.getValue().decl == null) {
                home.giveUp("CALVIN node " + names.get(index) + " cannot take over dead node " + names.get(dead)
                    + ": transaction " + Long.toHexString(e.getKey()) + " (an OLLP first run renamed) waits for it "
                    + "with no declaration known (issue 18 part 5)");
                return;
            }
            own.add(new CalvinWire.Owed(e.getValue().orderTs, e.getValue().decl, e.getValue().missing));
        }
        for (final Takeover.Pending held : heldForTakeover.getOrDefault(dead, List.of())) {
            own.add(new CalvinWire.Owed(held.orderTs(), held.decl(), new java.util.HashSet<>(held.decl().keys())));
        }
        heldForTakeover.remove(dead);
        ownOwed = owed;
        sent.remove(dead);
        owedIn.put(index, own);
        owedFrom = new java.util.TreeSet<>();
        for (int n = 0; n < nodes; n++) {
            if (!deadNodes.contains(n) && !dying.contains(n)) {
                owedFrom.add(n); // every live survivor contributes (this node included), once, even when it owes none
            }
        }
        rebuild();
    }

    /**
     * Once every live survivor's contribution to the dead owner taken over here is in: its rebuilt input, in order,
     * then queued with the routed parts ({@link #feedAdopted}). A node that died since and sent none is waited for
     * no more, its decisions read ({@link #executorDiedDuringTakeover}); none is rebuilt while a node is dying.
     */
    private void rebuild() {
        if (adopted == null || rebuilt != null || !owedIn.keySet().containsAll(owedFrom) || !dying.isEmpty()) {
            return; // a node dying has its decisions read first (executorDiedDuringTakeover)
        }
        final int dead = adopted.home;
        final List<Takeover.Pending> live = new ArrayList<>();
        final Map<Long, java.util.Set<Key>> missing = new HashMap<>();
        for (final List<CalvinWire.Owed> from : owedIn.values()) {
            for (final CalvinWire.Owed o : from) {
                live.add(new Takeover.Pending(o.orderTs(), o.decl()));
                missing.put(o.decl().id(), o.missing());
            }
        }
        final java.util.Set<Long> routedIds = new java.util.HashSet<>();
        routed.values().forEach(l -> l.forEach(d -> routedIds.add(d.id())));
        final List<CalvinInputLog.Decision> decisions = new ArrayList<>();
        for (final CalvinInputLog.Decision d : deadDecisions.values()) {
            if (!routedIds.contains(d.id())) {
                decisions.add(d); // one routed here (a dead executor's, after the death) is queued as routed
            }
        }
        final List<Takeover.Pending> input;
        try {
            input = Takeover.input(dead, live, decisions);
        } catch (final RuntimeException e) {
            home.giveUp("CALVIN node " + names.get(index) + " cannot take over dead node " + names.get(dead) + ": "
                + e.getMessage());
            return;
        }
        rebuilt = new java.util.ArrayDeque<>();
        for (final Takeover.Pending pending : input) {
            final Sent s = ownOwed.get(pending.decl().id());
            final Part p = new Part(pending.decl(), adopted);
            p.orderTs = pending.orderTs();
            p.missing = missing.get(pending.decl().id()); // null: a dead executor's decision (nobody awaits it)
            if (s != null && s.writes != null) {
                p.writesTo(s.commitTs, s.writes);
                p.written.future().onComplete(ar -> complete(s, ar.cause()));
            }
            rebuilt.add(p);
        }
        ownOwed = Map.of();
        feedAdopted();
    }

    /**
     * Queues in the scheduler taken over here, in the total order, the rebuilt input and the routed parts of every
     * epoch complete here: an epoch's routed parts are all here once it is complete (each rides in its sender's batch
     * of it), and a rebuilt transaction of it goes in at its place among them.
     */
    private void feedAdopted() {
        if (rebuilt == null) {
            return;
        }
        final long frontier = CalvinProtocol.orderTs(epochs.completed() + 1, 0, 0);
        while (true) {
            final Part next = rebuilt.peekFirst();
            final Map.Entry<Long, List<Decl>> r = routed.firstEntry();
            if (next != null && next.orderTs < frontier && (r == null || next.orderTs < r.getKey())) {
                enqueue(rebuilt.pollFirst());
            } else if (r != null && r.getKey() < frontier) {
                routed.pollFirstEntry();
                for (final Decl decl : r.getValue()) {
                    final Part p = new Part(decl, adopted);
                    p.epoch = CalvinProtocol.epochOf(r.getKey());
                    scheduledAt(decl.id(), r.getKey());
                    enqueue(p);
                }
            } else {
                return;
            }
        }
    }

    /**
     * Issue 18 part 5 at a survivor that is not dead owner {@code dead}'s successor: from now on this node's sequencer
     * routes the dead owner's part of each epoch to the successor ({@link #dispatch}) and its executors send the writes
     * for it there; its contribution to the successor's rebuilt input ({@link CalvinWire#OWED}, sent once, empty too)
     * is what its executors still wait for from the dead owner (sent it and not over, or held while its log was read),
     * and the writes they sent it and saw no acknowledgement of are sent to the successor again (which applies them
     * only where not installed). Late answers of the dead owner are not counted: each such part is tracked anew.
     */
    private void route(final int dead) {
        final int to = Takeover.successor(dead, gone(), nodes);
        routedHome = dead;
        routedTo = to;
        final Map<Long, Sent> owed = sent.computeIfAbsent(dead, k -> new HashMap<>());
        for (final Takeover.Pending held : heldForTakeover.getOrDefault(dead, List.of())) {
            owed.put(held.decl().id(), new Sent(held.orderTs(), held.decl()));
        }
        heldForTakeover.remove(dead);
        final List<CalvinWire.Owed> items = new ArrayList<>();
        final List<Map.Entry<Long, Sent>> resend = new ArrayList<>();
        for (final Map.Entry<Long, Sent> e : List.copyOf(owed.entrySet())) {
            final Sent s = e.getValue();
            if (s.decl == null) {
                home.giveUp("CALVIN node " + names.get(index) + " cannot hand dead node " + names.get(dead) + "'s "
                    + "parts to " + names.get(to) + ": transaction " + Long.toHexString(e.getKey()) + " (an OLLP "
                    + "first run renamed) waits for it with no declaration known (issue 18 part 5)");
                return;
            }
            items.add(new CalvinWire.Owed(s.orderTs, s.decl, s.missing));
            if (s.writes != null) {
                final Sent again = s.again();
                owed.put(e.getKey(), again);
                resend.add(Map.entry(e.getKey(), again));
            }
        }
        for (final UnsafeBuffer chunk : CalvinWire.owed(dead, items, maxPayload())) {
            send(to, CalvinWire.OWED, chunk);
        }
        for (final Map.Entry<Long, Sent> e : resend) {
            sendTaken(e.getKey(), e.getValue());
        }
    }

    /** Sends {@code s}, writes of transaction {@code id} for the dead owner routed away, to its successor. */
    private void sendTaken(final long id, final Sent s) {
        final int to = routedTo;
        for (final UnsafeBuffer chunk : CalvinWire.write(id, s.commitTs, s.writes, maxPayload())) {
            s.left++;
            if (rpc) {
                peers.call(names.get(to), 0, CalvinWire.TAKEN_WRITE, chunk, 0, chunk.capacity()).onComplete(ar ->
                    writeDone(routedHome, to, id, s, ar.cause()));
            } else {
                inbox.send(to, CalvinWire.TAKEN_WRITE, chunk);
            }
        }
    }

    /** A chunk of survivor {@code from}'s contribution to the take-over of the dead owner it names. */
    private void owedChunk(final int from, final CalvinWire.In in) {
        final int dead = in.u16();
        final int chunk = in.u16();
        final int chunks = in.u16();
        final List<CalvinWire.Owed> items = CalvinWire.readOwed(in);
        if (owedFor >= 0 && owedFor != dead || owedIn.containsKey(from)) {
            home.giveUp("CALVIN node " + names.get(index) + " got " + names.get(from) + "'s contribution to the "
                + "take-over of " + names.get(dead) + (owedIn.containsKey(from) ? " twice" : " while taking over "
                + names.get(owedFor)) + " (issue 18 part 5)");
            return;
        }
        owedFor = dead;
        final List<List<CalvinWire.Owed>> parts = owedChunks.computeIfAbsent(from, k -> {
            final List<List<CalvinWire.Owed>> l = new ArrayList<>();
            for (int i = 0; i < chunks; i++) {
                l.add(null);
            }
            return l;
        });
        parts.set(chunk, items);
        if (parts.contains(null)) {
            return;
        }
        owedChunks.remove(from);
        final List<CalvinWire.Owed> whole = new ArrayList<>();
        parts.forEach(whole::addAll);
        owedIn.put(from, CalvinWire.mergeOwed(whole));
        rebuild();
    }

    private static void complete(final Sent s, final Throwable failure) {
        if (failure == null) {
            s.done.tryComplete();
        } else {
            s.done.tryFail(failure);
        }
    }

    /** A transaction at one participant: its keys here and how many locks it still waits for. */
    private static final class Part {
        final Decl decl;
        final Sched sched;
        /** Rebuilt by a take-over from before the death: its place in the order (0: not rebuilt). */
        long orderTs;
        /** Its epoch, where it was queued from a complete one (-1: rebuilt, {@link #orderTs} says). */
        long epoch = -1;
        /** Rebuilt: the keys whose records its executor still waits for (null: all). */
        java.util.Set<Key> missing;
        /** In a taken-over scheduler: the writes its executor sent it (null: none yet), applied once it is read. */
        List<Write> writes;
        long commitTs;
        io.vertx.core.Promise<Void> written;
        final boolean active;
        int waiting;
        /** Its records are read here (an active one now waits for its executor's writes). */
        boolean readDone;
        /** Its writes are being applied here: not applied again on its executor's death. */
        boolean writing;
        final Map<Key, Access> read = new LinkedHashMap<>();

        Part(final Decl decl, final Sched sched) {
            this.decl = decl;
            this.sched = sched;
            this.active = decl.exclusive().contains(Boolean.TRUE);
        }

        void writesTo(final long ts, final List<Write> w) {
            commitTs = ts;
            writes = w;
            written = io.vertx.core.Promise.promise();
        }

        @Override
        public String toString() {
            return Long.toHexString(decl.id());
        }
    }

    CalvinNode(final ComputeNodeContext context) {
        this.peers = context.peers();
        this.index = context.index();
        this.names = List.copyOf(context.computeNodes());
        this.nodes = names.size();
        this.epochs = new Epochs<>(nodes);
        this.mine = new Sched(index);
        this.parts = mine.parts;
        this.locks = mine.locks;
        this.logged = new LogChain(why -> home.giveUp(why + " (node " + names.get(index) + ")"));
        peers.handle(CalvinWire.BATCH, this::onBatch);
        peers.handle(CalvinWire.FORWARD, this::onForward);
        peers.handle(CalvinWire.WRITE, this::onWrite);
        peers.handle(CalvinWire.TAKEN_WRITE, this::onTakenWrite);
        peers.handle(CalvinWire.OWED, this::onOwed);
        peers.handle(CalvinWire.JOIN, this::onJoin);
        this.inbox = new CalvinInbox(peers, names, index);
        this.separateProcesses = context.separateProcesses();
        if (separateProcesses) {
            context.onPeerRecovered(new ComputeNodeContext.PeerRecovered() {
                @Override
                public String recovered(final String name, final long prefix, final long mask) {
                    return peerRecovered(name, name, prefix, mask);
                }

                @Override
                public String recovered(final String incarnation, final String name, final long prefix,
                                        final long mask) {
                    return peerRecovered(incarnation, name, prefix, mask);
                }
            });
        }
        this.joining = context.awaitsOwnRecovery(); // a restart: it joins the total order first
        // The simulator starts a restarted incarnation once its old one is recovered; a cluster host starts the process
        // at once and tells it later (its own name through onPeerRecovered), so there it joins only then.
        this.ownRecoveryTold = !separateProcesses;
        endOfRunCheck(context);
    }

    /**
     * Cluster nodes: a dead incarnation of compute node {@code name} was recovered by the host (fenced on every memory
     * node, its redo records settled): the death word, as the simulator's {@code run.peerDied} is. This node takes it
     * over as there ({@link #peerDied}), reading the dead incarnation's input log where the memory nodes say it is
     * ({@link CalvinInputLog#readDead(TxnRuntime, List, String)}). Any thread.
     */
    private String peerRecovered(final String incarnation, final String name, final long prefix, final long mask) {
        final int dead = names.indexOf(name);
        if (dead == index) {
            return joining ? ownRecovered(incarnation) : null;
        }
        if (dead < 0) {
            return null;
        }
        onHome(() -> {
            if (unlogged) { // as the simulator refuses such a crash (CalvinModule#crashRefusal)
                home.giveUp("CALVIN node " + names.get(index) + ": compute node " + name + " died, and with log=off no "
                    + "input log says what its sequencer dispatched, so its epochs cannot be taken over (issue 18)");
            } else {
                peerDied(dead, incarnation);
            }
        });
        return "CALVIN node " + names.get(index) + " takes over " + name + " (incarnation " + incarnation + ")";
    }

    /**
     * A message to (or READ at) node {@code to} failed: fatal unless {@code to} died. Its death is told later than
     * the failure (detection, then recovery), so the verdict waits {@link #DEATH_GRACE_NS}.
     */
    private void peerFailed(final int to, final String why) {
        if (deadNodes.contains(to) || dying.contains(to)) {
            return;
        }
        home.timers().after(separateProcesses ? CLUSTER_DEATH_GRACE_NS : DEATH_GRACE_NS).onComplete(v -> {
            if (!deadNodes.contains(to) && !dying.contains(to)) {
                home.giveUp(separateProcesses ? why + " (and its death was not told within "
                    + CLUSTER_DEATH_GRACE_NS / 1_000_000_000 + " s)" : why);
            }
        });
    }

    /**
     * Lets the host check at the end of a run that this node holds nothing ({@code run.endChecks}), if it does; and
     * learn each transaction's place in the order ({@code calvin.ordered}: a map a test puts there, of order
     * timestamp to transaction id), if it asks.
     */
    @SuppressWarnings("unchecked")
    private void endOfRunCheck(final ComputeNodeContext context) {
        final Object checks;
        try {
            checks = context.shared().get("run.endChecks");
            if (context.shared().get("calvin.ordered") instanceof Map<?, ?> map) {
                ordered = (Map<Long, Long>) map;
            }
        } catch (final UnsupportedOperationException none) {
            return; // a host that shares nothing checks nothing
        }
        shared = context.shared();
        if (joining) { // the old incarnation's hooks: its loops are gone, what it held is taken over
            if (shared.get("run.peerDied") instanceof List<?> died) {
                died.removeIf(e -> e instanceof Map.Entry<?, ?> m && Integer.valueOf(index).equals(m.getKey()));
            }
            if (checks instanceof List<?> list) {
                list.removeIf(e -> e instanceof Map.Entry<?, ?> m && Integer.valueOf(index).equals(m.getKey()));
            }
        }
        if (shared.get("run.peerDied") instanceof List<?> died) { // a host that tells of a dead node (the simulator)
            ((List<Map.Entry<Integer, java.util.function.IntConsumer>>) died).add(Map.entry(index, this::peerDied));
        }
        if (checks instanceof List<?> list) {
            ((List<Map.Entry<Integer, java.util.function.Supplier<String>>>) list).add(Map.entry(index,
                this::endOfRunViolation));
        }
        if (context.separateProcesses()) { // cluster nodes: /health shows what this node holds and has done
            shared.put(ComputeNodeContext.MODULE_HEALTH, (java.util.function.Supplier<Map<String, Object>>)
                this::health);
        }
    }

    /**
     * What a cluster node's health shows of this node: {@code locksQueued} (its keys with lock requests queued),
     * {@code partsHeld} (transactions holding locks here), {@code executing} (its executors' transactions not over),
     * {@code epochsComplete} (the newest epoch complete here), {@code dispatched} (batches sent to other nodes),
     * {@code inboxReceived} (one-sided messages received), {@code inputLogRecords} (batch records written to its input
     * log, each copy counted), {@code deadNodes} (dead nodes taken over), {@code deadLogRecords} (batch and decision
     * records read from their input logs), {@code takenOverLocksQueued} (lock requests
     * queued in the scheduler taken over from a dead owner), {@code joining} (a restarted incarnation not in the total
     * order yet), {@code joinedAt} (the epoch it entered it at, -1: not restarted), {@code rejoinedHere} (restarted
     * nodes this node let in). Read off the home loop: racy while transactions run,
     * exact when idle.
     */
    private Map<String, Object> health() {
        final Map<String, Object> h = new java.util.LinkedHashMap<>();
        h.put("locksQueued", locks.queued());
        h.put("partsHeld", parts.size());
        h.put("executing", executing.size());
        h.put("epochsComplete", epochs.completed());
        h.put("dispatched", dispatched);
        h.put("inboxReceived", inbox.received());
        final CalvinInputLog log = inputLog;
        h.put("inputLogRecords", log == null ? 0 : log.records());
        final Sched taken = adopted;
        h.put("deadNodes", deadNodes.size());
        h.put("deadLogRecords", deadLogRecords);
        h.put("takenOverLocksQueued", taken == null ? 0 : taken.locks.queued());
        h.put("joining", joining);
        h.put("joinedAt", epochs.joinedAt());
        h.put("rejoinedHere", rejoined.size());
        return h;
    }

    /** Equips loop {@code loop}; loop 0 is the home loop. */
    void startLoop(final int loop, final TxnRuntime runtime, final Executor executor) {
        runtime.extension(LANE, r -> new Lane(this, loop, runtime, executor));
        if (loop == 0) {
            home = runtime;
            inbox.start(runtime, this::onMessage, this::peerFailed);
            final boolean joinNow;
            synchronized (joinGate) {
                homeExecutor = executor;
                joinNow = joining && ownRecoveryTold;
            }
            if (joinNow) {
                executor.execute(this::joinOnce);
            }
            if (separateProcesses) {
                // Cluster nodes: peers start at their own pace and a ring's opening may time out under load, so where
                // each peer's inbox is is asked again until it answers (no message is lost meanwhile: none is sent
                // before it is known), and asked at once, which opens the rings before the first epoch's batch.
                inbox.patientDescribe(DESCRIBE_ATTEMPTS);
                executor.execute(() -> {
                    for (int d = 0; d < nodes; d++) {
                        if (d != index) {
                            final int peer = d;
                            inbox.remote(peer).onFailure(e -> peerFailed(peer, "CALVIN node " + names.get(index)
                                + " could not learn where " + names.get(peer) + "'s inbox is: " + e));
                        }
                    }
                });
            }
        }
    }

    /** The largest message to a peer in a form: an RRPC bucket's payload, or a one-sided slot's. */
    int maxPayload(final boolean overRpc) {
        return overRpc ? peers.options().maxPayload() : CalvinInbox.maxPayload();
    }

    private int maxPayload() {
        return maxPayload(rpc);
    }

    int index() {
        return index;
    }

    int nodes() {
        return nodes;
    }

    /** The node owning {@code key} of {@code table}: its partition's index modulo the nodes. */
    static int owner(final TxnRuntime runtime, final String table, final long key, final int nodes) {
        final io.scythe.txn.Catalog.Table t = runtime.catalog().table(table);
        return (int) (Long.remainderUnsigned(key, t.partitions().size()) % nodes);
    }

    /** Runs {@code task} on the home loop (any thread). */
    void onHome(final Runnable task) {
        if (homeExecutor == null) {
            throw new IllegalStateException("CALVIN node " + names.get(index) + " has no home loop (loop 0 not set "
                + "up)");
        }
        homeExecutor.execute(task);
    }

    // ------------------------------------------------------------------------------------------------ sequencer

    /** A transaction of this node, its keys declared: batched in the current epoch. Home loop. */
    void submit(final CalvinTxn txn, final long epochNs, final boolean overRpc) {
        this.epochNs = epochNs;
        this.rpc = overRpc;
        this.logging = txn.inputLog() && io.scythe.txn.recovery.RedoLog.of(home) != null;
        unlogged |= !logging;
        executing.put(txn.id(), txn);
        pending.add(txn);
        maybeOpenWindow();
    }

    private void maybeOpenWindow() {
        if (joining) {
            return; // a restarted incarnation's clients wait until it is in the total order (join)
        }
        if (epochs.openWindow(!pending.isEmpty())) {
            final long generation = ++windows;
            home.timers().after(epochNs).onComplete(v -> {
                if (generation == windows) { // else closed early already (behind)
                    closeWindow();
                }
            });
        }
    }

    private void closeWindow() {
        if (logged.failed()) {
            return; // gave up at the first failed input-log WRITE: nothing more is sequenced here
        }
        windows++;
        final long[] range = epochs.closeWindow();
        final List<CalvinTxn> batch = pending;
        pending = new ArrayList<>();
        for (long e = range[0]; e <= range[1]; e++) {
            final List<CalvinTxn> txns = e == range[0] ? batch : List.of();
            for (int pos = 0; pos < txns.size(); pos++) {
                txns.get(pos).ordered(CalvinProtocol.orderTs(e, index, pos));
                if (ordered != null) {
                    ordered.put(CalvinProtocol.orderTs(e, index, pos), txns.get(pos).id());
                }
            }
            final List<List<Decl>> byNode = new ArrayList<>(nodes);
            for (int d = 0; d < nodes; d++) {
                final List<Decl> forD = new ArrayList<>();
                for (final CalvinTxn t : txns) {
                    final Decl decl = t.declFor(d);
                    if (decl != null) {
                        forD.add(decl);
                    }
                }
                byNode.add(forD);
            }
            final boolean log = logging && !txns.isEmpty();
            if (!log && logged.idle()) {
                dispatch(e, byNode, txns); // nothing to log and no earlier epoch waiting for its log: at once
                continue;
            }
            // Logged before anyone (this node included) gets it; epochs dispatched in epoch order.
            final long epoch = e;
            final Future<Void> written = log ? inputLog().append(e, CalvinInputLog.encode(e, index, byNode),
                epochs.lowWater(index)) : Future.succeededFuture();
            if (!logged.then(epoch, written, () -> {
                dispatch(epoch, byNode, txns);
                schedule();
            })) {
                break; // failed at once (no room in the ring): close no later epoch
            }
        }
        if (logged.failed()) {
            return;
        }
        maybeOpenWindow();
        schedule();
    }

    /**
     * Sends every node its part of this node's batch of {@code epoch} ({@code byNode}, of {@code txns}), this node's
     * own included; a dead owner's part goes to the scheduler that took it over here (or waits for it: issue 18 part
     * 5), and what each live participant was sent is kept until its part is over ({@link #sent}).
     */
    private void dispatch(final long epoch, final List<List<Decl>> byNode, final List<CalvinTxn> txns) {
        final Map<Long, Long> orderOf = new HashMap<>();
        for (final CalvinTxn t : txns) {
            orderOf.put(t.id(), t.orderTs());
        }
        for (int d = 0; d < nodes; d++) {
            if (deadNodes.contains(d) || dying.contains(d)) {
                if (rejoined.containsKey(d)) { // its new incarnation: an empty batch (it owns no partition now)
                    dispatched++;
                    for (final UnsafeBuffer chunk : CalvinWire.batch(epoch, index, epochs.completed(), List.of(),
                        maxPayload())) {
                        send(d, CalvinWire.BATCH, chunk);
                    }
                }
                if (byNode.get(d).isEmpty()) {
                    continue; // empty unless it owned keys, which its successor takes over
                }
                if (adopted != null && adopted.home == d) {
                    routedHere(d, CalvinProtocol.orderTs(epoch, index, 0), byNode.get(d));
                } else if (routedHome == d) {
                    final Map<Long, Sent> to = sent.computeIfAbsent(d, k -> new HashMap<>());
                    for (final Decl decl : byNode.get(d)) { // rides in the successor's batch (below)
                        to.put(decl.id(), new Sent(orderOf.getOrDefault(decl.id(), 0L), decl));
                    }
                } else {
                    for (final Decl decl : byNode.get(d)) {
                        heldForTakeover.computeIfAbsent(d, k -> new ArrayList<>()).add(new Takeover.Pending(
                            orderOf.getOrDefault(decl.id(), 0L), decl));
                    }
                }
                continue;
            }
            if (d == index && routedHome == index) { // restarted: its old partitions stay with their successor
                final Map<Long, Sent> to = sent.computeIfAbsent(d, k -> new HashMap<>());
                for (final Decl decl : byNode.get(d)) { // rides in the successor's batch (below)
                    to.put(decl.id(), new Sent(orderOf.getOrDefault(decl.id(), 0L), decl));
                }
                epochs.receive(index, epoch, List.of());
            } else if (d == index) {
                epochs.receive(index, epoch, byNode.get(d));
            } else {
                if (!byNode.get(d).isEmpty()) {
                    final Map<Long, Sent> to = sent.computeIfAbsent(d, k -> new HashMap<>());
                    for (final Decl decl : byNode.get(d)) {
                        to.put(decl.id(), new Sent(orderOf.getOrDefault(decl.id(), 0L), decl));
                    }
                }
                dispatched++;
                List<Decl> batch = byNode.get(d);
                if (d == routedTo && !byNode.get(routedHome).isEmpty()) { // the dead owner's part, for its successor
                    batch = new ArrayList<>(batch);
                    batch.add(CalvinWire.routedMarker(routedHome));
                    batch.addAll(byNode.get(routedHome));
                }
                for (final UnsafeBuffer chunk : CalvinWire.batch(epoch, index, epochs.completed(), batch,
                    maxPayload())) {
                    send(d, CalvinWire.BATCH, chunk);
                }
            }
        }
    }

    /** This node's input log, opened on first use. Home loop. */
    @SuppressWarnings("unchecked")
    CalvinInputLog inputLog() {
        if (inputLog == null) {
            inputLog = new CalvinInputLog(home, CalvinInputLog.copiesOf(home.catalog(), index),
                CalvinInputLog.DEFAULT_REGION_BYTES);
            if (shared != null) { // where survivors find it: the stand-in for a membership service's record
                ((Map<Integer, CalvinInputLog>) shared.computeIfAbsent("calvin.inputLogs",
                    k -> new java.util.concurrent.ConcurrentHashMap<Integer, CalvinInputLog>())).put(index, inputLog);
            }
        }
        return inputLog;
    }

    /** The input log if this node opened one (null: it logged nothing), for tests. */
    CalvinInputLog openedInputLog() {
        return inputLog;
    }

    private void onBatch(final RpcRequest request, final RpcResponder responder) {
        rpc = true;
        if (fromDead(request)) {
            responder.reply();
            return;
        }
        batch(CalvinWire.In.of(request), responder::reply);
    }

    /** A message of the one-sided form, noticed in this node's inbox. Home loop. */
    private void onMessage(final int from, final int type, final CalvinWire.In in) {
        rpc = false;
        if (deadNodes.contains(from) && !rejoined.containsKey(from)) {
            return; // landed before its fence, polled after the take-over: its log has what it said (its batches whole,
            // its transactions decided), and it waits for no answer
        }
        switch (type) {
            case CalvinWire.BATCH -> batch(in, () -> { });
            case CalvinWire.FORWARD -> forwarded(in.u64(), CalvinWire.readForward(in));
            case CalvinWire.WRITE -> write(in, e -> inbox.send(from, CalvinWire.DONE, CalvinWire.done(
                writeId(in), e)));
            case CalvinWire.DONE -> done(from, from, in);
            case CalvinWire.TAKEN_WRITE -> takenWrite(in, e -> inbox.send(from, CalvinWire.TAKEN_DONE,
                CalvinWire.done(writeId(in), e)));
            case CalvinWire.TAKEN_DONE -> {
                if (from != routedTo) {
                    home.giveUp("CALVIN taken-over write answered by " + names.get(from) + ", which took nothing "
                        + "over for " + names.get(index));
                } else {
                    done(from, routedHome, in);
                }
            }
            case CalvinWire.OWED -> owedChunk(from, in);
            default -> home.giveUp("CALVIN message of unknown type 0x" + Integer.toHexString(type) + " from "
                + names.get(from));
        }
    }

    private static long writeId(final CalvinWire.In in) {
        return in.buffer.getLong(0);
    }

    /** A chunk of a node's batch of an epoch; {@code answer} runs once it is parsed (the RPC form's reply). */
    private void batch(final CalvinWire.In in, final Runnable answer) {
        final long epoch = in.u64();
        final int from = in.u16();
        final int chunk = in.u16();
        final int chunks = in.u16();
        if (deadNodes.contains(from) && !rejoined.containsKey(from)) {
            answer.run(); // a dead node's call handled after the take-over: its epochs came whole from its log
            return;
        }
        epochs.reported(from, in.u64());
        List<Decl> txns = CalvinWire.readBatch(in);
        answer.run();
        if (chunks > 1) { // a batch in several messages: whole once every chunk is here, in chunk order
            final List<List<Decl>> parts = chunked.computeIfAbsent(epoch * nodes + from, k -> {
                final List<List<Decl>> l = new ArrayList<>();
                for (int i = 0; i < chunks; i++) {
                    l.add(null);
                }
                return l;
            });
            parts.set(chunk, txns);
            if (parts.contains(null)) {
                return;
            }
            chunked.remove(epoch * nodes + from);
            final List<Decl> whole = new ArrayList<>();
            parts.forEach(whole::addAll);
            txns = whole;
        }
        txns = CalvinWire.merge(txns); // a transaction too large for one message came in parts
        for (int i = 0; i < txns.size(); i++) {
            if (txns.get(i).keys().isEmpty()) { // the sender routes a dead owner's part here, its successor
                final int dead = txns.get(i).origin();
                routedHere(dead, CalvinProtocol.orderTs(epoch, from, 0), List.copyOf(txns.subList(i + 1,
                    txns.size())));
                txns = List.copyOf(txns.subList(0, i));
                break;
            }
        }
        epochs.receive(from, epoch, txns);
        if (joining) {
            return; // kept (or dropped at the join, below its first epoch): nothing sequenced before it
        }
        if (epochs.behind()) {
            closeWindow(); // another node ended the epoch: end it here too (schedules)
        } else {
            schedule();
        }
    }

    /**
     * Sends node {@code d} a message of {@code type}: an RPC to its home loop, or a one-sided WRITE into its inbox; a
     * failure is fatal to the run (nothing retries it).
     */
    private void send(final int d, final int type, final UnsafeBuffer payload) {
        if ((deadNodes.contains(d) || dying.contains(d)) && !rejoined.containsKey(d)) {
            return; // dead: what it would have been told, it no longer needs
        }
        if (!rpc) {
            inbox.send(d, type, payload);
            return;
        }
        peers.call(inbox.address(d), 0, type, payload, 0, payload.capacity()).onFailure(e -> peerFailed(d,
            "CALVIN message 0x" + Integer.toHexString(type) + " to " + names.get(d) + " failed: " + e));
    }

    // ------------------------------------------------------------------------------------------------ scheduler

    /** Queues the lock requests of every complete epoch, in the total order. */
    private void schedule() {
        for (List<List<Decl>> epoch = epochs.nextComplete(); epoch != null; epoch = epochs.nextComplete()) {
            for (int from = 0; from < epoch.size(); from++) {
                final List<Decl> batch = epoch.get(from);
                for (final Decl decl : batch) {
                    final Part p = new Part(decl, mine);
                    p.epoch = epochs.completed();
                    scheduledAt(decl.id(), CalvinProtocol.orderTs(p.epoch, from, 0));
                    enqueue(p);
                }
            }
        }
        feedAdopted();
    }

    /**
     * Dead owner {@code dead}'s part {@code decls} of a sequencer's epoch, routed here, its successor, at
     * {@code at}: kept for the scheduler taking it over, queued in order ({@link #feedAdopted}).
     */
    private void routedHere(final int dead, final long at, final List<Decl> decls) {
        final java.util.Set<Integer> gone = gone();
        gone.add(dead);
        if (routedFor >= 0 && routedFor != dead || Takeover.successor(dead, gone, nodes) != index) {
            home.giveUp("CALVIN node " + names.get(index) + " got dead node " + names.get(dead) + "'s part routed "
                + "to it, which does not take it over (issue 18 part 5)");
            return;
        }
        routedFor = dead;
        if (routed.putIfAbsent(at, decls) != null) {
            home.giveUp("CALVIN node " + names.get(index) + " got dead node " + names.get(dead) + "'s part at "
                + Long.toHexString(at) + " twice (issue 18 part 5)");
        }
    }

    /** Queues {@code p}'s lock requests in its scheduler, after every one queued there before. */
    private void enqueue(final Part p) {
        final Decl decl = p.decl;
        if (p.sched.parts.putIfAbsent(decl.id(), p) != null) {
            home.giveUp("CALVIN transaction " + Long.toHexString(decl.id()) + " scheduled twice for "
                + names.get(p.sched.home) + "'s partitions at " + names.get(index));
            return;
        }
        final Part early = p.sched == mine ? null : earlyWrites.remove(decl.id());
        if (early != null) { // its writes came before it was queued here
            if (p.writes != null || !p.active) {
                home.giveUp("CALVIN writes of transaction " + Long.toHexString(decl.id()) + " for "
                    + names.get(p.sched.home) + "'s partitions at " + names.get(index) + ", where it "
                    + (p.active ? "has writes already" : "writes nothing"));
                return;
            }
            p.commitTs = early.commitTs;
            p.writes = early.writes;
            p.written = early.written;
        }
        for (int i = 0; i < decl.keys().size(); i++) {
            if (!p.sched.locks.acquire(decl.keys().get(i), p, decl.exclusive().get(i))) {
                p.waiting++;
            }
        }
        if (p.waiting == 0) {
            ready(p);
        }
    }

    /** {@code p} holds its locks here: read its records and forward them to its executor. */
    private void ready(final Part p) {
        final ReadSet reads = new ReadSet(home);
        final List<Future<Record>> records = new ArrayList<>();
        for (final Key k : p.decl.keys()) {
            records.add(readRecord(reads, p, k, 0));
        }
        Future.all(records).onComplete(all -> {
            final List<Record> out = new ArrayList<>();
            for (final Future<Record> r : records) {
                out.add(r.result());
            }
            final int executor = p.decl.origin();
            p.readDone = true;
            if (p.sched != mine) {
                readyAdopted(p, out);
                return;
            }
            if (!p.active) {
                release(p); // a passive participant is done once its records are read
            }
            if (oldIncarnation(executor, p) || dying.contains(executor)) {
                if (p.active && oldIncarnation(executor, p)) {
                    decideDead(p); // its executor died: its decision record says whether to write
                }
                return; // its executor is dying: decided once its log is read (takeOver)
            }
            if (executor == index) {
                forwarded(p.decl.id(), out);
            } else {
                for (final UnsafeBuffer chunk : CalvinWire.forward(p.decl.id(), out, maxPayload())) {
                    send(executor, CalvinWire.FORWARD, chunk);
                }
            }
        });
    }

    private Future<Record> readRecord(final ReadSet reads, final Part p, final Key k, final int tries) {
        return readRecord(home, reads, k, a -> p.read.put(k, a), tries);
    }

    /**
     * Reads {@code k}'s record from its memory node (one-sided, {@code reads} on {@code runtime}'s loop): found with
     * its version and value, absent, or failed (why, as its value); {@code seen} gets the access read.
     */
    static Future<Record> readRecord(final TxnRuntime runtime, final ReadSet reads, final Key k,
                                     final java.util.function.Consumer<Access> seen, final int tries) {
        final io.scythe.txn.Catalog.Partition at = runtime.catalog().table(k.table()).partitionOf(k.key());
        return reads.locate(k.table(), k.key()).compose(reads::readImage).map(a -> {
            seen.accept(a);
            if (a.deleted) {
                return new Record(k, CalvinWire.ABSENT, a.readVersion, new byte[0]);
            }
            final byte[] value = new byte[a.valueLength];
            a.image.getBytes(ObjectLayout.VALUE_OFFSET, value);
            return new Record(k, CalvinWire.FOUND, a.readVersion, value);
        }).recover(e -> {
            if (e instanceof UnknownKeyException) {
                return Future.succeededFuture(new Record(k, CalvinWire.ABSENT, 0, new byte[0]));
            }
            if (e instanceof AbortException abort && abort.reason() == AbortReason.VALIDATION && tries < 8) {
                // a stale cached address, dropped: again
                return readRecord(runtime, new ReadSet(runtime), k, seen, tries + 1);
            }
            if (io.scythe.txn.onesided.OneSidedTxn.mayBeGone(e) && tries < 8) {
                // A memory node's crash (issue 18): once the configuration removes the copy read, read the key again
                // where it serves now (a promoted backup holds every write released: backups are written first, and
                // this scheduler's lock on the key is held until the write-back is over on the serving copies).
                return runtime.anyRemovedWithin(List.of(at.node())).compose(gone -> {
                    if (!gone) {
                        return Future.succeededFuture(new Record(k, CalvinWire.FAILED, 0,
                            String.valueOf(e).getBytes(java.nio.charset.StandardCharsets.UTF_8)));
                    }
                    runtime.tookPath(CalvinModule.READ_AGAIN_ON_FAILOVER);
                    return readRecord(runtime, new ReadSet(runtime), k, seen, tries + 1);
                });
            }
            final byte[] why = String.valueOf(e).getBytes(java.nio.charset.StandardCharsets.UTF_8);
            return Future.succeededFuture(new Record(k, CalvinWire.FAILED, 0, why));
        });
    }

    /**
     * {@code p}, in the scheduler of a dead owner's partitions taken over here (issue 18 part 5), holds its locks and
     * read its records: a dead executor's is decided from its decision record; for a live one (this node or another
     * survivor), the records its executor still waits for are forwarded (a rebuilt part's must be older than its
     * place in the order: a later transaction wrote what it read at the dead owner otherwise, which this cannot undo),
     * then a passive part releases and an active one applies its writes once they are here.
     */
    private void readyAdopted(final Part p, final List<Record> out) {
        final int executor = p.decl.origin();
        if (oldIncarnation(executor, p) || dying.contains(executor)) {
            if (!p.active) {
                release(p);
            } else if (oldIncarnation(executor, p)) {
                decideDead(p);
            } // else its executor is dying: decided once its log is read (executorDiedDuringTakeover)
            return;
        }
        final List<Record> forward = new ArrayList<>();
        for (final Record r : out) {
            if (p.missing == null || p.missing.contains(r.key())) {
                if (p.orderTs != 0 && r.version() >= p.orderTs) {
                    home.giveUp("CALVIN node " + names.get(index) + " took over " + names.get(p.sched.home)
                        + "'s partitions: transaction " + Long.toHexString(p.decl.id()) + "'s record of " + r.key()
                        + " was lost with it and a later transaction wrote it since (version "
                        + Long.toHexString(r.version()) + " at or after its place " + Long.toHexString(p.orderTs)
                        + "; issue 18 part 5)");
                    return;
                }
                forward.add(r);
            }
        }
        if (!p.active) {
            release(p);
        } else if (p.writes != null) {
            applyTakenOver(p);
        }
        if (forward.isEmpty()) {
            return;
        }
        if (executor == index) {
            forwarded(p.decl.id(), forward);
        } else {
            for (final UnsafeBuffer chunk : CalvinWire.forward(p.decl.id(), forward, maxPayload())) {
                send(executor, CalvinWire.FORWARD, chunk);
            }
        }
    }

    /** Applies the writes a taken-over part {@code p} got, completing its promise. */
    private void applyTakenOver(final Part p) {
        applyWrites(p.sched, p.decl.id(), p.commitTs, p.writes).onComplete(ar -> {
            if (ar.succeeded()) {
                p.written.tryComplete();
            } else {
                p.written.tryFail(ar.cause());
            }
        });
    }

    /** This node's executor's writes of {@code id} for the dead owner whose partitions it took over. */
    private Future<Void> writeTakenOver(final long id, final long commitTs, final List<Write> writes) {
        final Part p = adopted == null ? null : adopted.parts.get(id);
        if (p == null && (adopted == null || rebuilt == null || !rebuilt.isEmpty() || !routed.isEmpty())
            && !earlyWrites.containsKey(id)) {
            final Part early = new Part(new Decl(id, index, List.of(), List.of()), mine);
            early.writesTo(commitTs, writes); // its part is not queued here yet: attached when it is (enqueue)
            earlyWrites.put(id, early);
            return early.written.future();
        }
        if (p == null || !p.active || p.writes != null) {
            return Future.failedFuture(new IllegalStateException("CALVIN writes of transaction "
                + Long.toHexString(id) + " for " + names.get(adopted == null ? routedFor : adopted.home)
                + "'s partitions, taken over at "
                + names.get(index) + ", where it holds no write lock" + (p != null && p.writes != null
                ? " with no writes yet" : "")));
        }
        p.writesTo(commitTs, writes);
        if (p.readDone) {
            applyTakenOver(p);
        }
        return p.written.future();
    }

    private void release(final Part p) {
        p.sched.parts.remove(p.decl.id());
        for (final Key k : p.decl.keys()) {
            for (final Part q : p.sched.locks.release(k, p)) {
                if (--q.waiting == 0) {
                    ready(q);
                }
            }
        }
    }

    // ------------------------------------------------------------------------------------------------ executor

    private void onForward(final RpcRequest request, final RpcResponder responder) {
        rpc = true;
        if (fromDead(request)) {
            responder.reply();
            return;
        }
        final CalvinWire.In in = CalvinWire.In.of(request);
        final long id = in.u64();
        final List<Record> records = CalvinWire.readForward(in);
        responder.reply();
        forwarded(id, records);
    }

    /**
     * A call from a node this node took over, handled after the take-over (it landed in a request ring before the
     * fence): dropped, as the one-sided form drops such messages ({@link #onMessage}). Its batches came whole from its
     * log, its transactions are decided from their decision records, and what it owned was rebuilt here, which
     * forwards the records its executors still missed: a FORWARD of it handled now would count a key twice.
     */
    private boolean fromDead(final RpcRequest request) {
        final int from = peerIndex(names, joinedFrom, request.client());
        return from >= 0 && deadNodes.contains(from) && !request.client().equals(joinedFrom.get(from));
    }

    /**
     * The node an RPC call's client is ({@code client}: {@link RpcRequest#client}), or -1: none. The simulator's
     * client is the node's configured name, or its restarted incarnation's own peer name (known here once it rejoined:
     * {@code joinedFrom}); a cluster node's is its fabric identity {@code name.eEPOCH} (issue 18: the configured name
     * alone never matched there, so late calls of a dead incarnation were not dropped and OWED over RPC was attributed
     * to no node).
     */
    static int peerIndex(final List<String> names, final Map<Integer, String> joinedFrom, final String client) {
        final int exact = names.indexOf(client);
        if (exact >= 0) {
            return exact;
        }
        for (final Map.Entry<Integer, String> j : joinedFrom.entrySet()) {
            if (client.equals(j.getValue())) {
                return j.getKey();
            }
        }
        final int at = client.lastIndexOf(".e");
        if (at > 0 && at + 2 < client.length() && client.substring(at + 2).chars().allMatch(Character::isDigit)) {
            return names.indexOf(client.substring(0, at));
        }
        return -1;
    }

    /**
     * An OLLP transaction's first run, {@code id}, is over and sequenced again under another id: parts of it still
     * owed (a passive participant whose records did not all come back; none should) are dropped, not left for ever
     * in {@link #sent} (where the quiescence check names them). Home loop.
     */
    void renamed(final long id) {
        for (final Map<Long, Sent> to : sent.values()) {
            final Sent s = to.get(id);
            if (s != null && (s.done == null || s.done.future().isComplete())) {
                to.remove(id);
            }
        }
    }

    private void forwarded(final long id, final List<Record> records) {
        final CalvinTxn txn = executing.get(id);
        if (txn == null) {
            throw new IllegalStateException("CALVIN records forwarded for transaction " + Long.toHexString(id)
                + ", which node " + names.get(index) + " does not execute");
        }
        for (final Key k : txn.forwarded(records)) { // whole: that participant's part waits for its records no more
            final Map<Long, Sent> to = sent.get(owner(home, k.table(), k.key(), nodes));
            final Sent s = to == null ? null : to.get(id);
            if (s != null && s.missing.remove(k) && s.missing.isEmpty() && !s.active()) {
                to.remove(id);
            }
        }
    }

    /**
     * The executor's end of {@code txn}: sends each active participant its writes ({@code writes} by node; none
     * when it aborted), which write them and release; completes once all did. Home loop.
     */
    Future<Void> finish(final CalvinTxn txn, final long commitTs, final Map<Integer, List<Write>> writes,
                        final List<Integer> active) {
        if (logging && !writes.isEmpty()) {
            // Its decision first (issue 18 part 4): survivors of this node apply it if it is in the log, release if
            // not; so it is durable before any participant gets a write. Its slots are held until every write is.
            final io.scythe.txn.recovery.RedoLog redo = io.scythe.txn.recovery.RedoLog.of(home);
            if (redo != null) {
                redo.announce(txn.id(), commitTs, txn.accesses()); // a run's checks: it may commit from here on
            }
            return decidedThen(inputLog().appendDecision(CalvinInputLog.encodeDecision(txn.id(), commitTs, index,
                writes), epochs.lowWater(index)), () -> sendWrites(txn, commitTs, writes, active), inputLog::free);
        }
        return sendWrites(txn, commitTs, writes, active);
    }

    /**
     * {@code send} once the decision record is durable at {@code slot}; the record's slots {@code free}d once
     * {@code send} ends, written or failed (a failed write-back gives the run up: {@link CalvinTxn} says so, and a
     * slot kept would be held for ever, the ring a slot smaller for the rest of the run).
     */
    static Future<Void> decidedThen(final Future<Integer> slot, final java.util.function.Supplier<Future<Void>> send,
                                    final java.util.function.IntConsumer free) {
        return slot.compose(s -> send.get().andThen(ar -> free.accept(s)));
    }

    private Future<Void> sendWrites(final CalvinTxn txn, final long commitTs, final Map<Integer, List<Write>> writes,
                                    final List<Integer> active) {
        final List<Future<?>> done = new ArrayList<>();
        for (final int d : active) {
            final List<Write> w = writes.getOrDefault(d, List.of());
            if (d == index && routedHome != index) {
                done.add(applyWrites(mine, txn.id(), commitTs, w));
            } else if (adopted != null && adopted.home == d) {
                done.add(writeTakenOver(txn.id(), commitTs, w)); // a dead owner's partitions, taken over here
            } else if (routedHome == d) { // (a restarted node's own old partitions too) // a dead owner's partitions, taken over by its successor
                final Sent s = sent.computeIfAbsent(d, k -> new HashMap<>()).computeIfAbsent(txn.id(),
                    id -> new Sent(commitTs, null));
                s.commitTs = commitTs;
                s.writes = w;
                s.done = io.vertx.core.Promise.promise();
                done.add(s.done.future());
                sendTaken(txn.id(), s);
            } else {
                final Sent s = sent.computeIfAbsent(d, k -> new HashMap<>()).computeIfAbsent(txn.id(),
                    id -> new Sent(commitTs, null));
                s.commitTs = commitTs;
                s.writes = w;
                s.done = io.vertx.core.Promise.promise();
                done.add(s.done.future());
                if (dying.contains(d)) {
                    continue; // its successor gets them once it took over (adopt)
                }
                for (final UnsafeBuffer chunk : CalvinWire.write(txn.id(), commitTs, w, maxPayload())) {
                    s.left++;
                    if (rpc) {
                        peers.call(names.get(d), 0, CalvinWire.WRITE, chunk, 0, chunk.capacity()).onComplete(ar ->
                            writeDone(d, d, txn.id(), s, ar.cause()));
                    } else {
                        inbox.send(d, CalvinWire.WRITE, chunk);
                    }
                }
            }
        }
        return Future.all(done).<Void>mapEmpty().andThen(v -> executing.remove(txn.id()));
    }

    /**
     * A chunk of {@code s}, writes of transaction {@code id} at node {@code d}, was answered ({@code failure} null:
     * written). A call that failed without an answer (the node died, or will be told dead: issue 18 part 5) is left
     * to the take-over, which gets the writes to the successor.
     */
    private void writeDone(final int d, final int peer, final long id, final Sent s, final Throwable failure) {
        final Map<Long, Sent> to = sent.get(d);
        if (to == null || to.get(id) != s) {
            return; // taken over: the successor answers
        }
        if (failure != null
            && !(failure instanceof RpcException r && r.code() >= RpcException.FIRST_APPLICATION_CODE)) {
            peerFailed(peer, "CALVIN writes of " + Long.toHexString(id) + " to " + names.get(peer) + " failed: "
                + failure);
            return;
        }
        if (failure != null && s.failure == null) {
            s.failure = failure;
        }
        if (--s.left == 0) {
            to.remove(id);
            complete(s, s.failure);
        }
    }

    /** An active participant {@code from} wrote one chunk of a transaction's writes (one-sided form). */
    private void done(final int from, final int forNode, final CalvinWire.In in) {
        final long id = in.u64();
        final String failure = CalvinWire.readDone(in);
        final Map<Long, Sent> to = sent.get(forNode);
        final Sent s = to == null ? null : to.get(id);
        if (s == null || s.done == null) {
            home.giveUp("CALVIN done of transaction " + Long.toHexString(id) + ", which node " + names.get(index)
                + " does not wait for");
            return;
        }
        writeDone(forNode, from, id, s, failure == null ? null : new RpcException(RpcException.FIRST_APPLICATION_CODE,
            failure));
    }

    private void onWrite(final RpcRequest request, final RpcResponder responder) {
        rpc = true;
        if (fromDead(request)) {
            responder.reply(); // its decision record governs here (takeOver closed its writes)
            return;
        }
        write(CalvinWire.In.of(request), answer(responder));
    }

    private void onTakenWrite(final RpcRequest request, final RpcResponder responder) {
        rpc = true;
        if (fromDead(request)) {
            responder.reply();
            return;
        }
        takenWrite(CalvinWire.In.of(request), answer(responder));
    }

    /** A write's acknowledgement as an RPC answer: a reply, or the failure named. */
    private static java.util.function.Consumer<Throwable> answer(final RpcResponder responder) {
        return e -> {
            if (e == null) {
                responder.reply();
            } else {
                responder.fail(RpcException.FIRST_APPLICATION_CODE, String.valueOf(e));
            }
        };
    }

    private void onOwed(final RpcRequest request, final RpcResponder responder) {
        rpc = true;
        if (fromDead(request)) {
            responder.reply();
            return;
        }
        final int from = peerIndex(names, joinedFrom, request.client());
        if (from < 0 || from == index) {
            final String why = "CALVIN OWED at " + names.get(index) + " from " + request.client() + ", which is no "
                + "other compute node of " + names + ": its contribution to the take-over cannot be attributed";
            responder.fail(RpcException.FIRST_APPLICATION_CODE, why);
            home.giveUp(why);
            return;
        }
        final CalvinWire.In in = CalvinWire.In.of(request);
        responder.reply();
        owedChunk(from, in);
    }

    /**
     * A chunk of a survivor's writes for the dead owner's partitions taken over here ({@link CalvinWire#TAKEN_WRITE}):
     * once every chunk is here, applied in the taken-over scheduler where not installed ({@link #writeTakenOver}),
     * each chunk answered then.
     */
    private void takenWrite(final CalvinWire.In in, final java.util.function.Consumer<Throwable> ack) {
        final long id = in.u64();
        final long commitTs = in.u64();
        final int total = in.u16();
        final WriteChunks.Whole w = takenWriting.offer(id, total, CalvinWire.readWrites(in), ack);
        if (w == null) {
            return;
        }
        final List<Write> whole = wholeWrites(w);
        if (whole == null) {
            home.giveUp("CALVIN taken-over writes of transaction " + Long.toHexString(id) + " came with pieces "
                + "missing");
            return;
        }
        writeTakenOver(id, commitTs, whole).onComplete(ar -> w.acks().forEach(a -> a.accept(ar.cause())));
    }

    /** {@code w}'s writes with those sent in pieces joined again; null when some piece is missing. */
    private static List<Write> wholeWrites(final WriteChunks.Whole w) {
        final CalvinWire.Pieces pieces = new CalvinWire.Pieces();
        final List<Write> whole = new ArrayList<>(w.writes().size());
        for (final Write item : w.writes()) {
            final Write done = pieces.add(item);
            if (done != null) {
                whole.add(done);
            }
        }
        return pieces.partial() > 0 ? null : whole;
    }

    /** A chunk of an executor's writes: once every chunk is here, writes them, releases, answers each ({@code ack}). */
    private void write(final CalvinWire.In in, final java.util.function.Consumer<Throwable> ack) {
        final long id = in.u64();
        final long commitTs = in.u64();
        final int total = in.u16();
        final List<Write> writes = CalvinWire.readWrites(in);
        if (writing.closed(id)) {
            ack.accept(null); // its executor died and this node took it over: its decision record governs here
            return;
        }
        final WriteChunks.Whole w = writing.offer(id, total, writes, ack);
        if (w == null) {
            return; // more chunks to come: every chunk is answered once all are written
        }
        final List<Write> whole = wholeWrites(w);
        if (whole == null) {
            final IllegalStateException e = new IllegalStateException("CALVIN writes of transaction "
                + Long.toHexString(id) + " came with pieces missing");
            final Part p = parts.get(id);
            if (p != null && p.active) {
                release(p); // its executor gives up; later transactions on these keys must not wait for it forever
            }
            w.acks().forEach(a -> a.accept(e));
            return;
        }
        applyWrites(mine, id, commitTs, whole).onComplete(ar -> w.acks().forEach(a -> a.accept(ar.cause())));
    }

    /**
     * Writes {@code writes} of transaction {@code id} (one doorbell per memory node), then releases its locks. An
     * update or a delete (a tombstone) goes to the object read under the lock; an insert revives the key's tombstone in
     * place, or, for a key not in the index, creates it by an INSERT RPC to its memory node without a lock word
     * ({@code InsertLock.NONE}: this node's lock on the key is the lock) and then installs its version with the rest.
     */
    private Future<Void> applyWrites(final Sched sched, final long id, final long commitTs,
                                     final List<Write> decided) {
        final Part p = sched.parts.get(id);
        if (p == null || !p.active || p.writing) {
            return Future.failedFuture(new IllegalStateException("CALVIN writes of transaction "
                + Long.toHexString(id) + ", which holds no write lock at " + names.get(index)
                + (p != null && p.writing ? " not being written already" : "")));
        }
        p.writing = true;
        final List<Write> writes = sched == mine ? decided : notInstalled(p, commitTs, decided);
        // Every write checked before any is applied (an INSERT RPC sent cannot be taken back); a refused set changes
        // nothing and releases the locks, since its executor gives up and later transactions must not wait forever.
        for (final Write w : writes) {
            final Access read = p.read.get(w.key());
            final int at = p.decl.keys().indexOf(w.key());
            final boolean present = read != null && !read.deleted && (sched == mine || w.kind() != CalvinWire.INSERT);
            if (at < 0 || !p.decl.exclusive().get(at) || (w.kind() == CalvinWire.INSERT) == present) {
                release(p);
                return Future.failedFuture(new IllegalStateException("CALVIN " + kindName(w.kind()) + " of "
                    + w.key() + " by " + Long.toHexString(id) + " at " + names.get(index) + ": "
                    + (at < 0 || !p.decl.exclusive().get(at) ? "not a key it declared written"
                    : present ? "the key exists" : "the key is absent")));
            }
        }
        if (writes.isEmpty()) {
            release(p); // all of it installed already (a taken-over part the dead owner wrote)
            return Future.succeededFuture();
        }
        final List<Future<Access>> accesses = new ArrayList<>(writes.size());
        for (final Write w : writes) {
            final Access read = p.read.get(w.key());
            accesses.add(read == null ? inserted(w, commitTs) // a key not in the index: created, then written
                : Future.succeededFuture(changed(read, w, commitTs, read.readVersion)));
        }
        final java.util.Set<String> copies = copiesOf(p, writes);
        return install(accesses).recover(e -> installAgain(p, commitTs, writes, copies, e, 0))
            .andThen(v -> release(p));
    }

    /** {@code w}, an insert of a key not in the index, created by an INSERT RPC to its memory node, then changed. */
    private Future<Access> inserted(final Write w, final long commitTs) {
        final io.scythe.txn.Catalog.Partition partition = home.catalog().table(w.key().table())
            .partitionOf(w.key().key());
        final UnsafeBuffer value = new UnsafeBuffer(w.value());
        return home.remote(partition).insert(w.key().key(), value, 0, w.value().length,
            io.scythe.storage.Table.InsertLock.NONE, 0).map(inserted -> {
                final Access a = new Access(w.key().table(), w.key().key(), partition);
                a.pointer = inserted.pointer();
                a.valueLength = w.value().length;
                return changed(a, w, commitTs, 0);
            });
    }

    /** {@code accesses} (each changed) written back: every backup first, then the primaries. */
    private Future<Void> install(final List<Future<Access>> accesses) {
        return Future.all(accesses).compose(all -> {
            final List<Access> written = new ArrayList<>(accesses.size());
            for (final Future<Access> a : accesses) {
                written.add(a.result());
            }
            return writeBackups(written).compose(v -> {
                final Map<String, List<Access>> byNode = new LinkedHashMap<>();
                for (final Access a : written) {
                    byNode.computeIfAbsent(a.partition.node(), n -> new ArrayList<>()).add(a);
                }
                return io.scythe.txn.onesided.WriteSet.postPerNode(home, byNode, (batch, a) ->
                    io.scythe.txn.onesided.WriteSet.addWrites(batch, a, a.address(), a.rkey(), false));
            });
        });
    }

    /** How many times a write-back is done again after memory-node failovers before it fails (the run gives up). */
    static final int INSTALL_TRIES = 4;

    /**
     * A write-back of {@code writes} that failed with {@code failure}: done again in the configuration that serves now
     * when the failure may say a memory node is gone and the configuration removes one of the nodes holding a copy of
     * the keys written (issue 18, the rule the other RCC protocols follow, {@code RedoStep#finishOwnRecord}: what
     * landed or may land on a removed node counts for nothing, the write is done once the serving copies have it).
     * Each key is read again where it serves now (a promoted backup, or the same primary when a backup died, whose
     * write was refused before it: backups go first) and written at the version it was to install, backups first;
     * a copy that got it already is written the same value and version again. This node's lock on each key is held
     * throughout, so no other transaction reads or writes it between (CALVIN has no stale writer to fence: its
     * lock is on the scheduler, not in the memory node). Else the failure stands (the executor gives the run up).
     */
    private Future<Void> installAgain(final Part p, final long commitTs, final List<Write> writes,
                                      final java.util.Set<String> copies, final Throwable failure, final int tries) {
        if (tries >= INSTALL_TRIES || !io.scythe.txn.onesided.OneSidedTxn.mayBeGone(failure)) {
            return Future.failedFuture(failure);
        }
        return home.anyRemovedWithin(copies).compose(gone -> {
            if (!gone) {
                return Future.<Void>failedFuture(failure);
            }
            home.tookPath(CalvinModule.WRITE_BACK_AGAIN_ON_FAILOVER);
            final List<Future<Access>> accesses = new ArrayList<>(writes.size());
            for (final Write w : writes) {
                final Access read = p.read.get(w.key());
                final long readVersion = read == null ? 0 : read.readVersion;
                final Access[] seen = new Access[1];
                accesses.add(readRecord(home, new ReadSet(home), w.key(), a -> seen[0] = a, 0).compose(r -> {
                    if (r.status() == CalvinWire.FAILED) {
                        return Future.<Access>failedFuture(new IllegalStateException("CALVIN write-back of " + w.key()
                            + " after a memory-node failover could not read it where it serves: "
                            + new String(r.value(), java.nio.charset.StandardCharsets.UTF_8)));
                    }
                    if (seen[0] == null) { // not in the index where it serves now: only an insert creates it
                        return w.kind() == CalvinWire.INSERT ? inserted(w, commitTs)
                            : Future.<Access>failedFuture(new IllegalStateException("CALVIN write-back of " + w.key()
                            + " after a memory-node failover: the key is absent where it serves"));
                    }
                    return Future.succeededFuture(changed(seen[0], w, commitTs, readVersion));
                }));
            }
            final java.util.Set<String> now = copiesOf(p, writes);
            return install(accesses).recover(e -> installAgain(p, commitTs, writes, now, e, tries + 1));
        });
    }

    /**
     * The memory nodes holding a copy (primary or backup) of a key of {@code writes} as the write-back about to start
     * addresses them: a key read where it was read, else (an insert of a key not in the index) where it serves now.
     */
    private java.util.Set<String> copiesOf(final Part p, final List<Write> writes) {
        final java.util.Set<String> copies = new java.util.TreeSet<>();
        for (final Write w : writes) {
            final Access read = p.read.get(w.key());
            final io.scythe.txn.Catalog.Partition at = read != null ? read.partition
                : home.catalog().table(w.key().table()).partitionOf(w.key().key());
            copies.add(at.node());
            at.backups().forEach(b -> copies.add(b.node()));
        }
        return copies;
    }

    /**
     * With replication, {@code written} (each {@code installedVersion}ed) to every backup of its partition, one
     * doorbell per backup memory node, completed before any primary is written (issue 18: before, CALVIN wrote the
     * primaries only and {@code --replicas} failed the copies check). The same rule as every other protocol's
     * ({@code onesided.Replicas}: backups first, then the primaries), for the same reason: a primary's lock (here this
     * scheduler's lock on the key, released only after the primaries' doorbells) is then freed only once every copy
     * holds the value, so a later transaction of the key, whose write-back may reach a backup first, never has its
     * version overwritten there by this older one, and a promoted backup holds every write a reader saw released.
     * Both forms come here: the RPC form's WRITE is applied by this active participant with the same one-sided verbs.
     * The key is located on each backup first (cached for good per loop; a key inserted here gets a deleted
     * placeholder there by a LOCATE RPC, which this write then revives).
     */
    private Future<Void> writeBackups(final List<Access> written) {
        if (!io.scythe.txn.onesided.Replicas.any(written)) {
            return Future.succeededFuture();
        }
        return io.scythe.txn.onesided.Replicas.locateAll(home, written)
            .compose(v -> io.scythe.txn.onesided.Replicas.writeBack(home, written));
    }

    /**
     * Of the writes {@code decided} at {@code commitTs} for taken-over part {@code p} (issue 18 part 5 (3)), those its
     * records read under the new lock do not show installed ({@link Takeover#installed}): the dead owner may have
     * written some before it died. An insert whose key is present but not at its version (the dead owner's INSERT RPC
     * created it, its version not installed) is applied as a revival would be, over the record read.
     */
    private static List<Write> notInstalled(final Part p, final long commitTs, final List<Write> decided) {
        final List<Write> left = new ArrayList<>(decided.size());
        for (final Write w : decided) {
            final Access read = p.read.get(w.key());
            if (read == null || !Takeover.installed(read.readVersion, commitTs)) {
                left.add(w);
            }
        }
        return left;
    }

    /** {@code a} changed by {@code w} (its new value, tombstone or revival) at the version after {@code readVersion}. */
    private static Access changed(final Access a, final Write w, final long commitTs, final long readVersion) {
        a.dirty = true;
        a.deleting = w.kind() == CalvinWire.DELETE;
        a.reviving = w.kind() == CalvinWire.INSERT && a.deleted;
        // An insert writes the whole object on each backup (value, length, flags cleared, version) over the deleted
        // placeholder its LOCATE made there, or a dead owner's part write (WriteSet#addWrites: insertedOnBackup).
        a.inserted = w.kind() == CalvinWire.INSERT;
        if (!a.deleting) {
            io.scythe.txn.onesided.WriteSet.setNewValue(a, new UnsafeBuffer(w.value()), 0, w.value().length);
        }
        a.installedVersion = ObjectLayout.versionAfter(commitTs, readVersion);
        return a;
    }

    private static String kindName(final byte kind) {
        return kind == CalvinWire.INSERT ? "insert" : kind == CalvinWire.DELETE ? "delete" : "write";
    }

    /**
     * What this node still holds at the end of a run once every transaction finished (null: nothing): lock requests
     * queued, transactions holding locks, executing or waiting for their writes, partial batches or writes, messages
     * waiting for a slot. Home loop, or after the run.
     */
    String endOfRunViolation() {
        final List<String> left = new ArrayList<>();
        if (locks.queued() > 0) {
            left.add(locks.queued() + " keys with lock requests queued");
        }
        if (!parts.isEmpty()) {
            left.add(parts.size() + " transactions holding locks (first " + parts.values().iterator().next() + ")");
        }
        if (!executing.isEmpty()) {
            left.add(executing.size() + " transactions executing");
        }
        if (logged.waiting() > 0) {
            left.add(logged.waiting() + " epochs waiting for their input-log WRITE");
        }
        if (!pending.isEmpty()) {
            left.add(pending.size() + " transactions not sequenced");
        }
        if (writing.partial() > 0 || !chunked.isEmpty()) {
            left.add((writing.partial() + chunked.size()) + " messages partly received");
        }
        int owed = 0;
        for (final Map<Long, Sent> to : sent.values()) {
            owed += to.size();
        }
        if (owed > 0) {
            left.add(owed + " transactions' parts at participants not over (records or writes awaited)");
        }
        if (adopted != null && (adopted.locks.queued() > 0 || !adopted.parts.isEmpty())) {
            left.add(adopted.locks.queued() + " keys with lock requests queued and " + adopted.parts.size()
                + " transactions holding locks in the scheduler taken over from " + names.get(adopted.home));
        }
        if (!heldForTakeover.isEmpty()) {
            left.add("decls held for a take-over that never came");
        }
        if (adopted != null && rebuilt == null) {
            left.add("the take-over of " + names.get(adopted.home) + " waiting for contributions (from "
                + owedFrom + ", got " + owedIn.keySet() + ")");
        }
        if (rebuilt != null && !rebuilt.isEmpty() || !routed.isEmpty() || !earlyWrites.isEmpty()
            || takenWriting.partial() > 0 || !owedChunks.isEmpty()) {
            left.add("taken-over parts not queued (" + (rebuilt == null ? 0 : rebuilt.size()) + " rebuilt, "
                + routed.size() + " routed epochs, " + earlyWrites.size() + " early writes, "
                + (takenWriting.partial() + owedChunks.size()) + " messages partly received)");
        }
        if (inbox.backlog() > 0) {
            left.add(inbox.backlog() + " one-sided messages waiting for a slot");
        }
        return left.isEmpty() ? null : "CALVIN node " + names.get(index) + " left " + String.join(", ", left);
    }

    /** One-sided messages this node received, for tests. */
    long inboxReceived() {
        return inbox.received();
    }

    /** Locks queued here (0 when quiet) and batches dispatched to other nodes, for tests. */
    int queuedLocks() {
        return locks.queued();
    }

    long dispatched() {
        return dispatched;
    }
}
