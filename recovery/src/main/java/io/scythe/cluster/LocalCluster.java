package io.scythe.cluster;

import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.shm.ShmFabric;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A cluster of node processes on this host (what {@code scythe cluster} runs and tests start): one TSO, {@code mns}
 * memory nodes and {@code cns} compute nodes, each a JVM running {@link NodeMain}, on loopback ports chosen free at
 * start, over the shm fabric (or tcp), with a TLS event bus whose key store it creates ({@code eventbus.p12}). Writes each node's config and log under its directory. {@link #close()} stops
 * every process it started (SIGTERM, then SIGKILL after a grace period; a paused one is resumed first) and removes the
 * cluster's shm files, even those of a process that was killed.
 */
public final class LocalCluster implements AutoCloseable {
    /**
     * JVM options every node process {@link Launcher#sameClasspath} starts gets, whatever its heap and collector: metaspace sized above what a node
     * loads (~60 MB), so class loading at start and at recovery triggers no "Metadata GC Threshold" young + full
     * collection pair (chaos at load 30-45: up to 1.1 s each), and no periodic cleanup safepoint (one a second by
     * default, whose time to reach was 100-230 ms at that load). Measured with {@code -Xlog:gc*,safepoint} (issue 23
     * §3); the remaining multi-second pauses were CPU starvation (GC real time 10-70x its CPU time), not the heap.
     */
    public static final String NODE_JVM_OPTIONS = "-XX:MetaspaceSize=128m -XX:+UnlockDiagnosticVMOptions "
        + "-XX:GuaranteedSafepointInterval=0";

    /**
     * The system properties of this JVM, where set, that every node process {@link Launcher#sameClasspath} starts gets
     * too: {@link ClusterAccess#MAX_NO_HEARTBEAT_PROPERTY}, and Hazelcast's own {@code hazelcast.partition.count}
     * (Hazelcast reads it from a system property where its configuration, as conf/cluster.xml, does not set it; every
     * member of a cluster must have the same). The recovery module's tests set it to 23, not 271: the registry, epoch
     * and Vert.x maps hold a few dozen entries, and each join or leave moves every partition's 7 replicas (measured in
     * the README's test-time paragraph).
     */
    static final List<String> FORWARDED_PROPERTIES = List.of(ClusterAccess.MAX_NO_HEARTBEAT_PROPERTY,
        "hazelcast.partition.count");

    /** How to start a node process: the java command and its options up to the main class. */
    public record Launcher(List<String> command) {
        /**
         * This JVM's java and class path, {@link #NODE_JVM_OPTIONS}, then {@code jvmOptions} (which win where they
         * set the same flag) and the add-opens Hazelcast wants. With {@link NodeClassArchive} on, the class path's
         * directories are jars of their contents and each node is launched with the archive's options.
         */
        public static Launcher sameClasspath(final List<String> jvmOptions) {
            final List<String> cmd = new ArrayList<>();
            cmd.add(ProcessHandle.current().info().command().orElse("java"));
            cmd.addAll(List.of(NODE_JVM_OPTIONS.split(" ")));
            // The nodes see members die as this JVM's client does, and split the maps into as many partitions (a
            // member whose partition count differs is refused at join); jvmOptions win.
            for (final String property : FORWARDED_PROPERTIES) {
                final String value = System.getProperty(property);
                if (value != null) {
                    cmd.add("-D" + property + "=" + value);
                }
            }
            cmd.addAll(jvmOptions);
            cmd.add("-D" + NodeMain.EXIT_WITH_PARENT + "=true");
            for (final String module : List.of("java.base/java.lang", "java.base/java.nio", "java.base/sun.nio.ch",
                "java.base/java.util", "java.management/sun.management",
                "jdk.management/com.sun.management.internal")) {
                cmd.add("--add-opens");
                cmd.add(module + "=ALL-UNNAMED");
            }
            cmd.add("--add-exports");
            cmd.add("java.base/jdk.internal.misc=ALL-UNNAMED");
            cmd.add("--add-exports");
            cmd.add("java.base/jdk.internal.ref=ALL-UNNAMED"); // Hazelcast asks for it at start
            cmd.add("--add-modules");
            cmd.add("java.se");
            cmd.add("-cp");
            final String classpath = System.getProperty("java.class.path");
            cmd.add(NodeClassArchive.enabled() ? NodeClassArchive.packed(classpath) : classpath);
            cmd.add(NodeMain.class.getName());
            return new Launcher(List.copyOf(cmd));
        }
    }

