package io.scythe.cluster;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.scythe.bridge.Bridge;
import io.scythe.bridge.BridgeVerticle;
import io.scythe.fabric.Opcode;
import io.scythe.txn.AbortReason;
import io.scythe.txn.Coordinator;
import io.scythe.txn.api.TxnReply;
import io.scythe.txn.scythe.TakeoutLockService;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonObject;

import io.vertx.micrometer.Label;
import io.vertx.micrometer.MicrometerMetricsOptions;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * A node's Micrometer metrics, scraped in Prometheus format at {@code GET /metrics}, and its health at
 * {@code GET /health} (200 with JSON while it serves, 503 otherwise), on the node's address only.
 *
 * <p>Metrics: {@code scythe_transactions_total{outcome}} (committed, aborted, rejected, failed, unknown: {@code TxnReply.Status}), {@code scythe_commits_total
 * {mode}} (the mode each commit ran in: OCC, or TOCC once the object was hot: the heat a CN sees),
 * {@code scythe_transaction_latency_seconds} (committed, first attempt to commit), {@code scythe_aborts_total{reason}}
 * (every aborted attempt, by reason), {@code scythe_verbs_total{opcode}} and {@code scythe_verb_failures_total} (this
 * process's verbs), on MNs {@code scythe_lock_requests_total{result}} and {@code scythe_lock_waiting} (Takeout Lock
 * requests held back now: the lock queue), and everywhere {@code scythe_fenced_total}.
 */
public final class NodeMetrics {
    /** How often each event loop measures its own lateness ({@code scythe.eventloop.delay}). */
    static final long LOOP_PROBE_MS = 100;
    /** Seconds a connection to the node's HTTP server may stay idle (a scrape or a health check takes milliseconds). */
    static final int HTTP_IDLE_TIMEOUT_S = 5;

    /**
     * The idle timeout of a node whose CN-to-CN calls may wait {@code peerCallTimeoutMs}: {@link #HTTP_IDLE_TIMEOUT_S},
     * or a second more than that bound where it is longer. {@code /peers/probe} waits for a peer's reply, during which
     * nothing moves on its connection, and the server must not cut a request the node itself lets run that long (a
     * paused peer is answered for when its member leaves the cluster, up to Hazelcast's heartbeat timeout later).
     */
    static int httpIdleTimeoutSeconds(final long peerCallTimeoutMs) {
        return (int) Math.max(HTTP_IDLE_TIMEOUT_S, Math.min(3600, (peerCallTimeoutMs + 999) / 1000 + 1));
    }

    private final ScytheNode node;
    private final PrometheusMeterRegistry registry;
    private final Map<String, Counter> outcomes = new ConcurrentHashMap<>();
    private final Map<String, Counter> modes = new ConcurrentHashMap<>();
    private final Timer latency;
    private final Counter fenced;
    private final List<Long> loopProbes = new ArrayList<>();
    private HttpServer http;

    /**
     * The registry of a node, made before its Vert.x so that Vert.x's own metrics ({@link #vertxMetrics}) and the JVM's
     * land in it beside Scythe's, every meter tagged with the node's name and role.
     */
    static PrometheusMeterRegistry newRegistry(final NodeConfig config, final NodeRole role) {
        quietVertxGaugeRegistrations();
        final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        registry.config().commonTags("node", config.node(), "role", role.label());
        return registry;
    }

    /**
     * Micrometer's logger of meters registered twice (its {@code MeterRegistry}'s: a WARNING the first time in a JVM,
     * FINE after); held here, as JUL keeps loggers weakly.
     */
    static final java.util.logging.Logger DOUBLE_REGISTRATION_LOG = java.util.logging.Logger.getLogger(
        io.micrometer.core.instrument.MeterRegistry.class.getName());

    /** The start of micrometer's double-registration message for a gauge. */
    private static final String GAUGE_AGAIN = "This Gauge has been already registered (";

    /** The start of micrometer's double-registration message for one of Vert.x's own gauges. */
    private static final String VERTX_GAUGE_AGAIN = GAUGE_AGAIN + "MeterId{name='vertx.";

