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

    @org.junit.jupiter.api.Test
    void shouldReadAPeersNicClockAsItsOwnProcessPublishedIt() throws Exception {
        // Two fabrics stand for two processes: only mn's knows mn's clock (+5 ms, 100 ppm fast); cn's reads it from
        // mn's control file. Both share the host's clock (here a manual one).
        final org.agrona.concurrent.CachedNanoClock host = new org.agrona.concurrent.CachedNanoClock();
        host.update(1_000_000_000L);
        final String cluster = "clocks-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
        final ShmFabric mnSide = new ShmFabric(new FabricOptions().provider(ShmFabric.NAME).cluster(cluster)
            .costModel(CostModel.zero()).clock(host).clocks(new io.scythe.fabric.ClockOptions()
                .nodeNic("mn", new io.scythe.fabric.ClockDeviation(5_000_000, 100))
                .nodeHost("mn", new io.scythe.fabric.ClockDeviation(-3_000, 0))));
        final ShmFabric cnSide = new ShmFabric(new FabricOptions().provider(ShmFabric.NAME).cluster(cluster)
            .costModel(CostModel.zero()).clock(host));
        try {
            final io.scythe.fabric.Nic mnNic = mnSide.attachNow("mn");
            final io.scythe.fabric.Nic cnNic = cnSide.attachNow("cn");
            final io.scythe.fabric.CompletionQueue q = cnNic.createCompletionQueue(16);
            final io.scythe.fabric.QueuePair p = connect(cnNic, "mn", q, new io.scythe.fabric.QpOptions());
            host.advance(10_000_000);
            final org.agrona.concurrent.UnsafeBuffer dst = new org.agrona.concurrent.UnsafeBuffer(new byte[8]);
            p.post(new io.scythe.fabric.WorkRequest().read(io.scythe.fabric.NicClockWord.ADDRESS,
                io.scythe.fabric.NicClockWord.RKEY, dst, 0, 8));
            final long expected = 1_010_000_000L + 5_000_000 + 1_000; // 10 ms at 100 ppm: 1 us
            org.assertj.core.api.Assertions.assertThat(dst.getLong(0)).isEqualTo(expected);
            org.assertj.core.api.Assertions.assertThat(mnNic.nicClockNs()).isEqualTo(expected);
            org.assertj.core.api.Assertions.assertThat(mnNic.hostClockNs()).isEqualTo(1_010_000_000L - 3_000);
            org.assertj.core.api.Assertions.assertThat(cnNic.nicClockNs()).isEqualTo(1_010_000_000L);
            final long[] stamp = new long[1];
            host.advance(40);
            q.poll(host.nanoTime(), (from, id, op, status, len) -> stamp[0] = q.completionTimestampNs(), 16);
            org.assertj.core.api.Assertions.assertThat(stamp[0]).isEqualTo(1_010_000_040L);
        } finally {
            cnSide.close();
            mnSide.close();
            MappedFiles.deleteTree(mnSide.root());
        }
    }

    @Override
    protected void closeProvider() {
        MappedFiles.deleteTree(root);
        org.assertj.core.api.Assertions.assertThat(Files.exists(root)).as("files left in /dev/shm").isFalse();
    }
}
