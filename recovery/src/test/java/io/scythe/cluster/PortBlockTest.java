package io.scythe.cluster;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * JVMs that hand out loopback ports at once each hold a block of their own ({@link LocalCluster#claimPortBlock}): a
 * block whose lock is held is never claimed again until its holder lets go (here one JVM's two claims stand for two
 * JVMs: the lock table answers an overlap as a process's lock would).
 */
class PortBlockTest {
    @TempDir
    Path dir;

    @Test
    void shouldGiveEachClaimantItsOwnBlockAndFreeTheBlockWhenItsHolderLetsGo() throws Exception {
        final LocalCluster.PortBlock first = LocalCluster.claimPortBlock(dir);
        final LocalCluster.PortBlock second = LocalCluster.claimPortBlock(dir);
        assertThat(first.block()).isZero();
        assertThat(second.block()).as("the first block is held").isEqualTo(1);
        second.lock().close();
        final LocalCluster.PortBlock third = LocalCluster.claimPortBlock(dir);
        assertThat(third.block()).as("the block let go is claimed again, the held one is not").isEqualTo(1);
        third.lock().close();
        first.lock().close();
    }

    @Test
    void shouldShareTheWholeRangeWhenEveryBlockIsHeld() throws Exception {
        final java.util.List<LocalCluster.PortBlock> held = new java.util.ArrayList<>();
        for (int b = 0; b < LocalCluster.PORT_BLOCKS; b++) {
            held.add(LocalCluster.claimPortBlock(dir));
        }
        assertThat(held).extracting(LocalCluster.PortBlock::block).doesNotHaveDuplicates().doesNotContain(-1);
        assertThat(LocalCluster.claimPortBlock(dir).block()).isEqualTo(-1);
        for (final LocalCluster.PortBlock p : held) {
            p.lock().close();
        }
    }
}
