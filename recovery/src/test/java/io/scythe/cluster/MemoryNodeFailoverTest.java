package io.scythe.cluster;

import io.scythe.txn.MemoryNodeConfiguration;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The configuration as the Hazelcast map holds it: what a CN writes another decodes, rejoining nodes included. */
class MemoryNodeFailoverTest {
    @Test
    void shouldDecodeWhatItEncodesWithRejoiningNodesAndOlderEntriesWithoutThem() {
        final MemoryNodeConfiguration rejoin = MemoryNodeConfiguration.initial(3, 1).without(1).rejoin(1, 1);
        assertThat(MemoryNodeFailover.decode(MemoryNodeFailover.encode(rejoin))).isEqualTo(rejoin);
        final MemoryNodeConfiguration without = MemoryNodeConfiguration.initial(3, 1).without(2);
        assertThat(MemoryNodeFailover.decode(MemoryNodeFailover.encode(without))).isEqualTo(without);
        assertThat(MemoryNodeFailover.decode("{\"epoch\":1,\"copies\":[[0],[1],[0,1]],\"removed\":[1]}"))
            .as("an entry written before rejoin existed").isEqualTo(MemoryNodeConfiguration.initial(3, 1).without(1));
    }
}
