package io.scythe.cli;

import io.scythe.cluster.LocalCluster;
import io.scythe.cluster.ScytheNode;
import io.vertx.core.json.JsonObject;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** {@code scythe cluster}: a cluster of node processes on this host, for trying things out. */
@Command(name = "cluster", mixinStandardHelpOptions = true,
    description = {"Starts a Scythe cluster as local processes (one per node: the TSO, then the memory nodes, then "
        + "the compute nodes), prints where each serves, and runs until Ctrl-C (or --duration), then stops every "
        + "process and removes the cluster's shm files.",
        "Clients join with DIR/client.json (ScytheClient) and send TxnRequests to scythe.txn. A compute node that "
            + "loses its lease is restarted under a new epoch."})
public final class ClusterCommand implements Callable<Integer> {
    @Accepts(min = "1", max = "64")
    @Option(names = "--mns", defaultValue = "2", description = "Memory nodes (default: ${DEFAULT-VALUE}).")
    int mns;

    @Accepts(min = "1", max = "64")
    @Option(names = "--cns", defaultValue = "3", description = "Compute nodes (default: ${DEFAULT-VALUE}).")
    int cns;

    @Accepts(min = "1", max = "64")
    @Option(names = "--tso", defaultValue = "1", description = "TSO nodes: the service, and a TSO proxy per further "
        + "node (default: ${DEFAULT-VALUE}).")
    int tso;

    @Accepts(names = OptionChecks.Fabrics.class)
    @Option(names = "--fabric", defaultValue = "shm", description = "shm or tcp (default: ${DEFAULT-VALUE}).")
    String fabric;

    @Accepts(names = OptionChecks.Profiles.class)
    @Option(names = "--profile", defaultValue = "cx5", description = "Cost model: "
        + io.scythe.fabric.CostModel.PROFILE_NAMES + " (shm only; "
        + "default: ${DEFAULT-VALUE}).")
    String profile;

    @Accepts(names = OptionChecks.ClusterWorkloadNames.class)
    @Option(names = "--workload", defaultValue = "smallbank", description = "smallbank or counters (default: "
        + "${DEFAULT-VALUE}).")
    String workload;

    @Accepts(min = "2")
    @Option(names = "--accounts", defaultValue = "10000", description = "SmallBank accounts, or counters "
        + "(default: ${DEFAULT-VALUE}).")
    long accounts;

    @Accepts(names = RegisteredProtocols.class)
    @Option(names = "--protocol", defaultValue = "scythe", completionCandidates = RegisteredProtocols.class,
        description = "Concurrency control the CNs run (default: ${DEFAULT-VALUE}; registered: "
            + "${COMPLETION-CANDIDATES}).")
    String protocol;

    @Accepts(value = "a cluster name")
    @Option(names = "--name", description = "Cluster name (default: scythe-PID).")
    String name;

    @Accepts(value = "a directory to write")
    @Option(names = "--dir", description = "Where node configs and logs go (default: ./cluster-NAME).")
    Path dir;

    @Accepts(min = "1ms")
    @Option(names = "--duration", description = "Stop after this long (e.g. 30s); default: until Ctrl-C.")
    Duration duration;

    @Option(names = "--probe", description = "Once ready: measure a client's throughput over the event bus, kill one "
        + "CN and pause another (time until fenced, until back under a new epoch), measure again, then stop.")
    boolean probe;

    @picocli.CommandLine.Mixin
    LeaseOptions leaseOptions = new LeaseOptions();

    @Accepts(value = "JVM options")
    @Option(names = "--node-java-opts", defaultValue = "-Xmx512m -XX:+UseParallelGC",
        description = "JVM options of each node process (default: ${DEFAULT-VALUE}).")
    String nodeJavaOpts;

