package io.scythe.cli;

import io.scythe.bridge.BridgeVerticle;
import io.scythe.cluster.HttpFuzz;
import io.scythe.cluster.LocalCluster;
import io.scythe.cluster.ScytheClient;
import io.scythe.codec.KryoCodec;
import io.scythe.fabric.Fabric;
import io.scythe.fabric.Nic;
import io.scythe.fabric.tcp.TcpJunk;
import io.scythe.node.CoordinatorFuzz;
import io.scythe.node.CoordinatorVerticle;
import io.scythe.rrpc.Rocket;
import io.scythe.rrpc.RpcFuzz;
import io.scythe.rrpc.RrpcClient;
import io.scythe.rrpc.RrpcOptions;
import io.scythe.txn.api.TxnReply;
import io.scythe.txn.api.TxnRequest;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.MessageCodec;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * {@code scythe fuzz}: random and mutated messages to each server of a local cluster (TSO, one MN, one CN on the tcp
 * fabric): the coordinator over the clustered event bus, the MN's RRPC rings, its tcp verbs server and every node's
 * HTTP server, with the suite's generators ({@link CoordinatorFuzz}, {@link RpcFuzz}, {@link TcpJunk},
 * {@link HttpFuzz}). Prints per server what came back, then checks that every account is unchanged and every server
 * still serves. Exit code 1 when a check fails.
 */
@Command(name = "fuzz", mixinStandardHelpOptions = true,
    description = {"Sends --count random and mutated messages to each server of a local cluster (coordinator event bus, "
        + "RRPC rings, tcp verbs server, node HTTP), prints per server the messages sent, replies, error replies, "
        + "closes and timeouts, then checks that no committed value changed and that every server still serves. Exit "
        + "code 1 when a check fails."})
public final class FuzzCommand implements Callable<Integer> {
    private static final List<String> SERVERS = List.of("coordinator", "rrpc", "verbs", "http");
    private static final int TIMEOUT_MS = 10_000;
    private static final int SOCKET_THREADS = 16;

    @Accepts(min = "1", max = "100000000")
    @Option(names = "--count", defaultValue = "100000", description = "Messages to each server (default: "
        + "${DEFAULT-VALUE}).")
    int count;

    @Accepts(names = Servers.class)
    @Option(names = "--servers", split = ",", defaultValue = "coordinator,rrpc,verbs,http",
        description = "The servers to fuzz (default: ${DEFAULT-VALUE}).")
    List<String> servers;

    @Accepts(min = "2", max = "100000")
    @Option(names = "--accounts", defaultValue = "100", description = "SmallBank accounts, each read before and "
        + "after (default: ${DEFAULT-VALUE}).")
    long accounts;

    @Accepts(value = "any integer")
    @Option(names = "--seed", defaultValue = "1", description = "Seed of the messages (default: ${DEFAULT-VALUE}).")
    long seed;

    @Accepts(value = "a directory to write")
    @Option(names = "--dir", description = "Where node configs and logs go (default: ./fuzz-PID).")
    Path dir;

    @Accepts(value = "JVM options")
    @Option(names = "--node-java-opts", defaultValue = "-Xmx384m -XX:+UseParallelGC",
        description = "JVM options of each node process (default: ${DEFAULT-VALUE}).")
    String nodeJavaOpts;

    static final class Servers extends OptionChecks.Names {
        Servers() {
            super(SERVERS.toArray(String[]::new));
        }
    }

    /** Sent, replies, error replies, closes, timeouts of one server. */
    private record Counts(String server, long sent, long replies, long errors, long closes, long timeouts, long ms) {
        @Override
        public String toString() {
            return String.format("fuzz: %-11s %,9d sent: %,9d replies, %,9d error replies, %,9d closes, %,6d "
                + "timeouts (%.1f s)", server, sent, replies, errors, closes, timeouts, ms / 1000.0);
        }
    }

