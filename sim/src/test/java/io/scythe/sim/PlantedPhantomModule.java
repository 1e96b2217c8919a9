package io.scythe.sim;

import io.scythe.txn.Protocol;
import io.scythe.txn.ford.CasLockModule;
import io.scythe.txn.spi.MemoryNodeContext;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A protocol module that lives only in this module's tests, registered by one line in
 * {@code src/test/resources/META-INF/services/io.scythe.txn.spi.ProtocolModule}: the planted phantom
 * ({@link PlantedPhantomTxn}) over FORD's CAS lock ({@link CasLockModule}), plus a memory-node service that only
 * counts the nodes it started on. Nothing shared names it: the registry, the simulator and the benchmarks find it
 * (ProtocolSeamTest). Not listed: it is buggy on purpose.
 */
public final class PlantedPhantomModule extends CasLockModule {
    static final Protocol PLANTED_PHANTOM = Protocol.of("planted-phantom",
        (runtime, hint) -> new PlantedPhantomTxn(runtime));

    /** Published on every memory node: which node it is, counted across every node this JVM started. */
    record NodeMark(String node, int ordinal) {
    }

    private static final AtomicInteger STARTED = new AtomicInteger();

    @Override
    public String name() {
        return "planted";
    }

    @Override
    public List<Protocol> protocols() {
        return List.of(PLANTED_PHANTOM);
    }

    @Override
    public boolean listed() {
        return false;
    }

    @Override
    public void startMemoryNode(final MemoryNodeContext node) {
        super.startMemoryNode(node);
        node.publish(NodeMark.class, new NodeMark(node.db().nic().node(), STARTED.incrementAndGet()));
    }
}