    /**
     * Drops micrometer's "This Gauge has been already registered" for Vert.x's gauges, which every node logged at its
     * start ({@code vertx.net.client.active.connections} on a CN, {@code vertx.eventbus.handlers} on an MN). Not a
     * meter of ours registered twice: vertx-micrometer-metrics registers its shared gauges again for each client,
     * connection or event-bus address (they share one id here, as the address label is left out,
     * {@link #vertxMetrics}) and keeps the value in one adder per id, so the gauge is right; micrometer 1.13.9 and
     * later warn about it (upstream vertx-micrometer-metrics issue 259, open). Other records of that logger, a Scythe
     * meter's double registration among them, pass.
     * <p>
     * Micrometer warns only once per JVM and logs at FINE after (its {@code WarnThenDebugLogger}), and that once is
     * spent on the first Vert.x gauge at the start, before this filter sees it: a Scythe meter's double registration
     * would then be logged at FINE, hidden. The logger is therefore set to FINE, so that the filter sees those records,
     * and the filter raises every double registration that is not Vert.x's to WARNING; its other FINE records stay
     * FINE (the handlers drop them as before).
     */
    static void quietVertxGaugeRegistrations() {
        DOUBLE_REGISTRATION_LOG.setLevel(java.util.logging.Level.FINE);
        DOUBLE_REGISTRATION_LOG.setFilter(record -> {
            final String message = record.getMessage();
            if (message == null || !message.startsWith(GAUGE_AGAIN)) {
                return true;
            }
            if (message.startsWith(VERTX_GAUGE_AGAIN)) {
                return false;
            }
            if (record.getLevel().intValue() < java.util.logging.Level.WARNING.intValue()) {
                record.setLevel(java.util.logging.Level.WARNING);
            }
            return true;
        });
    }

    /**
     * Vert.x's metrics on {@code registry} (vertx-micrometer-metrics): event bus (messages, pending, processing
     * time, by side and failure), HTTP server, worker pools, and the JVM's (GC pauses, memory, threads, CPU, class
     * loading). Labels that name an event-bus address or an HTTP path are left out: reply addresses and probed paths
     * are unbounded, and a label set must stay small for Prometheus.
     */
    static MicrometerMetricsOptions vertxMetrics() {
        return new MicrometerMetricsOptions().setEnabled(true).setJvmMetricsEnabled(true)
            .setLabels(EnumSet.of(Label.EB_SIDE, Label.EB_FAILURE, Label.POOL_TYPE, Label.POOL_NAME, Label.HTTP_METHOD,
                Label.HTTP_CODE));
    }

    NodeMetrics(final ScytheNode node, final PrometheusMeterRegistry registry) {
        this.node = node;
        this.registry = registry;
        // A histogram, not client-side percentiles: buckets add up across nodes (histogram_quantile over the sum), and
        // nothing decays or resets between scrapes.
        latency = Timer.builder("scythe.transaction.latency").description("committed transactions, first attempt "
                + "to commit").publishPercentileHistogram().minimumExpectedValue(Duration.ofNanos(1_000))
            .maximumExpectedValue(Duration.ofSeconds(30)).register(registry);
        fenced = Counter.builder("scythe.fenced").description("peers this node fenced").register(registry);
        if (node.role() == NodeRole.CN) {
            // Present at 0 before the first recovery: a dashboard shows 0, not "no data".
            for (final String result : new String[] {"ok", "failed"}) {
                Counter.builder("scythe.recoveries").description("recoveries of dead compute nodes this node ran")
                    .tag("result", result).register(registry);
            }
            recoveryDuration();
        }
        for (final AbortReason reason : io.scythe.txn.spi.ProtocolRegistry.abortReasons()) {
            coordinators("scythe.aborts", "reason", reason.label(), c -> c.aborts(reason));
        }
        for (final Opcode op : Opcode.values()) {
            FunctionCounter.builder("scythe.verbs", this, m -> verbs(op)).tag("opcode", op.name().toLowerCase())
                .register(registry);
        }
        FunctionCounter.builder("scythe.verb.failures", this, m -> {
            long n = 0;
            for (final Bridge b : BridgeVerticle.running()) {
                n += b.stats().failures();
            }
            return n;
        }).register(registry);
        FunctionCounter.builder("scythe.lock.requests", this, m -> lock(TakeoutLockService::granted))
            .tag("result", "granted").register(registry);
        FunctionCounter.builder("scythe.lock.requests", this, m -> lock(TakeoutLockService::refused))
            .tag("result", "refused").register(registry);
        FunctionCounter.builder("scythe.lock.requests", this, m -> lock(TakeoutLockService::deferred))
            .tag("result", "deferred").register(registry);
        Gauge.builder("scythe.lock.waiting", this, m -> lock(TakeoutLockService::waiting)).register(registry);
        // Heat (Scythe §4.3): the queue length a lock request finds on its object.
        FunctionCounter.builder("scythe.lock.heat", this, m -> lock(TakeoutLockService::heatSum))
            .description("sum of the heat every lock request found (divide by scythe.lock.requests: mean heat)")
            .register(registry);
        FunctionCounter.builder("scythe.lock.hot.requests", this, m -> lock(TakeoutLockService::hotRequests))
            .description("lock requests that found their object above the cold watermark").register(registry);
        for (int b = 0; b < TakeoutLockService.HEAT_BUCKETS; b++) {
            final int bucket = b;
            final long floor = TakeoutLockService.heatBucketFloor(b);
            final String range = b == 0 ? "0" : b == TakeoutLockService.HEAT_BUCKETS - 1 ? floor + "+"
                : floor == 1 ? "1" : floor + "-" + (2 * floor - 1);
            FunctionCounter.builder("scythe.lock.heat.requests", this, m -> lock(s -> s.heatRequests(bucket)))
                .tag("heat", range).description("lock requests by the heat they found (power-of-two buckets)")
                .register(registry);
        }
    }

