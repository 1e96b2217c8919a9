package io.scythe.txn;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/**
 * Test-only fault points: make this process die, or stop, at an exact point of the next transaction of a stored
 * procedure, so that process-level tests can kill a compute node while it holds tickets, while it is queued, or
 * mid-commit. Off unless armed; a node arms them from its config ({@code faults}) only in a JVM started with
 * {@code -D}{@value #ENABLE_PROPERTY}{@code =true}, so a production config cannot crash a node by mistake.
 *
 * <p>A fault, as JSON: {@code {"procedure": "move", "key": 10, "at": "beforeRedo", "action": "hold"}}:
 * <ul>
 *   <li>{@code procedure}: the stored procedure whose next attempt it hits; {@code key} (optional): only when its
 *       first argument is this.</li>
 *   <li>{@code at}: {@code afterExecute} (the procedure's body ran, its commit not begun: an OCC attempt holds no
 *       lock yet, a TOCC one holds what it read),
 *       {@code beforeRedo} (commit locks held and validated, no redo record yet: recovery rolls it back) or
 *       {@code afterRedo} (the redo record is durable, nothing written back: recovery rolls it forward). The redo
 *       points exist for protocols that keep a redo log.</li>
 *   <li>{@code action}: {@code halt} ({@code Runtime.halt}, exit code {@value #HALT_EXIT_CODE}: no shutdown hook
 *       runs, as after SIGKILL), {@code hold} (the transaction never goes on; the process runs on),
 *       {@code delay} for {@code ms} milliseconds, or {@code await}: the transaction goes on once the file
 *       {@code file} exists (a test creates it once what it waits for is observed, so the hold lasts exactly as long
 *       as the test needs however loaded the machine; a relative path is resolved against the node's working
 *       directory), and fails, logged, if it does not exist within {@code ms} milliseconds (a generous bound: a
 *       test that never released it failed elsewhere). An await failing at {@code afterExecute} or
 *       {@code beforeRedo} aborts the attempt cleanly; at {@code afterRedo} the record is durable, so the attempt
 *       ends in doubt and recovery rolls it forward.</li>
 * </ul>
 * Each fault fires once. The hooks in the protocol code are single calls that cost a volatile read when nothing is
 * armed.
 */
public final class FaultPoints {
    /** System property that must be {@code true} before a node accepts faults in its config. */
    public static final String ENABLE_PROPERTY = "scythe.faultPoints";
    /** Exit code of a process a {@code halt} fault stopped. */
    public static final int HALT_EXIT_CODE = 86;

    /** Where in a transaction a fault fires. */
    public enum Point {
        AFTER_EXECUTE("afterExecute"), BEFORE_REDO("beforeRedo"), AFTER_REDO("afterRedo");

        private final String label;