    /** One node process. */
    public static final class Node {
        private final String name;
        private final NodeRole role;
        private final Path configFile;
        private final Path log;
        private final JsonObject config;
        private Process process;

        Node(final String name, final NodeRole role, final Path configFile, final Path log, final JsonObject config) {
            this.name = name;
            this.role = role;
            this.configFile = configFile;
            this.log = log;
            this.config = config;
        }

        public String name() {
            return name;
        }

        public NodeRole role() {
            return role;
        }

        public Process process() {
            return process;
        }

        public int httpPort() {
            return config.getInteger("httpPort");
        }

        public int eventBusPort() {
            return config.getInteger("eventBusPort");
        }

        public Path log() {
            return log;
        }

        /** The GC log of its current (or last) process ({@link #gcLogOption}), or null if it was never started. */
        public Path gcLog() {
            final Process p = process;
            return p == null ? null : log.resolveSibling("node-" + name + "-gc-" + p.pid() + ".log");
        }

        public String logText() {
            try {
                return Files.readString(log, StandardCharsets.UTF_8);
            } catch (final IOException e) {
                return "";
            }
        }
    }

    /**
     * Told of every cluster made in this JVM, at the end of its constructor: the process tests' failure reports
     * ({@code ProcessLogsOnFailure}, issue 23 §1) print the logs of the clusters a failed test class made, local ones
     * included. None by default.
     */
    private static final List<java.util.function.Consumer<LocalCluster>> OBSERVERS =
        new java.util.concurrent.CopyOnWriteArrayList<>();

    /** Tells {@code observer} of every cluster made in this JVM from now on. */
    public static void observe(final java.util.function.Consumer<LocalCluster> observer) {
        OBSERVERS.add(java.util.Objects.requireNonNull(observer, "observer"));
    }

    private final String cluster;
    private final String secret;
    private final Path dir;
    private final Launcher launcher;
    private final Map<String, Node> nodes = new LinkedHashMap<>();
    private final Map<NodeRole, Long> tierStartMs = new LinkedHashMap<>();
    private final JsonObject base;

    /**
     * Writes the configs of a cluster named {@code cluster} (also its shm directory name) into {@code dir}; starts
     * nothing yet.
     *
     * @param fabric the fabric's JSON ({@code {"provider": "shm"}} or tcp; tcp addresses are filled in)
     */
    public LocalCluster(final String cluster, final String secret, final int mns, final int cns,
                        final JsonObject workload, final JsonObject fabric, final String protocol, final Path dir,
                        final Launcher launcher) throws IOException {
        this(cluster, secret, mns, cns, 0, workload, fabric, protocol, dir, launcher);
    }

