package io.scythe.tso;

import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.MemoryRegion;
import io.scythe.fabric.Nic;
import io.scythe.fabric.RemoteRegion;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;

/**
 * The TSO service of Scythe §4.5 (1): a counter in the NIC device memory of its node, advanced by the FAAs of TSO
 * groups and proxies with no CPU involved. On start it asks every issuer it was configured with (proxies, and groups
 * that fetch directly) for the largest timestamp each handed out, and starts its counter above all of them: a
 * restarted service never hands a timestamp out twice. It will not start while an issuer does not answer, rather than
 * risk it. It says where the counter is at {@link TsoLayout#whereAddress}.
 *
 * <p>Issuers that died before the service restarted cannot answer. For them the service keeps a checkpoint
 * ({@link #checkpoint}): every {@value #CHECKPOINT_PERIOD_MS} ms it reads its counter and, when it moved, writes it to a
 * file (on a worker, atomically renamed). A restarted service starts above {@code checkpoint + }{@link #CHECKPOINT_GAP}
 * as well. The gap is what the counter can move between the last checkpoint written and the crash: a period and a
 * write, which even a stalled disk keeps far below 2^40 timestamps (the paper's TSO serves about 110 M timestamps per
 * second: 2^40 lasts it 10^4 s); and 2^62 / 2^40 leaves room for four million restarts.
 */
public final class TsoService {
    private final Vertx vertx;
    private final Nic nic;
    private final List<String> issuers;
    private final long timeoutMs;
    /** Between two checkpoints of the counter. */
    public static final long CHECKPOINT_PERIOD_MS = 10;
    /** Added to the checkpoint on restart: far more than the counter can move between two checkpoints. */
    public static final long CHECKPOINT_GAP = 1L << 40;

    private MemoryRegion counter;
    private MessageConsumer<Object> where;
    private long startedAt;
    private java.nio.file.Path checkpoint;
    private long checkpointTimer = -1;
    private long checkpointed = -1;
    private boolean writing;

    public TsoService(final Vertx vertx, final Nic nic, final List<String> issuers, final long timeoutMs) {
        this.vertx = vertx;
        this.nic = nic;
        this.issuers = List.copyOf(issuers);
        this.timeoutMs = timeoutMs;
    }

    /**
     * Keeps the counter's checkpoint in {@code file} (read at start, written while it runs); call before
     * {@link #start}.
     */
    public TsoService checkpoint(final java.nio.file.Path file) {
        this.checkpoint = file;
        return this;
    }

    /** Learns the issuers' high water (and the checkpoint), then opens the counter just above it. */
    public Future<RemoteRegion> start() {
        final List<Future<Long>> reports = new ArrayList<>();
        for (final String issuer : issuers) {
            reports.add(ask(issuer, ASK_ATTEMPTS)
                .recover(e -> Future.failedFuture(new IllegalStateException("TSO service on " + nic.node()
                    + " cannot start: issuer " + issuer + " did not report the largest timestamp it handed out ("
                    + e.getMessage() + "); starting could hand a timestamp out twice", e))));
        }
        final Future<Long> lastCheckpoint = checkpoint == null ? Future.succeededFuture(0L)
            : vertx.executeBlocking(() -> readCheckpoint(checkpoint));
        return Future.all(reports).compose(all -> lastCheckpoint).compose(saved -> {
            long high = saved;
            for (final Future<Long> report : reports) {
                high = Math.max(high, report.result());
            }
            if (high >= TsoLayout.MAX_TIMESTAMP) {
                return Future.failedFuture(new IllegalStateException("TSO service on " + nic.node() + " would start at "
                    + high + ", past the largest timestamp " + TsoLayout.MAX_TIMESTAMP));
            }
            startedAt = high + 1;
            counter = nic.register(TsoLayout.REGION, TsoLayout.REGION_BYTES, MemoryKind.DEVICE);
            counter.buffer().putLongVolatile(TsoLayout.COUNTER_OFFSET, startedAt);
            final RemoteRegion described = counter.describe();
            where = vertx.eventBus().consumer(TsoLayout.whereAddress(nic.node()), message -> message.reply(
                new JsonObject().put("node", described.node()).put("address", described.address())
                    .put("length", described.length()).put("rkey", described.rkey())));
            if (checkpoint != null) {
                checkpointTimer = vertx.setPeriodic(CHECKPOINT_PERIOD_MS, t -> writeCheckpoint());
            }
            return where.completion().map(described);
        });
    }

    /**
     * Asks {@code issuer} for its high water, again if it does not answer: right after a member died, the event bus may
     * still route a request to the handler of the issuer's dead incarnation (lost), and tries the next one next time.
     */
    private Future<Long> ask(final String issuer, final int attempts) {
        return vertx.eventBus().<Long>request(TsoLayout.highWaterAddress(issuer), "",
                new DeliveryOptions().setSendTimeout(timeoutMs))
            .map(reply -> reply.body())
            .recover(e -> attempts > 1 ? ask(issuer, attempts - 1) : Future.failedFuture(e));
    }

    private static final int ASK_ATTEMPTS = 3;

    /** The checkpoint's value plus the gap, or 0 when there is none yet (the service's first start). */
    static long readCheckpoint(final java.nio.file.Path file) throws java.io.IOException {
        if (!java.nio.file.Files.exists(file)) {
            return 0;
        }
        final String text = java.nio.file.Files.readString(file).trim();
        try {
            return Math.addExact(Long.parseLong(text), CHECKPOINT_GAP);
        } catch (final NumberFormatException | ArithmeticException e) {
            throw new IllegalStateException("TSO checkpoint " + file + " holds '" + text + "', not a timestamp: "
                + "starting could hand a timestamp out twice", e);
        }
    }

    private void writeCheckpoint() {
        final long value = peek();
        if (writing || value == checkpointed) {
            return;
        }
        writing = true;
        vertx.executeBlocking(() -> {
            final java.nio.file.Path temp = checkpoint.resolveSibling(checkpoint.getFileName() + ".tmp");
            java.nio.file.Files.writeString(temp, Long.toString(value));
            java.nio.file.Files.move(temp, checkpoint, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            return null;
        }).onComplete(ar -> {
            writing = false;
            if (ar.succeeded()) {
                checkpointed = value;
            }
        });
    }

    /** The first timestamp this incarnation hands out. */
    public long startedAt() {
        return startedAt;
    }

    /** The counter's current value: the next timestamp. */
    public long peek() {
        return counter.buffer().getLongVolatile(TsoLayout.COUNTER_OFFSET);
    }

    public Future<Void> stop() {
        if (checkpointTimer >= 0) {
            vertx.cancelTimer(checkpointTimer);
        }
        final Future<Void> unregistered = where == null ? Future.succeededFuture() : where.unregister();
        if (counter != null && counter.isRegistered()) {
            nic.deregister(counter);
        }
        return unregistered;
    }

    /** Asks the TSO service on {@code node} where its counter is. */
    public static Future<RemoteRegion> locate(final Vertx vertx, final String node, final long timeoutMs) {
        return vertx.eventBus().<JsonObject>request(TsoLayout.whereAddress(node), "",
                new DeliveryOptions().setSendTimeout(timeoutMs))
            .map(reply -> {
                final JsonObject json = reply.body();
                return new RemoteRegion(json.getString("node"), TsoLayout.REGION, json.getLong("address"),
                    json.getLong("length"), json.getInteger("rkey"), MemoryKind.DEVICE);
            });
    }
}
