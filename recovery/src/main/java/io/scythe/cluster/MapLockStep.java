package io.scythe.cluster;

import com.hazelcast.map.IMap;

import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A read-modify-write of a Hazelcast map done under that map's lock on one key (a CN's epoch, the slot counter), which
 * notices when the lock was lost before its unlock and does the step again.
 * <p>
 * A member split off its cluster (a clock jump under load: soakports' chaos start, issue 23 section 3) that merges back
 * while it holds such a lock restarts its Hazelcast node: the lock's state goes with the merging side's data, so the
 * unlock finds the key {@code <not-locked>} and throws {@link IllegalMonitorStateException}. The step then ran without
 * mutual exclusion, on a side whose map may have lost its partitions, and what it wrote may have been dropped by the
 * merge: its result is not trusted. It was thrown raw out of the node's start (a stack trace, the node half-configured);
 * now the step is done again against the merged cluster, {@value #ATTEMPTS} times at most, each loss logged, and then
 * the start fails with one clear line. A step done again may skip a value (its first write survived): epochs and slots
 * must be unique and growing, not dense.
 * <p>
 * The lock alone is not enough: the step may read on the split side (an empty map: its partitions were lost) and write
 * after the merge, lowering the merged cluster's value (an epoch given out again). Its counters are therefore only ever
 * raised ({@link #raise}); a raise that finds a higher value shows the read was stale ({@link #stale}), and the step
 * is done again like one whose lock was lost. A step done wholly on the split side, lock and unlock included, is not
 * caught here (its unlock succeeds): the map's merge keeps the higher value and the incarnation that took an epoch or
 * slot given twice finds so there ({@link EpochClaims}).
 */
final class MapLockStep {

    /** Attempts at one step: a second split within one start is already a sick cluster. */
    static final int ATTEMPTS = 3;
    /** How long a step waits for its lock unless told otherwise. */
    static final long LOCK_WAIT_MS = 60_000;
    /** How often a step still waiting for its lock says so. */
    static final long LOCK_REPORT_MS = 5_000;

    private MapLockStep() {
    }

    /** Thrown by a step whose read turned out stale ({@link #stale}): done again, like a step whose lock was lost. */
    private static final class Stale extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Stale(final String message) {
            super(message, null, false, false);
        }
    }

    /** What a step throws when what it read turned out stale (a {@link #raise} found a higher value). */
    static RuntimeException stale(final String what) {
        return new Stale(what);
    }

    /**
     * Sets {@code map[key]} to {@code value} unless it already holds at least that (compare-and-set, never lowering):
     * true when it now holds {@code value}, false when it held more (the caller read a stale, lower value).
     */
    static <K> boolean raise(final IMap<K, Long> map, final K key, final long value) {
        while (true) {
            final Long now = map.get(key);
            if (now != null && now >= value) {
                return now == value;
            }
            if (now == null ? map.putIfAbsent(key, value) == null : map.replace(key, now, value)) {
                return true;
            }
        }
    }

    /**
     * Runs {@code body} holding {@code map}'s lock on {@code key}; when the unlock shows the lock was lost, logs it on
     * {@code log} and runs it again (a fresh lock), {@value #ATTEMPTS} times at most, then throws
     * {@link IllegalStateException} naming {@code step}. A step that throws {@link #stale} is done again the same way. An exception of {@code body} itself is thrown as it is (the
     * lost lock's, if any, added to it as suppressed).
     */
    static <K, T> T underLock(final IMap<K, ?> map, final K key, final String step, final Supplier<T> body,
                              final Consumer<String> log) {
        return underLock(map, key, step, LOCK_WAIT_MS, body, log);
    }

    /**
     * {@link #underLock(IMap, Object, String, Supplier, Consumer)} waiting at most {@code lockWaitMs} for the lock
     * each attempt (issue 23 §1: a lock held by a member that stopped answering, a paused CN mid-start holding the
     * slot counter's, held a start without end: the lock has no lease). The wait is logged every
     * {@value #LOCK_REPORT_MS} ms; past it, {@link IllegalStateException} naming {@code step} ends the start.
     */
    static <K, T> T underLock(final IMap<K, ?> map, final K key, final String step, final long lockWaitMs,
                              final Supplier<T> body, final Consumer<String> log) {
        for (int attempt = 1; ; attempt++) {
            lockWithin(map, key, step, lockWaitMs, log);
            T result = null;
            String stale = null;
            try {
                result = body.get();
            } catch (final Stale e) {
                stale = e.getMessage();
            } catch (final RuntimeException | Error e) {
                try {
                    map.unlock(key);
                } catch (final IllegalMonitorStateException lost) {
                    e.addSuppressed(lost);
                }
                throw e;
            }
            String what = stale == null ? null : step + ": " + stale + " (read on one side of a split, written after "
                + "the merge)";
            IllegalMonitorStateException lost = null;
            try {
                map.unlock(key);
            } catch (final IllegalMonitorStateException e) {
                lost = e;
                what = step + ": the lock on " + map.getName() + "[" + key + "] was lost before its unlock "
                    + "(this member left its cluster and merged back: a split, as a clock jump under load makes)";
            }
            if (what == null) {
                return result;
            }
            if (attempt >= ATTEMPTS) {
                throw new IllegalStateException(what + "; " + attempt + " times in a row, giving the start up", lost);
            }
            log.accept(what + "; its result is not trusted, doing it again (attempt " + (attempt + 1) + " of "
                + ATTEMPTS + ")");
        }
    }

    private static <K> void lockWithin(final IMap<K, ?> map, final K key, final String step, final long lockWaitMs,
                                       final Consumer<String> log) {
        final long startNs = System.nanoTime();
        while (true) {
            final long waitedMs = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
            final long sliceMs = Math.min(LOCK_REPORT_MS, lockWaitMs - waitedMs);
            try {
                if (sliceMs > 0 && map.tryLock(key, sliceMs, java.util.concurrent.TimeUnit.MILLISECONDS)) {
                    return;
                }
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(step + ": interrupted waiting for the lock on " + map.getName() + "["
                    + key + "]", e);
            }
            final long nowMs = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
            if (nowMs >= lockWaitMs) {
                throw new IllegalStateException(step + ": the lock on " + map.getName() + "[" + key + "] stayed held "
                    + "by another for " + nowMs + " ms (a member that stopped answering holds it?); giving the start "
                    + "up");
            }
            log.accept("WARN " + step + ": waiting " + nowMs + " ms so far for the lock on " + map.getName() + "["
                + key + "], held by another (bound " + lockWaitMs + " ms)");
        }
    }
}
