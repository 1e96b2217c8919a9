package io.scythe.fabric.shm;

import io.scythe.fabric.CostModel;
import io.scythe.fabric.Fabric;
import io.scythe.fabric.FabricException;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.HostAndNicClocks;
import io.scythe.fabric.Nic;
import io.vertx.core.Future;
import org.agrona.concurrent.NanoClock;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The {@code shm} provider: nodes in separate processes of one host share their registered memory as files under
 * {@code {shmDirectory}/scythe-{cluster}/}; one-sided verbs are CPU atomics and copies on the mappings, done by the
 * requester, so a memory node's CPU is never involved. The cost model is the local provider's, with every NIC's
 * timing state in its node file. A process removes its nodes' files when it closes them or exits.
 */
public final class ShmFabric implements Fabric {
    public static final String NAME = "shm";

    private final FabricOptions options;
    private final Path root;
    private final Map<String, ShmNic> nics = new ConcurrentHashMap<>();
    private final Map<String, ShmPeer> peers = new ConcurrentHashMap<>();
    private final Thread cleanup;

    public ShmFabric(final FabricOptions options) {
        this.options = options.validate();
        this.root = clusterDirectory(options.shmDirectory(), options.cluster());
        try {
            Files.createDirectories(root);
        } catch (final IOException e) {
            throw new FabricException("shm fabric cannot use " + root + ": " + e.getMessage(), e);
        }
        this.cleanup = new Thread(this::removeFiles, "scythe-shm-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
    }

    /** Where the files of cluster {@code cluster} are under {@code shmDirectory}. */
    public static Path clusterDirectory(final String shmDirectory, final String cluster) {
        return Paths.get(shmDirectory, "scythe-" + cluster);
    }

    /**
     * Removes every file of cluster {@code cluster}, also those of processes that were killed and could not remove
     * their own (a supervisor's last step, once every node process has exited).
     */
    public static void removeClusterFiles(final String shmDirectory, final String cluster) {
        MappedFiles.deleteTree(clusterDirectory(shmDirectory, cluster));
    }

    /** Directory of this fabric's files. */
    public Path root() {
        return root;
    }

    @Override
    public String provider() {
        return NAME;
    }

    @Override
    public FabricOptions options() {
        return options;
    }

    @Override
    public CostModel costModel() {
        return options.costModel();
    }

    @Override
    public NanoClock clock() {
        return options.clock();
    }

    @Override
    public Future<Nic> attach(final String node) {
        try {
            return Future.succeededFuture(attachNow(node));
        } catch (final RuntimeException e) {
            return Future.failedFuture(e);
        }
    }

    /**
     * Attaches synchronously. A node whose files belong to a dead process (or one that closed it) is taken over;
     * one attached by a live process is refused.
     */
    public synchronized Nic attachNow(final String node) {
        FabricOptions.checkName("node", node);
        if (nics.containsKey(node)) {
            throw new FabricException("node " + node + " is already attached to this fabric");
        }
        final Path dir = root.resolve(node);
        if (Files.exists(dir.resolve(ShmNodeFile.FILE))) {
            try {
                final ShmNodeFile existing = ShmNodeFile.open(dir, costModel());
                if (existing.ownerAlive() && existing.pid() != ProcessHandle.current().pid()) {
                    throw new FabricException("node " + node + " is attached by live process " + existing.pid()
                        + " (" + dir + ")");
                }
            } catch (final IOException | FabricException e) {
                if (e instanceof FabricException && e.getMessage().contains("live process")) {
                    throw (FabricException) e;
                }
                // unreadable or of another layout: stale, taken over below
            }
            MappedFiles.deleteTree(dir);
        }
        try {
            Files.createDirectories(dir);
        } catch (final IOException e) {
            throw new FabricException("shm fabric cannot create " + dir + ": " + e.getMessage(), e);
        }
        peers.remove(node);
        final HostAndNicClocks clocks = HostAndNicClocks.start(this, node);
        final ShmNic nic = new ShmNic(this, node, ShmNodeFile.create(dir, costModel(),
            ProcessHandle.current().pid(), clocks.nic()), clocks);
        nics.put(node, nic);
        return nic;
    }

    @Override
    public Nic nic(final String node) {
        return nics.get(node);
    }

    ShmNic localNic(final String node) {
        return nics.get(node);
    }

    /**
     * The view of {@code node}, mapped on first use and remapped if the node was attached again since. A node whose
     * process was killed never marked its file closed: its owner's liveness is checked too, or connections would claim
     * slots in the dead file (which no one frees) and never see the node's next incarnation.
     */
    ShmPeer peer(final String node) {
        final ShmPeer cached = peers.get(node);
        if (cached != null && cached.file.live() && cached.file.ownerAlive()) {
            return cached;
        }
        final Path dir = root.resolve(node);
        final ShmNodeFile file;
        try {
            file = ShmNodeFile.open(dir, costModel());
        } catch (final IOException e) {
            throw new FabricException("node " + node + " is not attached to the shm fabric '" + options.cluster()
                + "' (no " + dir.resolve(ShmNodeFile.FILE) + ")");
        }
        if (!file.ownerAlive()) {
            throw new FabricException("node " + node + " of the shm fabric '" + options.cluster()
                + "' is gone (process " + file.pid() + " exited or closed it)");
        }
        final ShmPeer peer = new ShmPeer(node, file, clock());
        peers.put(node, peer);
        return peer;
    }

    void detached(final ShmNic nic) {
        nics.remove(nic.node(), nic);
        MappedFiles.deleteTree(nic.file.dir);
    }

    @Override
    public void close() {
        for (final ShmNic nic : List.copyOf(nics.values())) {
            nic.close();
        }
        removeEmptyRoot();
        try {
            Runtime.getRuntime().removeShutdownHook(cleanup);
        } catch (final IllegalStateException shuttingDown) {
            // the hook is running or ran
        }
    }

    private void removeFiles() {
        for (final ShmNic nic : nics.values()) {
            nic.file.closed();
            MappedFiles.deleteTree(nic.file.dir);
        }
        removeEmptyRoot();
    }

    private void removeEmptyRoot() {
        try (var entries = Files.list(root)) {
            if (entries.findAny().isEmpty()) {
                Files.deleteIfExists(root);
            }
        } catch (final IOException e) {
            // another process still uses it, or it is gone
        }
    }
}
