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

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * The TSO service of Scythe §4.5 (1): a counter in the NIC device memory of its node, advanced by the FAAs of TSO
 * groups and proxies with no CPU involved. On start it asks every issuer it was configured with (proxies, and groups
 * that fetch directly) for the largest timestamp each handed out, and starts its counter above all of them: a
 * restarted service never hands a timestamp out twice. It will not start while an issuer does not answer, rather than
 * risk it. It says where the counter is at {@link TsoLayout#whereAddress}.
 *
 * <p>Issuers that died before the service restarted cannot answer. For them the service keeps a checkpoint
 * ({@link #checkpoint}): before it opens the counter it writes its start value there, and then every
 * {@value #CHECKPOINT_PERIOD_MS} ms it reads the counter and, when it moved, writes it (on a worker: written, forced
 * to disk, atomically renamed). A restarted service starts above {@code checkpoint + }{@link #CHECKPOINT_GAP} as well.
 *
 * <p>The gap argument. Every timestamp the dead incarnation handed out is below its counter's final value {@code F}.
 * The checkpoint file holds {@code C}, the counter as read at some moment {@code t} of that incarnation (never before
 * its start: the start value is written before any FAA can reach the counter), so {@code F - C} is what the counter
 * moved between {@code t} and the crash: at most one period, one write and its fsync after the last write that
 * succeeded. The counter moves by the timestamps transactions ask for (groups and proxies fetch exactly their
 * members' count and keep nothing; a range fetched again after a proxy timed out at most doubles it), so its speed is
 * the cluster's timestamp demand: the paper's service serves close to 70 M timestamps per second (Fig. 28), and 2^40
 * of them last it over four hours, five orders of magnitude more than a period plus a slow fsync. So
 * {@code F < C + 2^40} unless checkpoints stop for hours (a failing write is logged). And 2^62 / 2^40 leaves room for
 * four million restarts. Issuers still alive report their own high water as well.
 *
 * <p>An issuer that was live when the service started asking but leaves the cluster before it answers (it died) is
 * not waited for when a checkpoint is kept ({@link #issuerGone}): what it handed out came from the counter, which the
 * checkpoint covers.
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
    private Path checkpoint;
    private long checkpointTimer = -1;
    private long checkpointed = -1;
    private boolean writing;
    private Predicate<String> issuerGone = issuer -> false;
    private volatile long checkpointFailures;

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
    public TsoService checkpoint(final Path file) {
        this.checkpoint = file;
        return this;
    }

    /**
     * Says whether an issuer has left the cluster (its process died): such an issuer is not waited for, because the
     * checkpoint covers what it handed out. Without a checkpoint every issuer must answer. Called on an event loop: it
     * must not block (a look at the local membership view, not a remote call).
     */
    public TsoService issuerGone(final Predicate<String> gone) {
        this.issuerGone = gone;
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
            final long start = high + 1;
            // The start value is on disk before any FAA can reach the counter: even a crash before the first periodic
            // write leaves a checkpoint of this incarnation (not the previous one's, which a restart would reuse).
            final Future<Void> onDisk = checkpoint == null ? Future.succeededFuture()
                : vertx.executeBlocking(() -> {
                    writeCheckpointFile(checkpoint, start);
                    return null;
                });
            return onDisk.compose(v -> open(start));
        });
    }

    private Future<RemoteRegion> open(final long start) {
        startedAt = start;
        checkpointed = start;
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
    }

    /**
     * Asks {@code issuer} for its high water, again if it does not answer: right after a member died, the event bus may
     * still route a request to the handler of the issuer's dead incarnation (lost), and tries the next one next time.
     */
    private Future<Long> ask(final String issuer, final int attempts) {
        return vertx.eventBus().<Long>request(TsoLayout.highWaterAddress(issuer), "",
                new DeliveryOptions().setSendTimeout(timeoutMs))
            .map(reply -> reply.body())
            .recover(e -> {
                if (checkpoint != null && issuerGone.test(issuer)) {
                    return Future.succeededFuture(0L); // died: the checkpoint covers what it handed out
                }
                return attempts > 1 ? ask(issuer, attempts - 1) : Future.failedFuture(e);
            });
    }

    /**
     * Attempts per issuer, each waiting {@code timeoutMs}: short attempts, many of them, so that an issuer that was
     * paused (SIGSTOP, GC) and then declared dead is let go one attempt after its member left, not after one long
     * wait; a live issuer slow to answer still has every attempt.
     */
    private static final int ASK_ATTEMPTS = 15;

    /** The checkpoint's value plus the gap, or 0 when there is none yet (the service's first start). */
    static long readCheckpoint(final Path file) throws IOException {
        if (!Files.exists(file)) {
            return 0;
        }
        final String text = Files.readString(file).trim();
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
            writeCheckpointFile(checkpoint, value);
            return null;
        }).onComplete(ar -> {
            writing = false;
            if (ar.succeeded()) {
                checkpointed = value;
            } else if (checkpointFailures++ % 1000 == 0) {
                // The gap argument assumes checkpoints keep coming: say so loudly (each 1000th failure, ~10 s apart).
                System.err.println("TSO service on " + nic.node() + ": cannot write its checkpoint " + checkpoint
                    + " (" + ar.cause() + "); it still holds " + checkpointed + ", and a restart after the counter "
                    + "moved 2^40 past it could hand a timestamp out twice");
            }
        });
    }

    /** Writes {@code value} to a sibling file, forces it to disk, and renames it over {@code file}. */
    private static void writeCheckpointFile(final Path file, final long value) throws IOException {
        final Path temp = file.resolveSibling(file.getFileName() + ".tmp");
        try (FileChannel out = FileChannel.open(temp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING)) {
            out.write(ByteBuffer.wrap(Long.toString(value).getBytes(StandardCharsets.US_ASCII)));
            out.force(true);
        }
        Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /** Checkpoint writes that failed (each is also a reason to look at the disk). */
    public long checkpointFailures() {
        return checkpointFailures;
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