    private LocalCluster cluster;
    private final List<String> failures = java.util.Collections.synchronizedList(new ArrayList<>());
    private final AtomicInteger refusedConnections = new AtomicInteger();
    private JsonObject fabric;
    private ScytheClient client;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Override
    public Integer call() throws Exception {
        final String name = "fuzz-" + ProcessHandle.current().pid();
        final Path where = dir != null ? dir : Path.of(name);
        final byte[] secret = new byte[24];
        new SecureRandom().nextBytes(secret);
        cluster = new LocalCluster(name, HexFormat.of().formatHex(secret), 1, 1, 0,
            new JsonObject().put("name", "smallbank").put("accounts", accounts),
            new JsonObject().put("provider", "tcp").put("costModel", new JsonObject().put("profile", "zero")),
            "scythe", where, ClusterCommand.nodeLauncher(nodeJavaOpts));
        // The fuzzer's own NIC (RRPC rings need the MN to reach it) gets an address every node knows.
        fabric = cluster.clientConfigJson().getJsonObject("fabric").copy();
        fabric.getJsonObject("addresses").put("fuzzer", "127.0.0.1:" + LocalCluster.freePort());
        for (final String node : List.of("tso", "mn0", "cn0")) {
            cluster.configure(node, "fabric", fabric);
        }
        final Thread hook = new Thread(cluster::close, "scythe-fuzz-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            cluster.start(180_000);
            client = ScytheClient.join(cluster.clientConfig().access(), TIMEOUT_MS);
            System.out.printf("fuzz: cluster %s ready: tso, mn0, cn0 on the tcp fabric; %,d messages to each of %s; "
                + "logs in %s%n", name, count, servers, where.toAbsolutePath());
            return run();
        } finally {
            if (client != null) {
                try {
                    client.close();
                } catch (final Exception e) {
                    System.out.println("fuzz: client did not leave the cluster cleanly: " + e);
                }
            }
            Runtime.getRuntime().removeShutdownHook(hook);
            cluster.close();
            System.out.println("fuzz: cluster stopped");
        }
    }

    private int run() throws Exception {
        final long[] before = audit();
        final Random random = new Random(seed);
        final List<Socket> slow = new ArrayList<>();
        for (final String server : servers) {
            final long t0 = System.nanoTime();
            final Counts counts = switch (server.toLowerCase(java.util.Locale.ROOT)) {
                case "coordinator" -> coordinator(random, t0);
                case "rrpc" -> rrpc(random, t0);
                case "verbs" -> verbs(random, t0);
                default -> http(random, t0, slow);
            };
            System.out.println(counts);
            if (counts.timeouts() > 0) {
                failures.add(server + ": " + counts.timeouts() + " messages got no answer within " + TIMEOUT_MS
                    + " ms");
            }
        }
        // Nothing committed changed: every account as before (the coordinator's valid messages only read).
        final long[] after;
        try {
            after = audit();
        } catch (final IllegalStateException e) {
            failures.add("the accounts cannot be read after the fuzz: " + e.getMessage());
            failures.addAll(stillServing(random, slow));
            failures.forEach(f -> System.out.println("fuzz: FAIL " + f));
            return 1;
        }
        for (int a = 0; a < accounts; a++) {
            if (before[a] != after[a]) {
                failures.add("account " + a + " changed: " + before[a] + " -> " + after[a]);
            }
        }
        System.out.printf("fuzz: %d accounts read before and after: %s%n", accounts,
            java.util.Arrays.equals(before, after) ? "unchanged" : "CHANGED");
        failures.addAll(stillServing(random, slow));
        if (refusedConnections.get() > 0) {
            failures.add(refusedConnections.get() + " connections refused");
        }
        if (failures.isEmpty()) {
            System.out.println("fuzz: OK: every server answered or closed every message, nothing committed changed, "
                + "every server still serves");
            return 0;
        }
        failures.forEach(f -> System.out.println("fuzz: FAIL " + f));
        return 1;
    }

    /** Every account's money (savings plus checking), read by committed Audit transactions. */
    private long[] audit() throws Exception {
        final long[] money = new long[(int) accounts];
        for (int a = 0; a < accounts; a++) {
            ScytheClient.Outcome o = null;
            for (int tries = 0; tries < 20 && !(o instanceof ScytheClient.Outcome.Committed); tries++) {
                o = client.callOn("cn0", "Audit", a).await(TIMEOUT_MS * 2, TimeUnit.MILLISECONDS);
            }
            if (!(o instanceof ScytheClient.Outcome.Committed c)) {
                throw new IllegalStateException("account " + a + " cannot be read: " + o);
            }
            money[a] = c.reply().result();
        }
        return money;
    }

