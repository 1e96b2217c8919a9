package io.scythe.bridge;

import io.netty.util.concurrent.FastThreadLocal;
import io.scythe.fabric.CompletionHandler;
import io.scythe.fabric.CompletionQueue;
import io.scythe.fabric.Nic;
import io.scythe.fabric.Opcode;
import io.scythe.fabric.QueuePair;
import io.scythe.fabric.WcStatus;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;
import org.agrona.concurrent.NanoClock;

import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The completion poller of one event loop: a duty-cycle agent (Agrona's {@code doWork()} shape) that owns the
 * completion queues of that loop's queue pairs, polls them, and completes each verb's Future on the very thread that
 * posted it, with no hop. It runs as a task on its loop's executor, re-queued while verbs are outstanding (busy
 * polling, which lets the loop's other tasks and I/O run in between) and not at all when none are.
 *
 * <p>Owner-thread only, except {@link #wake()}, which any thread may call.
 */
public final class Bridge {
    private static final Logger LOG = LoggerFactory.getLogger(Bridge.class);
    private static final FastThreadLocal<Bridge> CURRENT = new FastThreadLocal<>();
    /** Completions delivered per queue per poll, as {@code ibv_poll_cq}'s batch. */
    public static final int DEFAULT_MAX_COMPLETIONS_PER_POLL = 256;
    /**
     * Longest a busy-polling bridge keeps its loop from doing I/O. Netty 4.2 runs queued tasks for up to a second
     * (never less than 100 ms) before polling sockets again, so a poll task that simply re-queued itself would starve
     * every socket, timer and event-bus message of its loop; at least this often the bridge re-queues itself as a
     * scheduled task instead, which Netty runs only after an I/O pass.
     */
    public static final long YIELD_INTERVAL_NS = 20_000;

    private final Thread thread;
    private final Executor executor;
    private final NanoClock clock;
    private final IdlePolicy idlePolicy;
    private final long spinWindowNs;
    private final Map<Nic, CompletionQueue> queuesByNic = new IdentityHashMap<>();
    private final VerbStats stats = new VerbStats();
    private final AtomicBoolean remoteWakePending = new AtomicBoolean();
    private final Runnable pollTask = this::runPollTask;
    private final Runnable remoteWakeTask = this::onRemoteWake;
    private final CompletionHandler dispatcher = Bridge::dispatch;
    private CompletionQueue[] queues = new CompletionQueue[0];
    private Poller[] pollers = new Poller[0];
    /** Volatile so that other threads can skip waking a loop that will poll anyway (see {@link #wake()}). */
    private volatile boolean scheduled;
    private boolean timerArmed;
    private long timerDeadlineNs;
    private long lastYieldNs;
    private boolean closed;
    private ContextInternal pollContext;
    private String deploymentId;
    private long polls;
    private long idlePolls;
    private int lastWork;
    /** The queue whose completions are being delivered (their timestamps are read from it), else null. */
    private CompletionQueue delivering;
    /** Runs a task after the current one on this loop; null on event loops (callers use their Vert.x context). */
    private Executor deferred;

    /**
     * @param executor runs the poll task on {@code thread} (the event loop); a {@link ScheduledExecutorService}
     *                 also lets the bridge sleep until a distant completion is due
     */
    public Bridge(final Thread thread, final Executor executor, final NanoClock clock, final IdlePolicy idlePolicy,
                  final long spinWindowNs) {
        this.thread = thread;
        this.executor = executor;
        this.clock = clock;
        this.idlePolicy = idlePolicy;
        this.spinWindowNs = spinWindowNs;
    }

    /** The bridge of the calling event loop. @throws IllegalStateException when none runs on this thread */
    public static Bridge current() {
        final Bridge bridge = CURRENT.get();
        if (bridge == null) {
            throw new IllegalStateException("no Bridge on thread '" + Thread.currentThread().getName()
                + "': deploy BridgeVerticle on every event loop (BridgeVerticle.deployOnEveryEventLoop) and post "
                + "verbs from an event loop");
        }
        return bridge;
    }

    /** The bridge of the calling thread, or {@code null}. */
    public static Bridge currentOrNull() {
        return CURRENT.getIfExists();
    }

    /** Makes this bridge the calling thread's ({@link #current()}). */
    public void install() {
        checkThread();
        if (CURRENT.getIfExists() != null && CURRENT.get() != this) {
            throw new IllegalStateException("thread '" + thread.getName() + "' already has a Bridge");
        }
        CURRENT.set(this);
    }

    /**
     * Makes {@code bridge} the calling thread's current one and returns the previous (or {@code null}): for a
     * deterministic simulator that runs many simulated loops, each with its own bridge, on one thread, and switches
     * between them before each event. Event loops never call this ({@link #install()} is theirs).
     */
    public static Bridge switchCurrent(final Bridge bridge) {
        final Bridge previous = CURRENT.getIfExists();
        if (bridge == null) {
            CURRENT.remove();
        } else {
            CURRENT.set(bridge);
        }
        return previous;
    }

    /**
     * Where work deferred to the end of the current task goes (an RRPC round's flush) when this bridge's loop is not
     * a Vert.x context: the simulator's. Set once, before use.
     */
    public void deferredExecutor(final Executor deferred) {
        this.deferred = deferred;
    }

    /** The executor of {@link #deferredExecutor(Executor)}, or {@code null} on a Vert.x event loop. */
    public Executor deferredExecutor() {
        return deferred;
    }

    /**
     * Runs {@code task} on this bridge's loop: at once when called there, else queued to the loop (any thread). For a
     * continuation that another thread may complete (a fabric's helper thread) but that touches the loop's state.
     */
    public void execute(final Runnable task) {
        // The current bridge, not the thread: the simulator runs every loop's bridge on one thread.
        if (Thread.currentThread() == thread && currentOrNull() == this) {
            task.run();
        } else {
            executor.execute(task);
        }
    }

    /** The completion queue this bridge polls for {@code nic}'s queue pairs, created on first use. */
    public CompletionQueue completionQueue(final Nic nic) {
        checkThread();
        if (closed) {
            throw new IllegalStateException("bridge of thread '" + thread.getName() + "' is closed");
        }
        CompletionQueue cq = queuesByNic.get(nic);
        if (cq == null) {
            cq = nic.createCompletionQueue(DEFAULT_MAX_COMPLETIONS_PER_POLL * 16);
            cq.wakeHandler(this::wake);
            queuesByNic.put(nic, cq);
            queues = Arrays.copyOf(queues, queues.length + 1);
            queues[queues.length - 1] = cq;
        }
        return cq;
    }

    /**
     * Resumes polling: a verb was posted or a completion arrived. Any thread. Another thread skips the wake-up (a
     * syscall when the loop sleeps) while a poll is scheduled: that poll sees the new work, because the work was
     * published before this check and the poll task clears {@code scheduled} before it looks for work.
     */
    public void wake() {
        if (Thread.currentThread() == thread) {
            schedule();
            return;
        }
        // Dekker with runPollTask (which clears `scheduled`, a volatile write, then looks for work): the caller's
        // publication of the work may be plain stores (a WRITE's bytes landing in a ring), which a later read of
        // `scheduled` could overtake; then both sides miss each other and the loop sleeps with work waiting.
        VarHandle.fullFence();
        if (!scheduled && remoteWakePending.compareAndSet(false, true)) {
            executor.execute(remoteWakeTask);
        }
    }

    private void onRemoteWake() {
        remoteWakePending.set(false);
        schedule();
    }

    private void schedule() {
        if (!scheduled && !closed) {
            scheduled = true;
            executor.execute(pollTask);
        }
    }

    /**
     * Something else this loop polls in its duty cycle: an RPC client's reply rings, an RPC server's inbox. The bridge
     * keeps polling while any poller is {@link #busy()}; a poller that is not busy wakes the bridge ({@link #wake()})
     * when work arrives.
     */
    public interface Poller {
        /** @return the amount of work done */
        int poll(long nowNs);

        /** Whether it expects work soon (e.g. replies are outstanding) and wants polling to go on. */
        boolean busy();

        /**
         * When a poller that is not {@link #busy()} wants to be polled again although nothing wakes it (a server that
         * polls slowly while idle, where no peer write can wake it); {@link CompletionQueue#NO_EVENT}: only when woken.
         */
        default long wakeAtNs() {
            return CompletionQueue.NO_EVENT;
        }
    }

    /** Polls {@code poller} in every duty cycle of this loop from now on. */
    public void addPoller(final Poller poller) {
        checkThread();
        pollers = Arrays.copyOf(pollers, pollers.length + 1);
        pollers[pollers.length - 1] = poller;
        schedule();
    }

    public void removePoller(final Poller poller) {
        checkThread();
        pollers = Arrays.stream(pollers).filter(p -> p != poller).toArray(Poller[]::new);
    }

    /**
     * One duty cycle: reads the clock once and polls every queue and poller.
     *
     * @return completions delivered plus verbs executed plus the pollers' work
     */
    public int doWork() {
        final long now = clock.nanoTime();
        int work = 0;
        try {
            for (final CompletionQueue cq : queues) {
                delivering = cq;
                work += cq.poll(now, dispatcher, DEFAULT_MAX_COMPLETIONS_PER_POLL);
            }
        } finally {
            delivering = null;
        }
        for (final Poller poller : pollers) {
            work += poller.poll(now);
        }
        polls++;
        lastWork = work;
        if (work == 0) {
            idlePolls++;
        }
        return work;
    }

    /**
     * The context polls run in: completions of Futures bound to it then cost no context switch (those bound to other
     * contexts of this loop are still completed correctly, each with a switch). The context of the latest channel
     * created on this loop; normally the one coordinator of the loop.
     */
    void pollContext(final ContextInternal context) {
        if (context != null && context.nettyEventLoop() != null && context.inThread()) {
            this.pollContext = context;
        }
    }

    private void runPollTask() {
        scheduled = false;
        if (closed) {
            return;
        }
        final ContextInternal ctx = pollContext;
        int work;
        try {
            if (ctx == null) {
                work = doWork();
            } else {
                final ContextInternal previous = ctx.beginDispatch();
                try {
                    work = doWork();
                } finally {
                    ctx.endDispatch(previous);
                }
            }
        } catch (final Throwable t) {
            // A throwing completion handler or poller must not stop this loop's polling: others still wait.
            if (ctx != null) {
                ctx.reportException(t);
            } else {
                LOG.error("bridge poll of thread '" + thread.getName() + "' failed", t);
            }
            work = 1;
        }
        int outstanding = 0;
        long next = CompletionQueue.NO_EVENT;
        for (final CompletionQueue cq : queues) {
            outstanding += cq.outstanding();
            next = Math.min(next, cq.nextEventNs());
        }
        for (final Poller poller : pollers) {
            if (poller.busy()) {
                outstanding++;
                next = Math.min(next, clock.nanoTime()); // a busy poller is polled at once
            } else {
                next = Math.min(next, poller.wakeAtNs());
            }
        }
        if (outstanding == 0 && next == CompletionQueue.NO_EVENT) {
            return; // quiet until the next post or asynchronous completion wakes us
        }
        if (work > 0 || idlePolicy == IdlePolicy.BUSY_SPIN || next == CompletionQueue.NO_EVENT) {
            // NO_EVENT with verbs outstanding: completions arrive asynchronously (a socket); keep polling for them.
            repoll();
            return;
        }
        final long delay = next - clock.nanoTime();
        if (delay <= spinWindowNs || !(executor instanceof ScheduledExecutorService)) {
            repoll();
        } else if (!timerArmed || next - timerDeadlineNs < 0) {
            // Sleep until the next event; a verb posted since with an earlier one re-arms (the older timer's
            // poll then finds nothing and costs only itself).
            timerArmed = true;
            timerDeadlineNs = next;
            ((ScheduledExecutorService) executor).schedule(this::onTimer, delay, TimeUnit.NANOSECONDS);
        }
    }

    /** Polls again soon: at once, or after an I/O pass when the loop has not done one for a while. */
    private void repoll() {
        if (scheduled || closed) {
            return;
        }
        final long now = System.nanoTime();
        if (now - lastYieldNs < YIELD_INTERVAL_NS || !(executor instanceof ScheduledExecutorService)) {
            schedule();
            return;
        }
        lastYieldNs = now;
        scheduled = true;
        ((ScheduledExecutorService) executor).schedule(pollTask, 0, TimeUnit.NANOSECONDS);
    }

    private void onTimer() {
        timerArmed = false;
        schedule();
    }

    private static void dispatch(final QueuePair qp, final long wrId, final Opcode opcode, final WcStatus status,
                                 final int byteLength) {
        final Object owner = qp.attachment();
        if (owner instanceof CompletionHandler) {
            ((CompletionHandler) owner).onCompletion(qp, wrId, opcode, status, byteLength);
        } else {
            LOG.error("completion of " + opcode + " wrId=" + wrId + " (" + status + ") on " + qp
                + " has no handler attached; dropped");
        }
    }

    /**
     * The NIC-clock timestamp of the completion being delivered ({@link CompletionQueue#completionTimestampNs()}):
     * for a completion handler of this loop, during its call.
     *
     * @throws IllegalStateException outside a completion's delivery
     */
    public long completionTimestampNs() {
        final CompletionQueue cq = delivering;
        if (cq == null) {
            throw new IllegalStateException("no completion is being delivered on the bridge of thread '"
                + thread.getName() + "': completion timestamps are read inside a completion handler");
        }
        return cq.completionTimestampNs();
    }

    /** Verbs posted through this bridge. */
    public VerbStats stats() {
        return stats;
    }

    public long polls() {
        return polls;
    }

    /** The work the latest duty cycle did (the simulator charges CPU time by it). */
    public int lastWork() {
        return lastWork;
    }

    public long idlePolls() {
        return idlePolls;
    }

    /** The BridgeVerticle deployment running this bridge, if any. */
    public String deploymentId() {
        return deploymentId;
    }

    void deploymentId(final String deploymentId) {
        this.deploymentId = deploymentId;
    }

    public Thread thread() {
        return thread;
    }

    public NanoClock clock() {
        return clock;
    }

    /** Work requests outstanding on every queue of this bridge. */
    public int outstanding() {
        int outstanding = 0;
        for (final CompletionQueue cq : queues) {
            outstanding += cq.outstanding();
        }
        return outstanding;
    }

    /** Stops polling and closes this bridge's completion queues; uninstalls it from its thread. */
    public void close() {
        checkThread();
        closed = true;
        for (final CompletionQueue cq : queues) {
            cq.close();
        }
        if (CURRENT.getIfExists() == this) {
            CURRENT.remove();
        }
    }

    /** @throws IllegalStateException when called from another thread than this bridge's loop */
    public void checkThread() {
        if (Thread.currentThread() != thread) {
            throw new IllegalStateException("bridge of thread '" + thread.getName() + "' used from thread '"
                + Thread.currentThread().getName() + "'");
        }
    }
}