        Point(final String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /** What a fault does. */
    public enum Action {
        HALT, HOLD, DELAY, AWAIT
    }

    /** The longest {@code delay} or {@code await} bound (one day): longer ones are refused, never overflowed. */
    static final long MAX_MS = 86_400_000L;

    /** How often an {@code await} fault looks for its file. */
    static final long AWAIT_POLL_MS = 50;

    /** One armed fault. */
    public record Fault(String procedure, Long key, Point at, Action action, long ms, String file) {
        private static final Set<String> KEYS = Set.of("procedure", "key", "at", "action", "ms", "file");

        /** A fault of any action but {@code await}. */
        public Fault(final String procedure, final Long key, final Point at, final Action action, final long ms) {
            this(procedure, key, at, action, ms, null);
        }

        /** Parses and checks one fault; a bad one is refused with a message naming what is wrong. */
        public static Fault of(final JsonObject json) {
            final Set<String> unknown = new TreeSet<>(json.fieldNames());
            unknown.removeAll(KEYS);
            if (!unknown.isEmpty()) {
                throw new IllegalArgumentException("fault " + json.encode() + ": unknown keys " + unknown + "; known: "
                    + new TreeSet<>(KEYS));
            }
            try {
                final String procedure = json.getString("procedure");
                if (procedure == null || procedure.isBlank()) {
                    throw new IllegalArgumentException("fault " + json.encode() + ": procedure must be set");
                }
                final String at = json.getString("at", "");
                Point point = null;
                for (final Point p : Point.values()) {
                    if (p.label.equals(at)) {
                        point = p;
                    }
                }
                if (point == null) {
                    throw new IllegalArgumentException("fault " + json.encode() + ": at must be afterExecute, "
                        + "beforeRedo or afterRedo");
                }
                final Action action;
                try {
                    action = Action.valueOf(json.getString("action", "").toUpperCase(Locale.ROOT));
                } catch (final IllegalArgumentException e) {
                    throw new IllegalArgumentException("fault " + json.encode() + ": action must be halt, hold, "
                        + "delay or await");
                }
                final long ms = json.getLong("ms", 0L);
                final boolean timed = action == Action.DELAY || action == Action.AWAIT;
                if (timed ? ms <= 0 || ms > MAX_MS : json.containsKey("ms")) {
                    throw new IllegalArgumentException("fault " + json.encode() + ": ms (1 to " + MAX_MS + ") goes "
                        + "with, and only with, action delay or await");
                }
                final String file = json.getString("file");
                if (action == Action.AWAIT ? file == null || file.isBlank() : json.containsKey("file")) {
                    throw new IllegalArgumentException("fault " + json.encode() + ": file (a path) goes with, and "
                        + "only with, action await");
                }
                return new Fault(procedure, json.getLong("key"), point, action, ms, file);
            } catch (final ClassCastException e) {
                throw new IllegalArgumentException("fault " + json.encode() + ": a value has the wrong type");
            }
        }

        /** Parses a list of faults ({@code null}: none). */
        public static List<Fault> list(final JsonArray json) {
            if (json == null) {
                return List.of();
            }
            final List<Fault> out = new java.util.ArrayList<>();
            for (final Object o : json) {
                if (!(o instanceof JsonObject f)) {
                    throw new IllegalArgumentException("faults must be a list of objects, not " + json.encode());
                }
                out.add(of(f));
            }
            return List.copyOf(out);
        }

        boolean matches(final String name, final long[] args) {
            return procedure.equals(name) && (key == null || args.length > 0 && args[0] == key);
        }
    }

    /** Faults not fired yet. */
    private static final List<Fault> ARMED = new CopyOnWriteArrayList<>();
    /** Transactions (ids) of a procedure whose redo-point fault has not fired yet, and that fault. */
    private static final java.util.Map<Long, Fault> MARKED = new ConcurrentHashMap<>();
    private static volatile boolean armed;

    private FaultPoints() {
    }

    /** Arms {@code faults} in this process, replacing any armed before; refused unless {@value #ENABLE_PROPERTY}. */
    public static void arm(final List<Fault> faults) {
        if (!faults.isEmpty() && !Boolean.getBoolean(ENABLE_PROPERTY)) {
            throw new IllegalArgumentException("faults are test-only fault points; this JVM was not started with -D"
                + ENABLE_PROPERTY + "=true");
        }
        clear();
        ARMED.addAll(faults);
        armed = !faults.isEmpty();
    }

    /** Disarms every fault. */
    public static void clear() {
        armed = false;
        ARMED.clear();
        MARKED.clear();
    }

    /**
     * The body of procedure {@code name} with the faults armed for it: it marks each attempt for a redo-point fault
     * and applies an {@code afterExecute} one. The hook of {@link io.scythe.txn.api.Procedures#bind}.
     */
    public static Function<Txn, Future<Long>> wrap(final String name, final long[] args,
                                                   final Function<Txn, Future<Long>> body) {
        if (!armed) {
            return body;
        }
        return txn -> {
            final Fault redo = take(name, args, Point.BEFORE_REDO, Point.AFTER_REDO, false);
            if (redo != null && txn.id() != 0) {
                MARKED.put(txn.id(), redo);
            }
            final Fault executed = take(name, args, Point.AFTER_EXECUTE, Point.AFTER_EXECUTE, true);
            if (executed == null) {
                return body.apply(txn);
            }
            return body.apply(txn).compose(result -> fire(executed, name + " " + java.util.Arrays.toString(args))
                .map(result));
        };
    }

    /**
     * Reached {@code point} in the commit of transaction {@code txnId}: completes at once unless a fault fires here
     * (then the process halts, or the future completes after a delay, or never). The hook of the redo log.
     */
    public static Future<Void> reached(final Point point, final long txnId) {
        if (!armed) {
            return Future.succeededFuture();
        }
        final Fault fault = MARKED.get(txnId);
        if (fault == null || fault.at() != point) {
            return Future.succeededFuture();
        }
        MARKED.remove(txnId);
        if (!ARMED.remove(fault)) {
            return Future.succeededFuture(); // fired already, in another attempt
        }
        // Other attempts marked for it (aborted ones, retried under new ids) are let go.
        MARKED.values().removeIf(f -> f == fault);
        return fire(fault, "transaction " + Long.toHexString(txnId) + " of " + fault.procedure());
    }

    /** The first armed fault of {@code name}/{@code args} at a point in {@code from..to}; taken off if {@code once}. */
    private static Fault take(final String name, final long[] args, final Point from, final Point to,
                              final boolean once) {
        for (final Fault f : ARMED) {
            if (f.at().ordinal() >= from.ordinal() && f.at().ordinal() <= to.ordinal() && f.matches(name, args)
                && (!once || ARMED.remove(f))) {
                return f;
            }
        }
        return null;
    }

    private static Future<Void> fire(final Fault fault, final String what) {
        System.err.println(java.time.Instant.now() + " fault point " + fault.at().label() + ": "
            + fault.action().name().toLowerCase(Locale.ROOT) + (fault.action() == Action.DELAY ? " " + fault.ms()
            + " ms" : fault.action() == Action.AWAIT ? " " + fault.file() + " (at most " + fault.ms() + " ms)" : "")
            + " in " + what);
        System.err.flush();
        switch (fault.action()) {
            case HALT -> {
                System.out.flush();
                Runtime.getRuntime().halt(HALT_EXIT_CODE);
                return Promise.<Void>promise().future(); // not reached
            }
            case HOLD -> {
                return Promise.<Void>promise().future();
            }
            case AWAIT -> {
                final Context context = context(fault);
                final Promise<Void> released = Promise.promise();
                awaitFile(context, fault, what, System.nanoTime() + fault.ms() * 1_000_000L, released);
                return released.future();
            }
            default -> {
                final Promise<Void> later = Promise.promise();
                context(fault).owner().setTimer(fault.ms(), t -> later.complete()); // on this context again
                return later.future();
            }
        }
    }

    private static Context context(final Fault fault) {
        final Context context = Vertx.currentContext();
        if (context == null) {
            throw new IllegalStateException("a " + fault.action().name().toLowerCase(Locale.ROOT) + " fault needs a "
                + "Vert.x context");
        }
        return context;
    }

    /** Completes {@code released} once the fault's file exists, or fails it, logged, past {@code deadlineNs}. */
    private static void awaitFile(final Context context, final Fault fault, final String what, final long deadlineNs,
                                  final Promise<Void> released) {
        context.owner().fileSystem().exists(fault.file()).onComplete(found -> {
            if (found.succeeded() && found.result()) {
                System.err.println(java.time.Instant.now() + " fault point " + fault.at().label() + ": released by "
                    + fault.file() + " in " + what);
                released.complete();
            } else if (System.nanoTime() - deadlineNs >= 0) {
                final String message = "fault point " + fault.at().label() + ": await " + fault.file() + " not "
                    + "released within " + fault.ms() + " ms in " + what + "; failing the transaction";
                System.err.println(java.time.Instant.now() + " " + message);
                released.fail(new IllegalStateException(message));
            } else {
                context.owner().setTimer(AWAIT_POLL_MS, t -> awaitFile(context, fault, what, deadlineNs, released));
            }
        });
    }
}
