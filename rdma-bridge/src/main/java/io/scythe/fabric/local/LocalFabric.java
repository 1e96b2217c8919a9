package io.scythe.fabric.local;

import io.scythe.fabric.CostModel;
import io.scythe.fabric.Fabric;
import io.scythe.fabric.FabricException;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.Nic;
import io.vertx.core.Future;
import org.agrona.concurrent.NanoClock;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** The local provider: every node's virtual NIC lives in this JVM (an embedded cluster, tests, the simulator). */
public final class LocalFabric implements Fabric {
    public static final String NAME = "local";

    private final FabricOptions options;
    private final Map<String, LocalNic> nics = new ConcurrentHashMap<>();

    public LocalFabric(final FabricOptions options) {
        this.options = options.validate();
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

    /** Attaches synchronously: the local provider does no I/O. */
    public Nic attachNow(final String node) {
        final LocalNic nic = new LocalNic(node, this);
        if (nics.putIfAbsent(node, nic) != null) {
            throw new FabricException("node " + node + " is already attached to this fabric");
        }
        return nic;
    }

    @Override
    public Nic nic(final String node) {
        return nics.get(node);
    }

    LocalNic localNic(final String node) {
        return nics.get(node);
    }

    void detached(final LocalNic nic) {
        nics.remove(nic.node(), nic);
    }

    @Override
    public void close() {
        for (final LocalNic nic : List.copyOf(nics.values())) {
            nic.close();
        }
    }
}
