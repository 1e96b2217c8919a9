package io.scythe.fabric.tcp;

import io.scythe.fabric.CostModel;
import io.scythe.fabric.Fabric;
import io.scythe.fabric.FabricException;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.Nic;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import org.agrona.concurrent.NanoClock;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The {@code tcp} provider: soft verbs for hosts without RDMA NICs. Each node runs a verbs server at its address in
 * {@link FabricOptions#addresses()}; a doorbell batch travels as one frame, many frames in flight per connection, and
 * the server executes them in order on its regions. Real network latency applies: the cost model is not (the model is
 * kept only to size device memory). A node configured with port 0 listens on a free port, which this fabric then
 * uses for it.
 */
public final class TcpFabric implements Fabric {
    public static final String NAME = "tcp";

    private final Vertx vertx;
    private final FabricOptions options;
    private final Map<String, TcpNic> nics = new ConcurrentHashMap<>();
    private final Map<String, String> bound = new ConcurrentHashMap<>();

    public TcpFabric(final Vertx vertx, final FabricOptions options) {
        if (vertx == null) {
            throw new FabricException("the tcp fabric needs a Vert.x instance for its sockets");
        }
        this.vertx = vertx;
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

    /** The configured model; tcp applies none of its timings (see the class comment). */
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
            FabricOptions.checkName("node", node);
        } catch (final IllegalArgumentException e) {
            return Future.failedFuture(e);
        }
        final String address = configuredAddress(node);
        if (address == null) {
            return Future.failedFuture(new FabricException("node " + node + " has no address in the tcp fabric's "
                + "addresses"));
        }
        final String[] hostPort = FabricOptions.parseAddress(node, address);
        final TcpNic nic = new TcpNic(this, vertx, node);
        if (nics.putIfAbsent(node, nic) != null) {
            return Future.failedFuture(new FabricException("node " + node + " is already attached to this fabric"));
        }
        return nic.listen(hostPort[0], Integer.parseInt(hostPort[1]))
            .map(port -> {
                bound.put(node, hostPort[0].contains(":") ? "[" + hostPort[0] + "]:" + port : hostPort[0] + ":" + port);
                return (Nic) nic;
            })
            .onFailure(e -> nics.remove(node, nic))
            .recover(e -> Future.failedFuture(new FabricException("node " + node + " cannot listen on " + address
                + ": " + e.getMessage(), e)));
    }

    /** Where {@code node} listens: the port it bound if it is attached here, else the configured address. */
    String addressOf(final String node) {
        final String actual = bound.get(node);
        return actual != null ? actual : configuredAddress(node);
    }

    /**
     * The configured address of {@code node}; an incarnation {@code name.eEPOCH} of a node (a compute node that
     * rejoined under a new epoch) has the address of {@code name} unless it is configured itself.
     */
    String configuredAddress(final String node) {
        final String exact = options.addresses().get(node);
        if (exact != null) {
            return exact;
        }
        final int at = node.lastIndexOf(".e");
        if (at > 0 && at + 2 < node.length() && node.substring(at + 2).chars().allMatch(Character::isDigit)) {
            return options.addresses().get(node.substring(0, at));
        }
        return null;
    }

    @Override
    public Nic nic(final String node) {
        return nics.get(node);
    }

    void detached(final TcpNic nic) {
        nics.remove(nic.node(), nic);
        bound.remove(nic.node());
    }

    @Override
    public void close() {
        for (final TcpNic nic : List.copyOf(nics.values())) {
            nic.close();
        }
    }
}