    /**
     * Measures on each of {@code loops} how late a {@value #LOOP_PROBE_MS} ms timer fires: an event loop that is
     * stalled (a long handler, a GC pause, an overloaded core) shows here before anything else does.
     */
    void probeLoops(final List<Context> loops) {
        for (int i = 0; i < loops.size(); i++) {
            final Timer delay = Timer.builder("scythe.eventloop.delay").tag("loop", Integer.toString(i))
                .description("how late a " + LOOP_PROBE_MS + " ms timer fired on this event loop")
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofNanos(10_000))
                .maximumExpectedValue(Duration.ofSeconds(10)).register(registry);
            loops.get(i).runOnContext(v -> {
                final long[] due = {System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(LOOP_PROBE_MS)};
                final long id = node.vertx().setPeriodic(LOOP_PROBE_MS, t -> {
                    final long now = System.nanoTime();
                    delay.record(Math.max(0, now - due[0]), TimeUnit.NANOSECONDS);
                    due[0] = now + TimeUnit.MILLISECONDS.toNanos(LOOP_PROBE_MS);
                });
                synchronized (loopProbes) {
                    loopProbes.add(id);
                }
            });
        }
    }

    private void coordinators(final String name, final String tag, final String value,
                              final ToDoubleFunction<Coordinator> f) {
        FunctionCounter.builder(name, this, m -> {
            double n = 0;
            for (final Coordinator c : node.coordinators()) {
                n += f.applyAsDouble(c);
            }
            return n;
        }).tag(tag, value).register(registry);
    }

    private static double verbs(final Opcode op) {
        long n = 0;
        for (final Bridge b : BridgeVerticle.running()) {
            n += b.stats().verbs(op);
        }
        return n;
    }

    private double lock(final ToDoubleFunction<TakeoutLockService> f) {
        final TakeoutLockService s = node.lockService();
        return s == null ? 0 : f.applyAsDouble(s);
    }

    /** Counts a coordinator's reply (called on its event loop). */
    void observe(final TxnReply reply) {
        outcomes.computeIfAbsent(reply.status().label(), s -> Counter.builder("scythe.transactions")
            .tag("outcome", s).register(registry)).increment();
        if (reply.committed()) {
            final String mode = reply.mode() == null ? "unknown" : reply.mode();
            modes.computeIfAbsent(mode, m -> Counter.builder("scythe.commits").tag("mode", m).register(registry))
                .increment();
            latency.record(reply.latencyNs(), TimeUnit.NANOSECONDS);
        }
    }

    void fenced() {
        fenced.increment();
    }

    /** Counts a recovery of a dead CN this node ran ({@code ok} or not) and how long it took. */
    void recovered(final JsonObject recovery) {
        final boolean ok = recovery.getBoolean("ok", false);
        Counter.builder("scythe.recoveries").description("recoveries of dead compute nodes this node ran")
            .tag("result", ok ? "ok" : "failed").register(registry).increment();
        final Double ms = recovery.getDouble("ms");
        if (ok && ms != null) {
            recoveryDuration().record((long) (ms * 1e6), TimeUnit.NANOSECONDS);
        }
    }

    private Timer recoveryDuration() {
        return Timer.builder("scythe.recovery.duration").description("a successful recovery, from claim to done")
            .publishPercentileHistogram().minimumExpectedValue(Duration.ofMillis(1))
            .maximumExpectedValue(Duration.ofSeconds(60)).register(registry);
    }

    /** The Prometheus text of every metric. */
    public String scrape() {
        return registry.scrape();
    }

    Future<Integer> startHttp(final String host, final int port) {
        if (port < 0) {
            return Future.succeededFuture(-1);
        }
        http = node.vertx().createHttpServer(httpOptions(httpIdleTimeoutSeconds(node.config().peerCallTimeoutMs()))
            .setHost(host).setPort(port)).requestHandler(this::handle);
        return http.listen().map(HttpServer::actualPort);
    }

    /**
     * The HTTP server's limits against hostile clients: a request line or headers past these sizes get an error reply
     * and a close, and a connection idle for {@code idleTimeoutS} (a request left half-written, slowloris) is closed.
     * The server is non-blocking: such clients hold a connection, never a thread.
     *
     * <p>HTTP/1.1 only, no cleartext HTTP/2 upgrade (h2c, on by default in Vert.x): Java's {@code HttpClient} asks
     * for it on every {@code http://} request and keeps the upgraded connection; when this server closed it for
     * idleness just as the client sent its next GET on it, the GET failed with "EOF reached while reading" (CI 188:
     * LotusClusterProcessTest's {@code /health} read after 10 moves that took about the 5 s idle timeout). An
     * HTTP/1.1 client retries an idempotent request whose kept-alive connection closed before any reply; Java's
     * HTTP/2 client (17) does not. Prometheus scrapes over HTTP/1.1 anyway.
     */
    static HttpServerOptions httpOptions(final int idleTimeoutS) {
        return new HttpServerOptions().setMaxInitialLineLength(4096).setMaxHeaderSize(8192).setMaxChunkSize(8192)
            .setMaxFormAttributeSize(8192).setIdleTimeout(idleTimeoutS)
            .setIdleTimeoutUnit(TimeUnit.SECONDS).setHttp2ClearTextEnabled(false);
    }

    private void handle(final HttpServerRequest request) {
        if (request.method() != HttpMethod.GET && request.method() != HttpMethod.HEAD) {
            request.response().setStatusCode(405).putHeader("allow", "GET, HEAD").end("only GET and HEAD\n");
            return;
        }
        switch (request.path()) {
            case "/metrics" -> request.response().putHeader("content-type", "text/plain; version=0.0.4")
                .end(scrape());
            case "/health" -> request.response().setStatusCode(node.ready() ? 200 : 503)
                .putHeader("content-type", "application/json").end(node.health().encode());
            case "/peers/probe" -> probe(request);
            case "/copies" -> {
                final JsonObject copies = node.copies();
                request.response().setStatusCode(copies == null ? 404 : 200)
                    .putHeader("content-type", "application/json")
                    .end(copies == null ? "{\"error\": \"only memory nodes hold copies\"}" : copies.encode());
            }
            default -> request.response().setStatusCode(404).end("not found: try /metrics, /health, /copies or "
                + "/peers/probe?peer=CN\n");
        }
    }

    /** A CN's check of its messaging with another ({@code ?peer=cn1}): 200 with what it found, 503 with why not. */
    private void probe(final HttpServerRequest request) {
        final String peer = request.getParam("peer");
        if (peer == null) {
            request.response().setStatusCode(400).end("ask /peers/probe?peer=CN\n");
            return;
        }
        node.probePeer(peer).onComplete(ar -> request.response().setStatusCode(ar.succeeded() ? 200 : 503)
            .putHeader("content-type", "application/json")
            .end((ar.succeeded() ? ar.result() : new JsonObject().put("peer", peer)
                .put("error", String.valueOf(ar.cause().getMessage()))).encode()));
    }

    int httpPort() {
        return http == null ? -1 : http.actualPort();
    }

    void close() {
        if (http != null) {
            http.close();
        }
        synchronized (loopProbes) {
            for (final long id : loopProbes) {
                node.vertx().cancelTimer(id);
            }
        }
        registry.close();
    }
}