    @Override
    public Integer call() throws Exception {
        if (tso < 1) {
            throw new IllegalArgumentException("--tso " + tso + ": a cluster needs the TSO service node (1), plus "
                + "one TSO proxy per further node");
        }
        if (!fabric.equals("shm") && !fabric.equals("tcp")) {
            throw new IllegalArgumentException("--fabric must be shm or tcp, not " + fabric);
        }
        if (!workload.equals("smallbank") && !workload.equals("counters")) {
            throw new IllegalArgumentException("--workload must be smallbank or counters, not " + workload);
        }
        final String cluster = name != null ? name : "scythe-" + ProcessHandle.current().pid();
        final Path where = dir != null ? dir : Path.of("cluster-" + cluster);
        final byte[] secretBytes = new byte[24];
        new SecureRandom().nextBytes(secretBytes);
        final String secret = HexFormat.of().formatHex(secretBytes);
        final JsonObject workloadJson = new JsonObject().put("name", workload)
            .put(workload.equals("smallbank") ? "accounts" : "keys", accounts);
        final JsonObject fabricJson = new JsonObject().put("provider", fabric)
            .put("costModel", new JsonObject().put("profile", profile));
        final LocalCluster local = new LocalCluster(cluster, secret, mns, cns, tso - 1, workloadJson, fabricJson,
            protocol, where, nodeLauncher(nodeJavaOpts));
        leaseOptions.apply(local);
        final CountDownLatch stop = new CountDownLatch(1);
        final Thread hook = new Thread(() -> {
            stop.countDown();
            local.close();
        }, "scythe-cluster-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        final long started = System.nanoTime();
        local.start(180_000);
        Files.writeString(where.resolve("client.json"), local.clientConfigJson().encodePrettily(), StandardCharsets.UTF_8);
        System.out.printf("cluster %s ready in %.1f s: %d MN, %d CN, 1 TSO, %d TSO proxies over %s; configs and logs "
            + "in %s%n", cluster, (System.nanoTime() - started) / 1e9, mns, cns, tso - 1, fabric,
            where.toAbsolutePath());
        for (final LocalCluster.Node n : local.nodes().values()) {
            System.out.printf("  %-5s %-3s pid %-7d http://127.0.0.1:%d/metrics /health%n", n.name(),
                n.role().label(), n.process().pid(), n.httpPort());
        }
        if (probe) {
            try {
                ClusterProbe.run(local, workload, accounts, cns);
            } finally {
                Runtime.getRuntime().removeShutdownHook(hook);
                local.close();
                System.out.println("cluster " + cluster + " stopped");
            }
            return 0;
        }
        System.out.println("Ctrl-C stops it.");
        final long deadline = duration == null ? Long.MAX_VALUE : System.nanoTime() + duration.toNanos();
        while (!stop.await(200, TimeUnit.MILLISECONDS) && System.nanoTime() < deadline) {
            for (final LocalCluster.Node n : local.nodes().values()) {
                if (n.process() != null && !n.process().isAlive()) {
                    final int code = n.process().exitValue();
                    if (code == ScytheNode.EXIT_LEASE_LOST) {
                        System.out.println(n.name() + " lost its lease; restarting it under a new epoch");
                        restart(local, n);
                    } else if (stop.getCount() > 0 && n.role() != io.scythe.cluster.NodeRole.MN) {
                        // A CN rejoins under a new epoch, the TSO service above every timestamp handed out, a
                        // proxy as it was.
                        System.out.println(n.name() + " exited with " + code + "; restarting it (see " + n.log()
                            + ")");
                        restart(local, n);
                    } else if (stop.getCount() > 0) {
                        // Its data is gone: a replacement process rejoins once the cluster failed it over and is
                        // re-replicated from the other copies (README); refused without replication.
                        System.out.println(n.name() + " exited with " + code + " (see " + n.log() + "); starting "
                            + "a replacement memory node, which rejoins once the cluster failed it over");
                        try {
                            local.restart(n.name(), 180_000);
                        } catch (final IllegalStateException refused) {
                            System.out.println(n.name() + " cannot be replaced (" + refused.getMessage().lines()
                                .findFirst().orElse("") + "): stopping the cluster");
                            stop.countDown();
                        }
                    }
                }
            }
        }
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
            local.close();
            System.out.println("cluster " + cluster + " stopped");
        } catch (final IllegalStateException shuttingDown) {
            // Ctrl-C: the hook stops the cluster
        }
        return 0;
    }

    /**
     * Restarts {@code n}; a start that fails is tried again on the next round rather than stopping the cluster: a TSO
     * service refuses to start while an issuer that just died is still listed as live, and a second try passes.
     */
    private static void restart(final LocalCluster local, final LocalCluster.Node n) throws Exception {
        try {
            local.restart(n.name(), 180_000);
        } catch (final IllegalStateException failed) {
            System.out.println(n.name() + " did not start again (" + failed.getMessage().lines().findFirst()
                .orElse("") + "); trying again");
        }
    }

    /** Starts nodes as this JVM's classpath running the scythe command's own node subcommand (it knows the workloads). */
    static LocalCluster.Launcher nodeLauncher(final String nodeJavaOpts) {
        final List<String> cmd = new ArrayList<>(LocalCluster.Launcher.sameClasspath(
            List.of(nodeJavaOpts.trim().split("\\s+"))).command());
        cmd.set(cmd.size() - 1, ScytheCommand.class.getName());
        cmd.add("node");
        return new LocalCluster.Launcher(cmd);
    }
}
