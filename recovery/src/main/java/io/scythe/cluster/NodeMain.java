package io.scythe.cluster;

import io.scythe.config.ConfigFiles;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Runs one node in this process until it is stopped (SIGTERM, Ctrl-C: it leaves the cluster and removes its shm
 * files) or, for a CN, loses its lease (exit code {@link ScytheNode#EXIT_LEASE_LOST}: restart it to rejoin under a
 * new epoch). Prints {@code scythe node NAME ready ...} once it serves. Used by {@code scythe node} and by tests
 * ({@code java -cp ... io.scythe.cluster.NodeMain --role cn --config FILE}).
 */
public final class NodeMain {
    /** System property: exit (cleanly) when the parent process exits. */
    public static final String EXIT_WITH_PARENT = "scythe.exitWithParent";
    /**
     * Exit code of a node Hazelcast would not let join (its membership kept changing past the node's own retries):
     * transient, so a supervisor (or {@link LocalCluster#restart}) may start it again.
     */
    public static final int EXIT_NOT_JOINED = 4;

    private NodeMain() {
    }

    public static void main(final String[] args) throws Exception {
        String role = null;
        String file = null;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--role" -> role = args[i + 1];
                case "--config" -> file = args[i + 1];
                default -> {
                    System.err.println("usage: NodeMain --role mn|cn|tso --config FILE");
                    System.exit(2);
                }
            }
        }
        if (role == null || file == null) {
            System.err.println("usage: NodeMain --role mn|cn|tso --config FILE");
            System.exit(2);
        }
        try {
            System.exit(run(NodeRole.of(role), readConfig(Path.of(file))));
        } catch (final IllegalArgumentException e) {
            System.err.println("scythe node: " + e.getMessage());
            System.exit(2);
        } catch (final IllegalStateException e) {
            System.err.println("scythe node: " + e.getMessage());
            System.exit(1);
        } catch (final Exception | Error e) {
            // Exit, not return: a node that failed to start can leave non-daemon threads (a half-made Hazelcast
            // member) that would keep a process up that never serves (CI run 72).
            System.err.println("scythe node: could not start: " + e);
            e.printStackTrace();
            System.err.flush();
            // Halt, not exit: the start already released what it took (ScytheNode#start), and System.exit's shutdown
            // hooks can wait on a Hazelcast member stuck in a membership change (CI run 76: a node printed "could not
            // start" and its process stayed up until the test gave up on it).
            Runtime.getRuntime().halt(e instanceof com.hazelcast.core.HazelcastException ? EXIT_NOT_JOINED : 1);
        }
    }

    /**
     * Reads a YAML or JSON node config; the environment variables {@code SCYTHE_NODE}, {@code SCYTHE_HOST} and
     * {@code SCYTHE_SECRET}, when set, give {@code node}, {@code host} and {@code secret} (one file for every node of
     * a compose file, and the secret kept out of it); {@code SCYTHE_SECRET_FILE} names a file holding the secret
     * instead (a compose or Kubernetes secret mounted at {@code /run/secrets/...}: never in the environment, which
     * {@code docker inspect} shows).
     */
    public static NodeConfig readConfig(final Path file) throws Exception {
        return readConfig(file, System.getenv());
    }

    /** As {@link #readConfig(Path)}, with {@code env} as the environment. */
    static NodeConfig readConfig(final Path file, final java.util.Map<String, String> env) throws Exception {
        final Vertx reader = Vertx.vertx();
        try {
            final JsonObject json = ConfigFiles.read(reader, file).await(30, TimeUnit.SECONDS);
            for (final String[] var : new String[][] {{"SCYTHE_NODE", "node"}, {"SCYTHE_HOST", "host"},
                {"SCYTHE_SECRET", "secret"}}) {
                final String value = env.get(var[0]);
                if (value != null && !value.isBlank()) {
                    json.put(var[1], value);
                }
            }
            final String secretFile = env.get("SCYTHE_SECRET_FILE");
            if (secretFile != null && !secretFile.isBlank()) {
                if (env.get("SCYTHE_SECRET") != null && !env.get("SCYTHE_SECRET").isBlank()) {
                    throw new IllegalArgumentException("both SCYTHE_SECRET and SCYTHE_SECRET_FILE are set: give one");
                }
                final String secret;
                try {
                    secret = java.nio.file.Files.readString(Path.of(secretFile)).strip();
                } catch (final java.io.IOException e) {
                    throw new IllegalArgumentException("SCYTHE_SECRET_FILE=" + secretFile + " cannot be read: " + e);
                }
                json.put("secret", secret);
            }
            return NodeConfig.of(json);
        } finally {
            reader.close().await(10, TimeUnit.SECONDS);
        }
    }

    /** Runs the node until stopped; returns the process's exit code. */
    public static int run(final NodeRole role, final NodeConfig config) throws Exception {
        if (Boolean.getBoolean(EXIT_WITH_PARENT)) {
            // Started by a LocalCluster: never outlive it as an orphan, even if it was killed hard.
            ProcessHandle.current().parent().ifPresent(parent -> parent.onExit().thenRun(() -> System.exit(0)));
        }
        final CountDownLatch lost = new CountDownLatch(1);
        final ScytheNode node = ScytheNode.start(config, role, lost::countDown);
        final Thread stop = new Thread(() -> {
            try {
                node.close();
            } catch (final Exception e) {
                System.err.println("scythe node " + config.node() + ": stopping failed: " + e);
            }
        }, "scythe-node-stop");
        Runtime.getRuntime().addShutdownHook(stop);
        System.out.println("scythe node " + config.node() + " ready: role " + role.label() + ", epoch "
            + node.epoch() + ", fabric " + node.fabricNode() + ", http " + config.host() + ":" + node.httpPort()
            + ", pid " + ProcessHandle.current().pid());
        System.out.flush();
        lost.await();
        return ScytheNode.EXIT_LEASE_LOST;
    }
}
