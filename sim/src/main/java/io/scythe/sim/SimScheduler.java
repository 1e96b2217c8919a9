package io.scythe.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;

/**
 * The single-threaded, seeded scheduler: one queue of events ordered by virtual time, then by a tie-break drawn from
 * the seed and the loop (so one seed always orders simultaneous events of different loops the same way, and another
 * seed orders them differently), then by posting order (so one loop's simultaneous tasks keep their FIFO order, as on
 * an event loop). Running an event moves the {@link VirtualClock} to its time. Nothing here reads wall time.
 */
public final class SimScheduler {
    private final VirtualClock clock = new VirtualClock();
    private final long seed;
    private final PriorityQueue<Event> queue = new PriorityQueue<>();
    private final List<SimLoop> loops = new ArrayList<>();
    private long sequence;
    private long executed;
    private Throwable failure;

    public SimScheduler(final long seed) {
        this.seed = seed;
    }

    public VirtualClock clock() {
        return clock;
    }

    public long seed() {
        return seed;
    }

    /** A new simulated loop (a core of a node) charging CPU time by {@code cpu}. */
    public SimLoop newLoop(final String name, final SimLoop.Cpu cpu) {
        final SimLoop loop = new SimLoop(this, loops.size(), name, cpu);
        loops.add(loop);
        return loop;
    }

    public List<SimLoop> loops() {
        return loops;
    }

    Event post(final SimLoop loop, final long atNs, final Runnable task) {
        final Event e = new Event(atNs, tieBreak(loop.id(), atNs), sequence++, loop, task);
        queue.add(e);
        return e;
    }

    private long tieBreak(final int loopId, final long atNs) {
        long z = seed * 0x9E3779B97F4A7C15L + loopId * 0xBF58476D1CE4E5B9L + atNs * 0x94D049BB133111EBL;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /**
     * Runs events due no later than {@code deadlineNs}, in order, until none is left or {@code stop} says so.
     *
     * @return events run
     */
    public long runUntil(final long deadlineNs, final java.util.function.BooleanSupplier stop) {
        long ran = 0;
        Event e;
        while ((e = queue.peek()) != null && e.atNs - deadlineNs <= 0 && !stop.getAsBoolean()) {
            queue.poll();
            if ((e.future != null && e.future.isCancelled()) || e.loop.crashed()) {
                continue;
            }
            if (e.atNs - e.loop.busyUntilNs() < 0) {
                // The loop's core is still busy with an earlier task: this one waits for it (a new place in line).
                post(e.loop, e.loop.busyUntilNs(), e.task).future = e.future;
                continue;
            }
            clock.advanceTo(e.atNs);
            e.loop.run(e.task);
            executed++;
            ran++;
        }
        return ran;
    }

    /** Time of the next event, or {@code Long.MAX_VALUE}. */
    public long nextEventNs() {
        final Event e = queue.peek();
        return e == null ? Long.MAX_VALUE : e.atNs;
    }

    /** Events waiting (crashed loops' included until they come up). */
    public int pending() {
        return queue.size();
    }

    public long executed() {
        return executed;
    }

    /** Records the first uncaught failure of a task; the run reports it. */
    void failed(final Throwable t) {
        if (failure == null) {
            failure = t;
        }
    }

    /** The first task failure of the run, or {@code null}. */
    public Throwable failure() {
        return failure;
    }

    static final class Event implements Comparable<Event> {
        final long atNs;
        final long tie;
        final long seq;
        final SimLoop loop;
        final Runnable task;
        SimLoop.Scheduled future;

        Event(final long atNs, final long tie, final long seq, final SimLoop loop, final Runnable task) {
            this.atNs = atNs;
            this.tie = tie;
            this.seq = seq;
            this.loop = loop;
            this.task = task;
        }

        @Override
        public int compareTo(final Event o) {
            int c = Long.compare(atNs - o.atNs, 0);
            if (c != 0) {
                return c;
            }
            c = Long.compare(tie, o.tie);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }
}
