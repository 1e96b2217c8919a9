package io.scythe.cli;

import io.scythe.cluster.ScytheClient;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * How {@code scythe chaos} reads the accounts (its start-up and final audits) in a cluster under faults: each read is
 * sent to a compute node that serves (its {@code /health} says UP, lease held, no memory-node failover settling, and
 * the client sees it on the event bus), and a read that does not commit there (the node was fenced meanwhile, left,
 * or a cluster split hid it) is tried on the next serving node, within a bound. When no compute node serves (all of
 * them restarting after a memory node's failover, or a split not yet healed), it waits, saying so every
 * {@link #LOG_EVERY_MS}, until one does or the bound has passed. Pure logic over a {@link Cluster} view, so the suite
 * tests it without starting processes.
 */
final class ServingReads {
    /** A wait for a serving compute node is logged this often. */
    static final long LOG_EVERY_MS = 10_000;

    /** A read on compute node {@code cn}: its outcome (a timeout is {@code Unknown}). */
    interface Read {
        ScytheClient.Outcome on(String cn) throws Exception;
    }

    /** What the reads need of the cluster: its compute nodes' health and the client's view of them, time. */
    interface Cluster {
        /** The compute nodes by name, in order. */
        List<String> cns();

        /** {@code cn}'s {@code /health}, or null when it does not answer. */
        JsonObject health(String cn);

        /** Whether the client sees {@code cn} on the event bus (its coordinator's address is registered). */
        boolean visible(String cn);

        long nanoTime();

        void sleep(long ms) throws InterruptedException;
    }

    /** Why {@code cn} does not serve now (null when it does), from its health and the client's view. */
    static String notServing(final String cn, final JsonObject health, final boolean visible) {
        if (health == null) {
            return "does not answer";
        }
        if (!"UP".equals(health.getString("status"))) {
            return "status " + health.getString("status");
        }
        if ("lost".equals(health.getString("lease"))) {
            return "lease lost (fenced)";
        }
        final JsonObject mns = health.getJsonObject("memoryNodes");
        if (mns != null && mns.getBoolean("settling", false)) {
            return "settling a memory node's failover";
        }
        if (!visible) {
            return "not seen by the client (cluster split?)";
        }
        return null;
    }

    private final Cluster cluster;
    private final long boundMs;
    private final Consumer<String> log;
    /** The compute node the last read committed on: asked first next time. */
    private String current;
    /** Reads retried on another node, and the time spent waiting for a serving one (ms), for the report. */
    private long retries;
    private long waitedMs;

    /**
     * @param boundMs how long one read (or the wait for a serving node) may take before it fails
     * @param log     where the waits and retries are said
     */
    ServingReads(final Cluster cluster, final long boundMs, final Consumer<String> log) {
        this.cluster = cluster;
        this.boundMs = boundMs;
        this.log = log;
    }

    long retries() {
        return retries;
    }

    long waitedMs() {
        return waitedMs;
    }

    /** The compute nodes serving now, {@code after}'s successors first (the others in name order after them). */
    List<String> serving(final String after, final List<String> why) {
        final List<String> cns = cluster.cns();
        final int from = after == null ? 0 : Math.max(0, cns.indexOf(after) + 1);
        final List<String> serving = new ArrayList<>();
        for (int i = 0; i < cns.size(); i++) {
            final String cn = cns.get((from + i) % cns.size());
            final String reason = notServing(cn, cluster.health(cn), cluster.visible(cn));
            if (reason == null) {
                serving.add(cn);
            } else if (why != null) {
                why.add(cn + ": " + reason);
            }
        }
        return serving;
    }

    /**
     * Waits until some compute node serves, at most the bound; says so when it had to wait.
     *
     * @return the first serving one
     * @throws IllegalStateException when none serves within the bound, naming why each does not
     */
    String awaitServing(final String purpose) throws InterruptedException {
        final long t0 = cluster.nanoTime();
        long nextLog = 0;
        boolean waiting = false;
        while (true) {
            final List<String> why = new ArrayList<>();
            final List<String> serving = serving(current, why);
            final long waited = (cluster.nanoTime() - t0) / 1_000_000;
            if (!serving.isEmpty()) {
                if (waiting) {
                    waitedMs += waited;
                    log.accept(purpose + ": " + serving.get(0) + " serves after a wait of " + waited + " ms");
                }
                current = serving.get(0);
                return current;
            }
            if (waited >= boundMs) {
                waitedMs += waited;
                throw new IllegalStateException("no compute node serves after " + waited + " ms (" + purpose + "): "
                    + String.join("; ", why));
            }
            if (waited >= nextLog) {
                log.accept(purpose + ": no compute node serves (" + String.join("; ", why) + "); waiting ("
                    + waited / 1000 + " s of at most " + boundMs / 1000 + " s)");
                nextLog += LOG_EVERY_MS;
            }
            waiting = true;
            cluster.sleep(100);
        }
    }

    /**
     * Reads once, committed: on the node the last read committed on, else (or when it does not commit there) on
     * the next serving one, and so on until the bound.
     *
     * @throws IllegalStateException when no read committed within the bound, with the last outcome
     */
    ScytheClient.Outcome.Committed read(final String what, final Read read) throws Exception {
        final long t0 = cluster.nanoTime();
        ScytheClient.Outcome last = null;
        String lastCn = null;
        int tries = 0;
        while (true) {
            if (current == null) {
                current = awaitServing(what);
            }
            final String cn = current;
            try {
                last = read.on(cn);
            } catch (final InterruptedException e) {
                throw e;
            } catch (final Exception noReply) { // a future not completed in time: not known, try again
                last = new ScytheClient.Outcome.Unknown(String.valueOf(noReply));
            }
            tries++;
            if (last instanceof ScytheClient.Outcome.Committed c) {
                return c;
            }
            lastCn = cn;
            retries++;
            final long elapsed = (cluster.nanoTime() - t0) / 1_000_000;
            if (elapsed >= boundMs) {
                throw new IllegalStateException(what + " cannot be read within " + boundMs + " ms (" + tries
                    + " tries, the last on " + lastCn + "): " + last + " (a lock left held?)");
            }
            // The next serving node, this one last (it may serve again: a conflict or a lock still being released).
            final List<String> serving = serving(cn, null);
            current = serving.isEmpty() ? null : serving.get(0);
            // Not a spin: a refusal with no coordinator behind the address comes back at once.
            cluster.sleep(current == null || current.equals(cn) ? 100 : 20);
        }
    }
}