    /** @param proxies TSO proxy nodes ({@code proxy1}, ...) beside the TSO service node {@code tso} */
    public LocalCluster(final String cluster, final String secret, final int mns, final int cns, final int proxies,
                        final JsonObject workload, final JsonObject fabric, final String protocol, final Path dir,
                        final Launcher launcher) throws IOException {
        if (mns < 1 || cns < 0 || proxies < 0) {
            throw new IllegalArgumentException("a cluster needs at least one memory node (and cns, proxies >= 0)");
        }
        this.cluster = cluster;
        this.secret = secret;
        this.dir = dir;
        this.launcher = launcher;
        Files.createDirectories(dir);
        try {
            // The configs hold the cluster secret: this user only.
            Files.setPosixFilePermissions(dir, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
        } catch (final UnsupportedOperationException notPosix) {
            // keep the platform's default
        }
        final List<String> names = new ArrayList<>();
        names.add("tso");
        final List<String> proxyNames = new ArrayList<>();
        for (int i = 1; i <= proxies; i++) {
            proxyNames.add("proxy" + i);
        }
        names.addAll(proxyNames);
        final List<String> mnNames = new ArrayList<>();
        for (int i = 0; i < mns; i++) {
            mnNames.add("mn" + i);
        }
        names.addAll(mnNames);
        final List<String> cnNames = new ArrayList<>();
        for (int i = 0; i < cns; i++) {
            cnNames.add("cn" + i);
        }
        names.addAll(cnNames);
        final Map<String, Integer> hazelcastPorts = new LinkedHashMap<>();
        final JsonObject fabricJson = fabric.copy();
        final boolean tcp = "tcp".equals(fabricJson.getString("provider"));
        final JsonObject addresses = new JsonObject();
        for (final String n : names) {
            hazelcastPorts.put(n, freePort());
            if (tcp) {
                addresses.put(n, "127.0.0.1:" + freePort());
            }
        }
        if (tcp) {
            fabricJson.put("addresses", addresses);
        }
        // Every node joins through the TSO and the memory nodes (CNs come and go). Never a CN or proxy here: the
        // master's split-brain search dials this list (and, with conf/cluster.xml's retention 0, only this list), and
        // a dial to a paused process wedges a Hazelcast output I/O thread (issue 23 §1, PausedPeerIoSpinTest).
        final JsonArray members = new JsonArray();
        for (final String n : names) {
            if (!n.startsWith("cn") && !n.startsWith("proxy")) {
                members.add("127.0.0.1:" + hazelcastPorts.get(n));
            }
        }
        final Path keyStore = dir.resolve("eventbus.p12");
        Files.deleteIfExists(keyStore);
        try {
            ClusterSetup.createEventBusKeyStore(keyStore, cluster, secret);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while creating " + keyStore, e);
        }
        base = new JsonObject().put("eventBusKeyStore", keyStore.toAbsolutePath().toString()).put("cluster", cluster).put("secret", secret).put("host", "127.0.0.1")
            .put("members", members).put("fabric", fabricJson).put("memoryNodes", new JsonArray(mnNames))
            .put("computeNodes", new JsonArray(cnNames))
            .put("tsoNode", "tso").put("tsoProxies", new JsonArray(proxyNames))
            .put("stateDir", dir.toAbsolutePath().toString()).put("workload", workload).put("protocol", protocol).put("readyTimeoutMs", 120_000);
        for (final String n : names) {
            final NodeRole role = n.equals("tso") ? NodeRole.TSO : n.startsWith("mn") ? NodeRole.MN
                : n.startsWith("proxy") ? NodeRole.PROXY : NodeRole.CN;
            final JsonObject config = base.copy().put("node", n).put("hazelcastPort", hazelcastPorts.get(n))
                .put("eventBusPort", freePort()).put("httpPort", freePort());
            NodeConfig.of(config).checkSeedRole(role); // the list above names no CN or proxy: a clear error if it did
            final Path file = dir.resolve("node-" + n + ".json");
            Files.writeString(file, config.encodePrettily(), StandardCharsets.UTF_8);
            nodes.put(n, new Node(n, role, file, dir.resolve("node-" + n + ".log"), config));
        }
        for (final java.util.function.Consumer<LocalCluster> observer : OBSERVERS) {
            observer.accept(this);
        }
    }

    /** Sets {@code key} in node {@code name}'s config (before it starts). */
    public void configure(final String name, final String key, final Object value) throws IOException {
        final Node n = node(name);
        n.config.put(key, value);
        Files.writeString(n.configFile, n.config.encodePrettily(), StandardCharsets.UTF_8);
    }

    /** The config a client joining this cluster uses (its own free Hazelcast port). */
    public NodeConfig clientConfig() throws IOException {
        return NodeConfig.of(clientConfigJson());
    }

    public JsonObject clientConfigJson() throws IOException {
        return base.copy().put("node", "client").put("hazelcastPort", freePort()).put("httpPort", -1);
    }

    public String cluster() {
        return cluster;
    }

    public Path shmDirectory() {
        return ShmFabric.clusterDirectory(FabricOptions.DEFAULT_SHM_DIRECTORY, cluster);
    }

    public Map<String, Node> nodes() {
        return nodes;
    }

    public Node node(final String name) {
        final Node n = nodes.get(name);
        if (n == null) {
            throw new IllegalArgumentException("no node " + name + " in cluster " + cluster + "; it has "
                + nodes.keySet());
        }
        return n;
    }

    /**
     * Starts every node and waits until all are ready: the TSO first (it founds the Hazelcast cluster) and its proxies,
     * then the memory nodes and the compute nodes all at once, so no node founds a cluster of its own. A compute node
     * launched beside the memory nodes starts its JVM and joins Hazelcast while they load their tables, then waits
     * (retrying) until each memory node says where its tables are; a join refused while the membership changes is
     * retried by the node itself ({@code ClusterAccess#joinPatiently}), and one that exits for it is started again.
     * (Was: the compute nodes launched only once every memory node was ready, each tier's boot after the other's.) A
     * node that exits otherwise or is not ready in time fails the start with its name and its log's tail.
     */
    public void start(final long timeoutMs) throws Exception {
        start(timeoutMs, () -> { });
    }

    /**
     * As {@link #start(long)}, running {@code founded} (on this thread; it should not block long) once the TSO and its
     * proxies are ready, before the memory and compute nodes are launched: what may join beside them (a client) starts
     * its own join there.
     */
    public void start(final long timeoutMs, final Runnable founded) throws Exception {
        tierStartMs.clear();
        for (final List<NodeRole> wave : List.of(List.of(NodeRole.TSO), List.of(NodeRole.PROXY),
            List.of(NodeRole.MN, NodeRole.CN))) {
            if (wave.contains(NodeRole.MN)) {
                founded.run();
            }
            final long t0 = System.nanoTime();
            for (final NodeRole tier : wave) {
                for (final Node n : nodes.values()) {
                    if (n.role == tier) {
                        launch(n);
                    }
                }
            }
            // A tier's time is from its wave's launch until its last node is ready; one deadline for the wave.
            final long waveDeadline = t0 + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
            for (final NodeRole tier : wave) {
                for (final Node n : nodes.values()) {
                    if (n.role == tier) {
                        awaitStarted(n, waveDeadline);
                    }
                }
                if (nodes.values().stream().anyMatch(n -> n.role == tier)) {
                    tierStartMs.put(tier, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
                }
            }
        }
    }

    /**
     * How long each tier took to be ready at the last {@link #start(long)}, in milliseconds, in start order: the memory
     * and compute nodes' times both from their common launch.
     */
    public Map<NodeRole, Long> tierStartMs() {
        return java.util.Collections.unmodifiableMap(new LinkedHashMap<>(tierStartMs));
    }

    /**
     * Starts {@code node} again (after it exited or was killed); waits until it is ready. A compute node or TSO proxy
     * (no other node joins through it) gets a fresh Hazelcast port for its new incarnation: on the port it had, the
     * master's partition table went on naming the departed member for minutes after the new one joined (a soak's map
     * calls failed with {@code TargetNotMemberException} / {@code PartitionMigratingException}, issue 23 §3), as
     * Hazelcast keys a partition's replica by address and member UUID. That is not the whole cause: with fresh ports
     * (soakports' 6-minute soak, load 25-59) the survivors' map calls still failed with {@code TargetNotMemberException}
     * naming the killed incarnation's own address and UUID for over 70 s (the member was removed at once; its
     * partitions were reassigned only when a migration whose response was lost failed, by the logs' timing:
     * conf/cluster.xml now gives a migration up after 15 s), so this only keeps two incarnations' addresses apart. The TSO's and memory nodes' ports are in
     * every node's {@code members} list, so they keep theirs.
     */
    public void restart(final String name, final long timeoutMs) throws Exception {
        final Node n = node(name);
        if (n.process != null && n.process.isAlive()) {
            throw new IllegalStateException("node " + name + " is still running (pid " + n.process.pid() + ")");
        }
        if (n.role == NodeRole.CN || n.role == NodeRole.PROXY) {
            configure(name, "hazelcastPort", freePort());
        }
        launch(n);
        awaitStarted(n, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs));
    }

    /**
     * Waits until launched node {@code n} is ready, before {@code deadline} ({@link System#nanoTime()}). As a
     * supervisor restarts a failed service: a node that exits before it is ready because Hazelcast refused its join
     * while the membership was changing, past its own retries (NodeMain#EXIT_NOT_JOINED), is started again while time
     * is left (up to 3 starts); any other exit before ready is final.
     */
    private void awaitStarted(final Node n, final long deadline) throws Exception {
        for (int starts = 1; ; starts++) {
            try {
                awaitReady(n, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
                return;
            } catch (final NodeExited exited) {
                if (n.process.exitValue() != NodeMain.EXIT_NOT_JOINED
                    || deadline - System.nanoTime() < TimeUnit.SECONDS.toNanos(10) || starts >= 3) {
                    throw exited;
                }
                System.out.println(exited.getMessage().lines().findFirst().orElse("") + "; starting it again");
                launch(n);
            }
        }
    }

    /** A node's process exited before it was ready. */
    private static final class NodeExited extends IllegalStateException {
        NodeExited(final String message) {
            super(message);
        }
    }

    /**
     * Set by {@link #close}: no node is launched after it. A scythe chaos run stopped by SIGTERM closed its cluster from
     * the shutdown hook while its fault loop went on restarting the nodes it had just stopped ("restart failed ...
     * once more"), and left their processes running after the JVM was gone.
     */
    private boolean closed;

    private void launch(final Node n) throws IOException {
        synchronized (this) { // with close: a launch either runs before it (and is stopped by it) or is refused
            if (closed) {
                throw new IllegalStateException("cluster " + cluster + " is closed: node " + n.name
                    + " is not started again");
            }
            start(n);
        }
    }

    private void start(final Node n) throws IOException {
        final List<String> cmd = new ArrayList<>(launcher.command());
        final int classpath = cmd.indexOf("-cp");
        final List<String> archive = classpath > 0
            ? NodeClassArchive.options(cmd.get(classpath + 1), n.role == NodeRole.CN) : List.of();
        cmd.addAll(Math.max(classpath, 0), archive);
        if (java.nio.file.Path.of(cmd.get(0)).getFileName().toString().equals("java")) {
            cmd.add(1, gcLogOption(n)); // a JVM: its collections and safepoints go to a file of its own, by its log
        }
        cmd.addAll(List.of("--role", n.role.label(), "--config", n.configFile.toString()));
        Files.writeString(n.log, "", StandardCharsets.UTF_8,
            java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
        try {
            n.process = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(n.log.toFile())).start();
        } catch (final IOException e) {
            NodeClassArchive.cancel();
            throw e;
        }
        NodeClassArchive.started(archive, n.process);
    }

    /**
     * Where node {@code n}'s JVM logs its collections and safepoints ({@code -Xlog:gc*,safepoint}, wall-clock times to
     * match its log's): issue 23 §1, the fence scenario's wedge could not be told from a GC stall after the fact. One
     * file per process ({@code %p}: a restarted node does not overwrite its previous incarnation's); the process
     * tests' failure report prints the tail of the current one ({@link Node#gcLog()}).
     */
    static String gcLogOption(final Node n) {
        return "-Xlog:gc*,safepoint:file=" + n.log.resolveSibling("node-" + n.name + "-gc-%p.log").toAbsolutePath()
            + ":time,uptime,level,tags";
    }

    private static void awaitReady(final Node n, final long timeoutMs) throws Exception {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        final long pid = n.process.pid();
        while (System.nanoTime() < deadline) {
            final String log = n.logText();
            if (log.contains("pid " + pid)) {
                return;
            }
            if (!n.process.isAlive()) {
                // Read again: the ready line may have been written after the read above and before the exit
                // (CI run 174: a node that prints its line and exits at once, under load, was taken as never ready).
                final String last = n.logText();
                if (last.contains("pid " + pid)) {
                    return;
                }
                throw new NodeExited("node " + n.name + " exited with " + n.process.exitValue()
                    + " before it was ready; its log " + n.log + ":\n" + tail(last));
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("node " + n.name + " was not ready within " + timeoutMs + " ms; its log "
            + n.log + ":\n" + tail(n.logText()));
    }

    private static String tail(final String log) {
        return log.length() <= 4000 ? log : log.substring(log.length() - 4000);
    }

    /** Sends {@code signal} (STOP, CONT, KILL, TERM) to node {@code name}'s process. */
    public void signal(final String name, final String signal) throws Exception {
        final Process p = node(name).process;
        if (p == null) {
            throw new IllegalStateException("node " + name + " was never started");
        }
        final Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).inheritIO().start();
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new IllegalStateException("kill -" + signal + " " + p.pid() + " failed");
        }
    }

    /** Stops every node process this cluster started and removes the cluster's shm files. */
    @Override
    public void close() {
        synchronized (this) {
            closed = true;
        }
        for (final Node n : nodes.values()) {
            if (n.process != null && n.process.isAlive()) {
                try {
                    signal(n.name, "CONT");
                } catch (final Exception ignored) {
                    // it is exiting anyway
                }
                n.process.destroy();
            }
        }
        for (final Node n : nodes.values()) {
            if (n.process != null) {
                try {
                    // A node writing the class archive at exit (NodeClassArchive) gets longer before it is killed.
                    if (!n.process.waitFor(NodeClassArchive.dumps(n.process) ? 90 : 15, TimeUnit.SECONDS)) {
                        n.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                    }
                } catch (final InterruptedException e) {
                    n.process.destroyForcibly();
                    Thread.currentThread().interrupt();
                }
            }
        }
        NodeClassArchive.publish();
        try {
            ShmFabric.removeClusterFiles(FabricOptions.DEFAULT_SHM_DIRECTORY, cluster);
        } catch (final java.io.UncheckedIOException e) {
            System.err.println("scythe cluster " + cluster + ": could not remove " + shmDirectory() + ": " + e);
        }
    }

    /** Ports this JVM has handed out already: a node of this cluster has not bound them yet. */
    private static final java.util.Set<Integer> HANDED_OUT = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** Blocks of [20000, 32000), below Linux's ephemeral range (32768-60999): outgoing connections never take them. */
    static final int PORT_BLOCKS = 8;
    /** Port-block lock files this JVM holds (Java refuses a second lock of a file in one JVM). */
    private static final java.util.Set<String> HELD_HERE = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private static final int FIRST_PORT;
    private static final int PORTS;
    /**
     * The lock that makes this JVM's port block its own while it lives (never closed: the kernel drops it at exit,
     * however the JVM ends; held here so no cleaner closes it).
     */
    private static java.nio.channels.FileChannel portBlockLock;

    static {
        // JVMs handing out ports at once (surefire forks, a CI run beside a developer's tests, a chaos run) each pick
        // only in a block they hold a file lock on, so a port one JVM handed out (not bound yet, or the port of a node
        // it killed and will restart) is never taken by another's cluster. (Was: a block named by surefire's
        // ${surefire.forkNumber} in systemPropertyVariables, which reached the forks empty: both used block 1, and CI
        // 89 lost a run to "Address already in use".)
        final PortBlock claimed = claimPortBlock(Path.of(System.getProperty("java.io.tmpdir"), "scythe-port-blocks"));
        portBlockLock = claimed.lock();
        PORTS = claimed.block() < 0 ? 12_000 : 12_000 / PORT_BLOCKS;
        FIRST_PORT = 20_000 + Math.max(claimed.block(), 0) * PORTS;
    }

    /**
     * A port block and the channel whose lock holds it ({@code block} -1, {@code lock} null: none could be held).
     * {@link #close} lets it go (tests; a JVM's own block is held until it exits).
     */
    record PortBlock(int block, java.nio.channels.FileChannel lock, String file) implements AutoCloseable {
        @Override
        public void close() throws IOException {
            if (lock != null) {
                lock.close();
                HELD_HERE.remove(file);
            }
        }
    }

    /** The first of the {@link #PORT_BLOCKS} blocks whose lock file in {@code dir} this JVM could lock. */
    static PortBlock claimPortBlock(final Path dir) {
        try {
            Files.createDirectories(dir);
        } catch (final IOException e) {
            System.err.println("scythe: no port block (" + e + "): handing out ports from the whole range");
            return new PortBlock(-1, null, null);
        }
        for (int b = 0; b < PORT_BLOCKS; b++) {
            final String file = dir.resolve("block-" + b + ".lock").toAbsolutePath().toString();
            if (!HELD_HERE.add(file)) {
                continue; // held by this JVM: opening it again and closing that channel would drop the JVM's lock
            }
            java.nio.channels.FileChannel channel = null;
            try {
                channel = java.nio.channels.FileChannel.open(Path.of(file),
                    java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.WRITE);
                if (channel.tryLock() != null) {
                    return new PortBlock(b, channel, file);
                }
            } catch (final IOException | java.nio.channels.OverlappingFileLockException e) {
                // unusable, or locked through another class loader of this JVM: the next block
            }
            HELD_HERE.remove(file);
            if (channel != null) {
                try {
                    channel.close();
                } catch (final IOException ignored) {
                    // it held nothing
                }
            }
        }
        // Not a failure: the ports are still checked free when handed out; only the guarantee against another JVM
        // taking one before its node binds it is gone.
        System.err.println("scythe: no port block could be held in " + dir + " (all " + PORT_BLOCKS + " held by other "
            + "JVMs, or the files are not ours): handing out ports from the whole range, shared with other JVMs");
        return new PortBlock(-1, null, null);
    }

    /**
     * A port free on loopback right now, outside the kernel's ephemeral range. A port the kernel picked (bind to 0)
     * could be taken, before the node binds it, by the local end of any outgoing connection, such as another
     * member's Hazelcast connections: that made nodes fail with "Address already in use" under load.
     */
    public static int freePort() throws IOException {
        final java.util.SplittableRandom random = new java.util.SplittableRandom(System.nanoTime() ^ ProcessHandle
            .current().pid());
        for (int attempt = 0; attempt < 1000; attempt++) {
            final int port = FIRST_PORT + random.nextInt(PORTS);
            if (HANDED_OUT.contains(port)) {
                continue;
            }
            try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
                if (HANDED_OUT.add(port)) {
                    return s.getLocalPort();
                }
            } catch (final IOException inUse) {
                // taken: try another
            }
        }
        throw new IOException("no free loopback port in [" + FIRST_PORT + ", " + (FIRST_PORT + PORTS) + ")");
    }
}