    /**
     * Wire messages to the CN's coordinator over the clustered event bus: the client's TxnRequest codec is swapped for
     * one that writes the fuzzed bytes under its name, so the CN decodes them as it would a request.
     */
    private Counts coordinator(final Random random, final long t0) throws Exception {
        final byte[] good = CoordinatorFuzz.wire(new TxnRequest("Audit", new long[] {1}));
        final EventBus bus = client.vertx().eventBus();
        final String codec = KryoCodec.of(TxnRequest.class).name();
        bus.unregisterDefaultCodec(TxnRequest.class);
        bus.registerCodec(new RawCodec(codec));
        final DeliveryOptions options = new DeliveryOptions().setCodecName(codec).setSendTimeout(TIMEOUT_MS);
        final AtomicLongArray outcomes = new AtomicLongArray(4); // replies, error replies, closes, timeouts
        try {
            window(i -> {
                final byte[] message = CoordinatorFuzz.message(i, random(random, i), good);
                return bus.<TxnReply>request(CoordinatorVerticle.ADDRESS + ".cn0", message, options)
                    .map(m -> m.body().committed() ? 0 : 1)
                    .recover(e -> {
                        final boolean timeout = e instanceof ReplyException r && r.failureType() == ReplyFailure.TIMEOUT;
                        if (timeout) {
                            failures.add("coordinator: no reply to message " + i + ": "
                                + HexFormat.of().formatHex(message));
                        }
                        return Future.succeededFuture(timeout ? 3 : 2);
                    })
                    .map(k -> outcomes.incrementAndGet(k));
            }, 32);
        } finally {
            bus.unregisterCodec(codec);
            CoordinatorVerticle.registerCodecs(bus);
        }
        return new Counts("coordinator", count, outcomes.get(0), outcomes.get(1), outcomes.get(2), outcomes.get(3),
            ms(t0));
    }

    /** Random and half-valid calls on an RRPC ring to the MN, from a NIC of this client on the tcp fabric. */
    private Counts rrpc(final Random random, final long t0) throws Exception {
        final int[] ids = rpcIds();
        final AtomicLongArray outcomes = new AtomicLongArray(3);
        final Rocket rocket = rocket();
        final io.vertx.core.Context loop = BridgeVerticle.eventLoopContexts(client.vertx()).get(0);
        window(i -> {
            final Promise<Object> done = Promise.promise();
            loop.runOnContext(v -> {
                final RpcFuzz.Call c = RpcFuzz.call(random(random, i), ids);
                rocket.call(c.rpcId(), c.payload(), 0, c.payload().capacity()).onComplete(ar -> {
                    outcomes.incrementAndGet(RpcFuzz.outcome(ar.cause()).ordinal());
                    done.complete();
                });
            });
            return done.future();
        }, 16);
        return new Counts("rrpc", count, outcomes.get(0), outcomes.get(1), 0, outcomes.get(2), ms(t0));
    }

    private Rocket rocket;

