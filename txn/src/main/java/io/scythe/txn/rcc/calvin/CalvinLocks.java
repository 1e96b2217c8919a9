package io.scythe.txn.rcc.calvin;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * CALVIN's deterministic lock manager of one node (sans-IO): lock requests are queued per key in the order they are
 * made, which is the epochs' total order ({@link Epochs}), so every node grants in that one order and no transaction
 * ever waits for a later one (no deadlock, no abort). Shared (read) requests at the head of a queue are granted
 * together; an exclusive (write) request only alone at the head. Loop-confined.
 *
 * @param <K> a key
 * @param <T> what holds a request (a transaction here)
 */
final class CalvinLocks<K, T> {
    private static final class Request<T> {
        final T holder;
        final boolean exclusive;
        boolean granted;

        Request(final T holder, final boolean exclusive) {
            this.holder = holder;
            this.exclusive = exclusive;
        }
    }

    private final Map<K, ArrayDeque<Request<T>>> queues = new HashMap<>();

    /** Queues {@code holder}'s request on {@code key} behind every earlier one; whether it is granted at once. */
    boolean acquire(final K key, final T holder, final boolean exclusive) {
        final ArrayDeque<Request<T>> queue = queues.computeIfAbsent(key, k -> new ArrayDeque<>());
        final Request<T> request = new Request<>(holder, exclusive);
        boolean grant = queue.isEmpty();
        if (!grant && !exclusive) {
            grant = true;
            for (final Request<T> r : queue) {
                if (r.exclusive || !r.granted) {
                    grant = false;
                    break;
                }
            }
        }
        request.granted = grant;
        queue.addLast(request);
        return grant;
    }

    /**
     * Drops {@code holder}'s request on {@code key} (granted or not); returns the holders whose requests this grants
     * now, in queue order.
     *
     * @throws IllegalStateException when {@code holder} has no request on {@code key}
     */
    List<T> release(final K key, final T holder) {
        final ArrayDeque<Request<T>> queue = queues.get(key);
        boolean found = false;
        if (queue != null) {
            for (final Iterator<Request<T>> it = queue.iterator(); it.hasNext(); ) {
                if (it.next().holder == holder) {
                    it.remove();
                    found = true;
                    break;
                }
            }
        }
        if (!found) {
            throw new IllegalStateException("CALVIN lock release of " + key + " by " + holder + ", which holds no "
                + "request on it");
        }
        if (queue.isEmpty()) {
            queues.remove(key);
            return List.of();
        }
        final List<T> granted = new ArrayList<>(1);
        boolean first = true;
        for (final Request<T> r : queue) {
            if (r.exclusive && !first) {
                break;
            }
            if (!r.granted) {
                r.granted = true;
                granted.add(r.holder);
            }
            if (r.exclusive) {
                break;
            }
            first = false;
        }
        return granted;
    }

    /** Keys with a request queued (0 once every transaction released: quiescence). */
    int queued() {
        return queues.size();
    }
}
