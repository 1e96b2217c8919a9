package io.scythe.cli;

import io.scythe.cluster.NodeMain;
import io.scythe.cluster.NodeRole;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.concurrent.Callable;

/** {@code scythe node}: runs one node of a cluster in this process. */
@Command(name = "node", mixinStandardHelpOptions = true,
    description = {"Runs one node (memory node, compute node, TSO or TSO proxy) of a Scythe cluster in this process, until "
        + "stopped (Ctrl-C / SIGTERM: it leaves the cluster and removes its shm files).",
        "A compute node that lost its lease (paused past it, or cut off) exits with code 3: restart it, and it "
            + "rejoins under a new epoch. Config keys: README \"Cluster mode\"; an example (one file for every node of a cluster, its name from "
            + "SCYTHE_NODE): docker/conf/cluster.yaml."})
public final class NodeCommand implements Callable<Integer> {
    /** Every role, for the help. */
    static final class Roles implements Iterable<String> {
        @Override
        public java.util.Iterator<String> iterator() {
            return java.util.Arrays.stream(io.scythe.cluster.NodeRole.values()).map(io.scythe.cluster.NodeRole::label)
                .iterator();
        }
    }

    @Accepts(names = NodeCommand.Roles.class)
    @Option(names = "--role", required = true, completionCandidates = Roles.class,
        description = "${COMPLETION-CANDIDATES} (memory node, compute node, timestamp oracle, TSO proxy).")
    String role;

    @Accepts(exists = true)
    @Option(names = "--config", required = true, description = "Node config file (YAML or JSON).")
    Path config;

    @Override
    public Integer call() throws Exception {
        ClusterWorkloads.register();
        final NodeRole r = NodeRole.of(role);
        return NodeMain.run(r, NodeMain.readConfig(config));
    }
}
