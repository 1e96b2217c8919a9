package io.scythe.fabric.shm;

import io.scythe.fabric.CostModel;
import io.scythe.fabric.Fabric;
import io.scythe.fabric.FabricContractTest;
import io.scythe.fabric.FabricOptions;

import java.nio.file.Files;
import java.nio.file.Path;

/** The fabric contract on the shm provider: two nodes of one process, every verb through the mapped files. */
class ShmFabricContractTest extends FabricContractTest {
    private Path root;

    @Override
    protected Fabric openFabric(final String cluster) {
        final ShmFabric shm = new ShmFabric(new FabricOptions().provider(ShmFabric.NAME).cluster(cluster)
            .costModel(CostModel.zero()));
        root = shm.root();
        return shm;
    }

    @org.junit.jupiter.api.Test
    void shouldApplyTheCostModelThroughTheFiles() throws Exception {
        final ShmFabric timed = new ShmFabric(new FabricOptions().provider(ShmFabric.NAME)
            .cluster("timed-" + ProcessHandle.current().pid()).costModel(CostModel.cx5()));
        try {
            final io.scythe.fabric.Nic a = timed.attachNow("a");
            final io.scythe.fabric.Nic b = timed.attachNow("b");
            final io.scythe.fabric.RemoteRegion r = b.register("r", 64, io.scythe.fabric.MemoryKind.HOST).describe();
            final io.scythe.fabric.CompletionQueue q = a.createCompletionQueue(16);
            final io.scythe.fabric.QueuePair p = connect(a, "b", q, new io.scythe.fabric.QpOptions());
            final long start = System.nanoTime();
            p.post(new io.scythe.fabric.WorkRequest().read(r.address(), r.rkey(),
                new org.agrona.concurrent.UnsafeBuffer(new byte[8]), 0, 8));
            pollUntilIdle(q, new io.scythe.fabric.Recorder());
            org.assertj.core.api.Assertions.assertThat(System.nanoTime() - start)
                .isGreaterThanOrEqualTo(2 * CostModel.DEFAULT_ONE_WAY_LATENCY_NS);
        } finally {
            final Path dir = timed.root();
            timed.close();
            MappedFiles.deleteTree(dir);
        }
    }

    @Override
    protected void closeProvider() {
        MappedFiles.deleteTree(root);
        org.assertj.core.api.Assertions.assertThat(Files.exists(root)).as("files left in /dev/shm").isFalse();
    }
}