    private Rocket rocket() throws Exception {
        if (rocket == null) {
            BridgeVerticle.deployOnEveryEventLoop(client.vertx(), new JsonObject()).await(TIMEOUT_MS,
                TimeUnit.MILLISECONDS);
            final Fabric nics = Fabric.open(client.vertx(), io.scythe.cluster.NodeConfig.of(cluster.clientConfigJson()
                .put("fabric", fabric)).fabricOptions());
            final Nic nic = nics.attach("fuzzer").await(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            final RrpcClient rrpc = new RrpcClient(client.vertx(), nic,
                new RrpcOptions().callTimeoutNs(TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS)));
            final Promise<Rocket> opened = Promise.promise();
            BridgeVerticle.eventLoopContexts(client.vertx()).get(0).runOnContext(v -> rrpc.rocket("mn0")
                .onComplete(opened));
            rocket = opened.future().await(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        }
        return rocket;
    }

    private int[] rpcIds() throws Exception {
        final JsonArray ids = health("mn0").getJsonArray("rpcIds", new JsonArray());
        return ids.stream().mapToInt(o -> ((Number) o).intValue()).toArray();
    }

    /** Junk connections to the MN's tcp verbs server: each must be closed after at most a refusal. */
    private Counts verbs(final Random random, final long t0) throws Exception {
        final InetSocketAddress server = verbsAddress();
        final AtomicLongArray outcomes = new AtomicLongArray(3); // closed, too long a reply, timeout
        sockets(i -> outcomes.incrementAndGet(TcpJunk.send(server, TcpJunk.connection(i, random(random, i)),
            TIMEOUT_MS).ordinal()), "verbs");
        // An answer longer than a refusal counts as an error reply (the server said more than it should).
        return new Counts("verbs", count, 0, outcomes.get(1), outcomes.get(0), outcomes.get(2), ms(t0));
    }

    private InetSocketAddress verbsAddress() throws Exception {
        final String[] hostPort = cluster.clientConfigJson().getJsonObject("fabric").getJsonObject("addresses")
            .getString("mn0").split(":");
        return new InetSocketAddress(hostPort[0], Integer.parseInt(hostPort[1]));
    }

    /** Malformed requests to every node's HTTP server in turn, 20 half-written ones held open meanwhile. */
    private Counts http(final Random random, final long t0, final List<Socket> slow) throws Exception {
        final List<InetSocketAddress> nodes = new ArrayList<>();
        for (final String node : List.of("tso", "mn0", "cn0")) {
            nodes.add(new InetSocketAddress("127.0.0.1", cluster.node(node).httpPort()));
        }
        for (int s = 0; s < 20; s++) {
            final Socket socket = new Socket();
            socket.connect(nodes.get(s % nodes.size()), TIMEOUT_MS);
            socket.getOutputStream().write(HttpFuzz.partial(random));
            slow.add(socket);
        }
        final AtomicLongArray outcomes = new AtomicLongArray(4);
        sockets(i -> outcomes.incrementAndGet(HttpFuzz.send(nodes.get(i % nodes.size()),
            HttpFuzz.request(i, random(random, i)), TIMEOUT_MS).ordinal()), "http");
        return new Counts("http", count, outcomes.get(0), outcomes.get(1), outcomes.get(2), outcomes.get(3),
            ms(t0));
    }

    /** Every server still serves: HTTP health, a fresh verbs connection refused, an RRPC call answered, slowloris closed. */
    private List<String> stillServing(final Random random, final List<Socket> slow) throws Exception {
        final List<String> found = new ArrayList<>();
        for (final String node : List.of("tso", "mn0", "cn0")) {
            final Process p = cluster.node(node).process();
            if (p == null || !p.isAlive()) {
                found.add(node + " exited (code " + (p == null ? "-" : p.exitValue()) + "); its log: "
                    + cluster.node(node).log());
                continue;
            }
            final JsonObject h = health(node);
            if (!"UP".equals(h.getString("status"))) {
                found.add(node + " is not UP after the fuzz: " + h);
            }
        }
        if (servers.contains("verbs") && TcpJunk.send(verbsAddress(), new byte[] {1, 2, 3}, TIMEOUT_MS)
            != TcpJunk.Outcome.CLOSED) {
            found.add("the tcp verbs server no longer closes junk");
        }
        if (servers.contains("rrpc")) {
            final Promise<Throwable> answered = Promise.promise();
            final int[] ids = rpcIds();
            BridgeVerticle.eventLoopContexts(client.vertx()).get(0).runOnContext(v -> {
                final RpcFuzz.Call c = RpcFuzz.call(random, ids);
                rocket.call(c.rpcId(), c.payload(), 0, c.payload().capacity())
                    .onComplete(ar -> answered.complete(ar.cause()));
            });
            if (RpcFuzz.outcome(answered.future().await(TIMEOUT_MS * 2, TimeUnit.MILLISECONDS))
                == RpcFuzz.Outcome.TIMEOUT) {
                found.add("the MN's RRPC ring no longer answers");
            }
        }
        int closed = 0;
        for (final Socket s : slow) {
            s.setSoTimeout(TIMEOUT_MS + 5_000);
            try (s) {
                s.getInputStream().transferTo(java.io.OutputStream.nullOutputStream());
                closed++;
            } catch (final java.net.SocketTimeoutException e) {
                found.add("a half-written HTTP request was not closed by the server");
            } catch (final java.io.IOException reset) {
                closed++;
            }
        }
        if (!slow.isEmpty()) {
            System.out.printf("fuzz: %d of %d half-written HTTP requests closed by the server%n", closed, slow.size());
        }
        System.out.println("fuzz: after: tso, mn0, cn0 healthy; a coordinator serves (the audit committed)"
            + (servers.contains("rrpc") ? "; the RRPC ring answers" : "")
            + (servers.contains("verbs") ? "; the verbs server closes junk" : ""));
        return found;
    }

    private JsonObject health(final String node) throws Exception {
        final HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
            + cluster.node(node).httpPort() + "/health")).timeout(Duration.ofSeconds(10)).build(),
            HttpResponse.BodyHandlers.ofString());
        return new JsonObject(r.body());
    }

    /** Runs {@code count} asynchronous messages, {@code inFlight} at a time; waits for them all. */
    private void window(final java.util.function.IntFunction<Future<?>> send, final int inFlight) throws Exception {
        final AtomicInteger next = new AtomicInteger();
        final AtomicInteger finished = new AtomicInteger();
        final Promise<Void> done = Promise.promise();
        final Runnable[] fire = new Runnable[1];
        fire[0] = () -> {
            final int i = next.getAndIncrement();
            if (i >= count) {
                return;
            }
            send.apply(i).onComplete(ar -> {
                if (finished.incrementAndGet() == count) {
                    done.tryComplete();
                } else {
                    fire[0].run();
                }
            });
        };
        for (int c = 0; c < inFlight; c++) {
            fire[0].run();
        }
        done.future().await(count * (long) TIMEOUT_MS + 60_000, TimeUnit.MILLISECONDS);
    }

    /**
     * A blocking socket exchange per message, on {@value #SOCKET_THREADS} threads (mostly waiting: a CN's
     * /peers/probe answers after its peer call, a lying Content-Length after the server's read gives up).
     */
    private void sockets(final SocketSend send, final String server) throws Exception {
        final ExecutorService pool = Executors.newFixedThreadPool(SOCKET_THREADS);
        try {
            final List<java.util.concurrent.Future<?>> all = new ArrayList<>();
            for (int t = 0; t < SOCKET_THREADS; t++) {
                final int thread = t;
                all.add(pool.submit(() -> {
                    for (int i = thread; i < count; i += SOCKET_THREADS) {
                        try {
                            send.send(i);
                        } catch (final java.net.ConnectException refused) { // the server is gone: say so, stop
                            refusedConnections.incrementAndGet();
                            failures.add(server + ": message " + i + ": " + refused.getMessage() + " (a node stopped?"
                                + " see its log)");
                            return null;
                        }
                    }
                    return null;
                }));
            }
            for (final java.util.concurrent.Future<?> f : all) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @FunctionalInterface
    private interface SocketSend {
        void send(int i) throws Exception;
    }

    /** Message {@code i}'s own random stream (the socket threads run concurrently): reproducible from --seed. */
    private Random random(final Random base, final int i) {
        return new Random(seed * 1_000_003L + i);
    }

    private static long ms(final long t0) {
        return (System.nanoTime() - t0) / 1_000_000;
    }

    /** Writes the fuzzed bytes as they are, under the name of the codec the receiver decodes with. */
    private static final class RawCodec implements MessageCodec<byte[], Object> {
        private final String name;

        RawCodec(final String name) {
            this.name = name;
        }

        @Override
        public void encodeToWire(final Buffer buffer, final byte[] bytes) {
            buffer.appendBytes(bytes);
        }

        @Override
        public Object decodeFromWire(final int pos, final Buffer buffer) {
            throw new UnsupportedOperationException("the fuzzer only sends");
        }

        @Override
        public Object transform(final byte[] bytes) {
            return bytes;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public byte systemCodecID() {
            return -1;
        }
    }
}
